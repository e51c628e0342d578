// Important-output extraction, the generic part: each line gets a rank (summary and failing names first,
// then assertion messages and locations, then context such as stacks and code frames, else dropped) from
// its runner's ranker (tools/verify/ecosystems/), and the lines are taken by rank until the byte budget is
// spent, then printed in their original order. Output no runner claims gets the generic ranker here.
#include "tools/verify/important_output.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/support/text.h"
#include "tools/verify/ecosystem.h"
#include "tools/verify/ecosystem_util.h"
#include "tools/verify/locator.h"

namespace agentd::tools::verify {
namespace {

constexpr std::size_t kMaxLineBytes = 400;

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Compiler and build-tool errors, shown whatever the runner: a test command often builds first.
bool is_build_error(std::string_view line) {
  const std::string_view t = support::trim(line);
  return contains(line, ": error:") || contains(line, ": fatal error:") || t.starts_with("error[E") ||
         t.starts_with("error:") || t.starts_with("FAILED: ") || t.starts_with("ninja: build stopped") ||
         contains(line, "make: ***") || contains(line, "make[") || contains(line, "undefined reference to") ||
         t.starts_with("CMake Error");
}

void rank_generic(const std::vector<std::string_view>& lines, Ranks& ranks) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string l = support::ascii_lower_copy(line);
    if (contains(l, "error") || contains(l, "fail") || contains(l, "panic") || contains(l, "traceback") ||
        contains(l, "exception") || contains(l, "assert")) {
      ranks[i] = kDetail;
    } else if (has_location(line)) {
      ranks[i] = kContext;
    }
  }
  // The last lines of a run usually say how it ended.
  int taken = 0;
  for (std::size_t i = lines.size(); i > 0 && taken < 5; --i) {
    if (support::trim(lines[i - 1]).empty()) continue;
    ranks[i - 1] = std::min(ranks[i - 1], kSummary);
    ++taken;
  }
}

// Marks build errors (with the lines that show the code) for every runner.
void rank_build_errors(const std::vector<std::string_view>& lines, Ranks& ranks) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_build_error(lines[i])) continue;
    ranks[i] = std::min(ranks[i], kDetail);
    // "file.cpp: In function 'int f()':" and "In file included from" place the error that follows.
    for (std::size_t j = i; j > 0 && j + 3 > i; --j) {
      const std::string_view before = lines[j - 1];
      if (contains(before, ": In function") || contains(before, ": In member function") ||
          contains(before, ": In instantiation of") || before.starts_with("In file included from")) {
        ranks[j - 1] = std::min(ranks[j - 1], kContext);
      }
    }
    if (contains(lines[i], ": error:") || contains(lines[i], ": fatal error:")) {
      for (std::size_t j = i + 1; j < lines.size() && j <= i + 3; ++j) {
        const std::string_view t = support::trim(lines[j]);
        if (t.empty() || is_build_error(lines[j]) || has_location(lines[j])) break;
        ranks[j] = std::min(ranks[j], kContext);  // "    5 | int broken() ..." and the caret
      }
    }
  }
}

// make, npm scripts and `other` have no ranker of their own: read them as the runner the output shows.
RunnerKind effective_runner(RunnerKind runner, std::string_view output) {
  const Runner* entry = find_runner(runner);
  if (entry == nullptr || entry->rank == nullptr) return sniff_runner(output);
  return runner;
}

// The plain line any runner may print: "N passed, N failed" (", N skipped"), maybe after "Word:".
std::optional<TestCounts> summarise_generic(const OutputLines& lines) {
  TestCounts counts;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string_view t = support::trim(*it);
    const std::size_t colon = t.find(':');
    if (colon != std::string_view::npos && t.substr(0, colon).find(' ') == std::string_view::npos) {
      t = support::trim(t.substr(colon + 1));
    }
    const auto pairs = counts_in(t);
    if (pairs.size() < 2 || pairs[0].second != "passed" || pairs[1].second != "failed") continue;
    if (!is_digits(t.substr(0, t.find(' ')))) continue;
    add_counts(counts, pairs);
    counts.no_tests = counts.total() == 0;
    return counts;
  }
  return std::nullopt;
}

std::string cut_line(std::string_view line) {
  if (line.size() <= kMaxLineBytes) return std::string(line);
  std::size_t end = kMaxLineBytes;
  end = support::utf8_floor(line, end);  // keep UTF-8 whole
  return fmt::format("{} [... {} bytes cut]", line.substr(0, end), line.size() - end);
}

// Counts the non-blank lines left out.
std::string gap(std::size_t lines) { return fmt::format("[... {} line{} left out ...]", lines, lines == 1 ? "" : "s"); }

}  // namespace

std::string strip_terminal_codes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\x1b') {
      // CSI: ESC [ parameters final-byte; OSC: ESC ] ... BEL or ESC \; other: ESC and one byte.
      if (i + 1 < text.size() && text[i + 1] == '[') {
        std::size_t j = i + 2;
        while (j < text.size() &&
               (static_cast<unsigned char>(text[j]) < 0x40 || static_cast<unsigned char>(text[j]) > 0x7e)) {
          ++j;
        }
        i = j;
      } else if (i + 1 < text.size() && text[i + 1] == ']') {
        std::size_t j = i + 2;
        while (j < text.size() && text[j] != '\x07' &&
               !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\')) {
          ++j;
        }
        i = (j < text.size() && text[j] == '\x1b') ? j + 1 : j;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\r') {
      // "\r\n" ends a line; a bare "\r" redraws it: keep only what comes after.
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      out.resize(line_start);
      continue;
    }
    out += c;
    if (c == '\n') line_start = out.size();
  }
  return out;
}

RunnerKind sniff_runner(std::string_view output) {
  static const std::vector<const Runner*> kBySniff = runners_by(&Runner::sniff_order);
  for (const Runner* runner : kBySniff) {
    if (runner->sniff != nullptr && runner->sniff(output)) return runner->kind;
  }
  return RunnerKind::other;
}

std::optional<TestCounts> parse_summary(RunnerKind runner, std::string_view raw) {
  const std::string text = strip_terminal_codes(raw);
  const auto lines = split(text);
  runner = effective_runner(runner, text);
  const Runner* entry = find_runner(runner);
  if (entry != nullptr && entry->summarise != nullptr) return entry->summarise(lines);
  return summarise_generic(lines);
}

std::string extract_important_output(RunnerKind runner, std::string_view raw, std::size_t max_bytes) {
  const std::string text = strip_terminal_codes(raw);
  auto lines = split(text);
  while (!lines.empty() && support::trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) return {};
  runner = effective_runner(runner, text);
  Ranks ranks(lines.size(), kDrop);
  const Runner* entry = find_runner(runner);
  if (entry != nullptr && entry->rank != nullptr) {
    entry->rank(lines, ranks);
  } else {
    rank_generic(lines, ranks);
  }
  rank_build_errors(lines, ranks);
  // The capture's own cut ("[... N bytes of output omitted ...]") tells the reader the output was longer.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("[... ") && contains(lines[i], "bytes of output omitted")) ranks[i] = kSummary;
  }

  // Take whole ranks while they fit; a marker costs about 32 bytes.
  std::vector<std::string> shown(lines.size());
  std::vector<bool> keep(lines.size(), false);
  std::size_t used = 0;
  constexpr std::size_t kMarkerBytes = 32;
  for (int rank : {kSummary, kDetail, kContext}) {
    std::size_t cost = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (ranks[i] == rank) cost += std::min(lines[i].size(), kMaxLineBytes + 24) + 1 + kMarkerBytes;
    }
    if (used + cost <= max_bytes) {
      for (std::size_t i = 0; i < lines.size(); ++i) keep[i] = keep[i] || ranks[i] == rank;
      used += cost;
      continue;
    }
    // This rank does not fit whole: take its lines from the start and from the end (the end holds the
    // summary, the start the first failure), as many as fit.
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (ranks[i] == rank) members.push_back(i);
    }
    std::size_t front = 0;
    std::size_t back = members.size();
    bool from_front = false;
    while (front < back) {
      const std::size_t index = from_front ? members[front] : members[back - 1];
      const std::size_t line_cost = std::min(lines[index].size(), kMaxLineBytes + 24) + 1 + kMarkerBytes;
      if (used + line_cost > max_bytes) break;
      used += line_cost;
      keep[index] = true;
      if (from_front) {
        ++front;
      } else {
        --back;
      }
      from_front = !from_front;
    }
    break;
  }

  // Blank lines left out are not worth a marker; a gap of blank lines only disappears.
  std::string out;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      if (!support::trim(lines[i]).empty()) ++skipped;
      continue;
    }
    if (skipped > 0) {
      out += gap(skipped);
      out += '\n';
      skipped = 0;
    }
    out += cut_line(lines[i]);
    out += '\n';
  }
  if (skipped > 0) {
    out += gap(skipped);
    out += '\n';
  }
  if (out.size() > max_bytes) {
    // Only when lines were cut to kMaxLineBytes and the estimate was off: a hard cut, UTF-8 kept whole.
    std::size_t end = max_bytes;
    end = support::utf8_floor(out, end);
    out.resize(end);
  }
  return out;
}

}  // namespace agentd::tools::verify

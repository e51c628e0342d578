#include "tools/edit.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "core/support/preempt.h"
#include "core/support/text.h"

namespace agentd::tools {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
// Scoring every window of a large file against a long old_string is quadratic: past this many line
// comparisons only the first lines of old_string are scored.
constexpr std::size_t kMaxLineComparisons = 2'000'000;
constexpr double kMinSimilarity = 0.5;
constexpr std::size_t kExcerptLines = 6;
constexpr std::size_t kExcerptLineBytes = 200;

enum class Eol { none, lf, crlf, mixed };

Eol eol_style(std::string_view text) {
  std::size_t lf = 0;
  std::size_t crlf = 0;
  std::size_t next_point = support::kPreemptSliceBytes;
  // From one '\n' to the next (memchr), not byte by byte; done once both styles are seen.
  for (std::size_t i = text.find('\n'); i != std::string_view::npos && (lf == 0 || crlf == 0);
       i = text.find('\n', i + 1)) {
    if (i > 0 && text[i - 1] == '\r') {
      ++crlf;
    } else {
      ++lf;
    }
    if (i >= next_point) {
      support::preemption_point();
      next_point = i + support::kPreemptSliceBytes;
    }
  }
  if (lf == 0 && crlf == 0) return Eol::none;
  if (crlf == 0) return Eol::lf;
  return lf == 0 ? Eol::crlf : Eol::mixed;
}

bool has_lone_lf(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return true;
  }
  return false;
}

std::string to_crlf(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

std::string to_lf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out += s[i];
  }
  return out;
}

// Every position where `needle` starts, overlapping ones included: "aa" is in "aaa" twice, so it does not
// name one place.
std::vector<std::size_t> occurrences(std::string_view haystack, std::string_view needle) {
  std::vector<std::size_t> found;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) {
    found.push_back(at);
  }
  return found;
}

std::size_t line_at(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  support::for_each_slice(text.substr(0, offset), [&line](std::string_view slice) {
    line += static_cast<std::size_t>(std::count(slice.begin(), slice.end(), '\n'));
  });
  return line;
}

// Lines without their '\n' or '\r\n'.
std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

std::string without_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) out += c;
  }
  return out;
}

// 1 for equal lines; else the common head and tail (not overlapping) over the longer line: cheap, and high
// for the usual near misses (a changed word, a missing semicolon).
double line_similarity(std::string_view a, std::string_view b) {
  if (a == b) return 1.0;
  const std::size_t longer = std::max(a.size(), b.size());
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  return static_cast<double>(head + tail) / static_cast<double>(longer);
}

std::string_view utf8_cut(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  cut = support::utf8_floor(text, cut);
  return text.substr(0, cut);
}

std::string excerpt(const std::vector<std::string_view>& lines, std::size_t first, std::size_t last) {
  std::string out;
  const std::size_t shown_last = std::min(last, first + kExcerptLines - 1);
  for (std::size_t n = first; n <= shown_last && n <= lines.size(); ++n) {
    const std::string_view line = lines[n - 1];
    const std::string_view cut = utf8_cut(line, kExcerptLineBytes);
    out += fmt::format("{:>6}\t{}{}\n", n, cut, cut.size() < line.size() ? " [...]" : "");
  }
  if (shown_last < last) out += fmt::format("       [{} more lines]\n", last - shown_last);
  return out;
}

// The windows of the file most like old_string, best first, none overlapping a better one.
std::vector<EditCandidate> closest(std::string_view body, std::string_view old_string) {
  const auto file_lines = split(body);
  auto old_lines = split(old_string);
  // Leading and trailing blank lines of old_string say little about where it belongs.
  while (!old_lines.empty() && without_whitespace(old_lines.front()).empty()) old_lines.erase(old_lines.begin());
  while (!old_lines.empty() && without_whitespace(old_lines.back()).empty()) old_lines.pop_back();
  if (file_lines.empty() || old_lines.empty()) return {};

  std::vector<std::string> file_norm;
  file_norm.reserve(file_lines.size());
  for (const auto line : file_lines) file_norm.push_back(without_whitespace(line));
  std::vector<std::string> old_norm;
  old_norm.reserve(old_lines.size());
  for (const auto line : old_lines) old_norm.push_back(without_whitespace(line));

  const std::size_t n = old_norm.size();
  const std::size_t window = std::min(n, file_lines.size());
  const std::size_t scored = std::clamp<std::size_t>(kMaxLineComparisons / file_lines.size(), 1, window);
  struct Scored {
    std::size_t start;
    double score;
  };
  std::vector<Scored> windows;
  for (std::size_t start = 0; start + window <= file_lines.size(); ++start) {
    double sum = 0;
    for (std::size_t k = 0; k < scored; ++k) sum += line_similarity(file_norm[start + k], old_norm[k]);
    // Lines of old_string past the end of the file count as misses.
    const double score = sum / static_cast<double>(scored) * static_cast<double>(window) / static_cast<double>(n);
    if (score >= kMinSimilarity) windows.push_back(Scored{start, score});
  }
  std::stable_sort(windows.begin(), windows.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });

  std::vector<EditCandidate> out;
  for (const Scored& w : windows) {
    if (out.size() == kEditMaxCandidates) break;
    const std::size_t first = w.start + 1;
    const std::size_t last = w.start + window;
    const bool overlaps = std::any_of(
        out.begin(), out.end(), [&](const EditCandidate& c) { return first <= c.last_line && c.first_line <= last; });
    if (overlaps) continue;
    // Whitespace-equal windows are not exact matches (those were looked for first), so never score 1.
    out.push_back(EditCandidate{first, last, std::min(w.score, 0.99), excerpt(file_lines, first, last)});
  }
  return out;
}

// read_file shows lines as "    12\tcode"; a model that copies them into old_string will never match.
bool looks_numbered(std::string_view old_string) {
  bool any = false;
  for (const auto line : split(old_string)) {
    if (line.empty()) continue;
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) ++i;
    if (i == digits || i >= line.size() || line[i] != '\t') return false;
    any = true;
  }
  return any;
}

std::string line_list(const std::vector<std::size_t>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += i + 1 == lines.size() ? " and " : ", ";
    out += std::to_string(lines[i]);
  }
  return out;
}

}  // namespace

EditOutcome apply_edit(std::string_view content, const EditRequest& request) {
  EditOutcome outcome;
  const bool bom = content.starts_with(kBom);
  const std::string_view body = bom ? content.substr(kBom.size()) : content;
  std::string_view old_string = request.old_string;
  std::string_view new_string = request.new_string;
  // A model that copied the BOM from somewhere must not get a second one.
  if (old_string.starts_with(kBom)) old_string.remove_prefix(kBom.size());
  if (bom && new_string.starts_with(kBom)) new_string.remove_prefix(kBom.size());
  const Eol file_eol = eol_style(body);

  if (old_string == new_string) {
    outcome.status = EditStatus::no_change;
    outcome.message =
        "old_string and new_string are the same, so there is nothing to change. Put the new text in new_string.";
    return outcome;
  }

  // new_string takes the file's line endings when the file has one style; a mixed file keeps what was written.
  const auto convert_new = [&](std::optional<Eol> matched_as) {
    const Eol style = file_eol == Eol::mixed || file_eol == Eol::none ? matched_as.value_or(Eol::none) : file_eol;
    if (style == Eol::crlf) return to_crlf(new_string);
    if (style == Eol::lf) return to_lf(new_string);
    return std::string(new_string);
  };

  if (old_string.empty()) {
    if (!body.empty()) {
      outcome.status = EditStatus::empty_old;
      outcome.message =
          "old_string is empty, which would match everywhere in this non-empty file. Give the exact text to "
          "replace (with enough surrounding lines to be unique), or use write_file to replace the whole file.";
      return outcome;
    }
    outcome.replacement = convert_new(std::nullopt);
    outcome.text = std::string(bom ? kBom : "") + outcome.replacement;
    outcome.replacements = 1;
    outcome.matches = 1;
    outcome.first_line = 1;
    return outcome;
  }

  // The old_string as written first; then with the file's line endings, for a model that wrote LF into a
  // CRLF file (or the reverse).
  struct Variant {
    std::string text;
    std::optional<Eol> eol;  // the line ending it was converted to, if it was
  };
  std::vector<Variant> variants{{std::string(old_string), std::nullopt}};
  if ((file_eol == Eol::crlf || file_eol == Eol::mixed) && has_lone_lf(old_string)) {
    // In a CRLF file an LF the model wrote stands for a line end: "\nb" is a line break and b, not the
    // second half of one "\r\n" (which would leave a lone CR behind).
    const auto at = file_eol == Eol::crlf ? variants.begin() : variants.end();
    variants.insert(at, Variant{to_crlf(old_string), Eol::crlf});
  }
  if (file_eol != Eol::crlf && old_string.find("\r\n") != std::string_view::npos) {
    variants.push_back({to_lf(old_string), Eol::lf});
  }
  const Variant* matched = nullptr;
  std::vector<std::size_t> at;
  for (const Variant& v : variants) {
    at = occurrences(body, v.text);
    if (!at.empty()) {
      matched = &v;
      break;
    }
  }
  outcome.matches = at.size();

  if (matched == nullptr) {
    outcome.status = EditStatus::no_match;
    outcome.candidates = closest(body, to_lf(old_string));
    std::string message = "old_string was not found in the file.";
    if (looks_numbered(old_string)) {
      message +=
          " Its lines start with read_file's line numbers (\"    12<TAB>\"), which are not part of the file: "
          "leave them out.";
    }
    if (outcome.candidates.empty()) {
      message +=
          " Nothing in the file is close to it. Read the file again with read_file and copy the text "
          "to replace exactly.";
    } else {
      message += fmt::format(" The closest text in the file{}:", outcome.candidates.size() == 1 ? " is" : "");
      for (const auto& c : outcome.candidates) {
        message += c.first_line == c.last_line ? fmt::format("\nline {}", c.first_line)
                                               : fmt::format("\nlines {}-{}", c.first_line, c.last_line);
        message +=
            fmt::format(" ({}% similar, whitespace ignored):\n{}", static_cast<int>(c.similarity * 100), c.excerpt);
      }
      message += "Copy old_string exactly from the file, with its whitespace and indentation, and try again.";
    }
    outcome.message = std::move(message);
    return outcome;
  }

  const std::string& needle = matched->text;
  if (at.size() > 1 && !request.replace_all) {
    outcome.status = EditStatus::many_matches;
    const auto lines = split(body);
    std::vector<std::size_t> listed;
    for (const std::size_t offset : at) {
      if (listed.size() == kEditMaxListedMatches) break;
      const std::size_t first = line_at(body, offset);
      const std::size_t last = line_at(body, offset + needle.size() - 1);
      listed.push_back(first);
      outcome.candidates.push_back(EditCandidate{first, last, 1.0, excerpt(lines, first, first)});
    }
    outcome.message = fmt::format(
        "old_string occurs {} times in the file (starting at line{} {}{}); it must match exactly once. Add "
        "surrounding lines to old_string to pick one, or set replace_all to true to change every occurrence.",
        at.size(), listed.size() == 1 ? "" : "s", line_list(listed), listed.size() < at.size() ? ", ..." : "");
    return outcome;
  }

  outcome.replacement = convert_new(matched->eol);
  // An old_string that ends between the CR and the LF of a CRLF file takes the CR along; the file's line
  // end keeps it.
  if (file_eol == Eol::crlf && needle.back() == '\r' &&
      (outcome.replacement.empty() || outcome.replacement.back() != '\r')) {
    outcome.replacement += '\r';
  }
  std::string out(bom ? kBom : "");
  out.reserve(content.size() + outcome.replacement.size());
  std::size_t copied = 0;
  // replace_all takes occurrences left to right, never overlapping one already replaced.
  for (const std::size_t offset : at) {
    if (offset < copied) continue;
    out.append(body.substr(copied, offset - copied));
    out += outcome.replacement;
    copied = offset + needle.size();
    ++outcome.replacements;
    if (!request.replace_all) break;
  }
  out.append(body.substr(copied));
  outcome.first_line = line_at(body, at.front());  // the text before the first change did not move
  outcome.text = std::move(out);
  return outcome;
}

}  // namespace agentd::tools

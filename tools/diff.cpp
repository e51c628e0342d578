#include "tools/diff.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/support/preempt.h"

namespace agentd::tools {

namespace {

// How many bytes `a` and `b` share from the start (`from_end`: from the end), at most `limit`.
std::size_t common_bytes(std::string_view a, std::string_view b, std::size_t limit, bool from_end) {
  constexpr std::size_t kBlock = 4096;
  const auto at = [from_end](std::string_view s, std::size_t i, std::size_t n) {
    return from_end ? s.data() + s.size() - i - n : s.data() + i;
  };
  std::size_t i = 0;
  while (i + kBlock <= limit && std::memcmp(at(a, i, kBlock), at(b, i, kBlock), kBlock) == 0) {
    i += kBlock;
    if (i % support::kPreemptSliceBytes == 0) support::preemption_point();
  }
  while (i < limit && *at(a, i, 1) == *at(b, i, 1)) ++i;
  return i;
}

}  // namespace

std::size_t common_prefix_bytes(std::string_view a, std::string_view b) {
  return common_bytes(a, b, std::min(a.size(), b.size()), false);
}

std::size_t common_suffix_bytes(std::string_view a, std::string_view b, std::size_t limit) {
  return common_bytes(a, b, std::min({limit, a.size(), b.size()}), true);
}

std::size_t line_start_before(std::string_view text, std::size_t at, std::size_t lines) {
  std::size_t start = at;
  while (start > 0 && text[start - 1] != '\n') --start;
  for (std::size_t i = 0; i < lines && start > 0; ++i) {
    --start;
    while (start > 0 && text[start - 1] != '\n') --start;
  }
  return start;
}

std::size_t line_end_after(std::string_view text, std::size_t at, std::size_t lines) {
  std::size_t end = at;
  if (end > 0 && text[end - 1] != '\n') {
    const std::size_t nl = text.find('\n', end);
    end = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  for (std::size_t i = 0; i < lines && end < text.size(); ++i) {
    const std::size_t nl = text.find('\n', end);
    end = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return end;
}

namespace {

using support::Errc;
using support::Error;

constexpr std::string_view kNoNewline = "\\ No newline at end of file\n";

// Each line with its '\n' (the last one may lack it): comparing whole lines then tells "x" from "x\n".
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::size_t length = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return lines;
}

enum class Op : std::uint8_t { equal, remove, insert };

// One line of the alignment. `a` and `b` are the line's index in the old and new text; for a line only one
// side has, the other is how many lines of that side came before it.
struct Entry {
  Op op;
  std::size_t a;
  std::size_t b;
};

// The shortest edit script between a and b (Myers 1986: the greedy forward pass, its trace kept for the walk
// back), or nullopt when it needs more than `max_d` edits. Moves never leave the edit graph: a diagonal no
// in-bounds move reaches holds -1. The trace holds V for every d: O(D^2) memory, which `max_d` bounds
// (16 MiB at the default 2000).
std::optional<std::vector<Entry>> myers(const std::vector<int>& a, const std::vector<int>& b, std::size_t max_d) {
  const auto n = static_cast<std::int64_t>(a.size());
  const auto m = static_cast<std::int64_t>(b.size());
  const std::int64_t limit = std::min<std::int64_t>(n + m, static_cast<std::int64_t>(max_d));
  // trace[d][k + d] = the furthest x on diagonal k after d edits, or -1; 32 bits halve the trace (a file
  // under the 16 MiB read cap has far fewer lines than 2^31).
  std::vector<std::vector<std::int32_t>> trace;
  // How diagonal k is entered at step d >= 1: from k + 1 (down, an insertion) or from k - 1 (right, a
  // removal), whichever in-bounds move gets further; nullopt when neither is in bounds.
  const auto entry = [&](std::int64_t d, std::int64_t k) -> std::optional<bool> {
    const std::vector<std::int32_t>& prev = trace[static_cast<std::size_t>(d - 1)];
    const auto prev_at = [&](std::int64_t kk) -> std::int64_t {
      if (kk < -(d - 1) || kk > d - 1) return -1;
      return prev[static_cast<std::size_t>(kk + d - 1)];
    };
    const std::int64_t from_above = prev_at(k + 1);
    const std::int64_t from_left = prev_at(k - 1);
    const bool down_ok = from_above >= 0 && from_above - (k + 1) + 1 <= m;
    const bool right_ok = from_left >= 0 && from_left + 1 <= n;
    if (!down_ok && !right_ok) return std::nullopt;
    return down_ok && (!right_ok || from_left < from_above);
  };
  const auto x_at = [&](std::int64_t d, std::int64_t k) -> std::int64_t {
    return trace[static_cast<std::size_t>(d)][static_cast<std::size_t>(k + d)];
  };

  std::int64_t found = -1;
  for (std::int64_t d = 0; d <= limit && found < 0; ++d) {
    trace.emplace_back(static_cast<std::size_t>(2 * d + 1), -1);
    for (std::int64_t k = -d; k <= d; k += 2) {
      std::int64_t x = 0;
      if (d > 0) {
        const auto down = entry(d, k);
        if (!down) continue;
        x = *down ? x_at(d - 1, k + 1) : x_at(d - 1, k - 1) + 1;
      }
      std::int64_t y = x - k;
      while (x < n && y < m && a[static_cast<std::size_t>(x)] == b[static_cast<std::size_t>(y)]) {
        ++x;
        ++y;
      }
      trace.back()[static_cast<std::size_t>(k + d)] = static_cast<std::int32_t>(x);
      if (x == n && y == m) found = d;
    }
  }
  if (found < 0) return std::nullopt;

  // Walk back from (n, m), collecting entries in reverse.
  std::vector<Entry> reversed;
  std::int64_t x = n;
  std::int64_t y = m;
  for (std::int64_t d = found; d > 0; --d) {
    const std::int64_t k = x - y;
    const bool down = entry(d, k).value();
    const std::int64_t prev_k = down ? k + 1 : k - 1;
    const std::int64_t prev_x = x_at(d - 1, prev_k);
    const std::int64_t prev_y = prev_x - prev_k;
    const std::int64_t mid_x = down ? prev_x : prev_x + 1;  // where the edit lands, before the snake
    while (x > mid_x) {
      --x;
      --y;
      reversed.push_back(Entry{Op::equal, static_cast<std::size_t>(x), static_cast<std::size_t>(y)});
    }
    if (down) {
      reversed.push_back(Entry{Op::insert, static_cast<std::size_t>(prev_x), static_cast<std::size_t>(prev_y)});
    } else {
      reversed.push_back(Entry{Op::remove, static_cast<std::size_t>(prev_x), static_cast<std::size_t>(prev_y)});
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0) {
    --x;
    --y;
    reversed.push_back(Entry{Op::equal, static_cast<std::size_t>(x), static_cast<std::size_t>(y)});
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

// The alignment of two line lists: common head and tail set aside, Myers on the middle, and past
// `max_d` edits the middle replaced whole.
std::vector<Entry> align(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                         std::size_t max_d) {
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;

  // Lines as small integers: one hash per line instead of one per comparison.
  std::unordered_map<std::string_view, int> ids;
  const auto ids_of = [&](const std::vector<std::string_view>& lines) {
    std::vector<int> out;
    out.reserve(lines.size() - head - tail);
    for (std::size_t i = head; i < lines.size() - tail; ++i) {
      out.push_back(ids.try_emplace(lines[i], static_cast<int>(ids.size())).first->second);
    }
    return out;
  };
  const std::vector<int> mid_a = ids_of(a);
  const std::vector<int> mid_b = ids_of(b);

  std::vector<Entry> entries;
  entries.reserve(a.size() + b.size());
  for (std::size_t i = 0; i < head; ++i) entries.push_back(Entry{Op::equal, i, i});
  auto middle = myers(mid_a, mid_b, max_d);
  if (middle) {
    for (const Entry& e : *middle) entries.push_back(Entry{e.op, e.a + head, e.b + head});
  } else {
    for (std::size_t i = 0; i < mid_a.size(); ++i) entries.push_back(Entry{Op::remove, head + i, head});
    for (std::size_t j = 0; j < mid_b.size(); ++j) entries.push_back(Entry{Op::insert, head + mid_a.size(), head + j});
  }
  for (std::size_t t = 0; t < tail; ++t) {
    entries.push_back(Entry{Op::equal, a.size() - tail + t, b.size() - tail + t});
  }
  return entries;
}

// "3" for one line, "3,0" / "3,7" otherwise, as `diff -u` writes a range.
std::string range(std::size_t start, std::size_t count) {
  if (count == 1) return fmt::format("{}", start);
  return fmt::format("{},{}", start, count);
}

void append_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out += line;
  if (line.empty() || line.back() != '\n') {
    out += '\n';
    out += kNoNewline;
  }
}

}  // namespace

UnifiedDiff unified_diff(std::string_view before, std::string_view after, const DiffOptions& options) {
  UnifiedDiff diff;
  if (before == after) return diff;
  const std::size_t context = options.context;
  // The common head and tail, but for `context` lines of each, are set aside as bytes before anything is
  // split into lines: they hold no change, and every hunk comes out the same, only `skipped_lines` further
  // down. A one-line edit of a 16 MiB file then costs two memcmp passes instead of diffing 300000 lines.
  const std::size_t prefix = common_prefix_bytes(before, after);
  const std::size_t skip_head = line_start_before(before, prefix, context);
  std::size_t skip_tail = 0;  // bytes at the end of both texts left out
  const std::size_t suffix = common_suffix_bytes(before, after, std::min(before.size(), after.size()) - prefix);
  // The suffix starts a line in at most one of the texts (the bytes before it differ), so what is left
  // out starts after its first line end, `context` lines further on.
  if (const std::size_t nl = before.find('\n', before.size() - suffix); nl != std::string_view::npos) {
    skip_tail = before.size() - line_end_after(before, nl + 1, context);
  }
  std::size_t skipped_lines = 0;
  support::for_each_slice(before.substr(0, skip_head), [&skipped_lines](std::string_view slice) {
    skipped_lines += static_cast<std::size_t>(std::count(slice.begin(), slice.end(), '\n'));
  });
  const auto a = lines_of(before.substr(skip_head, before.size() - skip_tail - skip_head));
  const auto b = lines_of(after.substr(skip_head, after.size() - skip_tail - skip_head));
  const std::vector<Entry> entries = align(a, b, options.max_edit_distance);

  diff.text = fmt::format("--- {}\n+++ {}\n", options.old_label, options.new_label);
  const std::size_t count = entries.size();
  std::size_t i = 0;
  while (i < count) {
    if (entries[i].op == Op::equal) {
      ++i;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change that is
    // at most 2 * context equal lines from the one before it.
    const std::size_t begin = i >= context ? i - context : 0;
    std::size_t last_change = i;
    std::size_t j = i;
    while (j < count) {
      if (entries[j].op != Op::equal) {
        last_change = j++;
        continue;
      }
      std::size_t run_end = j;
      while (run_end < count && entries[run_end].op == Op::equal) ++run_end;
      if (run_end == count || run_end - j > 2 * context) break;
      j = run_end;
    }
    const std::size_t end = std::min(count, last_change + 1 + context);

    std::size_t old_count = 0;
    std::size_t new_count = 0;
    for (std::size_t k = begin; k < end; ++k) {
      if (entries[k].op != Op::insert) ++old_count;
      if (entries[k].op != Op::remove) ++new_count;
    }
    // An empty range names the line before it (0 at the start of the file), as `diff -u` does.
    const std::size_t old_start = skipped_lines + (old_count > 0 ? entries[begin].a + 1 : entries[begin].a);
    const std::size_t new_start = skipped_lines + (new_count > 0 ? entries[begin].b + 1 : entries[begin].b);
    diff.text += fmt::format("@@ -{} +{} @@\n", range(old_start, old_count), range(new_start, new_count));
    for (std::size_t k = begin; k < end; ++k) {
      const Entry& e = entries[k];
      switch (e.op) {
        case Op::equal: append_line(diff.text, ' ', a[e.a]); break;
        case Op::remove:
          append_line(diff.text, '-', a[e.a]);
          ++diff.stats.removed;
          break;
        case Op::insert:
          append_line(diff.text, '+', b[e.b]);
          ++diff.stats.added;
          break;
      }
    }
    ++diff.stats.hunks;
    i = end;
  }
  return diff;
}

namespace {

// "12" or "12,3" of a hunk header.
bool parse_range(std::string_view text, std::size_t& start, std::size_t& count) {
  const std::size_t comma = text.find(',');
  const std::string_view first = text.substr(0, comma);
  count = 1;
  auto [p, ec] = std::from_chars(first.data(), first.data() + first.size(), start);
  if (ec != std::errc() || p != first.data() + first.size()) return false;
  if (comma == std::string_view::npos) return true;
  const std::string_view second = text.substr(comma + 1);
  auto [q, ec2] = std::from_chars(second.data(), second.data() + second.size(), count);
  return ec2 == std::errc() && q == second.data() + second.size();
}

}  // namespace

support::Result<std::string> apply_unified_diff(std::string_view before, std::string_view diff) {
  if (diff.empty()) return std::string(before);
  const auto old_lines = lines_of(before);
  auto diff_lines = lines_of(diff);
  if (diff_lines.size() < 2 || !diff_lines[0].starts_with("--- ") || !diff_lines[1].starts_with("+++ ")) {
    return Error(Errc::parse_error, "a unified diff starts with --- and +++ lines");
  }
  std::string out;
  std::size_t pos = 0;  // next line of `before` not yet copied or consumed
  std::size_t i = 2;
  while (i < diff_lines.size()) {
    std::string_view header = diff_lines[i];
    if (!header.starts_with("@@ -") || !header.ends_with(" @@\n")) {
      return Error(Errc::parse_error, fmt::format("line {}: expected a hunk header", i + 1));
    }
    header = header.substr(4, header.size() - 4 - 4);
    const std::size_t space = header.find(" +");
    std::size_t old_start = 0;
    std::size_t old_count = 0;
    std::size_t new_start = 0;
    std::size_t new_count = 0;
    if (space == std::string_view::npos || !parse_range(header.substr(0, space), old_start, old_count) ||
        !parse_range(header.substr(space + 2), new_start, new_count)) {
      return Error(Errc::parse_error, fmt::format("line {}: a malformed hunk header", i + 1));
    }
    const std::size_t first = old_count > 0 ? old_start - 1 : old_start;
    if ((old_count > 0 && old_start == 0) || first < pos || first > old_lines.size()) {
      return Error(Errc::conflict, fmt::format("line {}: the hunk starts outside the text", i + 1));
    }
    for (; pos < first; ++pos) out += old_lines[pos];
    ++i;
    std::size_t seen_old = 0;
    std::size_t seen_new = 0;
    while (i < diff_lines.size() && (seen_old < old_count || seen_new < new_count)) {
      const std::string_view line = diff_lines[i];
      if (line.size() < 2) return Error(Errc::parse_error, fmt::format("line {}: an empty line inside a hunk", i + 1));
      std::string content(line.substr(1));
      ++i;
      if (i < diff_lines.size() && diff_lines[i] == kNoNewline) {
        if (content.empty() || content.back() != '\n') return Error(Errc::parse_error, "a misplaced no-newline mark");
        content.pop_back();
        ++i;
      }
      const char prefix = line.front();
      if (prefix == ' ' || prefix == '-') {
        if (pos >= old_lines.size() || old_lines[pos] != content) {
          return Error(Errc::conflict,
                       fmt::format("line {} of the diff does not match line {} of the text", i, pos + 1));
        }
        ++pos;
        ++seen_old;
        if (prefix == ' ') {
          out += content;
          ++seen_new;
        }
      } else if (prefix == '+') {
        out += content;
        ++seen_new;
      } else {
        return Error(Errc::parse_error, fmt::format("line {}: a hunk line starts with ' ', '-' or '+'", i));
      }
    }
    if (seen_old != old_count || seen_new != new_count) {
      return Error(Errc::parse_error, "a hunk has fewer lines than its header says");
    }
  }
  for (; pos < old_lines.size(); ++pos) out += old_lines[pos];
  return out;
}

}  // namespace agentd::tools

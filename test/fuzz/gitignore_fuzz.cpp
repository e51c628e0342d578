// libFuzzer target: arbitrary .gitignore text and arbitrary paths through the ignore matcher. Checks that
// nothing crashes or hangs (wildmatch's backtracking stays bounded on hostile patterns), and that the
// answers are consistent: an ignored path has a deciding pattern that is not a negation.
// Input: the ignore file's text, a NUL byte, then one path per line.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tools/ignore.h"

namespace {

// Bounds per input, so one run stays well under libFuzzer's timeout whatever the bytes.
constexpr std::size_t kMaxPaths = 64;
constexpr std::size_t kMaxPathBytes = 512;
constexpr std::size_t kMaxPatternsTried = 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view text = input.substr(0, split);
  std::string_view paths = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);

  const agentd::tools::IgnoreFile file(text);
  agentd::tools::IgnoreRules rules;
  rules.add_gitignore("", text);
  rules.add_gitignore("sub", text);  // the same rules one level down, so nested precedence runs too
  rules.set_exclude(text);

  for (std::size_t n = 0; n < kMaxPaths && !paths.empty(); ++n) {
    const std::size_t newline = paths.find('\n');
    std::string_view path = paths.substr(0, newline);
    paths.remove_prefix(newline == std::string_view::npos ? paths.size() : newline + 1);
    if (path.size() > kMaxPathBytes) path = path.substr(0, kMaxPathBytes);
    for (const bool is_dir : {false, true}) {
      const auto verdict = rules.check(path, is_dir);
      if (verdict.ignored && (verdict.pattern == nullptr || verdict.pattern->negative)) std::abort();
      if (verdict.pattern != nullptr && verdict.source.empty()) std::abort();
      const auto* own = file.match(path, is_dir);
      if (own != nullptr && (own->pattern.empty() || (own->directory_only && !is_dir))) std::abort();
    }
    std::size_t tried = 0;
    for (const auto& pattern : file.patterns()) {
      if (++tried > kMaxPatternsTried) break;
      (void)agentd::tools::wildmatch(pattern.pattern, path, true);
      (void)agentd::tools::wildmatch(pattern.pattern, path, false);
    }
  }
  return 0;
}

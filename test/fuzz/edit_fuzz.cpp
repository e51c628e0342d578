// libFuzzer target: bytes -> (file content, old_string, new_string, replace_all) -> apply_edit, then the
// diff of the change -> our applier. Checks that nothing crashes or hangs, that an applied edit keeps the BOM
// and a CRLF file's line endings, that a refused one says why, and that every diff re-applies to exactly
// the edited text.
//
// Input: byte 0 holds the flags (bit 0 replace_all, bits 1-2 the diff context, bits 3-4 the diff's edit
// distance cap: 8, 64, 512 or the default 2000), the rest is split at the first two "\x1f" bytes into
// content, old_string and new_string. Small caps reach the "middle replaced whole" path with short inputs and
// keep the fuzzer fast: `replace_all` turns a short input into thousands of lines, and a diff at the default
// cap costs up to 2000^2 steps. For the same reason the diffs are checked only for texts up to
// kMaxDiffedBytes (the edit itself is checked whatever its size): under ASan and libFuzzer's comparison
// tracing, a 7 KB text of 700 changed lines took 0.5 s to diff twice, which held the whole target to a few
// hundred executions a second, and sizes past a few KB add no path of the diff that smaller ones lack (the
// unit tests diff large files).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tools/diff.h"
#include "tools/edit.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::string_view next_part(std::string_view& rest) {
  const std::size_t cut = rest.find('\x1f');
  const std::string_view part = rest.substr(0, cut);
  rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  return part;
}

bool has_lone_lf(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) return true;
  }
  return false;
}

bool pure_crlf(std::string_view text) {
  bool any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    if (i == 0 || text[i - 1] != '\r') return false;
    any = true;
  }
  return any;
}

constexpr std::size_t kMaxDiffedBytes = 2048;

void check_diff(std::string_view before, std::string_view after, std::size_t context, std::size_t max_edits) {
  if (before.size() > kMaxDiffedBytes || after.size() > kMaxDiffedBytes) return;
  agentd::tools::DiffOptions options;
  options.context = context;
  options.max_edit_distance = max_edits;
  options.old_label = "a";
  options.new_label = "a";
  const auto diff = agentd::tools::unified_diff(before, after, options);
  check(diff.text.empty() == (before == after));
  auto applied = agentd::tools::apply_unified_diff(before, diff.text);
  check(applied.has_value() && *applied == after);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool replace_all = (data[0] & 1) != 0;
  const std::size_t context = (data[0] >> 1) & 3;
  constexpr std::size_t kEditCaps[] = {8, 64, 512, 2000};
  const std::size_t max_edits = kEditCaps[(data[0] >> 3) & 3];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string_view content = next_part(rest);
  const std::string_view old_string = next_part(rest);
  const std::string_view new_string = rest;

  using agentd::tools::EditStatus;
  const auto out = agentd::tools::apply_edit(content, agentd::tools::EditRequest{old_string, new_string, replace_all});
  if (out.status == EditStatus::applied) {
    check(out.message.empty());
    check(out.replacements >= 1 && out.first_line >= 1);
    check(out.replacements == 1 || replace_all);
    if (content.starts_with("\xEF\xBB\xBF")) check(std::string_view(out.text).starts_with("\xEF\xBB\xBF"));
    // A CRLF file stays CRLF whatever endings the model wrote (a CR the model typed alone can end up
    // before an LF of the file, which is still CRLF).
    if (pure_crlf(content)) check(!has_lone_lf(out.text));
    check_diff(content, out.text, context, max_edits);
  } else {
    check(!out.message.empty());
    check(out.text.empty());
    check(out.status != EditStatus::many_matches || out.matches > 1);
    check(out.candidates.size() <= agentd::tools::kEditMaxListedMatches);
  }
  // The diff of any two texts re-applies, whatever the edit did.
  check_diff(content, new_string, context, max_edits);
  return 0;
}

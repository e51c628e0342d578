// Applying one edit_file call to a file's text, with no I/O: find old_string exactly once (or every time,
// with replace_all) and put new_string there. When it cannot, the outcome says how many matches there were
// and where the closest candidates are, so the model can fix its old_string instead of guessing.
//
// Line endings and a BOM belong to the file, not to the model: in a CRLF file an old_string written with LF
// still matches, and new_string is written with CRLF; a UTF-8 BOM is kept and never matched against.
// An empty old_string fills an empty file and is refused for any other (it would match everywhere).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentd::tools {

// Cap on the candidates a failed edit lists, and on the matches a "many" failure names by line.
inline constexpr std::size_t kEditMaxCandidates = 3;
inline constexpr std::size_t kEditMaxListedMatches = 10;

struct EditRequest {
  std::string_view old_string;
  std::string_view new_string;
  bool replace_all = false;
};

// Where old_string (nearly) is: lines first..last (1-based) of the file.
struct EditCandidate {
  std::size_t first_line = 0;
  std::size_t last_line = 0;
  double similarity = 0;  // 1: an exact match; below: how close (whitespace ignored first, then characters)
  std::string excerpt;    // those lines of the file, numbered like read_file, cut to a few
};

enum class EditStatus {
  applied,
  no_match,      // old_string is not in the file
  many_matches,  // more than once, and replace_all is not set
  no_change,     // old_string and new_string are the same
  empty_old,     // old_string is empty and the file is not
};

struct EditOutcome {
  EditStatus status = EditStatus::applied;
  std::string text;                       // applied: the whole new content of the file
  std::size_t replacements = 0;           // applied: how many places changed
  std::size_t first_line = 0;             // applied: the line (1-based, in the new text) of the first change
  std::size_t matches = 0;                // how many times old_string occurs
  std::string replacement;                // new_string as written into the file (line endings converted)
  std::string message;                    // not applied: what went wrong and how to recover
  std::vector<EditCandidate> candidates;  // no_match: the closest places; many_matches: the matches
};

EditOutcome apply_edit(std::string_view content, const EditRequest& request);

}  // namespace agentd::tools

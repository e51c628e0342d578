// File transactions (DESIGN.md section 5): a tool that changes a file first hands the file's pre-image to the
// session's ChangeJournal, which makes it durable (the engine keeps it in a content-addressed blob table, so
// /undo can put it back); only then is the file replaced, atomically, and read back to verify it. Tools know
// the journal only through this interface: nothing here knows of sessions, turns or SQLite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "core/support/cancel.h"
#include "core/support/result.h"
#include "core/support/trace.h"

namespace agentd::tools {

class FileAccess;  // tools/tool.h

// One change to one file, as the journal records it before the change happens.
struct FileChange {
  std::string path;                       // absolute
  std::optional<std::string> before;      // the bytes being replaced; nullopt: the file does not exist yet
  std::uint32_t mode = 0;                 // permission bits of the file before the change (0 when it did not exist)
  std::optional<std::string> after_hash;  // sha256 hex of the bytes about to be written; nullopt: a removal
};

class ChangeJournal {
 public:
  virtual ~ChangeJournal() = default;
  // Records `change` durably (its pre-image included); the file must not be touched unless this succeeded.
  // Returns an id for abandon(). Errors end the change: nothing is written.
  virtual boost::asio::awaitable<support::Result<std::int64_t>> record(FileChange change) = 0;
  // The change recorded under `id` did not happen after all (the write failed, or the file changed under
  // us): the journal forgets it.
  virtual void abandon(std::int64_t id) = 0;
};

// What a commit replaces and what it writes.
struct FileCommit {
  std::filesystem::path path;         // absolute, already through the PathGuard
  std::optional<std::string> before;  // the bytes the change was built on; nullopt: the file must not exist
  std::optional<std::string> after;   // the new bytes; nullopt: remove the file
  std::optional<std::uint32_t> mode;  // permission bits to write with; nullopt: a new file's default
  std::uint32_t before_mode = 0;      // for the journal: the file's mode now
  // The text the change is about (edit_file: the replacement as written into the file; write_file: the
  // content), looked for in what is read back. Empty: the whole of `after`.
  std::string expected_text;
  // Set when `before` is the editor's buffer (FileAccess::writes_buffers): the check, the write and the
  // read-back then go through it, and the editor saves the file. A change of an existing file only.
  FileAccess* editor = nullptr;
  // Where the write's span (fs.atomic_write) is recorded; may be null.
  support::SpanBuffer* spans = nullptr;
};

enum class CommitStatus {
  committed,  // the file now holds `after` (or is gone)
  conflict,   // the file no longer held `before` when the write was due: nothing was written
  failed,     // the write failed: the file still holds `before`; `message` says why
};

struct CommitResult {
  CommitStatus status = CommitStatus::committed;
  std::string message;  // conflict or failed: what happened
  // Two questions about what is on disk afterwards, which differ as soon as something rewrites the file
  // on write (a formatter, a filter, another program):
  bool read_back = false;   // committed: did the bytes land? The file reads back as `after` (or is gone)
  bool text_found = false;  // committed: does the file hold `expected_text` (all of `after` when empty)?
  std::optional<std::int64_t> journal_id;
};

// The two answers for a file that reads back as `on_disk` after `written` was written (see CommitResult).
struct ReadBackCheck {
  bool read_back = false;
  bool text_found = false;
};
ReadBackCheck check_read_back(std::string_view on_disk, std::string_view written, std::string_view expected_text);

// The transaction: records the change in `journal` (when not null), then, holding a lock that orders it
// against every other commit to the same path in this process, checks that the file still holds `before`,
// writes `after` with write_file_atomically (or removes the file), and reads it back. The check is what
// makes two racing edits safe: the second finds the first one's bytes and reports a conflict instead of
// overwriting them. A commit that does not happen is abandoned in the journal. Errc::cancelled when
// cancelled before the write; a journal error is returned as is (nothing written). The disk's work runs
// off the event loop. Through the editor (FileCommit::editor) the check, the write and the read-back are
// its requests, and the editor orders them against the user's typing.
boost::asio::awaitable<support::Result<CommitResult>> commit_file(FileCommit commit, ChangeJournal* journal,
                                                                  support::CancelToken cancel);

}  // namespace agentd::tools

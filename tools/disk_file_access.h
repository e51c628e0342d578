// FileAccess straight from disk, for sessions whose client offers no fs/read_text_file (scripts, the
// CLI), plus the blocking whole-file read the file tools share. Blocking POSIX I/O: the engine runs
// tool calls off its event loop, so a slow disk stalls one call, not the session.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/support/result.h"
#include "tools/tool.h"

namespace agentd::tools {

// Whole-file reads are capped: a model gains nothing from a 2 GB log, and the daemon must not
// allocate it. read_file pages through anything below the cap.
inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t{16} << 20;

// Reads the bytes of a regular file. Errc::not_found when it does not exist, invalid_argument when it
// is a directory or not a regular file (a FIFO would block forever), limit_exceeded over `max_bytes`,
// io otherwise (with the errno as native code).
support::Result<std::string> read_disk_file(const std::filesystem::path& path,
                                            std::size_t max_bytes = kDefaultMaxFileBytes);

class DiskFileAccess final : public FileAccess {
 public:
  explicit DiskFileAccess(std::size_t max_bytes = kDefaultMaxFileBytes) : max_bytes_(max_bytes) {}
  boost::asio::awaitable<support::Result<std::string>> read_text(std::string path,
                                                                 support::CancelToken cancel) override;

 private:
  std::size_t max_bytes_;
};

}  // namespace agentd::tools

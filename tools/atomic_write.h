// Replacing a file so that a crash leaves either the old bytes or the new ones, never a torn mix: the
// file transactions of DESIGN.md section 5 build on this (write_file now, edit_file and /undo next).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/support/result.h"

namespace agentd::tools {

// Writes `bytes` to a temporary file in the same directory (a rename is atomic only within one file
// system), fsyncs it, renames it over `path`, then fsyncs the directory so the rename itself survives a
// crash. `mode` sets the permission bits (pass an existing file's to keep them); without it a new file
// gets 0666 minus the umask, like any file a program creates. The temporary is removed on failure.
// Errc::io with the errno as native code. Blocking.
support::Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                            std::optional<std::uint32_t> mode = std::nullopt);

}  // namespace agentd::tools

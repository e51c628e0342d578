// Opening what the PathGuard resolved without trusting the disk to stay as it was checked: the guard
// resolves every symlink, so a path it hands out has none left, and these opens refuse to follow any.
// If a directory or the file itself was swapped for a symlink after the check (by a process racing the
// tool), the open fails instead of landing outside the workspace.
#pragma once

#include <filesystem>

#include "core/support/result.h"
#include "core/support/unique_fd.h"

namespace agentd::tools {

using FileDescriptor = support::UniqueFd;

// Opens the directory `absolute` (O_RDONLY | O_DIRECTORY), walking down from `/` one component at a time
// without following a symlink anywhere. Errc::not_found when a component is missing; Errc::conflict, with a
// message that says the path changed, when a component is a symlink (or no longer a directory).
support::Result<FileDescriptor> open_directory_nofollow(const std::filesystem::path& absolute);

// Opens the file `absolute` with `flags` (O_CLOEXEC | O_NOFOLLOW are added) below a directory opened with
// open_directory_nofollow. Errors as there; the errno of a failed final open is kept in the Error.
support::Result<FileDescriptor> open_file_nofollow(const std::filesystem::path& absolute, int flags, unsigned mode = 0);

}  // namespace agentd::tools

// `agentd sandbox-exec [options] -- PROGRAM [ARGS...]`: runs one program under the same sandbox the shell
// tool applies (tools/sandbox.h: Landlock writes only in the roots, a private TMPDIR and the extra writable
// directories; the mount namespace that makes .agentd/, .claude/ and git's control files read-only and
// hides the user's secrets and deny-listed files; the network cut off when asked) and with the same
// secret-free environment. For commands agentd hands to something else to run, such as an editor's
// terminal (ACP terminal/create), so they are confined exactly as agentd's own are.
//
// Options: --root DIR (a workspace root: writable and protected; repeatable; default the cwd),
// --writable DIR, --deny-path PATTERN, --env-allow NAME, --secret-env NAME (repeatable), --no-network,
// --allow-unsandboxed (run without the sandbox, with a note on stderr, where the kernel cannot give it;
// else refuse). Exit status: the program's (128 + signal when a signal ended it); 126 when the sandbox
// could not be applied or the program not run, 127 when it was not found, 2 for bad options.
#pragma once

#include <string>
#include <vector>

namespace agentd::daemon {

// `args` are the words after `sandbox-exec`. Runs the program to its end and returns the exit status
// agentd should exit with. Call it before any thread starts (it forks).
int run_sandbox_exec(const std::vector<std::string>& args);

}  // namespace agentd::daemon

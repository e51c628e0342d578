// Text from agentd (the model's words, tool titles, file contents in diffs, commands a repository named)
// made safe for a terminal before `agent` prints it. A model follows what it read, and a cloned
// repository is a stranger's: either can carry escape sequences that retitle the window, write the
// clipboard (OSC 52), hide or rewrite what was printed (cursor moves, `\r`), or draw fake prompts.
// Control characters become visible Unicode control pictures (ESC is `␛`), so nothing reaches the
// terminal as a command and the reader still sees that something odd was there. The CLI's own colours
// are added after this, by its Style.
#pragma once

#include <string>
#include <string_view>

namespace agentd::daemon::cli {

// `\n` and `\t` stay; every other C0 control, DEL and the C1 controls (U+0080 to U+009F) are replaced;
// bytes that are not UTF-8 become U+FFFD.
std::string terminal_safe(std::string_view text);

}  // namespace agentd::daemon::cli

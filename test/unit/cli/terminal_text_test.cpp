// What `agent` prints of agentd's text cannot command the terminal: a hostile model or repository's
// escape sequences show as visible characters.
#include "daemon/cli/terminal_text.h"

#include <gtest/gtest.h>

namespace agentd::daemon::cli {
namespace {

TEST(TerminalText, PlainTextAndUnicodeStayAsTheyAre) {
  EXPECT_EQ(terminal_safe("fix the bug\n\tin parse() — naïve 日本語 🚀\n"),
            "fix the bug\n\tin parse() — naïve 日本語 🚀\n");
  EXPECT_EQ(terminal_safe(""), "");
}

TEST(TerminalText, EscapeSequencesCannotReachTheTerminal) {
  // Retitling the window, writing the clipboard (OSC 52), clearing the screen, moving the cursor.
  const std::string hostile =
      "\x1b]0;pwned\x07"
      "\x1b]52;c;cm0gLXJmIH4=\x07"
      "\x1b[2J\x1b[1;1H"
      "done";
  const std::string safe = terminal_safe(hostile);
  EXPECT_EQ(safe.find('\x1b'), std::string::npos);
  EXPECT_EQ(safe.find('\x07'), std::string::npos);
  EXPECT_EQ(safe, "␛]0;pwned␇␛]52;c;cm0gLXJmIH4=␇␛[2J␛[1;1Hdone");
  // A carriage return that would let text overwrite its own line, backspaces, DEL.
  EXPECT_EQ(terminal_safe("ok\rrm -rf ~\b\x7f"), "ok␍rm -rf ~␈␡");
  // C1 controls: CSI encoded as UTF-8 (U+009B), and a raw 0x9B byte that is not UTF-8.
  EXPECT_EQ(terminal_safe("a\xC2\x9B"
                          "31mb"),
            "a\xEF\xBF\xBD"
            "31mb");
  EXPECT_EQ(terminal_safe("a\x9B"
                          "31mb"),
            "a\xEF\xBF\xBD"
            "31mb");
  // Broken and overlong UTF-8.
  EXPECT_EQ(terminal_safe("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(terminal_safe("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace agentd::daemon::cli

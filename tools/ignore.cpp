#include "tools/ignore.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace agentd::tools {
namespace {

using Byte = unsigned char;

// wildmatch()'s answers. The aborts prune the backtracking: kAbortAll means no later start of the
// current `*` can match either, kAbortToStarStar that only an enclosing `**` may retry.
enum class Wild { match, no_match, abort_all, abort_to_star_star };

// A pattern or a text as [begin, end); past the end reads as NUL, which is how git's C strings end. A NUL
// inside ends them as well, as it would in git.
struct Cursor {
  const Byte* end;
  Byte at(const Byte* p) const noexcept { return p < end ? *p : Byte{0}; }
};

bool is_glob_special(Byte c) noexcept { return c == '*' || c == '?' || c == '[' || c == '\\'; }

// The character classes git's wildmatch knows, over git's own (locale-free, ASCII) ctype.
bool in_class(std::string_view name, Byte c, bool* known) {
  *known = true;
  const bool ascii = c < 0x80;
  const bool upper = c >= 'A' && c <= 'Z';
  const bool lower = c >= 'a' && c <= 'z';
  const bool digit = c >= '0' && c <= '9';
  const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
  const bool print = c >= 0x20 && c <= 0x7e;
  if (name == "alnum") return upper || lower || digit;
  if (name == "alpha") return upper || lower;
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "cntrl") return ascii && (c < 0x20 || c == 0x7f);
  if (name == "digit") return digit;
  if (name == "graph") return print && !space;
  if (name == "lower") return lower;
  if (name == "print") return print;
  if (name == "punct") return print && !space && !upper && !lower && !digit;
  if (name == "space") return space;
  if (name == "upper") return upper;
  if (name == "xdigit") return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  *known = false;
  return false;
}

// A line-by-line port of dowild() from git's wildmatch.c (without case folding), on bounded buffers.
Wild dowild(const Byte* p, const Cursor& pc, const Byte* pattern_start, const Byte* text, const Cursor& tc,
            bool pathname) {
  Byte p_ch = 0;
  for (; (p_ch = pc.at(p)) != 0; ++text, ++p) {
    Byte t_ch = tc.at(text);
    if (t_ch == 0 && p_ch != '*') return Wild::abort_all;
    switch (p_ch) {
      case '\\':
        // Literal match with the next character; a trailing backslash matches nothing.
        p_ch = pc.at(++p);
        if (t_ch != p_ch) return Wild::no_match;
        continue;
      default:
        if (t_ch != p_ch) return Wild::no_match;
        continue;
      case '?':
        if (pathname && t_ch == '/') return Wild::no_match;
        continue;
      case '*': {
        bool match_slash = false;
        if (pc.at(++p) == '*') {
          const Byte* prev_p = p - 2;
          while (pc.at(++p) == '*') {
          }
          if (!pathname) {
            match_slash = true;
          } else if ((prev_p < pattern_start || *prev_p == '/') &&
                     (pc.at(p) == 0 || pc.at(p) == '/' || (pc.at(p) == '\\' && pc.at(p + 1) == '/'))) {
            // `**/` may match no directory at all: "a/**/b" matches "a/b".
            if (pc.at(p) == '/' && dowild(p + 1, pc, pattern_start, text, tc, pathname) == Wild::match) {
              return Wild::match;
            }
            match_slash = true;
          } else {
            match_slash = false;  // `**` inside a component is a plain `*`
          }
        } else {
          match_slash = !pathname;
        }
        if (pc.at(p) == 0) {
          // A trailing `**` matches everything; a trailing `*` only what has no more slashes.
          if (!match_slash && text < tc.end && std::memchr(text, '/', static_cast<std::size_t>(tc.end - text))) {
            return Wild::no_match;
          }
          return Wild::match;
        }
        if (!match_slash && pc.at(p) == '/') {
          // One `*` followed by a slash matches the rest of this component.
          const void* slash = text < tc.end ? std::memchr(text, '/', static_cast<std::size_t>(tc.end - text)) : nullptr;
          if (slash == nullptr) return Wild::no_match;
          text = static_cast<const Byte*>(slash);
          break;  // the loop's increment consumes the slash on both sides
        }
        for (;;) {
          if (t_ch == 0) break;
          // Skip ahead to the next place the literal after the star can start.
          if (!is_glob_special(pc.at(p))) {
            p_ch = pc.at(p);
            while ((t_ch = tc.at(text)) != 0 && (match_slash || t_ch != '/')) {
              if (t_ch == p_ch) break;
              ++text;
            }
            if (t_ch != p_ch) return match_slash ? Wild::abort_all : Wild::abort_to_star_star;
          }
          const Wild matched = dowild(p, pc, pattern_start, text, tc, pathname);
          if (matched != Wild::no_match) {
            if (!match_slash || matched != Wild::abort_to_star_star) return matched;
          } else if (!match_slash && t_ch == '/') {
            return Wild::abort_to_star_star;
          }
          t_ch = tc.at(++text);
        }
        return Wild::abort_all;
      }
      case '[': {
        p_ch = pc.at(++p);
        if (p_ch == '^') p_ch = '!';
        const bool negated = p_ch == '!';
        if (negated) p_ch = pc.at(++p);
        Byte prev_ch = 0;
        bool matched = false;
        do {
          if (p_ch == 0) return Wild::abort_all;
          if (p_ch == '\\') {
            p_ch = pc.at(++p);
            if (p_ch == 0) return Wild::abort_all;
            if (t_ch == p_ch) matched = true;
          } else if (p_ch == '-' && prev_ch != 0 && pc.at(p + 1) != 0 && pc.at(p + 1) != ']') {
            p_ch = pc.at(++p);
            if (p_ch == '\\') {
              p_ch = pc.at(++p);
              if (p_ch == 0) return Wild::abort_all;
            }
            if (t_ch <= p_ch && t_ch >= prev_ch) matched = true;
            p_ch = 0;  // so that prev_ch becomes 0: no range may continue from here
          } else if (p_ch == '[' && pc.at(p + 1) == ':') {
            const Byte* s = p += 2;
            while ((p_ch = pc.at(p)) != 0 && p_ch != ']') ++p;
            if (p_ch == 0) return Wild::abort_all;
            const std::ptrdiff_t length = p - s - 1;
            if (length < 0 || p[-1] != ':') {
              // No ":]": the '[' was an ordinary member of the set.
              p = s - 2;
              p_ch = '[';
              if (t_ch == p_ch) matched = true;
              continue;
            }
            bool known = false;
            const std::string_view name(reinterpret_cast<const char*>(s), static_cast<std::size_t>(length));
            if (in_class(name, t_ch, &known)) matched = true;
            if (!known) return Wild::abort_all;  // a malformed [:class:]
            p_ch = 0;
          } else if (t_ch == p_ch) {
            matched = true;
          }
        } while (prev_ch = p_ch, (p_ch = pc.at(++p)) != ']');
        if (matched == negated || (pathname && t_ch == '/')) return Wild::no_match;
        continue;
      }
    }
  }
  return tc.at(text) != 0 ? Wild::no_match : Wild::match;
}

// git's trim_trailing_spaces(): trailing spaces go unless the last one is escaped with a backslash.
std::string_view trim_trailing_spaces(std::string_view line) {
  std::size_t keep = line.size();
  bool in_spaces = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    switch (line[i]) {
      case ' ':
        if (!in_spaces) {
          in_spaces = true;
          keep = i;
        }
        break;
      case '\\':
        ++i;
        if (i == line.size()) return line;
        [[fallthrough]];
      default: in_spaces = false; keep = line.size();
    }
  }
  return line.substr(0, in_spaces ? keep : line.size());
}

// Bytes before the first character wildmatch treats specially (git's simple_length()).
std::size_t simple_length(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && !is_glob_special(static_cast<Byte>(s[i]))) ++i;
  return i;
}

bool match_basename(std::string_view basename, const IgnorePattern& p) {
  if (p.literal_prefix == p.pattern.size()) return basename == p.pattern;
  if (p.ends_with) return basename.ends_with(std::string_view(p.pattern).substr(1));
  return wildmatch(p.pattern, basename, false);
}

// git's match_pathname() with the base already stripped: `path` is relative to the pattern's directory.
bool match_pathname(std::string_view path, const IgnorePattern& p) {
  std::string_view pattern = p.pattern;
  std::size_t prefix = p.literal_prefix;
  if (pattern.starts_with('/')) {
    pattern.remove_prefix(1);
    --prefix;
  }
  if (path.empty()) return false;
  std::string_view name = path;
  if (prefix > 0) {
    if (prefix > name.size() || name.substr(0, prefix) != pattern.substr(0, prefix)) return false;
    pattern.remove_prefix(prefix);
    name.remove_prefix(prefix);
    if (pattern.empty() && name.empty()) return true;
  }
  return wildmatch(pattern, name, true);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view text, bool pathname) {
  const auto* p = reinterpret_cast<const Byte*>(pattern.data());
  const auto* t = reinterpret_cast<const Byte*>(text.data());
  const Cursor pc{p + pattern.size()};
  const Cursor tc{t + text.size()};
  return dowild(p, pc, p, t, tc, pathname) == Wild::match;
}

IgnoreFile::IgnoreFile(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // git skips a UTF-8 byte order mark
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty() || line.front() == '#') continue;
    if (line.ends_with('\r')) line.remove_suffix(1);
    line = line.substr(0, line.find('\0'));  // git reads each line as a C string
    line = trim_trailing_spaces(line);

    IgnorePattern p;
    p.text = std::string(line);
    p.line = line_number;
    std::string_view body = line;
    if (body.starts_with('!')) {
      p.negative = true;
      body.remove_prefix(1);
    }
    // The wildcard scan sees the trailing slash too, as git's does; it is not special, so that only matters
    // through the clamp below.
    p.literal_prefix = simple_length(body);
    if (body.ends_with('/')) {
      p.directory_only = true;
      body.remove_suffix(1);
    }
    if (body.empty()) continue;  // matches no name (an empty basename never occurs)
    p.literal_prefix = std::min(p.literal_prefix, body.size());
    p.basename_only = body.find('/') == std::string_view::npos;
    p.ends_with = body.front() == '*' && simple_length(body.substr(1)) == body.size() - 1;
    p.pattern = std::string(body);
    patterns_.push_back(std::move(p));
  }

  for (std::size_t i = 0; i < patterns_.size(); ++i) {
    const IgnorePattern& p = patterns_[i];
    const bool literal = p.literal_prefix == p.pattern.size();
    if (literal && p.basename_only) {
      names_.push_back({p.pattern, i});
    } else if (literal && p.pattern.size() > 1) {
      // match_pathname() of a pattern without wildcards is plain equality, its leading '/' aside.
      paths_.push_back({p.pattern.front() == '/' ? p.pattern.substr(1) : p.pattern, i});
    } else {
      others_.push_back(i);
    }
  }
  const auto by_key = [](const Literal& a, const Literal& b) {
    return a.key != b.key ? a.key < b.key : a.index < b.index;
  };
  std::sort(names_.begin(), names_.end(), by_key);
  std::sort(paths_.begin(), paths_.end(), by_key);
}

std::ptrdiff_t IgnoreFile::find_literal(const std::vector<Literal>& literals, std::string_view key, bool is_dir) const {
  auto it = std::lower_bound(literals.begin(), literals.end(), key,
                             [](const Literal& literal, std::string_view k) { return literal.key < k; });
  std::ptrdiff_t found = -1;
  for (; it != literals.end() && it->key == key; ++it) {
    if (is_dir || !patterns_[it->index].directory_only) found = static_cast<std::ptrdiff_t>(it->index);
  }
  return found;
}

const IgnorePattern* IgnoreFile::match(std::string_view path, bool is_dir) const {
  const std::size_t slash = path.rfind('/');
  const std::string_view basename = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // The last literal that matches, then any later pattern of the rest: the last match in file order wins.
  const std::ptrdiff_t literal =
      std::max(find_literal(names_, basename, is_dir), path.empty() ? -1 : find_literal(paths_, path, is_dir));
  for (auto it = others_.rbegin(); it != others_.rend() && static_cast<std::ptrdiff_t>(*it) > literal; ++it) {
    const IgnorePattern& p = patterns_[*it];
    if (p.directory_only && !is_dir) continue;
    if (p.basename_only ? match_basename(basename, p) : match_pathname(path, p)) return &p;
  }
  return literal >= 0 ? &patterns_[static_cast<std::size_t>(literal)] : nullptr;
}

void IgnoreRules::add_gitignore(std::string directory, std::string_view text) {
  gitignores_.insert_or_assign(std::move(directory), IgnoreFile(text));
}

void IgnoreRules::set_exclude(std::string_view text) { exclude_ = IgnoreFile(text); }

IgnoreRules::Verdict IgnoreRules::decide(std::string_view path, bool is_dir) const {
  // The .gitignore files of path's ancestors, deepest first: "a/b/c" asks a/b, then a, then the top.
  std::size_t end = path.size();
  for (;;) {
    const std::size_t slash = end == 0 ? std::string_view::npos : path.rfind('/', end - 1);
    const std::string_view directory = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
    if (auto it = gitignores_.find(directory); it != gitignores_.end()) {
      const std::string_view relative = directory.empty() ? path : path.substr(directory.size() + 1);
      if (const IgnorePattern* p = it->second.match(relative, is_dir)) {
        return {!p->negative, p, directory.empty() ? ".gitignore" : std::string(directory) + "/.gitignore"};
      }
    }
    if (slash == std::string_view::npos) break;
    end = slash;
  }
  if (const IgnorePattern* p = exclude_.match(path, is_dir)) return {!p->negative, p, ".git/info/exclude"};
  return {};
}

IgnoreRules::Verdict IgnoreRules::check(std::string_view path, bool is_dir) const {
  // Each parent directory first, from the top: the first one excluded decides for everything below it.
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
    Verdict parent = decide(path.substr(0, slash), true);
    if (parent.ignored) return parent;
  }
  return decide(path, is_dir);
}

}  // namespace agentd::tools

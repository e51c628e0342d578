// One file for skills: discovery, the SKILL.md front-matter reader, selection and the /skills report all
// work on the same Skill records, and none of them is large on its own.
#include "core/skills/skills.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/memory/instructions.h"
#include "core/memory/text_match.h"
#include "core/support/text.h"

namespace agentd::core::skills {

namespace fs = std::filesystem;
using memory::estimate_tokens;
using support::Errc;
using support::Error;
using support::Result;

namespace {

constexpr std::size_t kMaxNameBytes = 64;
constexpr double kNameWeight = 3.0;
constexpr double kDescriptionWeight = 1.0;
constexpr double kWholeNameBonus = 3.0;

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool valid_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

// --- the front matter: a YAML subset ------------------------------------------------------------
// Top-level `key: value` lines. `name` and `description` are read as plain, 'single-quoted' or
// "double-quoted" scalars (which may run on over indented lines) or as `|` / `>` block scalars; other keys
// (allowed-tools, license, metadata, ...) are skipped with their indented lines.

struct Line {
  std::string_view text;  // without the line end
  std::size_t number;     // 1-based, in the file
};

std::size_t indent_of(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}
bool blank(std::string_view s) noexcept { return indent_of(s) == s.size(); }

Error line_error(std::size_t number, std::string_view message) {
  return Error(Errc::invalid_argument, fmt::format("line {}: {}", number, message));
}

// A plain scalar's text: ` #` starts a comment.
std::string_view strip_comment(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) return support::trim(s.substr(0, i));
  }
  return support::trim(s);
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A quoted scalar starting at lines[*i] (`first` is the text after the key's colon). Line breaks fold
// as in YAML: one becomes a space, a blank line a newline, and a `\` at a line end joins the lines.
// Advances *i past the last line used.
Result<std::string> quoted_scalar(std::string_view first, const std::vector<Line>& lines, std::size_t* i,
                                  std::size_t end, std::string_view key) {
  const char quote = first[0];
  const std::size_t start_line = lines[*i].number;
  std::string out;
  std::string_view rest = first.substr(1);
  while (true) {
    bool joined = false;  // the line ended with an escaped line break
    for (std::size_t k = 0; k < rest.size(); ++k) {
      const char c = rest[k];
      if (quote == '\'' && c == '\'' && k + 1 < rest.size() && rest[k + 1] == '\'') {
        out += '\'';  // '' is a quote inside a single-quoted string
        ++k;
        continue;
      }
      if (quote == '"' && c == '\\') {
        if (k + 1 >= rest.size()) {
          joined = true;
          break;
        }
        const char e = rest[++k];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case ' ': out += ' '; break;
          case 'x':
          case 'u':
          case 'U': {
            const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            std::uint32_t cp = 0;
            bool ok = k + digits < rest.size();
            for (std::size_t d = 1; ok && d <= digits; ++d) {
              const int v = hex_value(rest[k + d]);
              ok = v >= 0;
              cp = cp * 16 + static_cast<std::uint32_t>(ok ? v : 0);
            }
            if (!ok) {
              return line_error(lines[*i].number,
                                fmt::format("`{}`: a \\{} escape needs {} hex digits", key, e, digits));
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
              return line_error(lines[*i].number, fmt::format("`{}`: a \\{} escape that is not a character", key, e));
            }
            append_utf8(out, cp);
            k += digits;
            break;
          }
          default:
            return line_error(lines[*i].number,
                              fmt::format("`{}`: unknown escape \\{} in a double-quoted string", key, e));
        }
        continue;
      } else if (c == quote) {
        const std::string_view after = strip_comment(rest.substr(k + 1));
        if (!after.empty()) {
          return line_error(lines[*i].number,
                            fmt::format("`{}`: unexpected text after the closing quote: `{}`", key, after));
        }
        ++*i;
        return out;
      }
      out += c;
    }
    // The string goes on over the next line.
    ++*i;
    if (*i >= end) {
      return line_error(start_line, fmt::format("`{}`: the {} quote opened here is never closed", key,
                                                quote == '"' ? "double" : "single"));
    }
    const std::string_view next = support::trim(lines[*i].text);
    if (!joined) {
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
      if (next.empty()) {
        out += '\n';
      } else if (!out.empty() && out.back() != '\n') {
        out += ' ';
      }
    }
    rest = next;
  }
}

// A `|` or `>` block scalar whose header is `header`; its lines are those after lines[*i] indented
// deeper than the key (blank lines included). Advances *i past them.
Result<std::string> block_scalar(std::string_view header, const std::vector<Line>& lines, std::size_t* i,
                                 std::size_t end, std::string_view key) {
  const bool folded = header[0] == '>';
  char chomp = 'c';  // clip: one final newline; '-': none; '+': all
  std::size_t explicit_indent = 0;
  for (char c : strip_comment(header.substr(1))) {
    if (c == '-' || c == '+') {
      chomp = c;
    } else if (c >= '1' && c <= '9') {
      explicit_indent = static_cast<std::size_t>(c - '0');
    } else {
      return line_error(lines[*i].number, fmt::format("`{}`: bad block scalar header `{}`", key, header));
    }
  }
  ++*i;
  std::vector<std::string_view> body;
  std::size_t indent = explicit_indent;
  while (*i < end) {
    std::string_view t = lines[*i].text;
    if (!blank(t)) {
      const std::size_t n = indent_of(t);
      if (n == 0) break;
      if (indent == 0) indent = n;
      if (n < indent) {
        return line_error(lines[*i].number, fmt::format("`{}`: this line is indented less than the block's first "
                                                        "line",
                                                        key));
      }
    }
    body.push_back(t);
    ++*i;
  }
  // Trailing blank lines belong to chomping, not to the text.
  std::size_t trailing = 0;
  while (!body.empty() && blank(body.back())) {
    body.pop_back();
    ++trailing;
  }
  std::string out;
  bool previous_blank = true;  // no space before the first line
  for (std::string_view t : body) {
    if (blank(t)) {
      out += '\n';
      previous_blank = true;
      continue;
    }
    std::string_view content = t.substr(std::min(indent, t.size()));
    if (folded) {
      // Folded: lines of a paragraph join with a space; more-indented lines keep their line breaks.
      const bool more_indented = !content.empty() && (content[0] == ' ' || content[0] == '\t');
      if (!previous_blank) out += more_indented ? '\n' : ' ';
      out += content;
      previous_blank = false;
    } else {
      out += content;
      out += '\n';
    }
  }
  if (folded && !body.empty()) out += '\n';
  if (chomp == '-') {
    while (!out.empty() && out.back() == '\n') out.pop_back();
  } else if (chomp == '+') {
    out.append(trailing, '\n');
  }
  return out;
}

struct FrontMatter {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::size_t name_line = 0;
  std::size_t description_line = 0;
};

Result<FrontMatter> parse_front_matter(const std::vector<Line>& lines, std::size_t end) {
  FrontMatter fm;
  std::size_t i = 1;  // lines[0] is the opening ---
  while (i < end) {
    std::string_view t = lines[i].text;
    if (blank(t) || t[0] == '#') {
      ++i;
      continue;
    }
    if (t[0] == ' ' || t[0] == '\t' || t.substr(0, 2) == "- " || t == "-") {
      return line_error(lines[i].number, "an indented line or list item that belongs to no key");
    }
    const std::size_t colon = t.find(':');
    std::string_view key = colon == std::string_view::npos ? std::string_view() : support::trim(t.substr(0, colon));
    const bool key_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (!key_ok || (colon + 1 < t.size() && t[colon + 1] != ' ' && t[colon + 1] != '\t')) {
      return line_error(lines[i].number, fmt::format("expected `key: value`, found `{}`", support::trim(t)));
    }
    const std::string_view value = support::trim(t.substr(colon + 1));
    const bool is_name = key == "name";
    const bool is_description = key == "description";
    if (!is_name && !is_description) {
      // Another key: skip it and whatever is indented under it (or listed under it).
      ++i;
      while (i < end && (blank(lines[i].text) || lines[i].text[0] == ' ' || lines[i].text[0] == '\t' ||
                         lines[i].text.substr(0, 2) == "- " || lines[i].text == "-")) {
        ++i;
      }
      continue;
    }
    if ((is_name && fm.name) || (is_description && fm.description)) {
      return line_error(lines[i].number, fmt::format("`{}` is given twice", key));
    }
    const std::size_t key_line = lines[i].number;
    std::string text;
    if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
      auto q = quoted_scalar(value, lines, &i, end, key);
      if (!q) return std::move(q).error();
      text = std::move(*q);
    } else if (!value.empty() && (value[0] == '|' || value[0] == '>')) {
      auto b = block_scalar(value, lines, &i, end, key);
      if (!b) return std::move(b).error();
      text = std::move(*b);
    } else if (!value.empty() && (value[0] == '[' || value[0] == '{')) {
      return line_error(key_line, fmt::format("`{}` must be text, not a list or a map", key));
    } else if (!value.empty() && (value[0] == '&' || value[0] == '*' || value[0] == '!')) {
      return line_error(key_line, fmt::format("`{}`: YAML anchors, aliases and tags are not supported", key));
    } else {
      // A plain scalar, perhaps continued on indented lines (folded with spaces; a blank line is a newline).
      text = std::string(strip_comment(value));
      ++i;
      std::size_t pending_blank = 0;
      while (i < end) {
        std::string_view next = lines[i].text;
        if (blank(next)) {
          ++pending_blank;
          ++i;
          continue;
        }
        if (next[0] != ' ' && next[0] != '\t') break;
        if (!text.empty()) text.append(pending_blank > 0 ? std::string(pending_blank, '\n') : std::string(" "));
        text += strip_comment(next);
        pending_blank = 0;
        ++i;
      }
    }
    std::string trimmed(support::trim(text));
    if (is_name) {
      fm.name = std::move(trimmed);
      fm.name_line = key_line;
    } else {
      fm.description = std::move(trimmed);
      fm.description_line = key_line;
    }
  }
  return fm;
}

std::vector<Line> split_lines(std::string_view text, std::vector<std::size_t>* line_ends) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  std::size_t number = 1;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t stop = nl == std::string_view::npos ? text.size() : nl;
    std::string_view t = text.substr(pos, stop - pos);
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    lines.push_back(Line{t, number++});
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    line_ends->push_back(pos);
  }
  return lines;
}

bool is_delimiter(std::string_view t) noexcept {
  std::string_view s = t;
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s == "---";
}

// The whole name written in the input, as a word of its own: "release-notes" in "draft release-notes now".
bool mentions_name(std::string_view input, std::string_view name) noexcept {
  auto word_byte = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u >= 0x80 || c == '_' ||
           c == '-';
  };
  if (name.empty()) return false;
  for (std::size_t at = 0; at + name.size() <= input.size(); ++at) {
    if (!iequals(input.substr(at, name.size()), name)) continue;
    const bool start_ok = at == 0 || !word_byte(input[at - 1]);
    const std::size_t after = at + name.size();
    const bool end_ok = after == input.size() || !word_byte(input[after]);
    if (start_ok && end_ok) return true;
  }
  return false;
}

std::string first_line(std::string_view text) {
  const std::size_t nl = text.find('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(0, nl));
}

}  // namespace

constexpr support::EnumName<SkillSource> kSkillSourceNames[] = {
    {SkillSource::project_agents, ".agents/skills"},
    {SkillSource::project_claude, ".claude/skills"},
    {SkillSource::user, "user"},
};
static_assert(support::names_every_value(kSkillSourceNames, SkillSource::user));

std::span<const support::EnumName<SkillSource>> enum_names(SkillSource) noexcept { return kSkillSourceNames; }

std::string_view skill_source_name(SkillSource source) noexcept { return support::enum_name(source, "?"); }

constexpr support::EnumName<SkillVerdict> kSkillVerdictNames[] = {
    {SkillVerdict::selected, "selected"},
    {SkillVerdict::forced, "forced"},
    {SkillVerdict::not_relevant, "not relevant"},
    {SkillVerdict::over_budget, "over budget"},
};
static_assert(support::names_every_value(kSkillVerdictNames, SkillVerdict::over_budget));

std::span<const support::EnumName<SkillVerdict>> enum_names(SkillVerdict) noexcept { return kSkillVerdictNames; }

std::string_view skill_verdict_name(SkillVerdict verdict) noexcept { return support::enum_name(verdict, "?"); }

const Skill* SkillCatalog::find(std::string_view name) const noexcept {
  for (const Skill& s : skills) {
    if (iequals(s.name, name)) return &s;
  }
  return nullptr;
}

std::vector<std::string> SkillSelection::selected_names() const {
  std::vector<std::string> out;
  for (const SkillDecision& d : decisions) {
    if (d.verdict == SkillVerdict::selected || d.verdict == SkillVerdict::forced) out.push_back(d.name);
  }
  return out;
}

Result<Skill> parse_skill(std::string_view text, std::string path, SkillSource source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  if (!support::is_valid_utf8(text)) {
    return Error(Errc::invalid_argument, "the file is not valid UTF-8 text");
  }
  std::vector<std::size_t> line_ends;
  const std::vector<Line> lines = split_lines(text, &line_ends);
  if (lines.empty() || !is_delimiter(lines[0].text)) {
    return line_error(1,
                      "no front matter: a SKILL.md starts with a line `---`, then `name:` and `description:`, "
                      "then `---` and the procedure");
  }
  std::size_t close = 1;
  while (close < lines.size() && !is_delimiter(lines[close].text)) ++close;
  if (close == lines.size()) {
    return line_error(1, "the front matter opened here is never closed with a line `---`");
  }
  auto fm = parse_front_matter(lines, close);
  if (!fm) return std::move(fm).error();
  if (!fm->name) return line_error(1, "`name` is missing from the front matter");
  if (fm->name->empty()) return line_error(fm->name_line, "`name` is empty");
  if (!valid_name(*fm->name)) {
    return line_error(fm->name_line,
                      fmt::format("`name: {}` is not a usable skill name: letters, digits, `.`, `_` and `-`, starting "
                                  "with a letter or digit, at most {} bytes (it is typed as /<name>)",
                                  *fm->name, kMaxNameBytes));
  }
  if (!fm->description) return line_error(1, "`description` is missing from the front matter");
  if (fm->description->empty()) return line_error(fm->description_line, "`description` is empty");

  Skill skill;
  skill.name = std::move(*fm->name);
  skill.description = std::move(*fm->description);
  skill.body = std::string(text.substr(line_ends[close]));
  if (support::trim(skill.body).empty()) {
    return line_error(lines[close].number, "the procedure (the text after the front matter) is empty");
  }
  skill.path = std::move(path);
  skill.source = source;
  skill.tokens = estimate_tokens(render_skill(skill));
  return skill;
}

SkillLocations default_locations(const fs::path& workspace_root) {
  SkillLocations out;
  out.project = workspace_root;
  out.user_config_dir = memory::user_config_dir();
  return out;
}

SkillCatalog load_skills(const SkillLocations& locations) {
  SkillCatalog catalog;
  struct Root {
    fs::path dir;
    SkillSource source;
  };
  std::vector<Root> roots;
  if (!locations.project.empty()) {
    roots.push_back({locations.project / ".agents" / "skills", SkillSource::project_agents});
    roots.push_back({locations.project / ".claude" / "skills", SkillSource::project_claude});
  }
  if (!locations.user_config_dir.empty()) roots.push_back({locations.user_config_dir / "skills", SkillSource::user});

  for (const Root& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root.dir, ec)) continue;
    std::vector<fs::path> dirs;
    for (fs::directory_iterator it(root.dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      // Hidden directories (.git, .cache) are not skills.
      if (it->is_directory(type_ec) && !it->path().filename().string().starts_with('.')) dirs.push_back(it->path());
    }
    if (ec) {
      catalog.diagnostics.push_back({root.dir.string(), fmt::format("cannot list the directory: {}", ec.message())});
      continue;
    }
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      const fs::path file = dir / "SKILL.md";
      const std::string path = file.string();
      std::error_code file_ec;
      if (!fs::is_regular_file(file, file_ec)) {
        catalog.diagnostics.push_back({dir.string(), "no SKILL.md in this skill directory"});
        continue;
      }
      const std::uintmax_t size = fs::file_size(file, file_ec);
      if (file_ec) {
        catalog.diagnostics.push_back({path, fmt::format("cannot read it: {}", file_ec.message())});
        continue;
      }
      if (size > locations.max_file_bytes) {
        catalog.diagnostics.push_back(
            {path, fmt::format("too large ({} bytes; a SKILL.md may have {})", size, locations.max_file_bytes)});
        continue;
      }
      std::ifstream in(file, std::ios::binary);
      std::string text(static_cast<std::size_t>(size), '\0');
      in.read(text.data(), static_cast<std::streamsize>(size));
      if (!in && !in.eof()) {
        catalog.diagnostics.push_back({path, "cannot read it"});
        continue;
      }
      text.resize(static_cast<std::size_t>(in.gcount()));
      auto skill = parse_skill(text, path, root.source);
      if (!skill) {
        catalog.diagnostics.push_back({path, skill.error().message()});
        continue;
      }
      const auto reserved = std::find_if(locations.reserved_names.begin(), locations.reserved_names.end(),
                                         [&](const std::string& r) { return iequals(r, skill->name); });
      if (reserved != locations.reserved_names.end()) {
        catalog.diagnostics.push_back(
            {path, fmt::format("the name `{}` belongs to the builtin /{} command; rename the skill", skill->name,
                               *reserved)});
        continue;
      }
      if (const Skill* kept = catalog.find(skill->name); kept != nullptr) {
        catalog.shadowed.push_back({skill->name, kept->path, path});
        continue;
      }
      catalog.skills.push_back(std::move(*skill));
    }
  }
  std::sort(catalog.skills.begin(), catalog.skills.end(),
            [](const Skill& a, const Skill& b) { return a.name < b.name; });
  return catalog;
}

std::string render_skill(const Skill& skill) {
  std::string out = fmt::format("<skill name=\"{}\" source=\"{}\" path=\"{}\">\nUse when: {}\n\n", skill.name,
                                skill_source_name(skill.source), skill.path, skill.description);
  out += skill.body;
  if (!skill.body.empty() && skill.body.back() != '\n') out += '\n';
  out += "</skill>\n";
  return out;
}

std::optional<SkillInvocation> parse_skill_invocation(const SkillCatalog& catalog, std::string_view input) {
  std::string_view s = input;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  if (s.size() < 2 || s[0] != '/') return std::nullopt;
  std::size_t end = 1;
  while (end < s.size() && s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\n') ++end;
  const Skill* skill = catalog.find(s.substr(1, end - 1));
  if (skill == nullptr) return std::nullopt;
  return SkillInvocation{skill->name, std::string(support::trim(s.substr(end)))};
}

SkillSelection select_skills(const SkillCatalog& catalog, std::string_view input,
                             const SkillSelectionOptions& options) {
  SkillSelection out;
  out.token_budget = options.token_budget;
  if (auto invocation = parse_skill_invocation(catalog, input)) {
    out.forced = invocation->name;
    out.input = std::move(invocation->rest);
  } else {
    out.input = std::string(input);
  }

  std::vector<memory::Document> documents;
  documents.reserve(catalog.skills.size());
  for (const Skill& s : catalog.skills) {
    documents.push_back({memory::DocumentField{"name", kNameWeight, memory::terms_of(s.name)},
                         memory::DocumentField{"description", kDescriptionWeight, memory::terms_of(s.description)}});
  }
  std::vector<memory::Relevance> relevance = memory::score_documents(documents, out.input);
  for (std::size_t i = 0; i < catalog.skills.size(); ++i) {
    if (mentions_name(out.input, catalog.skills[i].name)) {
      relevance[i].score += kWholeNameBonus;
      relevance[i].matches.push_back({catalog.skills[i].name, "whole name", kWholeNameBonus, kWholeNameBonus});
    }
  }

  std::vector<std::size_t> order(catalog.skills.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto is_forced = [&](std::size_t i) { return out.forced && catalog.skills[i].name == *out.forced; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (is_forced(a) != is_forced(b)) return is_forced(a);
    if (relevance[a].score != relevance[b].score) return relevance[a].score > relevance[b].score;
    return catalog.skills[a].name < catalog.skills[b].name;
  });

  for (std::size_t i : order) {
    const Skill& skill = catalog.skills[i];
    const memory::Relevance& r = relevance[i];
    SkillDecision d;
    d.name = skill.name;
    d.path = skill.path;
    d.score = r.score;
    d.tokens = skill.tokens;
    const std::string score = memory::format_score(r.score);
    if (is_forced(i)) {
      d.verdict = SkillVerdict::forced;
      out.tokens_used += d.tokens;
      d.reason = d.tokens > options.token_budget
                     ? fmt::format("forced with /{} ({} tokens, over the budget of {}: included because you asked)",
                                   skill.name, d.tokens, options.token_budget)
                     : fmt::format("forced with /{} ({} tokens)", skill.name, d.tokens);
    } else if (r.matches.empty()) {
      d.verdict = SkillVerdict::not_relevant;
      d.reason = "not relevant: no word of its name or description is in the input";
    } else if (r.score < options.min_score) {
      d.verdict = SkillVerdict::not_relevant;
      d.reason = fmt::format("not relevant (score {}, below {}): only {}", score,
                             memory::format_score(options.min_score), memory::describe_matches(r));
    } else if (out.tokens_used + d.tokens > options.token_budget) {
      d.verdict = SkillVerdict::over_budget;
      const std::uint64_t left = out.tokens_used >= options.token_budget ? 0 : options.token_budget - out.tokens_used;
      d.reason = fmt::format("over budget (score {}; {} tokens, {} of {} left): {}", score, d.tokens, left,
                             options.token_budget, memory::describe_matches(r));
    } else {
      d.verdict = SkillVerdict::selected;
      out.tokens_used += d.tokens;
      d.reason = fmt::format("selected (score {}): {}", score, memory::describe_matches(r));
    }
    out.decisions.push_back(std::move(d));
  }
  return out;
}

std::string render_selection(const SkillCatalog& catalog, const SkillSelection& selection) {
  std::string out;
  for (const std::string& name : selection.selected_names()) {
    const Skill* skill = catalog.find(name);
    if (skill == nullptr) continue;
    if (out.empty()) {
      out =
          "Skills for this turn: procedures written by the user or the project. Follow a skill's procedure "
          "when its task is what you are doing.\n\n";
    }
    out += render_skill(*skill);
  }
  return out;
}

std::string skills_report(const SkillCatalog& catalog, const SkillSelection* last) {
  std::string out;
  if (catalog.skills.empty()) {
    out +=
        "No skills. A skill is a directory with a SKILL.md (front matter `name:` and `description:`, then the "
        "procedure) under <project>/.agents/skills/, <project>/.claude/skills/ or ~/.config/agentd/skills/.\n";
  } else if (last == nullptr) {
    out += fmt::format(
        "Skills ({}; none selected yet: they are chosen per turn by the input, or forced with "
        "/<name>):\n",
        catalog.skills.size());
  } else {
    out += fmt::format("Skills ({}; last turn: {} selected, {} of {} tokens):\n", catalog.skills.size(),
                       last->selected_names().size(), last->tokens_used, last->token_budget);
  }
  for (const Skill& s : catalog.skills) {
    std::string why = "not considered yet";
    if (last != nullptr) {
      auto it = std::find_if(last->decisions.begin(), last->decisions.end(),
                             [&](const SkillDecision& d) { return d.name == s.name; });
      if (it != last->decisions.end()) why = it->reason;
    }
    out += fmt::format("  /{} ({}, {} tokens): {}\n      {}\n      {}\n", s.name, skill_source_name(s.source), s.tokens,
                       why, first_line(s.description), s.path);
  }
  if (!catalog.shadowed.empty()) {
    out += "Shadowed (a skill of the same name comes first: project .agents, then project .claude, then user):\n";
    for (const ShadowedSkill& s : catalog.shadowed) {
      out += fmt::format("  {}: {} is hidden by {}\n", s.name, s.shadowed_path, s.kept_path);
    }
  }
  if (!catalog.diagnostics.empty()) {
    out += "Refused:\n";
    for (const SkillDiagnostic& d : catalog.diagnostics) out += fmt::format("  {}: {}\n", d.path, d.message);
  }
  return out;
}

}  // namespace agentd::core::skills

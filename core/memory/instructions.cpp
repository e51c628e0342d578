#include "core/memory/instructions.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/memory/text_match.h"
#include "core/support/text.h"

namespace agentd::core::memory {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFileNames[] = {"AGENTS.md", "CLAUDE.md"};

// Where to cut `text` to at most `limit` bytes: at the last newline in the final quarter, so lines stay
// whole, else at the last UTF-8 character boundary (never inside a multi-byte character).
std::size_t cut_point(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return text.size();
  const std::size_t newline = text.rfind('\n', limit == 0 ? 0 : limit - 1);
  if (newline != std::string_view::npos && newline + 1 >= limit - limit / 4) return newline + 1;
  std::size_t at = limit;
  at = support::utf8_floor(text, at);
  return at;
}

// Reads at most `limit` + 4 bytes (enough to find a character boundary), and the whole size.
bool read_prefix(const fs::path& path, std::size_t limit, std::string& out, std::uint64_t& size, std::string& error) {
  std::error_code ec;
  size = fs::file_size(path, ec);
  if (ec) {
    error = ec.message();
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open it";
    return false;
  }
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, limit + 4));
  out.resize(want);
  in.read(out.data(), static_cast<std::streamsize>(want));
  out.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    error = "read error";
    return false;
  }
  return true;
}

// The directories from `root` down to `cwd`, root first; only cwd when it is not under root.
std::vector<fs::path> directories_down(const fs::path& root, const fs::path& cwd) {
  std::vector<fs::path> chain;
  const auto [root_end, cwd_at] = std::mismatch(root.begin(), root.end(), cwd.begin(), cwd.end());
  if (root_end != root.end()) return {cwd};
  fs::path dir = root;
  chain.push_back(dir);
  for (auto it = cwd_at; it != cwd.end(); ++it) {
    if (it->empty()) continue;  // a trailing separator
    dir /= *it;
    chain.push_back(dir);
  }
  return chain;
}

fs::path normal(const fs::path& p) {
  std::error_code ec;
  fs::path absolute = fs::absolute(p, ec);
  if (ec) absolute = p;
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute.lexically_normal() : canonical);
}

}  // namespace

fs::path user_config_dir(std::string_view xdg_config_home, std::string_view home) {
  if (!xdg_config_home.empty() && xdg_config_home.front() == '/') return fs::path(xdg_config_home) / "agentd";
  if (!home.empty()) return fs::path(home) / ".config" / "agentd";
  return {};
}

fs::path user_config_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");  // NOLINT(concurrency-mt-unsafe): read-only use
  const char* home = std::getenv("HOME");            // NOLINT(concurrency-mt-unsafe)
  return user_config_dir(xdg != nullptr ? xdg : "", home != nullptr ? home : "");
}

fs::path find_workspace_root(const fs::path& cwd) {
  fs::path start = normal(cwd);
  for (fs::path dir = start;; dir = dir.parent_path()) {
    std::error_code ec;
    if (fs::exists(dir / ".git", ec)) return dir;
    if (dir == dir.parent_path() || dir.empty()) break;
  }
  return start;
}

constexpr support::EnumName<InstructionScope> kInstructionScopeNames[] = {
    {InstructionScope::user, "user"},
    {InstructionScope::project, "project"},
};
static_assert(support::names_every_value(kInstructionScopeNames, InstructionScope::project));

std::span<const support::EnumName<InstructionScope>> enum_names(InstructionScope) noexcept {
  return kInstructionScopeNames;
}

std::string_view instruction_scope_name(InstructionScope scope) noexcept {
  return support::enum_name(scope, "project");
}

std::uint64_t InstructionFile::tokens() const { return estimate_tokens(text); }

std::uint64_t Instructions::bytes() const {
  std::uint64_t total = 0;
  for (const InstructionFile& f : files) total += f.text.size();
  return total;
}

Instructions load_instructions(const InstructionOptions& options) {
  Instructions out;
  const fs::path cwd = normal(options.cwd);
  out.root = options.root ? normal(*options.root) : find_workspace_root(cwd);

  struct Candidate {
    fs::path path;
    InstructionScope scope;
  };
  std::vector<Candidate> candidates;
  fs::path user_file;
  if (options.user_file) {
    user_file = *options.user_file;
  } else if (fs::path dir = user_config_dir(); !dir.empty()) {
    user_file = dir / "AGENTS.md";
  }
  if (!user_file.empty()) candidates.push_back({user_file, InstructionScope::user});
  for (const fs::path& dir : directories_down(out.root, cwd)) {
    for (std::string_view name : kFileNames) candidates.push_back({dir / name, InstructionScope::project});
  }

  std::size_t total_left = options.max_total_bytes;
  std::vector<fs::path> seen;  // canonical paths already included
  for (const Candidate& c : candidates) {
    std::error_code ec;
    const auto status = fs::status(c.path, ec);
    if (ec || !fs::is_regular_file(status)) continue;  // absent (or not a file): nothing to say
    const fs::path canonical = normal(c.path);
    bool duplicate = false;
    for (const fs::path& s : seen) duplicate = duplicate || s == canonical;
    if (duplicate) {
      // CLAUDE.md is often a symlink to AGENTS.md: its bytes are already in.
      out.notes.push_back(fmt::format("{}: left out, it is the same file as {} (already included)", c.path.string(),
                                      canonical.string()));
      continue;
    }
    seen.push_back(canonical);
    if (c.scope == InstructionScope::project) {
      const auto inside = std::mismatch(out.root.begin(), out.root.end(), canonical.begin(), canonical.end());
      if (inside.first != out.root.end()) {
        out.notes.push_back(fmt::format("{}: left out, it leads to {}, outside the workspace {}", c.path.string(),
                                        canonical.string(), out.root.string()));
        continue;
      }
      if (options.refuse_project_file) {
        if (auto reason = options.refuse_project_file(canonical)) {
          out.notes.push_back(fmt::format("{}: left out, {}", c.path.string(), *reason));
          continue;
        }
      }
    }

    const std::size_t limit = std::min(options.max_file_bytes, total_left);
    InstructionFile file;
    file.path = c.path.string();
    file.scope = c.scope;
    std::string error;
    if (!read_prefix(canonical, limit, file.text, file.file_bytes, error)) {
      out.notes.push_back(fmt::format("{}: left out, it cannot be read ({})", file.path, error));
      continue;
    }
    if (limit == 0) {
      out.notes.push_back(fmt::format("{}: left out ({} bytes): the instructions already use the cap of {} bytes",
                                      file.path, file.file_bytes, options.max_total_bytes));
      continue;
    }
    if (file.file_bytes > limit || file.text.size() > limit) {
      file.text.resize(cut_point(file.text, limit));
      file.cut = true;
      const bool by_total = total_left < options.max_file_bytes;
      file.note = fmt::format("cut to its first {} of {} bytes (the {} cap is {} bytes)", file.text.size(),
                              file.file_bytes, by_total ? "total instructions" : "per-file",
                              by_total ? options.max_total_bytes : options.max_file_bytes);
      out.notes.push_back(fmt::format("{}: {}", file.path, file.note));
    }
    total_left -= file.text.size();
    out.files.push_back(std::move(file));
  }
  return out;
}

std::string render_instructions(const Instructions& instructions) {
  if (instructions.files.empty()) return {};
  std::string out =
      "Instructions from the user and the project (AGENTS.md, CLAUDE.md), each file exactly as written. "
      "Follow them; where they differ, a later (more specific) file wins over an earlier one.\n";
  for (const InstructionFile& f : instructions.files) {
    out += fmt::format("\n<instructions scope=\"{}\" path=\"{}\">\n", instruction_scope_name(f.scope), f.path);
    out += f.text;
    // The marker goes on its own line; the file's bytes stay as they were (no newline is added inside).
    if (!f.text.empty() && f.text.back() != '\n') out += '\n';
    out += "</instructions>\n";
    if (f.cut) out += fmt::format("[agentd: {} was {}.]\n", f.path, f.note);
  }
  return out;
}

}  // namespace agentd::core::memory

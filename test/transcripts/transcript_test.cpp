// Transcript tests: each *.transcript file in this folder is a conversation with the real agentd
// binary. Lines:
//   # ...          a comment
//   > {json}       send this message (a '\n' is appended)
//   >raw TEXT      send TEXT exactly, after decoding \n \r \t \\ and \xNN escapes (no '\n' appended)
//   < {json}       the next message agentd writes must equal this JSON (whole-object comparison);
//                  the string "<any>" matches any value, and "<capture:NAME>" matches any value and
//                  stores it as NAME (a string's content without quotes, any other value as JSON);
//                  "<...>" as the last element of an array matches any further elements, so
//                  [A, B, "<...>"] takes an array that starts with A and B (a prefix, which may be all)
//   <unordered N   the next N lines are `<` lines that the next N messages must match, in any order
//   >close         close agentd's stdin (end of input); `<` lines may follow
// Directives:
//   !mock FILE     (before any message) start the in-process mock model server (test/mock_model) with
//                  the script FILE, relative to this folder, and point agentd at it with
//                  ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY and AGENTD_MODEL=anthropic:claude-sonnet-4-5
//   !file REL TEXT create the file REL in the test's workspace directory (agentd's working directory)
//                  with TEXT, unescaped as for >raw
//   !restart       SIGKILL agentd, reap it, and start a new one on the same database (and mock server)
// In `>`, `>raw` and `<` lines, {{cwd}} is replaced by the workspace's canonical absolute path and
// {{NAME}} by the value captured as NAME (as raw text). agentd starts at the first line that is not a
// directive or a comment. At the end of the file agentd's stdin is closed (if it is not yet); agentd
// must then write nothing the transcript did not expect, and exit with code 0.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "test/mock_model/mock_model_server.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd {
namespace {

using namespace std::chrono_literals;
using support::Json;

std::filesystem::path transcript_dir() { return std::filesystem::path(AGENTD_SOURCE_DIR) / "test" / "transcripts"; }

std::vector<std::string> transcript_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(transcript_dir())) {
    if (entry.path().extension() == ".transcript") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case '\\': out += '\\'; break;
      case 'x':
        out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
        i += 2;
        break;
      default: out += '\\', out += c;
    }
  }
  return out;
}

using Captures = std::map<std::string, std::string>;

// The partial-match marker: the last element of an expected array, standing for any further elements.
constexpr std::string_view kMore = "<...>";

// Structural equality where the expected string "<any>" matches anything, "<capture:NAME>" matches
// anything and records it in `captured`, and a trailing "<...>" in an array lets the actual array go on.
bool matches(const Json& expected, const Json& actual, Captures& captured) {
  if (expected.is_string()) {
    const std::string& text = expected.as_string();
    if (text == "<any>") return true;
    if (text.starts_with("<capture:") && text.ends_with(">")) {
      captured[text.substr(9, text.size() - 10)] = actual.is_string() ? actual.as_string() : actual.dump();
      return true;
    }
  }
  if (expected.is_object()) {
    if (!actual.is_object() || actual.size() != expected.size()) return false;
    for (const auto& [key, value] : expected.as_object()) {
      const Json* other = actual.find(key);
      if (other == nullptr || !matches(value, *other, captured)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    const auto& items = expected.as_array();
    const bool prefix = !items.empty() && items.back().is_string() && items.back().as_string() == kMore;
    const std::size_t count = prefix ? items.size() - 1 : items.size();
    if (!actual.is_array() || (prefix ? actual.size() < count : actual.size() != count)) return false;
    for (std::size_t i = 0; i < count; ++i) {
      if (!matches(expected.as_array()[i], actual.as_array()[i], captured)) return false;
    }
    return true;
  }
  return expected == actual;
}

// Replaces {{cwd}} and {{NAME}} (a capture) in `line`; an unknown {{NAME}} is left as it is.
std::string substitute(std::string line, const std::string& cwd, const Captures& captures) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = line.find("{{", pos);
    const std::size_t close = open == std::string::npos ? open : line.find("}}", open + 2);
    if (close == std::string::npos) break;
    const std::string name = line.substr(open + 2, close - open - 2);
    out += line.substr(pos, open - pos);
    if (name == "cwd") {
      out += cwd;
    } else if (auto it = captures.find(name); it != captures.end()) {
      out += it->second;
    } else {
      out += line.substr(open, close + 2 - open);
    }
    pos = close + 2;
  }
  return out + line.substr(pos);
}

class Transcript : public ::testing::TestWithParam<std::string> {};

TEST_P(Transcript, Replays) {
  const auto path = transcript_dir() / (GetParam() + ".transcript");
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  testing::TempDir dir;
  const auto workspace_path = dir.path() / "workspace";
  std::filesystem::create_directories(workspace_path);
  const std::string workspace = std::filesystem::canonical(workspace_path).string();
  std::unique_ptr<mock_model::MockModelServer> mock;
  std::unique_ptr<testing::ChildProcess> agentd;
  Captures captures;

  auto start_agentd = [&] {
    testing::ChildProcess::Options options;
    options.env_overrides = {"XDG_DATA_HOME=" + dir.file("xdg"), "AGENTD_LOG=warn"};
    if (mock) {
      options.env_overrides.push_back("ANTHROPIC_BASE_URL=" + mock->url());
      options.env_overrides.push_back("ANTHROPIC_API_KEY=transcript-test");
      options.env_overrides.push_back("AGENTD_MODEL=anthropic:claude-sonnet-4-5");
    }
    options.cwd = workspace;
    agentd = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{AGENTD_BIN, "--db", dir.file("agentd.db")}, options);
  };

  // Reads the next message agentd writes; nothing (after recording a failure) when there is none.
  auto next_message = [&](const std::string& where) -> std::optional<std::pair<std::string, Json>> {
    auto actual_line = agentd->read_line(10s);
    if (!actual_line) {
      ADD_FAILURE() << where << ": agentd wrote nothing; stderr:\n" << agentd->stderr_text();
      return std::nullopt;
    }
    auto actual = support::parse_json(*actual_line);
    if (!actual) {
      ADD_FAILURE() << where << ": agentd wrote invalid JSON: " << *actual_line;
      return std::nullopt;
    }
    return std::pair{*actual_line, std::move(*actual)};
  };

  std::string line;
  int line_no = 0;

  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path.filename().string() + ":" + std::to_string(line_no);
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("!mock ")) {
      ASSERT_FALSE(agentd) << where << ": !mock must come before any message";
      auto script = mock_model::load_script_file(transcript_dir() / line.substr(6));
      ASSERT_TRUE(script) << where << ": " << script.error().message();
      auto server = mock_model::MockModelServer::start(std::move(script).value());
      ASSERT_TRUE(server) << where << ": " << server.error().message();
      mock = std::move(server).value();
      continue;
    }
    if (line.starts_with("!file ")) {
      const std::size_t space = line.find(' ', 6);
      ASSERT_NE(space, std::string::npos) << where << ": expected !file REL CONTENT";
      const auto file = workspace_path / line.substr(6, space - 6);
      std::filesystem::create_directories(file.parent_path());
      std::ofstream(file, std::ios::binary) << unescape(line.substr(space + 1));
      continue;
    }
    if (!agentd) start_agentd();
    line = substitute(line, workspace, captures);
    if (line == "!restart") {
      agentd->signal(SIGKILL);
      ASSERT_TRUE(agentd->wait(10s)) << where << ": agentd did not die";
      agentd.reset();
      start_agentd();
    } else if (line.starts_with(">raw ")) {
      ASSERT_TRUE(agentd->write(unescape(line.substr(5)))) << where;
    } else if (line.starts_with("> ")) {
      ASSERT_TRUE(agentd->write(line.substr(2) + "\n")) << where;
    } else if (line.starts_with("< ")) {
      auto expected = support::parse_json(line.substr(2));
      ASSERT_TRUE(expected) << where << ": bad expectation: " << expected.error().message();
      auto actual = next_message(where);
      if (!actual) return;
      Captures captured;
      const bool ok = matches(*expected, actual->second, captured);
      EXPECT_TRUE(ok) << where << "\n  expected: " << expected->dump() << "\n  actual:   " << actual->first;
      if (ok) captured.merge(captures), captures = std::move(captured);
    } else if (line.starts_with("<unordered ")) {
      const int count = std::stoi(line.substr(11));
      std::vector<std::pair<std::string, Json>> expectations;  // (where, expected)
      while (static_cast<int>(expectations.size()) < count && std::getline(in, line)) {
        ++line_no;
        const std::string at = path.filename().string() + ":" + std::to_string(line_no);
        if (line.empty() || line[0] == '#') continue;
        line = substitute(line, workspace, captures);
        ASSERT_TRUE(line.starts_with("< ")) << at << ": <unordered takes `<` lines only";
        auto expected = support::parse_json(line.substr(2));
        ASSERT_TRUE(expected) << at << ": bad expectation: " << expected.error().message();
        expectations.emplace_back(at, std::move(*expected));
      }
      ASSERT_EQ(static_cast<int>(expectations.size()), count) << where << ": <unordered ran out of lines";
      for (int i = 0; i < count; ++i) {
        auto actual = next_message(where);
        if (!actual) return;
        bool found = false;
        for (auto it = expectations.begin(); it != expectations.end(); ++it) {
          Captures captured;
          if (!matches(it->second, actual->second, captured)) continue;
          captured.merge(captures), captures = std::move(captured);
          expectations.erase(it);
          found = true;
          break;
        }
        if (!found) {
          std::string left;
          for (const auto& [at, expected] : expectations) left += "\n  " + at + ": " + expected.dump();
          ADD_FAILURE() << where << ": no unordered expectation matches\n  actual: " << actual->first
                        << "\n  still expected:" << left;
        }
      }
    } else if (line == ">close") {
      agentd->close_stdin();
    } else {
      FAIL() << where << ": unknown directive: " << line;
    }
  }
  if (!agentd) start_agentd();
  agentd->close_stdin();
  const std::string rest = agentd->read_all_stdout(10s);
  EXPECT_EQ(rest, "") << "agentd wrote more than the transcript expects";
  auto status = agentd->wait(10s);
  ASSERT_TRUE(status) << "agentd did not exit after end of input";
  EXPECT_TRUE(status->exited && status->code == 0) << "exit code " << status->code << "\n" << agentd->stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Agentd, Transcript, ::testing::ValuesIn(transcript_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return name;
                         });

}  // namespace
}  // namespace agentd

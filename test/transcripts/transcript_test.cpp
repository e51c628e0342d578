// Transcript tests: each *.transcript file in this folder is a conversation with the real agentd
// binary. Lines:
//   # ...          a comment
//   > {json}       send this message (a '\n' is appended)
//   >raw TEXT      send TEXT exactly, after decoding \n \r \t \\ and \xNN escapes (no '\n' appended)
//   < {json}       the next message agentd writes must equal this JSON (whole-object comparison);
//                  the string "<any>" matches any value
//   >close         close agentd's stdin (end of input); `<` lines may follow
// At the end of the file agentd's stdin is closed (if it is not yet); agentd must then write nothing
// the transcript did not expect, and exit with code 0.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/support/json.h"
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

// Structural equality where the expected string "<any>" matches anything.
bool matches(const Json& expected, const Json& actual) {
  if (expected.is_string() && expected.as_string() == "<any>") return true;
  if (expected.is_object()) {
    if (!actual.is_object() || actual.size() != expected.size()) return false;
    for (const auto& [key, value] : expected.as_object()) {
      const Json* other = actual.find(key);
      if (other == nullptr || !matches(value, *other)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) return false;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (!matches(expected.as_array()[i], actual.as_array()[i])) return false;
    }
    return true;
  }
  return expected == actual;
}

class Transcript : public ::testing::TestWithParam<std::string> {};

TEST_P(Transcript, Replays) {
  const auto path = transcript_dir() / (GetParam() + ".transcript");
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  testing::TempDir dir;
  testing::ChildProcess::Options options;
  options.env_overrides = {"XDG_DATA_HOME=" + dir.file("xdg"), "AGENTD_LOG=warn"};
  testing::ChildProcess agentd({AGENTD_BIN, "--db", dir.file("agentd.db")}, options);

  std::string line;
  int line_no = 0;

  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path.filename().string() + ":" + std::to_string(line_no);
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with(">raw ")) {
      ASSERT_TRUE(agentd.write(unescape(line.substr(5)))) << where;
    } else if (line.starts_with("> ")) {
      ASSERT_TRUE(agentd.write(line.substr(2) + "\n")) << where;
    } else if (line.starts_with("< ")) {
      auto expected = support::parse_json(line.substr(2));
      ASSERT_TRUE(expected) << where << ": bad expectation: " << expected.error().message();
      auto actual_line = agentd.read_line(10s);
      ASSERT_TRUE(actual_line) << where << ": agentd wrote nothing; stderr:\n" << agentd.stderr_text();
      auto actual = support::parse_json(*actual_line);
      ASSERT_TRUE(actual) << where << ": agentd wrote invalid JSON: " << *actual_line;
      EXPECT_TRUE(matches(*expected, *actual))
          << where << "\n  expected: " << expected->dump() << "\n  actual:   " << *actual_line;
    } else if (line == ">close") {
      agentd.close_stdin();
    } else {
      FAIL() << where << ": unknown directive: " << line;
    }
  }
  agentd.close_stdin();
  const std::string rest = agentd.read_all_stdout(10s);
  EXPECT_EQ(rest, "") << "agentd wrote more than the transcript expects";
  auto status = agentd.wait(10s);
  ASSERT_TRUE(status) << "agentd did not exit after end of input";
  EXPECT_TRUE(status->exited && status->code == 0) << "exit code " << status->code << "\n" << agentd.stderr_text();
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

// A `read(...)` deny rule is about what a tool reads, not about its argument: grep, glob and list_dir skip
// every file the rule covers wherever the search starts (ToolContext::denied_reads, set by the engine from
// the policy), a matched directory with all it holds.
#include <string>

#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

class DeniedReads : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.write("secrets/prod.txt", "canary-7f3a\n");
    h_.write("src/secrets/inner.txt", "canary-7f3a\n");  // not under secrets/ at the root: not covered
    h_.write("src/app.cfg", "canary-7f3a\n");
    h_.write("config/db.local", "canary-7f3a\n");
    h_.write("src/main.c", "canary-7f3a\n");
    h_.context.denied_reads = {"secrets/**", "config/*.local", "**/*.cfg"};
  }
  std::string content(const std::shared_ptr<Tool>& tool, std::string_view input) {
    auto result = h_.run(*tool, input);
    if (!result) {
      ADD_FAILURE() << result.error().message();
      return "";
    }
    EXPECT_TRUE(result->ok) << result->content;
    return result->content;
  }

  testing::ToolHarness h_;
};

TEST_F(DeniedReads, GrepSkipsWhatTheRulesCoverFromAnywhere) {
  const auto grep = make_grep_tool();
  const std::string from_root = content(grep, R"({"pattern": "canary", "path": "."})");
  EXPECT_EQ(from_root.find("prod.txt"), std::string::npos) << from_root;
  EXPECT_EQ(from_root.find("db.local"), std::string::npos) << from_root;
  EXPECT_EQ(from_root.find("app.cfg"), std::string::npos) << from_root;  // paths match as read_file's do
  EXPECT_NE(from_root.find("src/main.c"), std::string::npos) << from_root;
  EXPECT_NE(from_root.find("src/secrets/inner.txt"), std::string::npos) << from_root;
  // Starting inside the covered directory, or from an absolute path, changes nothing.
  const std::string inside = content(grep, R"({"pattern": "canary", "path": "secrets"})");
  EXPECT_EQ(inside.find("prod.txt"), std::string::npos) << inside;
  const std::string absolute =
      content(grep, R"({"pattern": "canary", "path": ")" + h_.workspace().string() + R"(/config"})");
  EXPECT_EQ(absolute.find("db.local"), std::string::npos) << absolute;
  // Without rules the same search finds them: the test can fail.
  h_.context.denied_reads.clear();
  EXPECT_NE(content(grep, R"({"pattern": "canary"})").find("prod.txt"), std::string::npos);
}

TEST_F(DeniedReads, GlobAndListDirDoNotShowThem) {
  const std::string globbed = content(make_glob_tool(), R"({"pattern": "**/*"})");
  EXPECT_EQ(globbed.find("prod.txt"), std::string::npos) << globbed;
  EXPECT_EQ(globbed.find("db.local"), std::string::npos) << globbed;
  EXPECT_NE(globbed.find("src/main.c"), std::string::npos) << globbed;
  const auto list_dir = make_list_dir_tool();
  EXPECT_EQ(content(list_dir, R"({"path": "secrets"})").find("prod.txt"), std::string::npos);
  const std::string config = content(list_dir, R"({"path": "config"})");
  EXPECT_EQ(config.find("db.local"), std::string::npos) << config;
  const std::string src = content(list_dir, R"({"path": "src"})");
  EXPECT_EQ(src.find("app.cfg"), std::string::npos) << src;
  EXPECT_NE(src.find("main.c"), std::string::npos) << src;
}

}  // namespace
}  // namespace agentd::tools

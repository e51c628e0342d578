#include "daemon/options.h"

#include <gtest/gtest.h>

namespace agentd::daemon {
namespace {

TEST(Options, DefaultsAndFlags) {
  auto o = parse_options({});
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->db_path);
  EXPECT_EQ(o->max_frame_bytes, 64u * 1024 * 1024);
  auto full = parse_options({"--db", "/tmp/x.db", "--log-file=/tmp/l", "--max-frame-bytes", "4096", "--version"});
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_EQ(full->db_path, "/tmp/x.db");
  EXPECT_EQ(full->log_file, "/tmp/l");
  EXPECT_EQ(full->max_frame_bytes, 4096u);
  EXPECT_TRUE(full->show_version);
  EXPECT_TRUE(parse_options({"-h"})->show_help);
}

TEST(Options, BadUsageIsExplained) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--frobnicate"}, "unknown option '--frobnicate' (see agentd --help)"},
      {{"--db"}, "--db needs a value"},
      {{"--max-frame-bytes", "ten"}, "--max-frame-bytes needs a whole number >= 1024, not 'ten'"},
      {{"--max-frame-bytes", "10"}, "--max-frame-bytes needs a whole number >= 1024, not '10'"},
  };
  for (const auto& c : cases) {
    auto o = parse_options(c.args);
    ASSERT_FALSE(o);
    EXPECT_EQ(o.error().message(), c.message);
  }
}

TEST(Options, UsageMentionsEveryOption) {
  const std::string usage = usage_text();
  for (const char* flag : {"--db", "--log-file", "--max-frame-bytes", "--version", "--help", "AGENTD_LOG"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace agentd::daemon

#include "daemon/options.h"

#include <gtest/gtest.h>

namespace agentd::daemon {
namespace {

TEST(Options, DefaultsAndFlags) {
  auto o = parse_options({});
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->db_path);
  EXPECT_EQ(o->max_frame_bytes, 64u * 1024 * 1024);
  EXPECT_FALSE(o->index_cache);
  auto full = parse_options({"--db", "/tmp/x.db", "--index-cache", "/tmp/cache", "--log-file=/tmp/l",
                             "--max-frame-bytes", "4096", "--version"});
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_EQ(full->db_path, "/tmp/x.db");
  EXPECT_EQ(full->index_cache, "/tmp/cache");
  EXPECT_EQ(full->log_file, "/tmp/l");
  EXPECT_EQ(full->max_frame_bytes, 4096u);
  EXPECT_TRUE(full->show_version);
  EXPECT_TRUE(parse_options({"-h"})->show_help);
}

TEST(Options, EveryOptionParses) {
  auto o = parse_options({"--model", "openai:gpt-4.1", "--config=/tmp/c.json", "--demo", "--help"});
  ASSERT_TRUE(o) << o.error().message();
  EXPECT_EQ(o->model, "openai:gpt-4.1");
  EXPECT_EQ(o->config_file, "/tmp/c.json");
  EXPECT_TRUE(o->demo);
  EXPECT_TRUE(o->show_help);
  // A repeated option: the last one wins, as it did before CLI11.
  auto twice = parse_options({"--db", "a.db", "--db", "b.db"});
  ASSERT_TRUE(twice) << twice.error().message();
  EXPECT_EQ(twice->db_path, "b.db");
  auto decimal = parse_options({"--max-frame-bytes=02048"});  // not octal
  ASSERT_TRUE(decimal) << decimal.error().message();
  EXPECT_EQ(decimal->max_frame_bytes, 2048u);
}

// CLI11 words "missing value" itself; the other messages are ours.
TEST(Options, BadUsageIsExplained) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--frobnicate"}, "unknown option '--frobnicate' (see agentd --help)"},
      {{"stray"}, "unknown option 'stray' (see agentd --help)"},
      {{"--db"}, "--db: 1 required PATH missing (see agentd --help)"},
      {{"--max-frame-bytes"}, "--max-frame-bytes: 1 required N missing (see agentd --help)"},
      {{"--max-frame-bytes", "ten"}, "--max-frame-bytes: needs a whole number >= 1024, not 'ten' (see agentd --help)"},
      {{"--max-frame-bytes", "10"}, "--max-frame-bytes: needs a whole number >= 1024, not '10' (see agentd --help)"},
      // Decimal only: "01024" is not octal 532 here, and "-5" does not wrap around.
      {{"--max-frame-bytes=01024x"},
       "--max-frame-bytes: needs a whole number >= 1024, not '01024x' (see agentd --help)"},
      {{"--max-frame-bytes=-5"}, "--max-frame-bytes: needs a whole number >= 1024, not '-5' (see agentd --help)"},
  };
  for (const auto& c : cases) {
    auto o = parse_options(c.args);
    ASSERT_FALSE(o) << c.args[0];
    EXPECT_EQ(o.error().message(), c.message);
  }
}

TEST(Options, HelpListsEveryOption) {
  const std::string usage = usage_text();
  EXPECT_TRUE(usage.starts_with("usage: agentd [options]\n")) << usage;
  for (const char* flag :
       {"--db PATH", "--index-cache DIR", "--log-file PATH", "--max-frame-bytes N", "--model PROVIDER:MODEL",
        "--config FILE", "--demo", "--version", "-h,--help", "AGENTD_LOG", "AGENTD_MODEL", "AGENTD_MOCK_MODEL"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace agentd::daemon

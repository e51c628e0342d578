#include "core/support/log.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace agentd::support {
namespace {

TEST(Log, ParsesLevels) {
  EXPECT_EQ(*log::parse_level("debug"), log::Level::debug);
  EXPECT_EQ(*log::parse_level("off"), log::Level::off);
  auto bad = log::parse_level("loud");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("loud"), std::string::npos);
}

TEST(Log, WritesOneLinePerRecordToTheLogFileAtOrAboveTheLevel) {
  const auto path = std::filesystem::temp_directory_path() / ("agentd_log_test_" + std::to_string(::getpid()));
  std::filesystem::remove(path);
  ASSERT_TRUE(log::set_file(path.string()));
  const auto saved = log::level();
  log::set_level(log::Level::info);
  log::debug("hidden {}", 1);
  log::info("shown {}", 2);
  log::error("multi\nline");
  log::set_level(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  EXPECT_EQ(s.find("hidden"), std::string::npos);
  EXPECT_NE(s.find("INFO shown 2\n"), std::string::npos);
  EXPECT_NE(s.find("ERROR multi line\n"), std::string::npos);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_all,
            std::filesystem::perms::none);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace agentd::support

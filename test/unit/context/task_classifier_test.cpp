#include "core/context/task_classifier.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::core::context {
namespace {

struct Case {
  const char* name;
  std::string input;
  InputSignals signals;
  TaskKind kind;
};

class ClassifierTable : public ::testing::TestWithParam<Case> {};

TEST_P(ClassifierTable, Classifies) {
  const Case& c = GetParam();
  const TaskClassification got = classify_task(c.input, c.signals);
  EXPECT_EQ(task_kind_name(got.kind), task_kind_name(c.kind)) << c.input;
  EXPECT_FALSE(got.signals.empty());
  EXPECT_GE(got.confidence, 0.0);
  EXPECT_LE(got.confidence, 1.0);
}

const std::vector<Case> kCases = {
    {"crash_report", "The parser crashes with a segfault when a line has no '=' sign", {}, TaskKind::bugfix},
    {"stack_only", "KeyError: 'SPRING'", {3, 0, 0}, TaskKind::bugfix},
    {"failing_test", "this test keeps failing on CI", {0, 1, 0}, TaskKind::bugfix},
    {"fix_wrong_total", "Fix the wrong total when a discount code is lowercase", {}, TaskKind::bugfix},
    {"review_changes", "Please review my changes before I merge", {}, TaskKind::review},
    {"review_pr", "Can you look over this pull request and give feedback?", {}, TaskKind::review},
    {"feature_add", "Add support for a --dry-run flag to the deploy command", {}, TaskKind::feature},
    {"feature_implement", "Implement pagination for the orders endpoint", {}, TaskKind::feature},
    {"config_ci", "Update the GitHub Actions workflow to cache dependencies", {}, TaskKind::config},
    {"config_file", "bump the version in pyproject.toml", {0, 0, 1}, TaskKind::config},
    {"config_cmake", "Configure CMake to build with -O3 and set the compiler flags", {}, TaskKind::config},
    {"question_how", "How does the tokenizer handle negative numbers?", {}, TaskKind::question},
    {"question_explain", "Explain what OrderService.confirmationFor does", {}, TaskKind::question},
    {"question_where", "where is the retry count read", {}, TaskKind::question},
    {"nothing", "hello", {}, TaskKind::question},
};

INSTANTIATE_TEST_SUITE_P(Inputs, ClassifierTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(TaskClassifier, ExplainsTheStackTraceSignal) {
  const auto got = classify_task("it fails", {4, 0, 0});
  EXPECT_EQ(got.kind, TaskKind::bugfix);
  ASSERT_FALSE(got.signals.empty());
  EXPECT_EQ(got.signals.front(), "stack trace (4 frames)");
}

TEST(TaskClassifier, NoSignalsSaySo) {
  const auto got = classify_task("", {});
  EXPECT_EQ(got.kind, TaskKind::question);
  EXPECT_EQ(got.confidence, 0.0);
  EXPECT_EQ(got.signals, std::vector<std::string>{"no signal words; taken as a question"});
}

TEST(TaskClassifier, ConfigPaths) {
  EXPECT_TRUE(is_config_path("CMakeLists.txt"));
  EXPECT_TRUE(is_config_path("sub/package.json"));
  EXPECT_TRUE(is_config_path(".github/workflows/ci.yml"));
  EXPECT_TRUE(is_config_path("deploy/values.yaml"));
  EXPECT_FALSE(is_config_path("src/config.go"));
  EXPECT_FALSE(is_config_path("README.md"));
}

}  // namespace
}  // namespace agentd::core::context

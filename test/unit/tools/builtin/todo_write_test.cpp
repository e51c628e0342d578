#include <gtest/gtest.h>

#include "test/unit/tools/tool_harness.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

class TodoWriteTest : public ::testing::Test {
 protected:
  ToolResult write(std::string_view input) {
    auto result = h_.run(*tool_, input);
    EXPECT_TRUE(result) << result.error().message();
    return result ? *result : ToolResult::failure("no result");
  }

  testing::ToolHarness h_;
  std::shared_ptr<Tool> tool_ = make_todo_write_tool();
};

TEST_F(TodoWriteTest, TheWholeListBecomesThePlanAndTheModelSeesItBack) {
  const ToolResult r = write(R"({"todos": [
      {"content": "Reproduce the crash", "status": "completed", "priority": "high"},
      {"content": "Fix the parser", "status": "in_progress"},
      {"content": "Add a regression test", "status": "pending", "priority": "low"}]})");
  ASSERT_TRUE(r.ok) << r.content;
  ASSERT_TRUE(r.plan);
  const std::vector<PlanItem> expected = {{"Reproduce the crash", PlanStatus::completed, PlanPriority::high},
                                          {"Fix the parser", PlanStatus::in_progress, PlanPriority::medium},
                                          {"Add a regression test", PlanStatus::pending, PlanPriority::low}};
  EXPECT_EQ(*r.plan, expected);
  EXPECT_EQ(r.summary, "Plan: 1 of 3 done");
  EXPECT_EQ(r.content,
            "The plan now (1 done, 1 in progress, 1 to do):\n[x] Reproduce the crash\n[>] Fix the parser\n"
            "[ ] Add a regression test");
  EXPECT_EQ(tool_->title(testing::json(R"({"todos": [{"content": "a", "status": "pending"}]})"), h_.context),
            "Plan: 1 step");
}

TEST_F(TodoWriteTest, AnEmptyListClearsThePlan) {
  const ToolResult r = write(R"({"todos": []})");
  ASSERT_TRUE(r.ok);
  ASSERT_TRUE(r.plan);
  EXPECT_TRUE(r.plan->empty());
  EXPECT_EQ(r.summary, "Plan cleared");
}

TEST_F(TodoWriteTest, TwoStepsInProgressAreKeptWithAdvice) {
  const ToolResult r = write(R"({"todos": [{"content": "a", "status": "in_progress"},
                                           {"content": "b", "status": "in_progress"}]})");
  ASSERT_TRUE(r.ok);
  EXPECT_NE(r.content.find("2 steps are in_progress; keep one in_progress at a time"), std::string::npos) << r.content;
}

// A model's bad list is refused with what to fix, and sets no plan.
TEST_F(TodoWriteTest, ABadListSaysWhatToFixAndSetsNothing) {
  for (const std::string_view input :
       {R"({"todos": [{"content": "a", "status": "done"}]})", R"({"todos": [{"content": "", "status": "pending"}]})",
        R"({"todos": [{"status": "pending"}]})", R"({"todos": "write tests"})", R"({})",
        R"({"todos": [{"content": "a", "status": "pending", "owner": "me"}]})"}) {
    const ToolResult r = write(input);
    EXPECT_FALSE(r.ok) << input;
    EXPECT_FALSE(r.plan) << input;
    EXPECT_NE(r.content.find("Invalid input for todo_write"), std::string::npos) << r.content;
  }
  std::string many = R"({"todos": [)";
  for (int i = 0; i < 51; ++i) many += std::string(i == 0 ? "" : ",") + R"({"content": "x", "status": "pending"})";
  many += "]}";
  const ToolResult r = write(many);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.content.find("at most 50 items"), std::string::npos) << r.content;
  const std::string too_long = R"({"todos": [{"content": ")" + std::string(501, 'x') + R"(", "status": "pending"}]})";
  const ToolResult long_entry = write(too_long);
  EXPECT_FALSE(long_entry.ok);
}

}  // namespace
}  // namespace agentd::tools

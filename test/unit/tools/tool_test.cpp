#include "tools/tool.h"

#include <gtest/gtest.h>

#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {
namespace {

using support::Errc;

class FakeTool final : public Tool {
 public:
  explicit FakeTool(std::string name, Risk risk = Risk::read) {
    spec_.name = std::move(name);
    spec_.base_risk = risk;
  }
  const ToolSpec& spec() const override { return spec_; }
  boost::asio::awaitable<support::Result<ToolResult>> run(support::Json /*input*/, ToolContext& /*context*/) override {
    co_return ToolResult{};
  }

 private:
  ToolSpec spec_;
};

TEST(Risk, NamesListFlagsInBitOrder) {
  EXPECT_EQ(risk_names(Risk::none), "none");
  EXPECT_EQ(risk_names(Risk::read), "read");
  EXPECT_EQ(risk_names(Risk::outside_workspace | Risk::write), "write|outside_workspace");
  EXPECT_EQ(risk_names(Risk::read | Risk::write | Risk::execute | Risk::network | Risk::outside_workspace),
            "read|write|execute|network|outside_workspace");
  Risk risk = Risk::read;
  risk |= Risk::network;
  EXPECT_EQ(risk_names(risk), "read|network");
}

TEST(Risk, MutatingMeansMoreThanReading) {
  EXPECT_FALSE(is_mutating(Risk::none));
  EXPECT_FALSE(is_mutating(Risk::read | Risk::outside_workspace));
  EXPECT_TRUE(is_mutating(Risk::write));
  EXPECT_TRUE(is_mutating(Risk::read | Risk::execute));
  EXPECT_TRUE(is_mutating(Risk::network));
}

TEST(ToolKind, NamesAreAcpSpellings) {
  EXPECT_EQ(tool_kind_name(ToolKind::read), "read");
  EXPECT_EQ(tool_kind_name(ToolKind::edit), "edit");
  EXPECT_EQ(tool_kind_name(ToolKind::remove), "delete");
  EXPECT_EQ(tool_kind_name(ToolKind::move), "move");
  EXPECT_EQ(tool_kind_name(ToolKind::search), "search");
  EXPECT_EQ(tool_kind_name(ToolKind::execute), "execute");
  EXPECT_EQ(tool_kind_name(ToolKind::think), "think");
  EXPECT_EQ(tool_kind_name(ToolKind::fetch), "fetch");
  EXPECT_EQ(tool_kind_name(ToolKind::other), "other");
}

TEST(Tool, DefaultsComeFromTheSpec) {
  FakeTool tool("probe", Risk::write);
  ToolContext context;
  EXPECT_EQ(tool.assess(support::Json::object(), context).risk, Risk::write);
  EXPECT_EQ(tool.title(support::Json::object(), context), "probe");
  EXPECT_TRUE(tool.locations(support::Json::object(), context).empty());
}

TEST(ToolResult, FailureCarriesTheMessageTwice) {
  const ToolResult r = ToolResult::failure("no match for \"x\"");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.summary, "no match for \"x\"");
  EXPECT_EQ(r.content, "no match for \"x\"");
  EXPECT_EQ(r.metadata, support::Json::object());
}

TEST(ToolRegistry, KeepsRegistrationOrderAndFindsByName) {
  ToolRegistry registry;
  EXPECT_TRUE(registry.empty());
  ASSERT_TRUE(registry.add(std::make_shared<FakeTool>("b_tool")));
  ASSERT_TRUE(registry.add(std::make_shared<FakeTool>("a-tool")));
  ASSERT_TRUE(registry.add(std::make_shared<FakeTool>("mcp__server__tool")));
  EXPECT_FALSE(registry.empty());
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"b_tool", "a-tool", "mcp__server__tool"}));
  const auto specs = registry.specs();
  ASSERT_EQ(specs.size(), 3U);
  EXPECT_EQ(specs[1]->name, "a-tool");
  ASSERT_NE(registry.find("a-tool"), nullptr);
  EXPECT_EQ(registry.find("a-tool")->spec().name, "a-tool");
  EXPECT_EQ(registry.find("nope"), nullptr);

  registry.remove("b_tool");
  registry.remove("never-there");
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"a-tool", "mcp__server__tool"}));
}

TEST(ToolRegistry, RefusesDuplicatesNullsAndBadNames) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.add(std::make_shared<FakeTool>("read_file")));

  auto duplicate = registry.add(std::make_shared<FakeTool>("read_file"));
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code(), Errc::conflict);
  EXPECT_EQ(duplicate.error().message(), "a tool named \"read_file\" is already registered");

  auto null = registry.add(nullptr);
  ASSERT_FALSE(null);
  EXPECT_EQ(null.error().code(), Errc::invalid_argument);
  EXPECT_EQ(null.error().message(), "cannot register a null tool");

  for (const std::string& name : std::vector<std::string>{"", "has space", "dots.not.allowed", std::string(65, 'x')}) {
    auto bad = registry.add(std::make_shared<FakeTool>(name));
    ASSERT_FALSE(bad) << name;
    EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
    EXPECT_EQ(bad.error().message(),
              "tool name \"" + name + "\" is invalid: use 1-64 characters from A-Z, a-z, 0-9, '_' and '-'");
  }
  EXPECT_TRUE(registry.add(std::make_shared<FakeTool>(std::string(64, 'x'))));
  EXPECT_EQ(registry.names().size(), 2U);
}

TEST(BuiltinTools, RegisterInOrderWithTheirSpecs) {
  ToolRegistry registry;
  ASSERT_TRUE(register_builtin_tools(registry));
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"read_file", "list_dir", "glob", "grep", "write_file",
                                                        "edit_file", "todo_write", "shell"}));
  const auto specs = registry.specs();
  ASSERT_EQ(specs.size(), 8U);
  const std::pair<ToolKind, Risk> expected[] = {{ToolKind::read, Risk::read},   {ToolKind::read, Risk::read},
                                                {ToolKind::search, Risk::read}, {ToolKind::search, Risk::read},
                                                {ToolKind::edit, Risk::write},  {ToolKind::edit, Risk::write},
                                                {ToolKind::think, Risk::none},  {ToolKind::execute, Risk::execute}};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i]->kind, expected[i].first) << specs[i]->name;
    EXPECT_EQ(specs[i]->base_risk, expected[i].second) << specs[i]->name;
  }
  for (const ToolSpec* spec : specs) {
    EXPECT_FALSE(spec->description.empty()) << spec->name;
    EXPECT_EQ(spec->input_schema["type"], support::Json("object")) << spec->name;
    EXPECT_EQ(spec->input_schema["additionalProperties"], support::Json(false)) << spec->name;
  }

  // A second registration collides on the first name and says so.
  auto again = register_builtin_tools(registry);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::conflict);
}

// `n` numbered lines, "line <i>\n", from 1.
std::string numbered_lines(std::size_t n) {
  std::string text;
  for (std::size_t i = 1; i <= n; ++i) text += "line " + std::to_string(i) + " of a file made large for the test\n";
  return text;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(ClientDiff, ASmallFileIsSentWhole) {
  const std::string before = "a\nb\nc\n";
  const ToolDiff diff = client_diff("/w/f.txt", before, "a\nB\nc\n");
  EXPECT_EQ(diff.path, "/w/f.txt");
  EXPECT_EQ(diff.old_text, before);
  EXPECT_EQ(diff.new_text, "a\nB\nc\n");
  EXPECT_EQ(diff.first_line, 0U);
  EXPECT_FALSE(diff.cut);
  EXPECT_FALSE(client_diff("/w/new.txt", std::nullopt, "x\n").old_text.has_value());
}

TEST(ClientDiff, AOneLineEditOfALargeFileSendsThatLineWithThreeAround) {
  const std::string before = numbered_lines(60000);  // about 2.6 MB
  ASSERT_GT(before.size(), kWholeDiffBytes);
  const std::string after = replaced(before, "line 30000 of", "line 30000 (edited) of");
  const ToolDiff diff = client_diff("/w/big.txt", before, after);
  EXPECT_EQ(diff.first_line, 29997U);
  EXPECT_FALSE(diff.cut);
  ASSERT_TRUE(diff.old_text.has_value());
  EXPECT_EQ(*diff.old_text,
            before.substr(before.find("line 29997 of"), before.find("line 30004 of") - before.find("line 29997 of")));
  EXPECT_EQ(diff.new_text,
            after.substr(after.find("line 29997 of"), after.find("line 30004 of") - after.find("line 29997 of")));
  // The excerpt put back in place gives the new file.
  std::string rebuilt = before;
  rebuilt.replace(before.find("line 29997 of"), diff.old_text->size(), diff.new_text);
  EXPECT_EQ(rebuilt, after);
}

TEST(ClientDiff, AnEditAtEitherEndKeepsTheExcerptInsideTheFile) {
  const std::string before = numbered_lines(60000);
  const ToolDiff first = client_diff("/w/big.txt", before, "new first line\n" + before);
  EXPECT_EQ(first.first_line, 1U);
  EXPECT_EQ(first.new_text, "new first line\n" + first.old_text.value());
  const ToolDiff last = client_diff("/w/big.txt", before, before + "no newline at the end");
  EXPECT_EQ(last.first_line, 59998U);
  EXPECT_EQ(last.new_text, last.old_text.value() + "no newline at the end");
}

TEST(ClientDiff, AChangeLargerThanTheCapIsCutAtALineAndSaysSo) {
  const std::string created = numbered_lines(60000);
  const ToolDiff diff = client_diff("/w/new.txt", std::nullopt, created);
  EXPECT_FALSE(diff.old_text.has_value());
  EXPECT_EQ(diff.first_line, 1U);
  EXPECT_TRUE(diff.cut);
  EXPECT_LE(diff.new_text.size(), kWholeDiffBytes / 2);
  EXPECT_EQ(diff.new_text.back(), '\n');
  EXPECT_EQ(created.compare(0, diff.new_text.size(), diff.new_text), 0);
}

}  // namespace
}  // namespace agentd::tools

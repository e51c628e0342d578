// Engine pieces that need no model: the event log format, history selection by budget, slash
// commands, the permission policy and ids. Whole turns are tested over the real binary in
// test/transcripts/ against the mock model server.
#include <set>

#include <gtest/gtest.h>

#include "core/engine/events.h"
#include "core/engine/history.h"
#include "core/engine/ids.h"
#include "core/engine/permissions.h"
#include "core/engine/session.h"
#include "core/engine/slash_commands.h"
#include "core/engine/system_rules.h"

namespace agentd::core {
namespace {

using support::Json;

EngineEvent round_trip(const EngineEvent& event) {
  auto payload = support::parse_json(event_payload_json(event));
  EXPECT_TRUE(payload) << event_payload_json(event);
  auto back = event_from_log(event_kind(event), *payload);
  EXPECT_TRUE(back) << back.error().message();
  return *back;
}

TEST(EngineEvents, EveryKindSurvivesTheLog) {
  EXPECT_EQ(std::get<AgentTextEvent>(round_trip(AgentTextEvent{"hi \"there\"\n"})).text, "hi \"there\"\n");
  EXPECT_EQ(std::get<UserMessageEvent>(round_trip(UserMessageEvent{"fix it"})).text, "fix it");
  EXPECT_EQ(std::get<AgentThoughtEvent>(round_trip(AgentThoughtEvent{"hmm"})).text, "hmm");
  // An image's bytes are never in the log: its hash is, and the bytes come from the session's blobs.
  EXPECT_EQ(event_payload_json(UserImageEvent{"image/png", "ab12", 70, "iVBORw0KGgo="}),
            R"({"mediaType":"image/png","hash":"ab12","bytes":70})");
  auto image = std::get<UserImageEvent>(round_trip(UserImageEvent{"image/png", "ab12", 70, "iVBORw0KGgo="}));
  EXPECT_EQ(image.media_type, "image/png");
  EXPECT_EQ(image.hash, "ab12");
  EXPECT_EQ(image.bytes, 70U);
  EXPECT_EQ(image.data, "");

  auto started = std::get<ToolCallStartedEvent>(
      round_trip(ToolCallStartedEvent{"tc_1", "write_file", "Write a.txt", tools::ToolKind::edit}));
  EXPECT_EQ(started.id, "tc_1");
  EXPECT_EQ(started.name, "write_file");
  EXPECT_EQ(started.title, "Write a.txt");
  EXPECT_EQ(started.kind, tools::ToolKind::edit);

  ToolCallUpdatedEvent update;
  update.id = "tc_1";
  update.status = ToolCallStatus::completed;
  update.raw_input = Json::object();
  update.raw_input->set("path", "a.txt");
  update.text = "wrote 2 lines";
  update.diffs = {tools::ToolDiff{"/w/a.txt", std::nullopt, "x\ny\n", 0, false},
                  tools::ToolDiff{"/w/b.txt", "o", "n", 12, true}};
  update.locations = {"/w/a.txt"};
  update.meta = Json::object();
  update.meta.set("newHash", "sha256:ab");
  update.terminal_id = "term-7";
  auto u = std::get<ToolCallUpdatedEvent>(round_trip(update));
  EXPECT_EQ(u.terminal_id, "term-7");
  EXPECT_EQ(u.status, ToolCallStatus::completed);
  EXPECT_EQ(*u.raw_input, *update.raw_input);
  EXPECT_EQ(u.text, update.text);
  ASSERT_EQ(u.diffs.size(), 2U);
  EXPECT_FALSE(u.diffs[0].old_text.has_value());
  EXPECT_EQ(u.diffs[1].old_text, "o");
  EXPECT_EQ(u.diffs[0].first_line, 0U);
  EXPECT_EQ(u.diffs[1].first_line, 12U);
  EXPECT_TRUE(u.diffs[1].cut);
  EXPECT_EQ(u.locations, update.locations);
  EXPECT_EQ(u.meta, update.meta);

  // Absent fields stay absent: an update that only changes the status says nothing else.
  ToolCallUpdatedEvent status_only{"tc_2", ToolCallStatus::in_progress, {}, {}, {}, {}, {}, {}, {}};
  auto s = std::get<ToolCallUpdatedEvent>(round_trip(status_only));
  EXPECT_FALSE(s.title || s.raw_input || s.text || s.terminal_id);

  UsageEvent usage{1000, 200000, std::nullopt, model::Usage{10, 20, 30, 40, std::nullopt}, "anthropic:x"};
  auto us = std::get<UsageEvent>(round_trip(usage));
  EXPECT_EQ(us.used, 1000U);
  EXPECT_FALSE(us.session_cost_usd.has_value()) << "unpriced must stay unpriced, never $0";
  EXPECT_EQ(us.call_usage, usage.call_usage);
  usage.session_cost_usd = 0.25;
  EXPECT_DOUBLE_EQ(*std::get<UsageEvent>(round_trip(usage)).session_cost_usd, 0.25);

  auto commands =
      std::get<CommandsEvent>(round_trip(CommandsEvent{{{"mode", "Switch", "plan"}, {"help", "List", {}}}}));
  ASSERT_EQ(commands.commands.size(), 2U);
  EXPECT_EQ(commands.commands[0].input_hint, "plan");
  EXPECT_FALSE(commands.commands[1].input_hint.has_value());
  EXPECT_EQ(std::get<ModeChangedEvent>(round_trip(ModeChangedEvent{"plan"})).mode, "plan");
  EXPECT_EQ(std::get<ModelChangedEvent>(round_trip(ModelChangedEvent{"openai:gpt-4.1"})).model_spec, "openai:gpt-4.1");
  CompactionEvent compaction{"[compacted]", 7, "t_1", "t_4", 4, 90000, 12000, true};
  auto c = std::get<CompactionEvent>(round_trip(compaction));
  EXPECT_EQ(c.text, "[compacted]");
  EXPECT_EQ(c.compaction_id, 7);
  EXPECT_EQ(c.first_turn_id, "t_1");
  EXPECT_EQ(c.last_turn_id, "t_4");
  EXPECT_EQ(c.turns, 4U);
  EXPECT_EQ(c.tokens_before, 90000U);
  EXPECT_EQ(c.tokens_after, 12000U);
  EXPECT_TRUE(c.forced);
}

TEST(EngineEvents, UnknownKindsAndBadPayloadsAreErrors) {
  EXPECT_FALSE(event_from_log("telepathy", Json::object()));
  EXPECT_FALSE(event_from_log("agent_text", Json("not an object")));
}

TEST(History, MessagesSurviveStorageWithTheirTurn) {
  model::Message m{model::Role::assistant,
                   {model::ThinkingBlock{"think", "sig", {}}, model::TextBlock{"answer"},
                    model::ToolCallBlock{"tc", "read_file", Json::object(), "{}"}}};
  auto json = support::parse_json(message_to_json(m, "t_1"));
  ASSERT_TRUE(json);
  std::string turn;
  auto back = message_from_json("assistant", *json, &turn);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(turn, "t_1");
  ASSERT_EQ(back->content.size(), 3U);
  EXPECT_EQ(std::get<model::ThinkingBlock>(back->content[0]).signature, "sig");
  EXPECT_EQ(std::get<model::ToolCallBlock>(back->content[2]).name, "read_file");

  model::Message tool{model::Role::tool, {model::ToolResultBlock{"tc", "out", true}}};
  auto tool_json = support::parse_json(message_to_json(tool, "t_1"));
  auto tool_back = message_from_json("tool", *tool_json);
  ASSERT_TRUE(tool_back);
  EXPECT_TRUE(std::get<model::ToolResultBlock>(tool_back->content[0]).is_error);
  EXPECT_FALSE(message_from_json("robot", *tool_json));

  // A stored image keeps its hash, type and size, not its bytes.
  model::ImageBlock image{"image/png", "iVBORw0KGgo=", "ab12", 8, 640, 480};
  model::Message user{model::Role::user, {image, model::TextBlock{"look"}}};
  const std::string stored = message_to_json(user, "t_2");
  EXPECT_EQ(stored.find("iVBORw0KGgo"), std::string::npos) << stored;
  auto user_back = message_from_json("user", *support::parse_json(stored));
  ASSERT_TRUE(user_back) << user_back.error().message();
  const auto& image_back = std::get<model::ImageBlock>(user_back->content[0]);
  EXPECT_EQ(image_back.media_type, "image/png");
  EXPECT_EQ(image_back.hash, "ab12");
  EXPECT_EQ(image_back.bytes, 8U);
  EXPECT_EQ(image_back.width, 640U);
  EXPECT_EQ(image_back.height, 480U);
  EXPECT_TRUE(image_back.data.empty());
  // It counts as what a provider charges for it, not as its base64.
  EXPECT_EQ(estimate_tokens(model::Message{model::Role::user, {image}}), 4U + 410U + 4U);
}

HistoryTurn turn_of(std::string id, std::size_t chars) {
  return HistoryTurn{std::move(id), {model::Message{model::Role::user, {model::TextBlock{std::string(chars, 'x')}}}}};
}

TEST(History, SelectionKeepsTheNewestWholeTurnsThatFit) {
  std::vector<HistoryTurn> turns = {turn_of("a", 4000), turn_of("b", 4000), turn_of("c", 400)};
  // c costs ~110 tokens, b ~1010: a budget of 1200 keeps b and c, drops a.
  auto selection = select_history(turns, 1200);
  EXPECT_EQ(selection.dropped_turns, 1U);
  EXPECT_EQ(selection.messages.size(), 2U);
  EXPECT_LE(selection.estimated_tokens, 1200U);

  // The current turn is always kept, even when it alone is over budget: the caller must stop.
  auto tight = select_history(turns, 10);
  EXPECT_EQ(tight.dropped_turns, 2U);
  EXPECT_GT(tight.estimated_tokens, 10U);
}

TEST(SlashCommands, OnlyKnownCommandsAreCommands) {
  EXPECT_TRUE(is_slash_command("/help"));
  EXPECT_TRUE(is_slash_command("  /model openai:gpt-4.1 "));
  EXPECT_FALSE(is_slash_command("/usr/bin is a path"));
  EXPECT_FALSE(is_slash_command("/helpme"));
  EXPECT_FALSE(is_slash_command("please /help"));
  EXPECT_FALSE(is_slash_command("/"));
  auto c = parse_slash_command("  /model   openai:gpt-4.1  ");
  EXPECT_EQ(c.name, "model");
  EXPECT_EQ(c.args, "openai:gpt-4.1");
  for (const auto& info : slash_commands()) {
    EXPECT_NE(help_text().find("/" + std::string(info.name)), std::string::npos) << info.name;
  }
}

TEST(SlashCommands, CostSaysUnpricedNeverZero) {
  CostLedger ledger;
  ledger.add(model::Usage{100, 50, 0, 0, std::nullopt}, std::nullopt);
  const std::string text = cost_text(ledger, ledger, "openai:local-model");
  EXPECT_NE(text.find("unpriced"), std::string::npos) << text;
  EXPECT_EQ(text.find("$0.00"), std::string::npos) << text;

  CostLedger mixed;
  mixed.add(model::Usage{100, 50, 0, 0, std::nullopt}, 0.5);
  mixed.add(model::Usage{100, 50, 0, 0, std::nullopt}, std::nullopt);
  EXPECT_FALSE(mixed.total_usd().has_value());
  EXPECT_NE(cost_text(mixed, mixed, "m").find("at least $0.50"), std::string::npos);
  EXPECT_EQ(format_usd(0.0213), "$0.02");
  EXPECT_EQ(format_usd(0.0042), "$0.0042");
}

TEST(Permissions, ModesDecideByRisk) {
  using tools::Risk;
  const auto call = [](std::string tool, std::string category, std::string argument = "") {
    return CallSubject{std::move(tool), std::move(category), std::move(argument)};
  };
  const CallSubject read = call("read_file", "read", "src/a.cpp");
  const CallSubject write = call("write_file", "edit", "src/a.cpp");
  const CallSubject shell = call("shell", "shell", "git status --short");
  PermissionPolicy p;
  EXPECT_EQ(p.decide(read, Risk::read).verdict, Verdict::allow);
  EXPECT_EQ(p.decide(write, Risk::write).verdict, Verdict::ask);
  EXPECT_EQ(p.decide(shell, Risk::execute).verdict, Verdict::ask);
  p.set_mode(PermissionMode::accept_edits);
  EXPECT_EQ(p.decide(write, Risk::write).verdict, Verdict::allow);
  EXPECT_EQ(p.decide(shell, Risk::execute).verdict, Verdict::ask);
  p.set_mode(PermissionMode::plan);
  auto denied = p.decide(write, Risk::write);
  EXPECT_EQ(denied.verdict, Verdict::deny);
  EXPECT_NE(denied.reason.find("plan mode"), std::string::npos);
  EXPECT_EQ(p.decide(read, Risk::read).verdict, Verdict::allow);
  p.set_mode(PermissionMode::bypass);
  EXPECT_EQ(p.decide(shell, Risk::execute | Risk::network).verdict, Verdict::allow);

  // "Always" answers: the exact command for shell, the whole tool otherwise.
  PermissionPolicy remembered;
  auto always_write = PermissionPolicy::rule_for_answer(write, PermissionAnswer::allow_always);
  ASSERT_TRUE(always_write);
  EXPECT_EQ(always_write->text(), "write_file");
  remembered.add_rule(*always_write);
  EXPECT_EQ(remembered.decide(write, Risk::write).verdict, Verdict::allow);
  EXPECT_EQ(remembered.decide(shell, Risk::execute).verdict, Verdict::ask);
  auto never_shell = PermissionPolicy::rule_for_answer(shell, PermissionAnswer::reject_always);
  ASSERT_TRUE(never_shell);
  EXPECT_EQ(never_shell->text(), "shell(git status --short)");
  remembered.add_rule(*never_shell);
  EXPECT_EQ(remembered.decide(shell, Risk::execute).verdict, Verdict::deny);
  // A deny rule applies to each simple command of a line: the rejected command inside a longer line is
  // still rejected (tools/shell_command.h).
  EXPECT_EQ(remembered.decide(call("shell", "shell", "git status --short; rm -rf ~"), Risk::execute).verdict,
            Verdict::deny);
  // A command with wildcard characters approves only itself.
  auto star = PermissionPolicy::rule_for_answer(call("shell", "shell", "ls *.txt"), PermissionAnswer::allow_always);
  EXPECT_EQ(star->text(), "shell(ls \\*.txt)");
  remembered.add_rule(*star);
  EXPECT_EQ(remembered.decide(call("shell", "shell", "ls *.txt"), Risk::execute).verdict, Verdict::allow);
  EXPECT_EQ(remembered.decide(call("shell", "shell", "ls a.txt"), Risk::execute).verdict, Verdict::ask);
  EXPECT_FALSE(PermissionPolicy::rule_for_answer(shell, PermissionAnswer::allow_once));
  // Outside the workspace asks, even for reads.
  EXPECT_EQ(remembered.decide(call("read_file", "read", "/etc/passwd"), Risk::read | Risk::outside_workspace).verdict,
            Verdict::ask);

  for (const auto& m : permission_modes()) EXPECT_EQ(parse_permission_mode(m.id), m.mode);
  EXPECT_FALSE(parse_permission_mode("yolo"));
}

TEST(PermissionRules, ParseAndMatchByToolCategoryAndPattern) {
  using tools::Risk;
  const auto rule = [](std::string_view text, Verdict verdict) {
    auto r = parse_permission_rule(text, verdict, "test.json");
    EXPECT_TRUE(r) << text;
    return r ? *r : PermissionRule{};
  };
  EXPECT_EQ(rule("shell(git status*)", Verdict::allow).pattern, "git status*");
  EXPECT_EQ(rule("write_file", Verdict::deny).pattern, std::nullopt);
  for (const char* bad : {"", "shell(", "shell(x", "sh ell", "(x)", "edit(src/**) "}) {
    EXPECT_FALSE(parse_permission_rule(bad, Verdict::allow, "f")) << bad;
  }

  PermissionPolicy p;
  p.set_rules({rule("shell(git status*)", Verdict::allow), rule("shell(npm test)", Verdict::allow),
               rule("edit(src/**)", Verdict::allow), rule("read(secrets/**)", Verdict::deny),
               rule("shell(git push*)", Verdict::ask), rule("shell(git *)", Verdict::deny),
               rule("write_file(docs/*.md)", Verdict::ask)});
  const auto decide = [&](std::string tool, std::string category, std::string arg, Risk risk) {
    return p.decide(CallSubject{std::move(tool), std::move(category), std::move(arg)}, risk);
  };
  // Deny wins over an allow that also matches: "git status" matches both `git status*` and `git *`.
  auto status = decide("shell", "shell", "git status", Risk::execute);
  EXPECT_EQ(status.verdict, Verdict::deny);
  EXPECT_NE(status.reason.find("shell(git *)"), std::string::npos) << status.reason;
  EXPECT_NE(status.reason.find("test.json"), std::string::npos) << status.reason;
  EXPECT_EQ(decide("shell", "shell", "npm test", Risk::execute).verdict, Verdict::allow);
  EXPECT_EQ(decide("shell", "shell", "npm test -- --watch", Risk::execute).verdict, Verdict::ask);
  // Path patterns are component-wise: `src/**` covers any depth, `docs/*.md` one level.
  EXPECT_EQ(decide("edit_file", "edit", "src/a/b/c.cpp", Risk::write).verdict, Verdict::allow);
  EXPECT_EQ(decide("edit_file", "edit", "test/a.cpp", Risk::write).verdict, Verdict::ask);
  EXPECT_EQ(decide("read_file", "read", "secrets/key.txt", Risk::read).verdict, Verdict::deny);
  EXPECT_EQ(decide("grep", "read", "secrets/deep/x", Risk::read).verdict, Verdict::deny);
  EXPECT_EQ(decide("read_file", "read", "src/a.cpp", Risk::read).verdict, Verdict::allow);
  // An ask rule asks even where the mode would allow; plan still refuses first.
  p.set_mode(PermissionMode::accept_edits);
  EXPECT_EQ(decide("write_file", "edit", "docs/a.md", Risk::write).verdict, Verdict::ask);
  EXPECT_EQ(decide("write_file", "edit", "docs/sub/a.md", Risk::write).verdict, Verdict::allow);
  p.set_mode(PermissionMode::bypass);
  EXPECT_EQ(decide("read_file", "read", "secrets/key.txt", Risk::read).verdict, Verdict::deny);  // deny beats bypass
  EXPECT_EQ(decide("shell", "shell", "git push origin", Risk::execute).verdict, Verdict::deny);

  // Approvals are revocable by id.
  PermissionRule approved = rule("shell(make)", Verdict::allow);
  approved.approval_id = 7;
  p.set_mode(PermissionMode::default_mode);
  p.add_rule(approved);
  EXPECT_EQ(decide("shell", "shell", "make", Risk::execute).verdict, Verdict::allow);
  p.remove_approval(7);
  EXPECT_EQ(decide("shell", "shell", "make", Risk::execute).verdict, Verdict::ask);
}

TEST(PermissionRules, CallSubjectsComeFromTheToolKindAndInput) {
  tools::ToolSpec shell_spec{"shell", "", Json::object(), tools::ToolKind::execute, tools::Risk::execute};
  tools::ToolSpec edit_spec{"edit_file", "", Json::object(), tools::ToolKind::edit, tools::Risk::write};
  tools::ToolSpec list_spec{"list_dir", "", Json::object(), tools::ToolKind::read, tools::Risk::read};
  Json shell_input = Json::object();
  shell_input.set("command", "make -j2");
  Json edit_input = Json::object();
  edit_input.set("path", "/work/p/src/x.cpp");
  const CallSubject shell = call_subject(shell_spec, shell_input, "/work/p");
  EXPECT_EQ(shell.category, "shell");
  EXPECT_EQ(shell.argument, "make -j2");
  const CallSubject edit = call_subject(edit_spec, edit_input, "/work/p");
  EXPECT_EQ(edit.category, "edit");
  EXPECT_EQ(edit.argument, "src/x.cpp");
  EXPECT_EQ(call_subject(list_spec, Json::object(), "/work/p").argument, ".");
}

TEST(Ids, AreUniqueAndSortByTime) {
  std::set<std::string> ids;
  std::string previous;
  for (int i = 0; i < 1000; ++i) {
    std::string id = new_id("s");
    EXPECT_TRUE(id.starts_with("s_"));
    EXPECT_EQ(id.size(), 2U + 12U + 1U + 16U);
    EXPECT_GE(id.substr(0, 14), previous.substr(0, std::min<std::size_t>(14, previous.size())));
    previous = id;
    ids.insert(std::move(id));
  }
  EXPECT_EQ(ids.size(), 1000U);
}

TEST(SystemRules, AreTheVersionedFileWithoutItsComment) {
  const std::string_view rules = system_rules();
  EXPECT_TRUE(rules.starts_with("You are agentd")) << rules.substr(0, 80);
  EXPECT_NE(rules.find("smallest relevant verification"), std::string_view::npos);
}

}  // namespace
}  // namespace agentd::core

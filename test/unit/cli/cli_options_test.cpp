// The `agent` command line as parse_cli reads it: every option, the listing commands, and the
// messages for bad usage (which agent prints before exiting with kExitUsage).
#include "daemon/cli/cli_options.h"

#include <gtest/gtest.h>

namespace agentd::daemon::cli {
namespace {

TEST(CliOptions, PromptAndEveryOption) {
  auto o = parse_cli({"-p",          "fix it",   "--output-format",  "jsonl",    "--model",      "openai:gpt-4.1",
                      "--mode=plan", "--allow",  "shell(npm test)",  "--allow",  "edit(src/**)", "--deny",
                      "shell(rm *)", "--config", "c.json",           "--agentd", "/bin/agentd",  "--log",
                      "a.log",       "--demo",   "--max-budget-usd", "2.5",      "--image",      "a.png",
                      "--image",     "b.jpg"});
  ASSERT_TRUE(o) << o.error().message();
  EXPECT_EQ(o->command, Command::prompt);
  EXPECT_EQ(o->prompt, "fix it");
  EXPECT_TRUE(o->print);
  EXPECT_EQ(o->format, OutputFormat::jsonl);
  EXPECT_EQ(o->model, "openai:gpt-4.1");
  EXPECT_EQ(o->mode, "plan");
  EXPECT_EQ(o->allow, (std::vector<std::string>{"shell(npm test)", "edit(src/**)"}));
  EXPECT_EQ(o->deny, (std::vector<std::string>{"shell(rm *)"}));
  EXPECT_EQ(o->config, "c.json");
  EXPECT_EQ(o->agentd, "/bin/agentd");
  EXPECT_EQ(o->log, "a.log");
  EXPECT_TRUE(o->demo);
  EXPECT_EQ(o->max_budget_usd, 2.5);
  EXPECT_EQ(o->images, (std::vector<std::string>{"a.png", "b.jpg"}));
  EXPECT_FALSE(o->resume);
}

TEST(CliOptions, ARuleTakesOneWordAndThePromptStaysThePrompt) {
  auto o = parse_cli({"--allow", "write_file", "write it"});
  ASSERT_TRUE(o) << o.error().message();
  EXPECT_EQ(o->allow, std::vector<std::string>{"write_file"});
  EXPECT_EQ(o->prompt, "write it");
}

TEST(CliOptions, ResumeTakesAnIdOnlyWhenItLooksLikeOne) {
  auto latest = parse_cli({"--resume"});
  ASSERT_TRUE(latest) << latest.error().message();
  EXPECT_EQ(latest->resume, "");
  EXPECT_EQ(latest->command, Command::interactive);
  auto by_id = parse_cli({"--resume", "s_42", "go on"});
  ASSERT_TRUE(by_id) << by_id.error().message();
  EXPECT_EQ(by_id->resume, "s_42");
  EXPECT_EQ(by_id->prompt, "go on");
  auto prompt = parse_cli({"--resume", "fix it"});
  ASSERT_TRUE(prompt) << prompt.error().message();
  EXPECT_EQ(prompt->resume, "");
  EXPECT_EQ(prompt->prompt, "fix it");
  auto inline_id = parse_cli({"--resume=s_7"});
  ASSERT_TRUE(inline_id) << inline_id.error().message();
  EXPECT_EQ(inline_id->resume, "s_7");
}

TEST(CliOptions, ListingCommands) {
  auto sessions = parse_cli({"sessions", "--all"});
  ASSERT_TRUE(sessions) << sessions.error().message();
  EXPECT_EQ(sessions->command, Command::sessions);
  EXPECT_TRUE(sessions->all);
  auto trace = parse_cli({"trace", "3"});
  ASSERT_TRUE(trace) << trace.error().message();
  EXPECT_EQ(trace->command, Command::trace);
  EXPECT_EQ(trace->turn, "3");
  auto trust = parse_cli({"trust", "/src"});
  ASSERT_TRUE(trust) << trust.error().message();
  EXPECT_EQ(trust->command, Command::trust);
  EXPECT_EQ(trust->directory, "/src");
  EXPECT_EQ(parse_cli({"untrust"})->command, Command::untrust);
  EXPECT_EQ(parse_cli({"cost"})->command, Command::cost);
  EXPECT_EQ(parse_cli({})->command, Command::interactive);
  // After "--" every word is the prompt's, even one that looks like an option.
  auto dashed = parse_cli({"-p", "--", "--explain this flag"});
  ASSERT_TRUE(dashed) << dashed.error().message();
  EXPECT_EQ(dashed->prompt, "--explain this flag");
}

TEST(CliOptions, HelpAndVersionWinOverTheRest) {
  EXPECT_EQ(parse_cli({"--help"})->command, Command::help);
  EXPECT_EQ(parse_cli({"-h", "-p"})->command, Command::help);
  EXPECT_EQ(parse_cli({"--version"})->command, Command::version);
}

// The first three messages are CLI11's ("missing value", a value outside a set); the rest are ours.
TEST(CliOptions, BadUsageIsExplained) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--model"}, "--model: 1 required PROVIDER:MODEL missing"},
      {{"--mode", "yolo", "-p", "x"}, "--mode: yolo not in {default,acceptEdits,plan,bypass}"},
      {{"-p", "x", "--output-format", "xml"}, "--output-format: xml not in {text,json,jsonl}"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"-x", "prompt"}, "unknown option '-x'"},
      {{"--output-format", "json", "x"}, "--output-format goes with -p"},
      {{"-p"}, "-p needs a prompt: agent -p \"what to do\""},
      {{"fix", "the tests"}, "give the prompt as one argument (quote it): agent \"fix the tests\""},
      {{"--continue", "--resume"}, "give --continue or --resume, not both"},
      {{"sessions", "x"}, "agent sessions takes no arguments"},
      {{"trace", "1", "2"}, "agent trace takes at most one TURN"},
      {{"trust", "a", "b"}, "agent trust takes at most one DIR"},
      {{"--max-budget-usd", "0", "-p", "x"}, "--max-budget-usd: expected a number of dollars above 0, not 0"},
      {{"--image", "a.png"}, "--image goes with a prompt: agent --image shot.png \"what is wrong here?\""},
  };
  for (const auto& c : cases) {
    auto o = parse_cli(c.args);
    ASSERT_FALSE(o) << c.args[0];
    EXPECT_EQ(o.error().message(), c.message);
  }
}

TEST(CliOptions, HelpListsEveryOption) {
  const std::string usage = cli_usage();
  EXPECT_TRUE(usage.starts_with("usage: agent [options] [\"prompt\"]\n")) << usage;
  for (const char* flag : {"-p,--print",
                           "--output-format FORMAT",
                           "--model PROVIDER:MODEL",
                           "--mode MODE",
                           "--allow RULE",
                           "--deny RULE",
                           "--resume [ID]",
                           "-c,--continue",
                           "--config FILE",
                           "--agentd PATH",
                           "--log FILE",
                           "--demo",
                           "--max-budget-usd USD",
                           "--image FILE",
                           "--all",
                           "--version",
                           "-h,--help",
                           "agent sessions",
                           "agent trace",
                           "agent cost",
                           "agent trust",
                           "exit codes:"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(usage.find("{}"), std::string::npos) << "CLI11's flag-default syntax leaks into the help";
}

}  // namespace
}  // namespace agentd::daemon::cli

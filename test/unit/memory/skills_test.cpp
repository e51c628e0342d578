// Skills: discovery in the three locations, front matter (good and malformed), shadowing, selection by
// the input within a budget, and forcing with /<name>.
#include "core/skills/skills.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/memory/text_match.h"
#include "test/support/temp_dir.h"
#include "test/unit/memory/file_util.h"

namespace agentd::core::skills {
namespace {

using agentd::testing::TempDir;
using agentd::testing::write_file;
using support::Errc;

std::string skill_md(std::string_view name, std::string_view description, std::string_view body = "Do it.\n") {
  return fmt::format("---\nname: {}\ndescription: {}\n---\n{}", name, description, body);
}

Skill parse_ok(std::string_view text) {
  auto s = parse_skill(text, "/x/SKILL.md", SkillSource::project_agents);
  EXPECT_TRUE(s) << s.error().message();
  return s ? *s : Skill{};
}

std::string parse_error(std::string_view text) {
  auto s = parse_skill(text, "/x/SKILL.md", SkillSource::project_agents);
  EXPECT_FALSE(s) << "parsed: " << text;
  if (s) return {};
  EXPECT_EQ(s.error().code(), Errc::invalid_argument);
  return s.error().message();
}

const SkillDecision& decision(const SkillSelection& selection, std::string_view name) {
  for (const SkillDecision& d : selection.decisions) {
    if (d.name == name) return d;
  }
  ADD_FAILURE() << "no decision for " << name;
  static const SkillDecision kNone;
  return kNone;
}

// --- front matter --------------------------------------------------------------------------------

TEST(SkillFrontMatter, PlainQuotedAndBodyVerbatim) {
  Skill s = parse_ok(
      "---\nname: release-notes\ndescription: Write release notes from the changelog.\n---\n"
      "# Steps\r\n1. Read CHANGELOG.md  \n");
  EXPECT_EQ(s.name, "release-notes");
  EXPECT_EQ(s.description, "Write release notes from the changelog.");
  EXPECT_EQ(s.body, "# Steps\r\n1. Read CHANGELOG.md  \n");
  EXPECT_EQ(s.path, "/x/SKILL.md");
  EXPECT_GT(s.tokens, 0U);

  Skill dq =
      parse_ok("---\nname: \"pdf\"\ndescription: \"Fill \\\"PDF\\\" forms: fields\\tand \\u00e9\" # c\n---\nx\n");
  EXPECT_EQ(dq.name, "pdf");
  EXPECT_EQ(dq.description, "Fill \"PDF\" forms: fields\tand \xC3\xA9");
  Skill sq = parse_ok("---\nname: 'sq'\ndescription: 'It''s # not a comment'\n---\nx\n");
  EXPECT_EQ(sq.description, "It's # not a comment");
  // A plain value keeps '#' inside a word, drops a ` #` comment.
  Skill plain = parse_ok("---\nname: c-sharp\ndescription: C# things # a comment\n---\nx\n");
  EXPECT_EQ(plain.name, "c-sharp");
  EXPECT_EQ(plain.description, "C# things");
}

TEST(SkillFrontMatter, CrlfBomUnknownKeysAndComments) {
  Skill s = parse_ok(
      "\xEF\xBB\xBF---\r\n# a comment\r\nname: crlf\r\nallowed-tools:\r\n  - Read\r\n  - Bash\r\nlicense: MIT\r\n"
      "metadata:\r\n  owner: me\r\ndescription: Handles CRLF files\r\n---\r\nBody\r\n");
  EXPECT_EQ(s.name, "crlf");
  EXPECT_EQ(s.description, "Handles CRLF files");
  EXPECT_EQ(s.body, "Body\r\n");
}

TEST(SkillFrontMatter, MultiLineDescriptions) {
  Skill folded =
      parse_ok("---\nname: f\ndescription: >\n  Folded lines\n  join with spaces.\n\n  New paragraph.\n---\nx\n");
  EXPECT_EQ(folded.description, "Folded lines join with spaces.\nNew paragraph.");
  Skill literal = parse_ok("---\nname: l\ndescription: |-\n  Line one\n    indented\n  Line three\n---\nx\n");
  EXPECT_EQ(literal.description, "Line one\n  indented\nLine three");
  Skill plain = parse_ok("---\nname: p\ndescription: starts here\n  and goes on\nother: 1\n---\nx\n");
  EXPECT_EQ(plain.description, "starts here and goes on");
  Skill quoted = parse_ok("---\nname: q\ndescription: \"over\n  two lines\"\n---\nx\n");
  EXPECT_EQ(quoted.description, "over two lines");
  Skill block_last = parse_ok("---\nname: b\ndescription: >-\n  at the end\n---\nx\n");
  EXPECT_EQ(block_last.description, "at the end");
}

TEST(SkillFrontMatter, MalformedFilesAreRefusedWithTheLine) {
  EXPECT_NE(parse_error("# Just markdown\n").find("line 1: no front matter"), std::string::npos);
  EXPECT_NE(parse_error("").find("no front matter"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: y\n").find("never closed"), std::string::npos);
  EXPECT_NE(parse_error("---\ndescription: y\n---\nbody\n").find("`name` is missing"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\n---\nbody\n").find("`description` is missing"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription:\n---\nbody\n").find("line 3: `description` is empty"),
            std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\nname: y\ndescription: d\n---\nb\n").find("line 3: `name` is given twice"),
            std::string::npos);
  EXPECT_NE(
      parse_error("---\nname: x\nthis is not yaml\ndescription: d\n---\nb\n").find("line 3: expected `key: value`"),
      std::string::npos);
  EXPECT_NE(parse_error("---\n  indented: 1\nname: x\ndescription: d\n---\nb\n").find("line 2:"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: has space\ndescription: d\n---\nb\n").find("not a usable skill name"),
            std::string::npos);
  EXPECT_NE(parse_error("---\nname: -dash\ndescription: d\n---\nb\n").find("not a usable skill name"),
            std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: [a, b]\n---\nb\n").find("not a list or a map"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: \"unterminated\n---\nb\n").find("never closed"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: \"bad \\q escape\"\n---\nb\n").find("unknown escape"),
            std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: \"short \\u12\"\n---\nb\n").find("hex digits"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: 'a' trailing\n---\nb\n").find("after the closing quote"),
            std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: d\n---\n  \n").find("procedure"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: caf\xC3\n---\nb\n").find("UTF-8"), std::string::npos);
  EXPECT_NE(parse_error("---\nname: x\ndescription: *alias\n---\nb\n").find("not supported"), std::string::npos);
  EXPECT_NE(
      parse_error(std::string("---\nname: ") + std::string(65, 'a') + "\ndescription: d\n---\nb\n").find("at most 64"),
      std::string::npos);
}

TEST(SkillFrontMatter, ArbitraryBytesNeverCrash) {
  // Every prefix of a valid file, and some garbage: each parses or is refused, nothing else.
  const std::string good = "---\nname: \"a\\u00e9\"\ndescription: |\n  x\n  y\n---\nbody\n";
  for (std::size_t n = 0; n <= good.size(); ++n) {
    auto r = parse_skill(std::string_view(good).substr(0, n), "p", SkillSource::user);
    if (!r) {
      EXPECT_FALSE(r.error().message().empty());
    }
  }
  for (std::string_view junk : {"---\n---\n", "---\n:\n---\nb", "---\nname: \"\\\n---\n", "---\r\n\r\n---",
                                "---\ndescription: >9\n---\nb\n", "---\nname: '\n'\n---\n"}) {
    auto r = parse_skill(junk, "p", SkillSource::user);
    EXPECT_FALSE(r) << junk;
  }
}

// --- discovery -----------------------------------------------------------------------------------

class SkillDiscovery : public ::testing::Test {
 protected:
  std::filesystem::path project() const { return dir_.path() / "project"; }
  std::filesystem::path config() const { return dir_.path() / "config" / "agentd"; }
  SkillLocations locations() const {
    SkillLocations l;
    l.project = project();
    l.user_config_dir = config();
    return l;
  }
  TempDir dir_;
};

TEST_F(SkillDiscovery, FindsSkillsInAllThreeLocations) {
  write_file(project() / ".agents/skills/alpha/SKILL.md", skill_md("alpha", "From .agents"));
  write_file(project() / ".claude/skills/beta/SKILL.md", skill_md("beta", "From .claude"));
  write_file(config() / "skills/gamma/SKILL.md", skill_md("gamma", "From the user"));
  write_file(project() / ".agents/skills/README.md", "not a skill directory");
  write_file(project() / ".agents/skills/alpha/scripts/run.sh", "# a file the skill uses");
  write_file(project() / ".agents/skills/.cache/x", "hidden directories are not skills");

  SkillCatalog catalog = load_skills(locations());
  ASSERT_EQ(catalog.skills.size(), 3U);
  EXPECT_TRUE(catalog.diagnostics.empty()) << catalog.diagnostics[0].message;
  EXPECT_TRUE(catalog.shadowed.empty());
  EXPECT_EQ(catalog.skills[0].name, "alpha");
  EXPECT_EQ(catalog.skills[0].source, SkillSource::project_agents);
  EXPECT_EQ(catalog.skills[0].path, (project() / ".agents/skills/alpha/SKILL.md").string());
  EXPECT_EQ(catalog.skills[1].name, "beta");
  EXPECT_EQ(catalog.skills[1].source, SkillSource::project_claude);
  EXPECT_EQ(catalog.skills[2].name, "gamma");
  EXPECT_EQ(catalog.skills[2].source, SkillSource::user);
  EXPECT_EQ(catalog.find("GAMMA"), &catalog.skills[2]);
  EXPECT_EQ(catalog.find("delta"), nullptr);

  // No directories at all is no skills, no complaints.
  SkillLocations empty;
  empty.project = dir_.path() / "nothing";
  empty.user_config_dir = dir_.path() / "nobody";
  SkillCatalog none = load_skills(empty);
  EXPECT_TRUE(none.skills.empty());
  EXPECT_TRUE(none.diagnostics.empty());
}

TEST_F(SkillDiscovery, MalformedFilesAreDiagnosticsNotFailures) {
  write_file(project() / ".agents/skills/good/SKILL.md", skill_md("good", "Fine"));
  write_file(project() / ".agents/skills/bad/SKILL.md", "---\nname: bad\n");
  write_file(project() / ".agents/skills/empty/.keep", "");
  write_file(project() / ".claude/skills/help/SKILL.md", skill_md("help", "Takes a builtin's name"));
  SkillLocations l = locations();
  l.reserved_names = {"help", "compact"};
  SkillCatalog catalog = load_skills(l);
  ASSERT_EQ(catalog.skills.size(), 1U);
  EXPECT_EQ(catalog.skills[0].name, "good");
  ASSERT_EQ(catalog.diagnostics.size(), 3U);
  EXPECT_EQ(catalog.diagnostics[0].path, (project() / ".agents/skills/bad/SKILL.md").string());
  EXPECT_NE(catalog.diagnostics[0].message.find("never closed"), std::string::npos);
  EXPECT_EQ(catalog.diagnostics[1].path, (project() / ".agents/skills/empty").string());
  EXPECT_NE(catalog.diagnostics[1].message.find("no SKILL.md"), std::string::npos);
  EXPECT_NE(catalog.diagnostics[2].message.find("builtin /help"), std::string::npos);

  l.max_file_bytes = 10;
  SkillCatalog small = load_skills(l);
  EXPECT_TRUE(small.skills.empty());
  EXPECT_NE(small.diagnostics[0].message.find("too large"), std::string::npos);

  const std::string report = skills_report(catalog, nullptr);
  EXPECT_NE(report.find("Refused:"), std::string::npos);
  EXPECT_NE(report.find("never closed"), std::string::npos);
}

TEST_F(SkillDiscovery, ProjectShadowsUserAndAgentsShadowsClaude) {
  write_file(config() / "skills/deploy/SKILL.md", skill_md("deploy", "The user's deploy"));
  write_file(project() / ".claude/skills/deploy/SKILL.md", skill_md("deploy", "The .claude deploy"));
  write_file(project() / ".agents/skills/deploy-dir/SKILL.md", skill_md("Deploy", "The .agents deploy"));
  write_file(project() / ".claude/skills/lint/SKILL.md", skill_md("lint", "The .claude lint"));
  write_file(config() / "skills/lint/SKILL.md", skill_md("lint", "The user's lint"));

  SkillCatalog catalog = load_skills(locations());
  ASSERT_EQ(catalog.skills.size(), 2U);
  EXPECT_EQ(catalog.find("deploy")->description, "The .agents deploy");
  EXPECT_EQ(catalog.find("lint")->description, "The .claude lint");
  ASSERT_EQ(catalog.shadowed.size(), 3U);
  EXPECT_EQ(catalog.shadowed[0].name, "deploy");
  EXPECT_EQ(catalog.shadowed[0].kept_path, (project() / ".agents/skills/deploy-dir/SKILL.md").string());
  EXPECT_EQ(catalog.shadowed[0].shadowed_path, (project() / ".claude/skills/deploy/SKILL.md").string());
  EXPECT_EQ(catalog.shadowed[1].shadowed_path, (config() / "skills/deploy/SKILL.md").string());
  EXPECT_EQ(catalog.shadowed[2].kept_path, (project() / ".claude/skills/lint/SKILL.md").string());
  EXPECT_EQ(catalog.shadowed[2].shadowed_path, (config() / "skills/lint/SKILL.md").string());
  const std::string report = skills_report(catalog, nullptr);
  EXPECT_NE(report.find(fmt::format("deploy: {} is hidden by {}", (config() / "skills/deploy/SKILL.md").string(),
                                    (project() / ".agents/skills/deploy-dir/SKILL.md").string())),
            std::string::npos)
      << report;
}

// --- selection -----------------------------------------------------------------------------------

SkillCatalog catalog_of(std::vector<Skill> skills) {
  SkillCatalog c;
  for (Skill& s : skills) {
    s.path = "/s/" + s.name + "/SKILL.md";
    s.tokens = 0;
    c.skills.push_back(std::move(s));
  }
  for (Skill& s : c.skills) s.tokens = memory::estimate_tokens(render_skill(s));
  return c;
}

Skill make(std::string name, std::string description, std::string body = "Steps.\n") {
  Skill s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.body = std::move(body);
  return s;
}

TEST(SkillSelection, RanksByNameAndDescriptionAndExplains) {
  SkillCatalog c = catalog_of({
      make("release-notes", "Write release notes from the changelog"),
      make("pdf", "Fill and extract PDF forms"),
      make("db-migration", "Create and review database migrations"),
  });
  SkillSelection s = select_skills(c, "Draft the release notes for v2 from CHANGELOG.md", {});
  EXPECT_FALSE(s.forced);
  ASSERT_EQ(s.decisions.size(), 3U);
  EXPECT_EQ(s.decisions[0].name, "release-notes");
  EXPECT_EQ(s.decisions[0].verdict, SkillVerdict::selected);
  // name: release (3) + notes (3); description: changelog (1); rarity 1 (no other skill has them).
  EXPECT_DOUBLE_EQ(s.decisions[0].score, 7.0);
  EXPECT_EQ(s.decisions[0].reason, "selected (score 7): name: release, notes; description: changelog");
  EXPECT_EQ(decision(s, "pdf").verdict, SkillVerdict::not_relevant);
  EXPECT_EQ(decision(s, "pdf").reason, "not relevant: no word of its name or description is in the input");
  EXPECT_EQ(s.selected_names(), std::vector<std::string>{"release-notes"});
  EXPECT_EQ(s.tokens_used, c.find("release-notes")->tokens);

  // Writing the whole name counts extra; one description word alone is below the threshold.
  SkillSelection m = select_skills(c, "run db-migration now", {});
  EXPECT_EQ(m.decisions[0].name, "db-migration");
  EXPECT_EQ(m.decisions[0].verdict, SkillVerdict::selected);
  EXPECT_NE(m.decisions[0].reason.find("whole name: db-migration"), std::string::npos);
  SkillSelection weak = select_skills(c, "review this", {});
  EXPECT_EQ(decision(weak, "db-migration").verdict, SkillVerdict::not_relevant);
  EXPECT_EQ(decision(weak, "db-migration").reason, "not relevant (score 1, below 2): only description: review");
  // Stems meet: "migrating" matches "migrations", "forms" matches "form".
  SkillSelection stems = select_skills(c, "help migrating the database schema", {});
  EXPECT_EQ(decision(stems, "db-migration").verdict, SkillVerdict::selected) << decision(stems, "db-migration").reason;

  const std::string report = skills_report(c, &s);
  EXPECT_NE(report.find("/release-notes (.agents/skills"), std::string::npos) << report;
  EXPECT_NE(report.find("selected (score 7)"), std::string::npos);
  EXPECT_NE(report.find("not relevant: no word"), std::string::npos);
  EXPECT_NE(report.find("last turn: 1 selected"), std::string::npos);
}

TEST(SkillSelection, BudgetLeavesOutTheLowerRankedAndSaysSo) {
  SkillCatalog c = catalog_of({
      make("suite-runner", "Run the test suite and read its failures", std::string(400, 'a') + "\n"),
      make("bug-writer", "Write a regression test for a bug", std::string(400, 'b') + "\n"),
      make("jot-notes", "Keep short notes", "x\n"),
  });
  SkillSelectionOptions options;
  options.token_budget = c.find("bug-writer")->tokens + c.find("jot-notes")->tokens;
  SkillSelection s = select_skills(c, "run the suite, write the bug test, keep the notes", options);
  ASSERT_EQ(s.decisions.size(), 3U);
  // bug-writer and suite-runner tie (4.75: a name word 3, a description word 1, "test" shared by two
  // skills 0.75); the tie goes by name. jot-notes: name 3 + description 1.
  EXPECT_EQ(s.decisions[0].name, "bug-writer");
  EXPECT_DOUBLE_EQ(s.decisions[0].score, 4.75);
  EXPECT_EQ(s.decisions[0].verdict, SkillVerdict::selected);
  EXPECT_EQ(s.decisions[1].name, "suite-runner");
  EXPECT_DOUBLE_EQ(s.decisions[1].score, 4.75);
  EXPECT_EQ(s.decisions[1].verdict, SkillVerdict::over_budget);
  EXPECT_EQ(s.decisions[1].reason,
            fmt::format("over budget (score 4.8; {} tokens, {} of {} left): name: suite; description: run, test",
                        c.find("suite-runner")->tokens, c.find("jot-notes")->tokens, options.token_budget));
  // A smaller skill further down still fits in what is left.
  EXPECT_EQ(s.decisions[2].name, "jot-notes");
  EXPECT_DOUBLE_EQ(s.decisions[2].score, 4.0);
  EXPECT_EQ(s.decisions[2].verdict, SkillVerdict::selected);
  EXPECT_EQ(s.tokens_used, options.token_budget);
  EXPECT_EQ(s.selected_names(), (std::vector<std::string>{"bug-writer", "jot-notes"}));

  const std::string text = render_selection(c, s);
  EXPECT_NE(text.find("<skill name=\"bug-writer\""), std::string::npos);
  EXPECT_NE(text.find("<skill name=\"jot-notes\""), std::string::npos);
  EXPECT_EQ(text.find("suite-runner"), std::string::npos);
  EXPECT_LT(text.find("bug-writer"), text.find("<skill name=\"jot-notes\""));
}

TEST(SkillSelection, ForcingWithSlashName) {
  SkillCatalog c = catalog_of({
      make("release-notes", "Write release notes"),
      make("pdf", "Fill PDF forms", std::string(4000, 'p') + "\n"),
  });
  auto inv = parse_skill_invocation(c, "  /pdf fill in the release form ");
  ASSERT_TRUE(inv);
  EXPECT_EQ(inv->name, "pdf");
  EXPECT_EQ(inv->rest, "fill in the release form");
  EXPECT_EQ(parse_skill_invocation(c, "/PDF")->rest, "");
  EXPECT_FALSE(parse_skill_invocation(c, "/unknown x"));
  EXPECT_FALSE(parse_skill_invocation(c, "pdf please"));
  EXPECT_FALSE(parse_skill_invocation(c, "/"));

  SkillSelectionOptions options;
  options.token_budget = 100;  // less than the pdf skill: forced goes in anyway
  SkillSelection s = select_skills(c, "/pdf write the release notes into the form", options);
  ASSERT_TRUE(s.forced);
  EXPECT_EQ(*s.forced, "pdf");
  EXPECT_EQ(s.input, "write the release notes into the form");
  EXPECT_EQ(s.decisions[0].name, "pdf");
  EXPECT_EQ(s.decisions[0].verdict, SkillVerdict::forced);
  EXPECT_NE(s.decisions[0].reason.find("forced with /pdf"), std::string::npos);
  EXPECT_NE(s.decisions[0].reason.find("over the budget of 100"), std::string::npos);
  // The other relevant skill finds no budget left.
  EXPECT_EQ(decision(s, "release-notes").verdict, SkillVerdict::over_budget);
  EXPECT_EQ(s.selected_names(), std::vector<std::string>{"pdf"});
  EXPECT_EQ(render_selection(c, s).find("<skill name=\"pdf\""), render_selection(c, s).find("<skill"));

  // Forced within budget: the rest are ranked against the text after the name.
  SkillSelection both = select_skills(c, "/pdf and the release notes", {});
  EXPECT_EQ(both.selected_names(), (std::vector<std::string>{"pdf", "release-notes"}));
}

TEST(SkillSelection, EmptyCatalogAndEmptyInput) {
  SkillCatalog none;
  SkillSelection s = select_skills(none, "anything", {});
  EXPECT_TRUE(s.decisions.empty());
  EXPECT_EQ(render_selection(none, s), "");
  EXPECT_NE(skills_report(none, &s).find("No skills"), std::string::npos);
  SkillCatalog c = catalog_of({make("a-skill", "does things")});
  SkillSelection e = select_skills(c, "", {});
  ASSERT_EQ(e.decisions.size(), 1U);
  EXPECT_EQ(e.decisions[0].verdict, SkillVerdict::not_relevant);
}

}  // namespace
}  // namespace agentd::core::skills

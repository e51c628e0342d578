#include "core/context/context_package.h"

#include <gtest/gtest.h>

#include "core/support/json.h"

namespace agentd::core::context {
namespace {

ContextPackage sample() {
  ContextPackage p;
  p.task.kind = TaskKind::bugfix;
  p.task.confidence = 0.8;
  p.task.signals = {"stack trace (2 frames)"};
  p.workspace.cwd = "/w";
  p.workspace.git_repository = true;
  p.workspace.branch = "main";
  p.workspace.changed_files = {{"src/a.cpp", "modified", true, false}};
  p.workspace.changed_files_total = 1;
  Evidence e;
  e.id = "E1";
  e.path = "src/a.cpp";
  e.start_line = 12;
  e.end_line = 13;
  e.reason = "stack frame #1 (sanitizer, where the error happened) at line 12";
  e.score = 130;
  e.source = Source::stack_trace;
  e.score_terms = {{130, "stack frame #1"}};
  e.text = "12\tint x = *p;\n13\treturn x;\n";
  p.evidence.push_back(e);
  p.omitted.push_back({"lib/x.h", "over the token budget", 15, Source::identifier, 3});
  p.omitted_total = 1;
  p.open_questions = {"Is this the right checkout?"};
  p.budget_tokens = 1000;
  p.used_tokens = 90;
  p.text = "T";
  return p;
}

TEST(ContextPackage, RendersEvidenceBlocks) {
  const auto p = sample();
  EXPECT_EQ(render_evidence(p.evidence[0]),
            "Evidence E1: src/a.cpp:12-13\nReason: stack frame #1 (sanitizer, where the error happened) at line 12\n"
            "12\tint x = *p;\n13\treturn x;\n\n");
  EXPECT_EQ(render_header(p.task, p.workspace, 20),
            "<workspace_context>\nTask: bugfix (stack trace (2 frames))\nWorkspace: /w\nBranch: main\n"
            "Changed files (1): src/a.cpp (modified, staged)\n\n");
  EXPECT_EQ(render_omitted(p.omitted, 1, 3),
            "Omitted candidates:\n- lib/x.h:3 (identifier, score 15): over the token budget\n- and 2 more\n\n");
  EXPECT_EQ(render_questions(p.open_questions), "Open questions:\n- Is this the right checkout?\n\n");
}

TEST(ContextPackage, PreviewJson) {
  auto expected = support::parse_json(R"json({
    "task": {"kind": "bugfix", "confidence": 0.8, "signals": ["stack trace (2 frames)"]},
    "workspace": {"cwd": "/w", "additionalDirectories": [], "gitRepository": true, "branch": "main",
                  "changedFiles": [{"path": "src/a.cpp", "status": "modified", "staged": true, "unstaged": false}],
                  "changedFilesTotal": 1},
    "evidence": [{"id": "E1", "path": "src/a.cpp", "startLine": 12, "endLine": 13,
                  "reason": "stack frame #1 (sanitizer, where the error happened) at line 12", "score": 130,
                  "source": "stack_trace", "scoreTerms": [{"points": 130, "why": "stack frame #1"}]}],
    "ranked": [],
    "omitted": [{"path": "lib/x.h", "line": 3, "reason": "over the token budget", "score": 15, "source": "identifier"}],
    "omittedTotal": 1,
    "openQuestions": ["Is this the right checkout?"],
    "budget": {"tokens": 1000, "used": 90},
    "stats": {"indexMs": 0, "gitMs": 0, "searchMs": 0, "readMs": 0, "totalMs": 0, "indexedFiles": 0,
              "searchedFiles": 0, "searchedBytes": 0, "searchExhaustive": true, "indexRefreshed": false, "candidates": 0},
    "text": "T"
  })json");
  ASSERT_TRUE(expected) << expected.error().message();
  EXPECT_EQ(to_json(sample()), *expected) << to_json(sample()).dump();
}

TEST(ContextPackage, TokenEstimateMatchesTheEngine) {
  EXPECT_EQ(estimate_tokens(""), 0U);
  EXPECT_EQ(estimate_tokens("a"), 1U);
  EXPECT_EQ(estimate_tokens("abcd"), 1U);
  EXPECT_EQ(estimate_tokens("abcde"), 2U);
}

}  // namespace
}  // namespace agentd::core::context

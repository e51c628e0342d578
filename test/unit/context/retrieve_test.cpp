#include "core/context/retrieve.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/unit/context/fixture_repo.h"

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;
using testing::FixtureRepo;

ContextPackage retrieve(const FixtureRepo& repo, const std::string& input, std::uint64_t budget = 8000,
                        WorkspaceIndex* shared = nullptr, ContextLimits limits = {}) {
  WorkspaceIndex own;
  ContextRequest request;
  request.cwd = repo.path();
  request.input = input;
  request.token_budget = budget;
  request.limits = limits;
  auto result = retrieve_context(request, shared != nullptr ? *shared : own, {});
  EXPECT_TRUE(result) << result.error().message();
  return result ? std::move(result).value() : ContextPackage{};
}

// The first evidence block is `path` and covers `line`, and came from the stack trace.
void expect_first(const ContextPackage& package, const std::string& path, std::size_t line) {
  ASSERT_FALSE(package.evidence.empty()) << package.text;
  const Evidence& e = package.evidence.front();
  EXPECT_EQ(e.id, "E1");
  EXPECT_EQ(e.path, path) << package.text;
  EXPECT_LE(e.start_line, line);
  EXPECT_GE(e.end_line, line);
  EXPECT_EQ(e.source, Source::stack_trace);
  EXPECT_NE(package.text.find("Evidence E1: " + path + ":"), std::string::npos);
  EXPECT_EQ(package.task.kind, TaskKind::bugfix);
}

TEST(Retrieve, CppSanitizerTracePutsTheCrashSiteFirst) {
  FixtureRepo repo("cpp_app");
  const auto package = retrieve(
      repo,
      "The INI tool crashes on a line without '=':\n"
      "==4242==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n"
      "    #0 0x55d5c1 in ini::(anonymous namespace)::parse_header_line(char const*, std::string&, std::string&) "
      "/home/ci/work/ini_tool/src/parser.cpp:21:27\n"
      "    #1 0x55d5c2 in ini::parse_document(std::string const&) /home/ci/work/ini_tool/src/parser.cpp:40:5\n"
      "    #2 0x55d5c3 in IgnoresLinesWithoutEquals() /home/ci/work/ini_tool/tests/parser_test.cpp:12:20\n"
      "    #3 0x7f1234 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x2409a)\n");
  expect_first(package, "src/parser.cpp", 21);
  // The caller's frame merged into the same slice or right after it; the test file further down.
  bool test_file = std::any_of(package.evidence.begin(), package.evidence.end(),
                               [](const Evidence& e) { return e.path == "tests/parser_test.cpp"; });
  EXPECT_TRUE(test_file);
}

TEST(Retrieve, CppCompilerErrorLine) {
  FixtureRepo repo("cpp_app");
  const auto package =
      retrieve(repo, "Build fails:\nsrc/main.cpp:15:20: error: no member named 'parse_document' in namespace 'ini'\n");
  expect_first(package, "src/main.cpp", 15);
}

TEST(Retrieve, PythonTracebackPutsTheInnermostFrameFirst) {
  FixtureRepo repo("py_service");
  const auto package =
      retrieve(repo,
               "pytest fails with a KeyError for unknown discount codes:\n"
               "Traceback (most recent call last):\n"
               "  File \"/home/ci/billing/tests/test_billing.py\", line 12, in test_unknown_discount_code_is_ignored\n"
               "    assert compute_total(invoice) == 1000\n"
               "  File \"/home/ci/billing/app/billing.py\", line 22, in compute_total\n"
               "    percent = discount_percent(invoice.discount_code)\n"
               "  File \"/home/ci/billing/app/billing.py\", line 14, in discount_percent\n"
               "    return DISCOUNTS[code.upper()]\n"
               "KeyError: 'SPRING'\n");
  expect_first(package, "app/billing.py", 14);
  EXPECT_NE(package.evidence.front().reason.find("where the error happened"), std::string::npos);
}

TEST(Retrieve, NodeStack) {
  FixtureRepo repo("js_web");
  const auto package = retrieve(repo,
                                "TypeError: Cannot read properties of undefined (reading 'cents')\n"
                                "    at /srv/shop/src/cart.js:20:63\n"
                                "    at Array.reduce (<anonymous>)\n"
                                "    at Cart.totalCents (/srv/shop/src/cart.js:20:23)\n"
                                "    at TestContext.<anonymous> (/srv/shop/test/cart.test.js:14:27)\n"
                                "    at node:internal/test_runner/test:583:25\n");
  expect_first(package, "src/cart.js", 20);
}

TEST(Retrieve, JavaStackResolvesThePackagePath) {
  FixtureRepo repo("java_app");
  const auto package =
      retrieve(repo,
               "confirmationFor throws:\njava.lang.NullPointerException: Cannot invoke "
               "\"com.acme.orders.Order.customerEmail()\" "
               "because \"order\" is null\n"
               "\tat com.acme.orders.OrderService.confirmationFor(OrderService.java:18)\n"
               "\tat com.acme.orders.OrderServiceTest.lambda$confirmationForUnknownOrder$0(OrderServiceTest.java:13)\n"
               "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:53)\n");
  expect_first(package, "src/main/java/com/acme/orders/OrderService.java", 18);
  // The JUnit frame is a library: omitted, with why.
  const bool junit = std::any_of(package.omitted.begin(), package.omitted.end(), [](const OmittedCandidate& o) {
    return o.path == "AssertThrows.java" && o.reason.find("not in the workspace") != std::string::npos;
  });
  EXPECT_TRUE(junit) << package.text;
}

TEST(Retrieve, GoPanic) {
  FixtureRepo repo("go_cli");
  const auto package = retrieve(repo,
                                "panic: runtime error: index out of range [0] with length 0\n\n"
                                "goroutine 1 [running]:\n"
                                "example.com/deployctl/internal/config.(*Config).Primary(...)\n"
                                "\t/home/ci/deployctl/internal/config/config.go:33\n"
                                "main.main()\n"
                                "\t/home/ci/deployctl/main.go:16 +0x1d\n");
  expect_first(package, "internal/config/config.go", 33);
}

TEST(Retrieve, RustPanic) {
  FixtureRepo repo("rust_lib");
  const auto package = retrieve(repo,
                                "cargo test fails:\n"
                                "---- tests::rejects_letters stdout ----\n"
                                "thread 'tests::rejects_letters' panicked at src/tokenizer.rs:22:22:\n"
                                "unexpected character 'x'\n");
  expect_first(package, "src/tokenizer.rs", 22);
  // The failing test is found by name.
  const bool test = std::any_of(package.evidence.begin(), package.evidence.end(), [](const Evidence& e) {
    return e.path == "src/lib.rs" && e.start_line <= 38 && e.end_line >= 38;
  });
  EXPECT_TRUE(test) << package.text;
}

TEST(Retrieve, StackHitOutranksKeywordHit) {
  FixtureRepo repo("py_service");
  // compute_total is defined in billing.py, but the trace points at models.py.
  const auto package =
      retrieve(repo, "`compute_total` breaks:\n  File \"app/models.py\", line 18, in subtotal_cents\nTypeError: x\n");
  expect_first(package, "app/models.py", 18);
  ASSERT_GE(package.evidence.size(), 2U);
  EXPECT_GT(package.evidence[0].score, package.evidence[1].score);
}

TEST(Retrieve, IdentifierDefinitionsRankAboveUses) {
  FixtureRepo repo("py_service");
  const auto package = retrieve(repo, "How does `discount_percent` pick the percentage?");
  EXPECT_EQ(package.task.kind, TaskKind::question);
  ASSERT_FALSE(package.evidence.empty());
  EXPECT_EQ(package.evidence[0].path, "app/billing.py");
  EXPECT_LE(package.evidence[0].start_line, 11U);
  EXPECT_GE(package.evidence[0].end_line, 11U);
  EXPECT_NE(package.evidence[0].reason.find("identifier `discount_percent` defined at line 11"), std::string::npos);
}

TEST(Retrieve, QuotedMessageIsFound) {
  FixtureRepo repo("java_app");
  const auto package = retrieve(repo, "Where does the error \"an order needs at least one item\" come from?");
  ASSERT_FALSE(package.evidence.empty());
  EXPECT_EQ(package.evidence[0].path, "src/main/java/com/acme/orders/OrderService.java");
  EXPECT_EQ(package.evidence[0].source, Source::quoted_string);
}

TEST(Retrieve, MentionedPathWithLineAndGlob) {
  FixtureRepo repo("go_cli");
  const auto package =
      retrieve(repo, "In internal/config/config.go:20 the error is dropped; also check every *.mod file");
  ASSERT_FALSE(package.evidence.empty());
  EXPECT_EQ(package.evidence[0].path, "internal/config/config.go");
  EXPECT_EQ(package.evidence[0].source, Source::mentioned_path);
  const bool mod = std::any_of(package.evidence.begin(), package.evidence.end(),
                               [](const Evidence& e) { return e.path == "go.mod" && e.source == Source::glob; });
  EXPECT_TRUE(mod) << package.text;
}

TEST(Retrieve, ChangedFilesAreFoundWorkingTreeAndStaged) {
  FixtureRepo repo("js_web");
  repo.git("checkout -q -b feature/price");
  repo.append("src/cart.js", "\n// unstaged change\n");
  repo.append("src/utils/format.ts", "\nexport const VERSION = 2;\n");
  repo.git("add src/utils/format.ts");
  repo.write("src/coupon.js", "module.exports = {};\n");
  const auto package = retrieve(repo, "Review my changes please");
  EXPECT_EQ(package.task.kind, TaskKind::review);
  EXPECT_TRUE(package.workspace.git_repository);
  EXPECT_EQ(package.workspace.branch, "feature/price");
  ASSERT_EQ(package.workspace.changed_files.size(), 3U);
  std::vector<std::string> paths;
  for (const auto& f : package.workspace.changed_files)
    paths.push_back(f.path + " " + f.status + (f.staged ? " staged" : ""));
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"src/cart.js modified", "src/coupon.js untracked",
                                             "src/utils/format.ts modified staged"}));
  // The changed lines are the evidence.
  const auto it = std::find_if(package.evidence.begin(), package.evidence.end(),
                               [](const Evidence& e) { return e.path == "src/cart.js"; });
  ASSERT_NE(it, package.evidence.end()) << package.text;
  EXPECT_EQ(it->source, Source::git_changed);
  EXPECT_GE(it->end_line, 30U);
  EXPECT_NE(package.text.find("Branch: feature/price"), std::string::npos);
  EXPECT_NE(package.text.find("Changed files (3):"), std::string::npos);
}

TEST(Retrieve, ChangedFilesFromASubdirectoryCwd) {
  FixtureRepo repo("java_app");
  repo.append("src/main/java/com/acme/orders/Order.java", "// edit\n");
  WorkspaceIndex index;
  ContextRequest request;
  request.cwd = (repo.root() / "src/main").string();
  request.input = "review this";
  auto package = retrieve_context(request, index, {});
  ASSERT_TRUE(package);
  ASSERT_EQ(package->workspace.changed_files.size(), 1U);
  EXPECT_EQ(package->workspace.changed_files[0].path, "java/com/acme/orders/Order.java");
}

TEST(Retrieve, NotAGitRepositoryIsANote) {
  FixtureRepo repo("rust_lib", false);
  const auto package = retrieve(repo, "review the tokenizer");
  EXPECT_FALSE(package.workspace.git_repository);
  EXPECT_EQ(package.workspace.git_note, "not a git repository");
  EXPECT_NE(package.text.find("Git: not a git repository"), std::string::npos);
  const bool asks = std::any_of(package.open_questions.begin(), package.open_questions.end(), [](const std::string& q) {
    return q.find("not a git repository") != std::string::npos;
  });
  EXPECT_TRUE(asks);
}

TEST(Retrieve, BudgetIsNeverExceeded) {
  FixtureRepo repo("cpp_app");
  repo.append("src/parser.cpp", "// changed\n");
  const std::vector<std::string> inputs = {
      "crash:\n    #0 0x1 in parse_header_line(char const*) /x/src/parser.cpp:21:27\n"
      "    #1 0x2 in ini::parse_document(std::string const&) /x/src/parser.cpp:40:5\n"
      "    #2 0x3 in main /x/tests/parser_test.cpp:18:3\n",
      "How do `lookup` and `parse_document` work? See src/main.cpp and CMakeLists.txt and *.h",
      "review my changes",
      "nothing matches zzz_qqq_unknown",
  };
  WorkspaceIndex index;
  for (const auto& input : inputs) {
    for (std::uint64_t budget : {0, 1, 5, 20, 50, 80, 120, 200, 300, 450, 700, 1000, 1500, 2500, 4000, 8000, 30000}) {
      SCOPED_TRACE(::testing::Message() << "budget " << budget << " input " << input);
      const auto package = retrieve(repo, input, budget, &index);
      EXPECT_LE(package.used_tokens, budget);
      EXPECT_EQ(package.used_tokens, estimate_tokens(package.text));
      EXPECT_EQ(package.budget_tokens, budget);
      // Whatever was left out is listed with a reason.
      for (const auto& o : package.omitted) EXPECT_FALSE(o.reason.empty());
      if (!package.text.empty()) {
        EXPECT_TRUE(package.text.starts_with(kPackageOpen));
        EXPECT_TRUE(package.text.ends_with(kPackageClose));
      }
    }
  }
}

TEST(Retrieve, OmittedCandidatesAreListedWithWhy) {
  FixtureRepo repo("cpp_app");
  ContextLimits limits;
  limits.max_evidence = 1;
  const auto package = retrieve(repo,
                                "crash:\n    #0 0x1 in parse_header_line(char const*) /x/src/parser.cpp:21:27\n"
                                "    #1 0x2 in main /x/tests/parser_test.cpp:18:3\n"
                                "    #2 0x3 in std::__1::basic_string /usr/include/c++/12/bits/basic_string.h:300:1\n",
                                8000, nullptr, limits);
  ASSERT_EQ(package.evidence.size(), 1U);
  ASSERT_GE(package.omitted.size(), 2U);
  EXPECT_EQ(package.omitted_total, package.omitted.size());
  const auto has = [&](const std::string& path, const std::string& why) {
    return std::any_of(package.omitted.begin(), package.omitted.end(), [&](const OmittedCandidate& o) {
      return o.path == path && o.reason.find(why) != std::string::npos;
    });
  };
  EXPECT_TRUE(has("tests/parser_test.cpp", "ranked below the 1 evidence blocks kept")) << package.text;
  EXPECT_TRUE(has("/usr/include/c++/12/bits/basic_string.h", "not in the workspace")) << package.text;
  EXPECT_NE(package.text.find("Omitted candidates:\n"), std::string::npos);

  // A budget too small for the slices: omitted for the budget.
  const auto tight = retrieve(repo, "crash:\n    #0 0x1 in f /x/src/parser.cpp:21:27\n", 160);
  const bool budget = std::any_of(tight.omitted.begin(), tight.omitted.end(), [](const OmittedCandidate& o) {
    return o.reason.find("over the token budget") != std::string::npos;
  });
  EXPECT_TRUE(budget) << tight.text;
}

// The ranked list goes deeper than the evidence: a file below the evidence cut, or over the budget, is still
// ranked, once, best first, with its score's reasons; a file shown says which evidence block shows it.
TEST(Retrieve, TheRankedListGoesDeeperThanTheEvidence) {
  FixtureRepo repo("cpp_app");
  ContextLimits limits;
  limits.max_evidence = 1;
  const std::string trace =
      "crash:\n    #0 0x1 in parse_header_line(char const*) /x/src/parser.cpp:21:27\n"
      "    #1 0x2 in main /x/tests/parser_test.cpp:18:3\n";
  const auto package = retrieve(repo, trace, 8000, nullptr, limits);
  ASSERT_EQ(package.evidence.size(), 1U);
  ASSERT_GE(package.ranked.size(), 2U) << package.text;
  EXPECT_EQ(package.ranked[0].path, "src/parser.cpp");
  EXPECT_EQ(package.ranked[0].evidence_id, "E1");
  EXPECT_EQ(package.ranked[1].path, "tests/parser_test.cpp");
  EXPECT_TRUE(package.ranked[1].evidence_id.empty());
  EXPECT_EQ(package.ranked[1].source, Source::stack_trace);
  ASSERT_FALSE(package.ranked[1].score_terms.empty());
  for (std::size_t i = 1; i < package.ranked.size(); ++i) {
    EXPECT_GE(package.ranked[i - 1].score, package.ranked[i].score);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(package.ranked[i].path, package.ranked[j].path);
  }
  const support::Json json = to_json(package);
  ASSERT_TRUE(json["ranked"].is_array());
  const support::Json& second = json["ranked"].as_array().at(1);
  EXPECT_EQ(second["rank"].as_int64(), 2);
  EXPECT_EQ(second["path"].as_string(), "tests/parser_test.cpp");
  EXPECT_FALSE(second.contains("evidence"));
  EXPECT_EQ(json["ranked"].as_array().at(0)["evidence"].as_string(), "E1");

  // A budget with room for nothing: nothing is evidence, the ranking stands.
  const auto tight = retrieve(repo, trace, 40);
  EXPECT_TRUE(tight.evidence.empty());
  ASSERT_GE(tight.ranked.size(), 2U);
  EXPECT_EQ(tight.ranked[0].path, "src/parser.cpp");

  // Never more than max_ranked.
  limits.max_ranked = 1;
  EXPECT_EQ(retrieve(repo, trace, 8000, nullptr, limits).ranked.size(), 1U);
}

// A report in prose, naming no identifier: its words find the file, rare words weigh more than common
// ones, the code outranks its tests, and the reason says which words in how many files.
TEST(Retrieve, AProseReportFindsTheFileByItsRarestWords) {
  FixtureRepo repo("py_service", false);
  repo.write("service/cookies.py",
             "def parse_cookie_header(header):\n    # a Cookie header: name=value pairs\n    return header\n");
  repo.write("service/jar.py", "class Jar:\n    def expiry(self, cookie):\n        return cookie.expires\n");
  repo.write("tests/test_cookies.py",
             "from service.cookies import parse_cookie_header\n\ndef test_header():\n"
             "    assert parse_cookie_header('a=b') == 'a=b'  # cookie header\n");
  // "request" is everywhere; "cookie" and "header" together only in the cookie parser (and its test).
  for (int i = 0; i < 8; ++i) {
    repo.write("service/handler" + std::to_string(i) + ".py", "def handle(request):\n    return request\n");
  }
  const auto package = retrieve(repo,
                                "Bug: when a request carries two Cookie headers, only the first cookie is kept.\n"
                                "The second request header is silently dropped. Expected both to be read.");
  EXPECT_EQ(package.task.kind, TaskKind::bugfix);
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "service/cookies.py") << package.text;
  EXPECT_EQ(package.ranked[0].source, Source::report_words);
  const auto rank_of = [&](const std::string& path) {
    for (std::size_t i = 0; i < package.ranked.size(); ++i) {
      if (package.ranked[i].path == path) return i;
    }
    return package.ranked.size();
  };
  EXPECT_LT(rank_of("service/cookies.py"), rank_of("tests/test_cookies.py"));
  EXPECT_LT(rank_of("service/jar.py"), rank_of("service/handler0.py")) << package.text;
  const auto& terms = package.ranked[0].score_terms;
  ASSERT_FALSE(terms.empty());
  // "cookie", "cookies" and "Cookie" are searched as one stem, and the reason says so.
  EXPECT_NE(terms.front().why.find("cook* (in "), std::string::npos) << terms.front().why;
  const auto& test_terms = package.ranked[rank_of("tests/test_cookies.py")].score_terms;
  EXPECT_TRUE(std::any_of(test_terms.begin(), test_terms.end(), [](const ScoreTerm& t) {
    return t.why == "a test file, and the request names no test" && t.points < 0;
  }));
}

// A reporter writes "routing" and "directories"; the code says route, router and directory. The words are
// searched by their stems, so the file that handles routes is found though no word of the report is in it.
TEST(Retrieve, AReportsWordsFindTheirOtherFormsInTheCode) {
  FixtureRepo repo("py_service", false);
  repo.write("web/tree.py",
             "class Router:\n    def add_route(self, path, handler):\n"
             "        # a route per directory of the path\n        return path\n");
  for (int i = 0; i < 6; ++i) {
    repo.write("web/view" + std::to_string(i) + ".py", "def render(page):\n    return page\n");
  }
  const auto package = retrieve(repo,
                                "Bug: dynamic routing breaks for nested directories. Expected the page to "
                                "render, got a 404.");
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "web/tree.py") << package.text;
  const auto& terms = package.ranked[0].score_terms;
  ASSERT_FALSE(terms.empty());
  EXPECT_NE(terms.front().why.find("rout* (in "), std::string::npos) << terms.front().why;
}

// Documentation, changelogs and generated bundles talk about the code in the report's own words; for a bug
// report the code comes first.
TEST(Retrieve, ABugReportPutsTheCodeAboveItsDocsAndBundles) {
  FixtureRepo repo("py_service", false);
  repo.write("service/throttle.py", "def throttle_interval(burst):\n    return burst / 2  # throttle burst\n");
  repo.write("README.md",
             "# Throttle\nThe throttle burst interval: set `burst` to throttle bursts of requests.\n"
             "throttle burst throttle burst\n");
  repo.write("CHANGELOG.md", "- throttle: burst interval fixed\n- throttle burst again\n");
  repo.write("dist/bundle.py", "def throttle_interval(burst):\n    return burst / 2  # throttle burst throttle\n");
  const auto package =
      retrieve(repo, "Bug: the throttle ignores the burst setting, every request waits the full interval.");
  EXPECT_EQ(package.task.kind, TaskKind::bugfix);
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "service/throttle.py") << package.text;
  for (const auto& r : package.ranked) {
    if (r.path != "README.md" && r.path != "CHANGELOG.md" && r.path != "dist/bundle.py") continue;
    EXPECT_TRUE(std::any_of(r.score_terms.begin(), r.score_terms.end(), [](const ScoreTerm& t) {
      return t.points < 0 && t.why.find("documentation or a generated file") != std::string::npos;
    })) << r.path;
  }
  // A question about the code puts the code first too; one about the docs keeps them where their words
  // put them.
  const auto code_question = retrieve(repo, "Where is the throttle burst interval computed?");
  ASSERT_FALSE(code_question.ranked.empty()) << code_question.text;
  EXPECT_EQ(code_question.ranked[0].path, "service/throttle.py") << code_question.text;
  // A file name in a listing is no question about the docs.
  const auto listing =
      retrieve(repo, "Our fork's changelog.md and docs/ differ; where is the throttle burst computed?");
  ASSERT_FALSE(listing.ranked.empty()) << listing.text;
  EXPECT_EQ(listing.ranked[0].path, "service/throttle.py") << listing.text;
  const auto question = retrieve(repo, "Where do the docs describe the throttle burst interval?");
  for (const auto& r : question.ranked) {
    for (const auto& t : r.score_terms) EXPECT_EQ(t.why.find("documentation or a generated file"), std::string::npos);
  }
}

// A name defined in one file points at it; a name every example defines (`cli`, `main`) points nowhere.
// Manual pages and prose define nothing.
TEST(Retrieve, ANameDefinedInManyFilesWeighsLessThanOneDefinedOnce) {
  FixtureRepo repo("py_service", false);
  repo.write("src/pager.py", "def echo_via_pager(text):\n    return text\n");
  for (int i = 0; i < 6; ++i) {
    repo.write("examples/ex" + std::to_string(i) + ".py", "def setup_cli():\n    return 1\n");
  }
  repo.write("docs/app.1", "def echo_via_pager(text) is the pager\n");
  repo.write("src/pager.pyi", "def echo_via_pager(text: str) -> None: ...\n");  // declares, defines nothing
  const auto package = retrieve(repo, "setup_cli() then echo_via_pager() crashes with an error");
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "src/pager.py") << package.text;
  for (const auto& r : package.ranked) {
    if (r.path.starts_with("examples/")) {
      EXPECT_LT(r.score, package.ranked[0].score / 2) << package.text;
      EXPECT_TRUE(std::any_of(r.score_terms.begin(), r.score_terms.end(), [](const ScoreTerm& t) {
        return t.why.find("(defined in 6 files)") != std::string::npos;
      })) << package.text;
    }
    if (r.path == "src/pager.py") {
      for (const auto& t : r.score_terms) EXPECT_EQ(t.why.find("defined in 2 files"), std::string::npos) << t.why;
    }
    if (r.path == "docs/app.1" || r.path == "src/pager.pyi") {
      for (const auto& t : r.score_terms) EXPECT_EQ(t.why.find("defined"), std::string::npos) << t.why;
    }
  }
}

// One hop: the fault behind a named function is often in what it calls. The file defining a name the
// definition calls (multi-line signature and all) becomes a candidate, with the caller in its reason; a
// name defined all over (`helper` in four files) leads nowhere.
TEST(Retrieve, TheFileDefiningWhatANamedFunctionCallsIsOneHopAway) {
  FixtureRepo repo("py_service", false);
  repo.write("app/pages.py",
             "def render_page(\n    name,\n    context=None,\n):\n    body = fetch_template(name)\n"
             "    helper(body)\n    return body\n\n\ndef other():\n    return unrelated_call()\n");
  repo.write("app/loader.py", "import os\n\n\ndef fetch_template(name):\n    return open(os.path.join('t', name))\n");
  repo.write("app/misc.py", "def unrelated_call():\n    return 1\n");
  for (int i = 0; i < 4; ++i) repo.write("app/h" + std::to_string(i) + ".py", "def helper(x):\n    return x\n");
  const auto package = retrieve(repo, "render_page() crashes when the page has no name");
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "app/pages.py") << package.text;
  const auto find = [&](const std::string& path) -> const RankedFile* {
    for (const auto& r : package.ranked) {
      if (r.path == path) return &r;
    }
    return nullptr;
  };
  const RankedFile* loader = find("app/loader.py");
  ASSERT_NE(loader, nullptr) << package.text;
  EXPECT_EQ(loader->source, Source::reference);
  EXPECT_TRUE(std::any_of(loader->score_terms.begin(), loader->score_terms.end(), [](const ScoreTerm& t) {
    return t.why.find("defines `fetch_template` (line 4), called by `render_page` in app/pages.py:1") !=
           std::string::npos;
  })) << package.text;
  EXPECT_EQ(find("app/misc.py"), nullptr) << package.text;  // called by another function
  EXPECT_EQ(find("app/h0.py"), nullptr) << package.text;    // defined in four files
}

// An error message's fixed text finds the file that makes it, its quoted arguments set aside.
TEST(Retrieve, AnErrorMessageFindsWhereItIsMade) {
  FixtureRepo repo("py_service", false);
  repo.write("src/errors.py", "def directory_error(path):\n    return f\"[tool error]: '{path}' is a directory.\"\n");
  repo.write("src/main.py", "def run(paths):\n    for p in paths:\n        print(p)  # each directory is listed\n");
  const auto package =
      retrieve(repo, "`[tool error]: '/bin' is a directory.` goes to stdout instead of stderr when listing paths");
  ASSERT_FALSE(package.ranked.empty()) << package.text;
  EXPECT_EQ(package.ranked[0].path, "src/errors.py") << package.text;
  EXPECT_EQ(package.ranked[0].source, Source::quoted_string) << package.text;
}

// A word that matches only past the cut of a very long line leaves the file without a line to show: it is
// not a candidate (and nothing breaks).
TEST(Retrieve, AWordOnlyPastTheCutOfALongLineIsNoCandidate) {
  FixtureRepo repo("py_service", false);
  repo.write("data/long.txt", std::string(600, 'x') + " zebrafish\n");
  const auto package = retrieve(repo, "The zebrafish import is broken.");
  for (const auto& r : package.ranked) EXPECT_NE(r.path, "data/long.txt");
}

TEST(Retrieve, DeniedAndBinaryFilesNeverBecomeEvidence) {
  FixtureRepo repo("py_service");
  repo.write(".env", "SECRET=hunter2\n");
  repo.write("app/secret_settings.py", "TOKEN = 'abc'\n");
  // The literal is split so "\x01" does not swallow the "b" as a hex digit; sizeof keeps the NUL.
  static constexpr char kBlob[] =
      "\0\x01"
      "binary discount_percent";
  repo.write("app/blob.py", std::string(kBlob, sizeof kBlob - 1));
  ContextRequest request;
  request.cwd = repo.path();
  request.input = "Check .env, app/secret_settings.py and app/blob.py for discount_percent";
  request.denied = [](const std::string& absolute) { return absolute.find("secret_settings") != std::string::npos; };
  WorkspaceIndex index;
  auto package = retrieve_context(request, index, {});
  ASSERT_TRUE(package);
  for (const auto& e : package->evidence) {
    EXPECT_NE(e.path, ".env");
    EXPECT_NE(e.path, "app/secret_settings.py");
    EXPECT_NE(e.path, "app/blob.py");
  }
  EXPECT_EQ(package->text.find("hunter2"), std::string::npos);
  EXPECT_EQ(package->text.find("TOKEN"), std::string::npos);
  const auto reason_of = [&](const std::string& path) {
    for (const auto& o : package->omitted) {
      if (o.path == path) return o.reason;
    }
    return std::string("(not omitted)");
  };
  EXPECT_NE(reason_of(".env").find("deny-listed"), std::string::npos);
  EXPECT_EQ(reason_of("app/secret_settings.py"), "deny-listed by the configuration");
  EXPECT_EQ(reason_of("app/blob.py"), "a binary file");
}

TEST(Retrieve, OpenQuestionsWhenEvidenceIsThin) {
  FixtureRepo repo("go_cli");
  const auto package = retrieve(repo, "The deploy is broken, please fix the zzz_unknown_symbol handling");
  EXPECT_EQ(package.task.kind, TaskKind::bugfix);
  const auto asks = [&](const std::string& what) {
    return std::any_of(package.open_questions.begin(), package.open_questions.end(),
                       [&](const std::string& q) { return q.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(asks("No error output or stack trace was given"));
  EXPECT_TRUE(asks("`zzz_unknown_symbol` was not found in the workspace"));
  EXPECT_NE(package.text.find("Open questions:\n"), std::string::npos);
}

TEST(Retrieve, WarmIndexIsReusedBetweenTurns) {
  FixtureRepo repo("rust_lib");
  WorkspaceIndex index;
  const auto first = retrieve(repo, "how does `tokenize` work?", 8000, &index);
  EXPECT_TRUE(first.stats.index_refreshed);
  const auto second = retrieve(repo, "and `evaluate`?", 8000, &index);
  EXPECT_FALSE(second.stats.index_refreshed);
  EXPECT_EQ(second.stats.indexed_files, first.stats.indexed_files);
  repo.write("src/parser.rs", "pub fn evaluate_all() {}\n");
  const auto third = retrieve(repo, "and `evaluate_all`?", 8000, &index);
  EXPECT_TRUE(third.stats.index_refreshed);
  ASSERT_FALSE(third.evidence.empty());
  EXPECT_EQ(third.evidence[0].path, "src/parser.rs");
}

TEST(Retrieve, FocusedSearchOfABigTreeStillFindsNamedFiles) {
  FixtureRepo repo("rust_lib");
  ContextLimits limits;
  limits.full_search_max_files = 1;  // treat the fixture as a big tree
  limits.focused_search_files = 2;
  const auto package = retrieve(repo, "what does `tokenize` return?", 8000, nullptr, limits);
  EXPECT_FALSE(package.stats.search_exhaustive);
  EXPECT_LE(package.stats.searched_files, 2U);
  ASSERT_FALSE(package.evidence.empty());
  EXPECT_EQ(package.evidence[0].path, "src/tokenizer.rs");  // by its path words: tokenize* -> tokenizer
}

TEST(Retrieve, CancelledBeforeStarting) {
  FixtureRepo repo("cpp_app");
  WorkspaceIndex index;
  ContextRequest request;
  request.cwd = repo.path();
  request.input = "anything";
  support::CancelSource source;
  source.cancel();
  auto package = retrieve_context(request, index, source.token());
  ASSERT_FALSE(package);
  EXPECT_EQ(package.error().code(), support::Errc::cancelled);
}

TEST(Retrieve, CancelledWhileReadingSlices) {
  FixtureRepo repo("cpp_app");
  WorkspaceIndex index;
  support::CancelSource source;
  ContextRequest request;
  request.cwd = repo.path();
  request.input = "`parse_document` and `lookup` and `trim` and `main`()";
  // The deny check runs as each candidate file is read: cancel from there, mid-pipeline.
  request.denied = [&source](const std::string&) {
    source.cancel();
    return false;
  };
  auto package = retrieve_context(request, index, source.token());
  ASSERT_FALSE(package);
  EXPECT_EQ(package.error().code(), support::Errc::cancelled);
}

TEST(Retrieve, MissingCwdIsNotFound) {
  WorkspaceIndex index;
  ContextRequest request;
  request.cwd = "/nonexistent/agentd/context/test";
  request.input = "x";
  auto package = retrieve_context(request, index, {});
  ASSERT_FALSE(package);
  EXPECT_EQ(package.error().code(), support::Errc::not_found);
}

TEST(Retrieve, ContextTokenBudget) {
  EXPECT_EQ(context_token_budget(200000), 20000U);
  EXPECT_EQ(context_token_budget(1000000), 24000U);
  EXPECT_EQ(context_token_budget(4096), 1000U);
}

}  // namespace
}  // namespace agentd::core::context

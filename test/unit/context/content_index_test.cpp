// The content index's pieces: code-aware tokens, definitions by line shape, the background indexer, and
// retrieval's focused search through it.
#include "storage/content_index.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/context/code_tokens.h"
#include "core/context/content_indexer.h"
#include "core/context/definitions.h"
#include "core/context/retrieve.h"
#include "core/context/workspace_index.h"
#include "test/unit/context/fixture_repo.h"

namespace agentd::core::context {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> tokens_of(std::string_view ident) {
  std::vector<std::string> out;
  std::string scratch;
  identifier_tokens(ident, scratch, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

std::vector<std::string> split(const std::string& joined) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < joined.size()) {
    std::size_t space = joined.find(' ', start);
    if (space == std::string::npos) space = joined.size();
    out.push_back(joined.substr(start, space - start));
    start = space + 1;
  }
  return out;
}

std::vector<std::string> defined(std::string_view line) {
  std::vector<std::string_view> names;
  defined_names(line, names);
  return {names.begin(), names.end()};
}

TEST(CodeTokens, IdentifiersGiveThemselvesAndTheirWords) {
  EXPECT_EQ(tokens_of("ext4_fill_super"), (std::vector<std::string>{"ext4_fill_super", "ext4", "fill", "super"}));
  EXPECT_EQ(tokens_of("parseHTTPHeader"), (std::vector<std::string>{"parsehttpheader", "parse", "http", "header"}));
  EXPECT_EQ(tokens_of("__init__"), (std::vector<std::string>{"init"}));
  EXPECT_EQ(tokens_of("utf8String"), (std::vector<std::string>{"utf8string", "utf8", "string"}));
  EXPECT_EQ(tokens_of("Token"), (std::vector<std::string>{"token"}));
  EXPECT_TRUE(tokens_of("0x1f").empty());
  EXPECT_TRUE(tokens_of("x").empty());
  EXPECT_EQ(tokens_of(std::string(60, 'a') + "_tail"), (std::vector<std::string>{"tail"}));  // the whole is too long
}

TEST(CodeTokens, ATextGivesEachTokenOnceInFirstSeenOrder) {
  TokenSet set;
  set.add_text("int parseHeader(x) { return parse_header(x) + 0x10 + parseHeader(y); } // héllo wörld\n");
  EXPECT_EQ(split(set.joined()), (std::vector<std::string>{"int", "parseheader", "parse", "header", "return",
                                                           "parse_header", "llo", "rld"}));
  set.clear();
  EXPECT_EQ(set.size(), 0U);
  set.add_text("again again");
  EXPECT_EQ(set.joined(), "again");
  // Many distinct identifiers: the table grows and keeps every one.
  set.clear();
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "name" + std::to_string(i) + " ";
  set.add_text(text);
  EXPECT_EQ(set.size(), 5000U);
  EXPECT_EQ(path_tokens("fs/ext4/super.c"), "fs ext4 super");
  EXPECT_EQ(path_tokens("src/HttpClient.test.ts"), "src httpclient http client test");
}

TEST(Definitions, NamesALineDefines) {
  EXPECT_EQ(defined("def tokenize(text):"), (std::vector<std::string>{"tokenize"}));
  EXPECT_EQ(defined("    async def fetch(self):"), (std::vector<std::string>{"fetch"}));
  EXPECT_EQ(defined("pub fn evaluate(expr: &Expr) -> i64 {"), (std::vector<std::string>{"evaluate"}));
  EXPECT_EQ(defined("func (s *Server) Serve(l net.Listener) error {"), (std::vector<std::string>{"Serve"}));
  EXPECT_EQ(defined("static int ext4_fill_super(struct super_block *sb, struct fs_context *fc)"),
            (std::vector<std::string>{"ext4_fill_super"}));
  EXPECT_EQ(defined("static struct page *alloc_pages(gfp_t gfp)"), (std::vector<std::string>{"alloc_pages"}));
  EXPECT_EQ(defined("struct super_block {"), (std::vector<std::string>{"super_block"}));
  EXPECT_EQ(defined("#define EXT4_MAGIC 0xEF53"), (std::vector<std::string>{"EXT4_MAGIC"}));
  EXPECT_EQ(defined("export default function handler(req, res) {"), (std::vector<std::string>{"handler"}));
  EXPECT_EQ(defined("const DEFAULT_TIMEOUT = 30;"), (std::vector<std::string>{"DEFAULT_TIMEOUT"}));
  // Not definitions: calls, statements, a function's locals, comments, match arms.
  EXPECT_TRUE(defined("\tret = ext4_fill_super(sb, fc);").empty());
  EXPECT_TRUE(defined("    if (x) {").empty());
  EXPECT_TRUE(defined("    const local = 1;").empty());
  EXPECT_TRUE(defined("# define the thing").empty());
  EXPECT_TRUE(defined("// static int fake(void)").empty());
  EXPECT_TRUE(defined("    Token::Number(n) => {").empty());
}

// A tree just big enough to get a content index (content_min_files lowered), one file defining what the
// prompts ask about in a place path words would not find.
class ContentIndexTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(temp_.path()) / "tree";
    for (int d = 0; d < 8; ++d) {
      for (int f = 0; f < 10; ++f) {
        testing::write_file(root_ / ("drivers/sub" + std::to_string(d) + "/file" + std::to_string(f) + ".c"),
                            "static int probe(void)\n{\n\treturn helper(0);\n}\n");
      }
    }
    testing::write_file(root_ / "lib/misc.c", "int quota_reclaim_pages(int n)\n{\n\treturn n;\n}\n");
    testing::write_file(root_ / ".env", "API_SECRET_TOKEN=sk_live_abcdef\n");
    options_.content.cache_directory = (fs::canonical(temp_.path()) / "cache").string();
    options_.content_min_files = 10;
  }
  agentd::testing::TempDir temp_;
  fs::path root_;
  IndexOptions options_;
};

TEST_F(ContentIndexTree, BuildsInTheBackgroundAndCatchesUpWithChanges) {
  WorkspaceIndex index(options_);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  ASSERT_NE(refreshed->content, nullptr);
  refreshed->content->wait_idle();
  auto status = refreshed->content->status();
  EXPECT_TRUE(status.ready);
  EXPECT_EQ(status.error, "");
  EXPECT_EQ(status.files, 81U);  // .env is deny-listed: its tokens never reach the cache
  auto found = refreshed->content->search(std::vector<std::string>{"quota_reclaim_pages"}, 5);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 1U);
  EXPECT_EQ((*found)[0].path, "lib/misc.c");
  found = refreshed->content->search(std::vector<std::string>{"sk_live_abcdef", "api_secret_token"}, 5);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty());

  // An edit in place (same directory listing) reported by a tool, a new file, a removed one.
  testing::write_file(root_ / "lib/misc.c", "int quota_release_all(int n) { return n; }\n");
  index.notify_changed((root_ / "lib/misc.c").string());
  testing::write_file(root_ / "lib/extra.c", "void brand_new_function(void) {}\n");
  fs::remove(root_ / "drivers/sub0/file0.c");
  refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  found = refreshed->content->search(std::vector<std::string>{"quota_reclaim_pages"}, 5);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty()) << "a stale row answered";
  found = refreshed->content->search(std::vector<std::string>{"quota_release_all", "brand_new_function"}, 5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->size(), 2U);
  EXPECT_EQ(refreshed->content->status().files, 81U);
}

// The configuration's deny-paths reach the index: a file denied from the start is never indexed, and one
// denied after it was indexed is taken out by a rebuild (its tokens leave the postings, not only the list).
TEST_F(ContentIndexTree, ConfiguredDenyPathsNeverStayInTheIndex) {
  testing::write_file(root_ / "private/keys.c", "int vault_master_secret(void) { return 7; }\n");
  WorkspaceIndex index(options_);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  auto found = refreshed->content->search(std::vector<std::string>{"vault_master_secret"}, 5);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 1U);  // indexed while nothing denied it

  const std::vector<std::string> deny = {"private/"};
  refreshed = index.refresh(root_.string(), {}, deny);
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  EXPECT_EQ(refreshed->content->status().files, 81U);
  found = refreshed->content->search(std::vector<std::string>{"vault_master_secret", "vault"}, 5);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty());
  // The postings hold the token no more: the shards were rebuilt, not only the file's row forgotten.
  for (const auto& db : refreshed->content->database_files()) {
    auto shard = storage::ContentIndex::open(db, root_.string());
    ASSERT_TRUE(shard);
    auto f = shard->frequency("vault_master_secret");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->body + f->definitions + f->path, 0) << db;
  }

  // A new index with the deny-path from the start never reads the file.
  fs::remove_all(fs::canonical(temp_.path()) / "cache");
  WorkspaceIndex fresh(options_);
  refreshed = fresh.refresh(root_.string(), {}, deny);
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  EXPECT_EQ(refreshed->content->status().files, 81U);
}

TEST_F(ContentIndexTree, SurvivesARestartWithoutReindexing) {
  {
    WorkspaceIndex index(options_);
    auto refreshed = index.refresh(root_.string(), {});
    ASSERT_TRUE(refreshed);
    refreshed->content->wait_idle();
    EXPECT_EQ(refreshed->content->status().to_index, 81U);
  }
  WorkspaceIndex index(options_);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  const auto status = refreshed->content->status();
  EXPECT_TRUE(status.ready);
  EXPECT_EQ(status.to_index, 0U);  // every stamp matched
}

TEST_F(ContentIndexTree, AnotherShardCountKeepsWhatIsIndexedAndMovesWhatChanges) {
  options_.content.shards = 1;
  {
    WorkspaceIndex index(options_);
    auto refreshed = index.refresh(root_.string(), {});
    ASSERT_TRUE(refreshed);
    refreshed->content->wait_idle();
    EXPECT_EQ(refreshed->content->status().files, 81U);
  }
  options_.content.shards = 3;
  WorkspaceIndex index(options_);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  EXPECT_EQ(refreshed->content->status().to_index, 0U);  // shard 0 still holds every file, and is read
  auto found = refreshed->content->search(std::vector<std::string>{"quota_reclaim_pages"}, 5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->size(), 1U);
  for (int f = 0; f < 10; ++f) {
    testing::write_file(root_ / ("drivers/sub1/file" + std::to_string(f) + ".c"),
                        "int changed_" + std::to_string(f) + "(void) { return 1; }\n");
  }
  options_.content_recheck_ns = 0;  // re-stat at once: same listing, new contents
  WorkspaceIndex again(options_);
  refreshed = again.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  EXPECT_EQ(refreshed->content->status().files, 81U) << "a moved file counted twice or lost";
  std::vector<std::string> changed;
  for (int f = 0; f < 10; ++f) changed.push_back("changed_" + std::to_string(f));
  found = refreshed->content->search(changed, 200);
  ASSERT_TRUE(found);
  std::size_t sub1 = 0;
  for (const auto& m : *found) sub1 += m.path.starts_with("drivers/sub1/") ? 1 : 0;
  EXPECT_EQ(sub1, 10U) << "every rewritten file is found by its new contents";
  EXPECT_EQ(found->size(), 10U);
}

TEST_F(ContentIndexTree, RetrievalSearchesTheFilesTheIndexRanksAndSaysWhenItCannot) {
  WorkspaceIndex index(options_);
  ContextRequest request;
  request.cwd = root_.string();
  request.input = "Why does `quota_reclaim_pages` return garbage?";
  request.limits.full_search_max_files = 10;  // a "big" tree: a focused search
  request.limits.focused_search_files = 3;
  // Before the index is ready: path words chose (none match), and the preview says why.
  auto first = retrieve_context(request, index, {});
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->stats.search_exhaustive);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  refreshed->content->wait_idle();
  auto package = retrieve_context(request, index, {});
  ASSERT_TRUE(package);
  EXPECT_EQ(package->stats.content_index.rfind("ready", 0), 0U) << package->stats.content_index;
  ASSERT_FALSE(package->evidence.empty());
  EXPECT_EQ(package->evidence[0].path, "lib/misc.c");
}

TEST_F(ContentIndexTree, ATreeBelowTheThresholdGetsNoIndex) {
  options_.content_min_files = 1000;
  WorkspaceIndex index(options_);
  auto refreshed = index.refresh(root_.string(), {});
  ASSERT_TRUE(refreshed);
  EXPECT_EQ(refreshed->content, nullptr);
  EXPECT_FALSE(fs::exists(fs::canonical(temp_.path()) / "cache" / "index"));
}

}  // namespace
}  // namespace agentd::core::context

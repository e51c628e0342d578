// commit_file: the journal first, then the check that the file still holds what the change was built on,
// then the atomic write and the read-back; a commit that does not happen is abandoned in the journal.
#include "tools/file_transaction.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test/unit/tools/fake_journal.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

namespace fs = std::filesystem;
using support::Errc;

class FileTransactionTest : public ::testing::Test {
 protected:
  support::Result<CommitResult> commit(std::optional<std::string> before, std::optional<std::string> after,
                                       std::optional<std::uint32_t> mode = std::nullopt, bool journaled = true) {
    FileCommit c;
    c.path = path_;
    c.before = std::move(before);
    c.after = std::move(after);
    c.mode = mode;
    // Named: GCC 12 destroys class temporaries passed to a coroutine twice.
    const support::CancelToken token = cancel_.token();
    return testing::run_sync(commit_file(std::move(c), journaled ? &journal_ : nullptr, token));
  }

  agentd::testing::TempDir dir_;
  fs::path path_ = dir_.path() / "f.txt";
  testing::FakeJournal journal_;
  support::CancelSource cancel_;
};

TEST_F(FileTransactionTest, RecordsThePreImageBeforeWriting) {
  testing::write_text(path_, "old\n");
  auto r = commit("old\n", "new\n", 0640);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->status, CommitStatus::committed);
  EXPECT_TRUE(r->read_back);
  EXPECT_TRUE(r->text_found);
  EXPECT_EQ(r->journal_id, 0);
  EXPECT_EQ(testing::read_text(path_), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640U);

  ASSERT_EQ(journal_.entries.size(), 1U);
  const auto& e = journal_.entries[0];
  EXPECT_EQ(e.change.path, path_.string());
  EXPECT_EQ(e.change.before, "old\n");
  EXPECT_EQ(e.change.after_hash, sha256_hex("new\n"));
  EXPECT_EQ(e.on_disk, "old\n");  // recorded while the file still held the pre-image
  EXPECT_FALSE(e.abandoned);
}

TEST_F(FileTransactionTest, AFileChangedDuringTheRecordIsAConflictAndNotOverwritten) {
  testing::write_text(path_, "old\n");
  journal_.during_record = [&](const FileChange&) { testing::write_text(path_, "someone else\n"); };
  auto r = commit("old\n", "mine\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CommitStatus::conflict);
  EXPECT_NE(r->message.find("changed before the write"), std::string::npos) << r->message;
  EXPECT_EQ(testing::read_text(path_), "someone else\n");
  ASSERT_EQ(journal_.entries.size(), 1U);
  EXPECT_TRUE(journal_.entries[0].abandoned);
}

TEST_F(FileTransactionTest, CreatingNeedsTheFileAbsent) {
  testing::write_text(path_, "there\n");
  auto r = commit(std::nullopt, "new\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CommitStatus::conflict);
  EXPECT_EQ(testing::read_text(path_), "there\n");

  fs::remove(path_);
  auto created = commit(std::nullopt, "new\n");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, CommitStatus::committed);
  EXPECT_FALSE(journal_.entries.back().change.before);
  EXPECT_EQ(testing::read_text(path_), "new\n");
}

TEST_F(FileTransactionTest, RemovesAFile) {
  testing::write_text(path_, "bye\n");
  auto r = commit("bye\n", std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, CommitStatus::committed);
  EXPECT_TRUE(r->read_back);
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_FALSE(journal_.entries[0].change.after_hash);
}

TEST_F(FileTransactionTest, AJournalFailureWritesNothing) {
  testing::write_text(path_, "old\n");
  journal_.fail_with = support::Error(Errc::storage, "disk full");
  auto r = commit("old\n", "new\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "disk full");
  EXPECT_EQ(testing::read_text(path_), "old\n");
}

TEST_F(FileTransactionTest, CancelledWhileRecordingWritesNothing) {
  testing::write_text(path_, "old\n");
  journal_.during_record = [&](const FileChange&) { cancel_.cancel(); };
  auto r = commit("old\n", "new\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::cancelled);
  EXPECT_EQ(testing::read_text(path_), "old\n");
  EXPECT_TRUE(journal_.entries[0].abandoned);
}

TEST_F(FileTransactionTest, AFailedWriteIsAbandoned) {
  testing::write_text(path_, "old\n");
  {
    const testing::ScopedFileSizeLimit limit(2);
    auto r = commit("old\n", "much longer than two bytes\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, CommitStatus::failed);
    EXPECT_NE(r->message.find("File too large"), std::string::npos) << r->message;
  }
  EXPECT_EQ(testing::read_text(path_), "old\n");
  EXPECT_TRUE(journal_.entries[0].abandoned);
}

// Threads doing read-modify-write of one counter through commit_file: every increment that reports
// `committed` is in the final count, so none was lost to a racing writer.
TEST_F(FileTransactionTest, RacingCommitsNeverLoseAnUpdate) {
  testing::write_text(path_, "0");
  constexpr int kThreads = 4;
  constexpr int kRounds = 100;
  std::atomic<int> committed{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string seen = testing::read_text(path_);
        FileCommit c;
        c.path = path_;
        c.before = seen;
        c.after = std::to_string(std::stoi(seen) + 1);
        const support::CancelToken never;
        auto r = testing::run_sync(commit_file(std::move(c), nullptr, never));
        if (r && r->status == CommitStatus::committed) ++committed;
        if (r && r->status == CommitStatus::conflict) ++conflicts;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(committed + conflicts, kThreads * kRounds);
  EXPECT_EQ(std::stoi(testing::read_text(path_)), committed.load());
}

// The EditResult's two questions differ once something rewrites the file on write: did the bytes land,
// and is the new text in the file.
TEST(ReadBack, TheTwoChecksAreTwoQuestions) {
  const ReadBackCheck same = check_read_back("a\nnew\nb\n", "a\nnew\nb\n", "new\n");
  EXPECT_TRUE(same.read_back);
  EXPECT_TRUE(same.text_found);
  // A formatter reindented another line: the bytes differ, the edit's text is there.
  const ReadBackCheck formatted = check_read_back("  a\nnew\nb\n", "a\nnew\nb\n", "new\n");
  EXPECT_FALSE(formatted.read_back);
  EXPECT_TRUE(formatted.text_found);
  // Something rewrote the edited line itself.
  const ReadBackCheck rewritten = check_read_back("a\nNEW\nb\n", "a\nnew\nb\n", "new\n");
  EXPECT_FALSE(rewritten.read_back);
  EXPECT_FALSE(rewritten.text_found);
  // No expected text: the whole of what was written.
  EXPECT_FALSE(check_read_back("x\n", "y\n", "").text_found);
  EXPECT_TRUE(check_read_back("y\n", "y\n", "").text_found);
}

}  // namespace
}  // namespace agentd::tools

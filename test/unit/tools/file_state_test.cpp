#include "tools/file_state.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/temp_dir.h"
#include "test/unit/tools/tool_harness.h"
#include "tools/sha256.h"

namespace agentd::tools {
namespace {

TEST(FileState, RecordsWhatTheSessionSaw) {
  agentd::testing::TempDir dir;
  const auto path = dir.path() / "a.txt";
  testing::write_text(path, "hello\n");

  const FileSnapshot snapshot = snapshot_of("hello\n", path);
  EXPECT_EQ(snapshot.sha256, sha256_hex("hello\n"));
  EXPECT_EQ(snapshot.size, 6U);
  EXPECT_GT(snapshot.mtime_ns, 0);
  EXPECT_EQ(snapshot_of("x", dir.path() / "missing").mtime_ns, 0);

  FileState state;
  EXPECT_EQ(state.check(path, "hello\n"), Freshness::never_seen);
  state.record(path, snapshot);
  EXPECT_EQ(state.size(), 1U);
  ASSERT_TRUE(state.find(path));
  EXPECT_EQ(state.find(path)->sha256, snapshot.sha256);
  EXPECT_EQ(state.check(path, "hello\n"), Freshness::fresh);
  EXPECT_EQ(state.check(path, "hello!\n"), Freshness::stale);  // different size
  EXPECT_EQ(state.check(path, "HELLO\n"), Freshness::stale);   // same size, different bytes

  state.record(path, snapshot_of("HELLO\n", path));
  EXPECT_EQ(state.check(path, "HELLO\n"), Freshness::fresh);
  state.forget(path);
  EXPECT_FALSE(state.find(path));
  EXPECT_EQ(state.check(path, "HELLO\n"), Freshness::never_seen);
}

TEST(FileState, IsSafeToShareBetweenThreads) {
  FileState state;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&state, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string path = "/w/f" + std::to_string(t) + "_" + std::to_string(i);
        const std::string text = "v" + std::to_string(i);
        state.record(path, FileSnapshot{sha256_hex(text), text.size(), 0});
        EXPECT_EQ(state.check(path, text), Freshness::fresh);
        EXPECT_EQ(state.check("/w/shared", "x"), Freshness::never_seen);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(state.size(), 800U);
}

}  // namespace
}  // namespace agentd::tools

// A fresh agentd database in a temp dir with the stores over it, for the storage tests.
#pragma once

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "storage/database.h"
#include "storage/session_store.h"
#include "test/support/temp_dir.h"

namespace agentd::storage {

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = open_database({path()});
    ASSERT_TRUE(opened) << opened.error().message();
    db_.emplace(std::move(*opened));
  }

  std::string path() const { return dir_.file("agentd.db"); }
  Connection& db() { return *db_; }

  void add_session(const std::string& id, std::int64_t updated_at_ms = 1, const std::string& cwd = "/w") {
    SessionStore sessions(*db_);
    auto r = sessions.create(SessionRecord{id, cwd, std::nullopt, updated_at_ms, updated_at_ms, "{}"});
    ASSERT_TRUE(r) << r.error().message();
  }

  std::int64_t count(const std::string& sql) {
    auto n = db_->query_int(sql);
    EXPECT_TRUE(n) << n.error().message();
    return n ? *n : -1;
  }

  testing::TempDir dir_;
  std::optional<Connection> db_;
};

}  // namespace agentd::storage

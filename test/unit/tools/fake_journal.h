// A ChangeJournal in memory for the tool tests: it keeps every change it is given, notes what the file held
// at that moment (the journal must come before the write), and lets a test fail the record, or act while a
// change is being recorded (to race another writer).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "test/unit/tools/tool_harness.h"
#include "tools/file_transaction.h"

namespace agentd::tools::testing {

class FakeJournal : public ChangeJournal {
 public:
  struct Entry {
    FileChange change;
    std::optional<std::string> on_disk;  // what the file held when the change was recorded
    bool abandoned = false;
  };

  boost::asio::awaitable<support::Result<std::int64_t>> record(FileChange change) override {
    if (fail_with) co_return *fail_with;
    Entry entry;
    if (std::filesystem::exists(change.path)) entry.on_disk = read_text(change.path);
    entry.change = std::move(change);
    entries.push_back(std::move(entry));
    if (during_record) during_record(entries.back().change);
    co_return static_cast<std::int64_t>(entries.size() - 1);
  }

  void abandon(std::int64_t id) override { entries.at(static_cast<std::size_t>(id)).abandoned = true; }

  std::vector<Entry> entries;
  std::optional<support::Error> fail_with;
  std::function<void(const FileChange&)> during_record;
};

}  // namespace agentd::tools::testing

#include "test/security/attack_table.h"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::security {
namespace {

enum class Outcome { refused, leaked, known_hole };

struct Attack {
  std::string name;
  Outcome outcome;
};

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Attack>& table() {
  static std::vector<Attack> t;
  return t;
}

class PrintTable : public ::testing::Environment {
 public:
  void TearDown() override {
    const std::lock_guard lock(table_mutex());
    if (table().empty()) return;
    std::size_t refused = 0;
    std::size_t known = 0;
    std::printf("\n%-90s %s\n", "attack", "result");
    for (const auto& a : table()) {
      const char* result = a.outcome == Outcome::refused  ? "refused"
                           : a.outcome == Outcome::leaked ? "LEAKED"
                                                          : "KNOWN HOLE (test skipped)";
      std::printf("%-90s %s\n", a.name.c_str(), result);
      if (a.outcome == Outcome::refused) ++refused;
      if (a.outcome == Outcome::known_hole) ++known;
    }
    std::printf("security: %zu attacks tried, %zu refused, %zu leaked, %zu known holes\n", table().size(), refused,
                table().size() - refused - known, known);
  }
};

// Registered before main() runs the tests (gtest_main calls RUN_ALL_TESTS after static initialisation).
[[maybe_unused]] const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PrintTable);

}  // namespace

void record(std::string attack, bool refused) {
  const std::lock_guard lock(table_mutex());
  table().push_back({std::move(attack), refused ? Outcome::refused : Outcome::leaked});
}

void record_known_hole(std::string attack) {
  const std::lock_guard lock(table_mutex());
  table().push_back({std::move(attack), Outcome::known_hole});
}

}  // namespace agentd::security

#include "test/security/attack_table.h"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::security {
namespace {

struct Attack {
  std::string name;
  bool refused;
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
    std::printf("\n%-90s %s\n", "attack", "result");
    for (const auto& a : table()) {
      std::printf("%-90s %s\n", a.name.c_str(), a.refused ? "refused" : "LEAKED");
      if (a.refused) ++refused;
    }
    std::printf("security: %zu attacks tried, %zu refused, %zu leaked\n", table().size(), refused,
                table().size() - refused);
  }
};

// Registered before main() runs the tests (gtest_main calls RUN_ALL_TESTS after static initialisation).
[[maybe_unused]] const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PrintTable);

}  // namespace

void record(std::string attack, bool refused) {
  const std::lock_guard lock(table_mutex());
  table().push_back({std::move(attack), refused});
}

}  // namespace agentd::security

// Identifiers for sessions and turns: a prefix, the creation time, and randomness. Sorting by id sorts
// by creation time, which makes logs and the database easy to read; the random part keeps two
// processes creating sessions at the same millisecond apart.
#pragma once

#include <string>
#include <string_view>

namespace agentd::core {

// "s_0193a4f2c81e_7f3a9c20d1b4e6f8": prefix, 12 hex digits of Unix milliseconds, 16 random hex digits.
std::string new_id(std::string_view prefix);

}  // namespace agentd::core

// The security suite's closing table: every test records each attack it made and whether agentd refused
// it; at the end of the run the table says how many were tried, refused and leaked (a leak also fails the
// test that saw it, so the count is for the reader).
#pragma once

#include <string>

namespace agentd::security {

void record(std::string attack, bool refused);

}  // namespace agentd::security

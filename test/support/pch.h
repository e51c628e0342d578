// The precompiled header of the test binaries (agentd_test_pch in test/CMakeLists.txt): the standard,
// fmt, Asio and GoogleTest headers nearly every test includes, parsed once per build instead of once per
// file (about a second of each test file's compile). No file includes it by name, and every file still
// includes what it uses: -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON builds without it. Only headers from
// outside the project belong here, as a change to one of ours would rebuild every test.
//
// The libraries have none: measured, a shared one saved 3% of their compile time (their -O2 code
// generation dominates), not worth a second set of flags to keep in step.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

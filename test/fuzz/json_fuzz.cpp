// libFuzzer target: bytes -> the JSON parser -> the typed reader (JsonIn) of the ACP requests a client
// sends. Checks that nothing crashes or hangs, that writing what was parsed and parsing it again is a
// fixed point, and that a request the typed reader accepts is written and read back unchanged.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "protocol/acp/initialize.h"
#include "protocol/acp/session.h"
#include "test/fuzz/fuzz_support.h"

namespace {

namespace support = agentd::support;
namespace acp = agentd::protocol::acp;

using agentd::fuzz::check;

template <class T>
concept Writable = requires(support::JsonWriter& w, const T& v) {
  to_json(w, v);
};

template <Writable T>
std::string written(const T& value) {
  std::string out;
  support::JsonWriter(out).value(value);
  return out;
}

// Whatever the shape, a value or an error; a value of a type we also write survives writing and
// reading again.
template <class T>
void read_as(const support::Json& json) {
  auto read = support::read_json<T>(json, "params");
  if (!read) {
    check(!read.error().message().empty());
    return;
  }
  if constexpr (Writable<T>) {
    const std::string text = written(*read);
    auto reparsed = support::parse_json(text);
    check(reparsed.has_value());
    auto again = support::read_json<T>(*reparsed, "params");
    check(again.has_value());
    check(written(*again) == text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = support::parse_json(text);
  if (!parsed) {
    check(!parsed.error().message().empty());
    return 0;
  }
  // One write normalises (escapes, number spelling); after it, writing and parsing change nothing.
  const std::string once = parsed->dump();
  auto again = support::parse_json(once);
  check(again.has_value());
  check(again->dump() == once);
  check(once.find('\n') == std::string::npos);

  read_as<acp::InitializeRequest>(*parsed);
  read_as<acp::NewSessionRequest>(*parsed);
  read_as<acp::PromptRequest>(*parsed);
  return 0;
}

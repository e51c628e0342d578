// libFuzzer target: bytes -> framing -> JSON-RPC decoding -> the peer's dispatch. Checks that nothing
// crashes or hangs, that how the bytes are split does not change the frames, and that everything the
// peer sends back is one valid JSON-RPC message.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "core/support/json.h"
#include "protocol/framing.h"
#include "protocol/jsonrpc.h"
#include "protocol/peer.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using agentd::fuzz::check;
using agentd::fuzz::frames_of;
using agentd::protocol::FrameDecoder;
using agentd::protocol::FrameEvent;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  // Splitting must not matter.
  const auto whole = frames_of(bytes, bytes.size() + 1, 4096);
  check(agentd::fuzz::same_frames(frames_of(bytes, chunk, 4096), whole));

  boost::asio::io_context io;
  std::vector<std::string> sent;
  agentd::protocol::Peer peer(io.get_executor(), [&](std::string m) { sent.push_back(std::move(m)); });
  peer.on_request_raw("echo", [](agentd::support::Json params, agentd::protocol::Responder r) { r.reply(params); });
  peer.on_request_raw("drop", [](agentd::support::Json, agentd::protocol::Responder) {});

  FrameDecoder decoder(4096);
  decoder.feed(bytes);
  auto handle = [&](const FrameEvent& e) {
    if (e.kind == FrameEvent::Kind::message) {
      peer.handle_frame(e.payload);
    } else {
      peer.handle_frame_error(e);
    }
  };
  while (auto e = decoder.next()) handle(*e);
  if (auto e = decoder.finish()) handle(*e);
  io.poll();
  for (const auto& m : sent) {
    auto parsed = agentd::support::parse_json(m);
    check(parsed.has_value());
    check(m.find('\n') == std::string::npos);
    check((*parsed)["jsonrpc"] == agentd::support::Json("2.0"));
  }
  return 0;
}

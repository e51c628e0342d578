// What the fuzz targets share: a check that aborts (libFuzzer's signal of a finding), and the frames a
// byte stream decodes to when it is fed in pieces of `chunk` bytes.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "protocol/framing.h"

namespace agentd::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

inline std::vector<protocol::FrameEvent> frames_of(std::string_view bytes, std::size_t chunk, std::size_t max_frame) {
  protocol::FrameDecoder decoder(max_frame);
  std::vector<protocol::FrameEvent> out;
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    decoder.feed(bytes.substr(i, chunk));
    while (auto e = decoder.next()) out.push_back(std::move(*e));
  }
  if (auto e = decoder.finish()) out.push_back(std::move(*e));
  return out;
}

inline bool same_frames(const std::vector<protocol::FrameEvent>& a, const std::vector<protocol::FrameEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind || a[i].payload != b[i].payload) return false;
  }
  return true;
}

}  // namespace agentd::fuzz

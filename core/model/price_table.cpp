// The price table's figures and the lookup by model id. Where each figure came from is noted per group;
// change kPriceTableVersion with any figure.
#include "core/model/price_table.h"

#include <array>
#include <cctype>

namespace agentd::core::model {
namespace {

constexpr std::uint64_t k200k = 200'000;
constexpr std::uint64_t k1m = 1'000'000;

// Anthropic: platform.claude.com/docs/en/about-claude/pricing ("Model pricing": base input, 5m cache
// write, cache hits, output), read 2026-12-02. Cache writes are 1.25x input, reads 0.1x, as listed there.
// Context windows and output limits: the models overview pages (same date); Opus 4.6-4.8 and Sonnet 4.6
// limits were not on the pages we could read, so they carry the conservative 200k / 64k of Opus 4.5.
// OpenAI: platform.openai.com/docs/pricing (standard tier; cached input is the cache-read rate, there is
// no write fee, so a cache write costs plain input), figures as of 2025-08 and cross-checked for input and
// output against third-party price summaries dated 2026-03; limits from the model pages.
constexpr std::array kTable{
    // ---- Anthropic, current ----
    ModelInfo{"claude-opus-5", {5.00, 25.00, 6.25, 0.50}, k1m, 128'000},
    ModelInfo{"claude-sonnet-5", {2.00, 10.00, 2.50, 0.20}, k1m, 128'000},
    // Cache reads cut from $0.20 to $0.10 on 2026-10-07 (seen in two price-tracker release notes, not on
    // the official page excerpt we could read: verify).
    ModelInfo{"claude-sonnet-5-5", {2.00, 10.00, 2.50, 0.10}, k1m, 128'000},
    ModelInfo{"claude-opus-4-8", {5.00, 25.00, 6.25, 0.50}, k200k, 64'000},
    ModelInfo{"claude-opus-4-7", {5.00, 25.00, 6.25, 0.50}, k200k, 64'000},
    ModelInfo{"claude-opus-4-6", {5.00, 25.00, 6.25, 0.50}, k200k, 64'000},
    ModelInfo{"claude-opus-4-5", {5.00, 25.00, 6.25, 0.50}, k200k, 64'000},
    ModelInfo{"claude-opus-4-1", {15.00, 75.00, 18.75, 1.50}, k200k, 32'000},
    ModelInfo{"claude-opus-4-0", {15.00, 75.00, 18.75, 1.50}, k200k, 32'000},
    ModelInfo{"claude-opus-4", {15.00, 75.00, 18.75, 1.50}, k200k, 32'000},  // claude-opus-4-20250514
    ModelInfo{"claude-sonnet-4-6", {3.00, 15.00, 3.75, 0.30}, k200k, 64'000},
    ModelInfo{"claude-sonnet-4-5", {3.00, 15.00, 3.75, 0.30}, k200k, 64'000},
    ModelInfo{"claude-sonnet-4-0", {3.00, 15.00, 3.75, 0.30}, k200k, 64'000},
    ModelInfo{"claude-sonnet-4", {3.00, 15.00, 3.75, 0.30}, k200k, 64'000},  // claude-sonnet-4-20250514
    ModelInfo{"claude-haiku-4-5", {1.00, 5.00, 1.25, 0.10}, k200k, 64'000},
    // ---- Anthropic, 3.x still served somewhere (Bedrock / Vertex at least) ----
    ModelInfo{"claude-3-7-sonnet", {3.00, 15.00, 3.75, 0.30}, k200k, 64'000},
    ModelInfo{"claude-3-5-haiku", {0.80, 4.00, 1.00, 0.08}, k200k, 8'192},
    ModelInfo{"claude-3-haiku", {0.25, 1.25, 0.30, 0.03}, k200k, 4'096},
    // ---- OpenAI ----
    ModelInfo{"gpt-5.1", {1.25, 10.00, 1.25, 0.125}, 400'000, 128'000},
    ModelInfo{"gpt-5", {1.25, 10.00, 1.25, 0.125}, 400'000, 128'000},
    ModelInfo{"gpt-5-mini", {0.25, 2.00, 0.25, 0.025}, 400'000, 128'000},
    ModelInfo{"gpt-5-nano", {0.05, 0.40, 0.05, 0.005}, 400'000, 128'000},
    ModelInfo{"gpt-4.1", {2.00, 8.00, 2.00, 0.50}, 1'047'576, 32'768},
    ModelInfo{"gpt-4.1-mini", {0.40, 1.60, 0.40, 0.10}, 1'047'576, 32'768},
    ModelInfo{"gpt-4.1-nano", {0.10, 0.40, 0.10, 0.025}, 1'047'576, 32'768},
    ModelInfo{"gpt-4o", {2.50, 10.00, 2.50, 1.25}, 128'000, 16'384},
    ModelInfo{"gpt-4o-mini", {0.15, 0.60, 0.15, 0.075}, 128'000, 16'384},
    ModelInfo{"o3", {2.00, 8.00, 2.00, 0.50}, k200k, 100'000},
    ModelInfo{"o4-mini", {1.10, 4.40, 1.10, 0.275}, k200k, 100'000},
};

bool all_digits(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

}  // namespace

std::span<const ModelInfo> model_table() noexcept { return kTable; }

std::string_view strip_snapshot_suffix(std::string_view model_id) noexcept {
  constexpr std::string_view kLatest = "-latest";
  if (model_id.size() > kLatest.size() && model_id.ends_with(kLatest)) {
    return model_id.substr(0, model_id.size() - kLatest.size());
  }
  // Anthropic: -YYYYMMDD
  if (model_id.size() > 9 && model_id[model_id.size() - 9] == '-' && all_digits(model_id.substr(model_id.size() - 8))) {
    return model_id.substr(0, model_id.size() - 9);
  }
  // OpenAI: -YYYY-MM-DD
  if (model_id.size() > 11) {
    const std::string_view tail = model_id.substr(model_id.size() - 11);
    if (tail[0] == '-' && tail[5] == '-' && tail[8] == '-' && all_digits(tail.substr(1, 4)) &&
        all_digits(tail.substr(6, 2)) && all_digits(tail.substr(9, 2))) {
      return model_id.substr(0, model_id.size() - 11);
    }
  }
  return model_id;
}

const ModelInfo* find_model_info(std::string_view model_id) noexcept {
  for (const auto& info : kTable) {
    if (info.id == model_id) return &info;
  }
  const std::string_view base = strip_snapshot_suffix(model_id);
  if (base == model_id) return nullptr;
  for (const auto& info : kTable) {
    if (info.id == base) return &info;
  }
  return nullptr;
}

std::optional<Price> find_price(std::string_view model_id) noexcept {
  const ModelInfo* info = find_model_info(model_id);
  if (info == nullptr) return std::nullopt;
  return info->price;
}

double cost_usd(const Usage& usage, const Price& price) noexcept {
  constexpr double kMillion = 1'000'000.0;
  return (static_cast<double>(usage.input_tokens) * price.input_per_mtok +
          static_cast<double>(usage.output_tokens) * price.output_per_mtok +
          static_cast<double>(usage.cache_write_tokens) * price.cache_write_per_mtok +
          static_cast<double>(usage.cache_read_tokens) * price.cache_read_per_mtok) /
         kMillion;
}

}  // namespace agentd::core::model

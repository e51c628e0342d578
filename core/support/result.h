// Result<T> and Error: how failures cross module boundaries in agentd.
// Shaped like std::expected (which GCC 12 lacks in C++20) so it can be swapped for it later.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "core/support/enum_names.h"

namespace agentd::support {

// What kind of failure this is. Callers branch on the kind, never on the message text.
// protocol/ maps each kind to a JSON-RPC error code in exactly one place (rpc_error_from).
enum class Errc {
  invalid_argument,  // the caller's input is wrong (bad params, bad path, bad config)
  not_found,         // the thing named does not exist
  already_exists,
  unsupported,  // not implemented or not offered by this build/peer
  cancelled,    // the operation was cancelled on request
  timeout,
  unavailable,     // a dependency (peer, server, disk) cannot serve right now
  parse_error,     // bytes that are not what they should be (JSON, SQL, SSE)
  io,              // an operating-system I/O failure
  storage,         // a database failure
  conflict,        // state changed under us (stale file, newer schema, duplicate id)
  limit_exceeded,  // a configured bound was hit (size, count, budget)
  auth_required,   // no usable credentials (an API key) for what was asked: ACP's auth_required
  internal,        // a bug or an invariant broken: never the user's fault
};

std::string_view errc_name(Errc code) noexcept;
std::span<const support::EnumName<Errc>> enum_names(Errc) noexcept;

class [[nodiscard]] Error {
 public:
  Error(Errc code, std::string message, int native_code = 0)
      : code_(code), message_(std::move(message)), native_code_(native_code) {}

  Errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // An errno, an SQLite extended result code, an HTTP status: whatever the source gave.
  int native_code() const noexcept { return native_code_; }

  // Adds context in front of the message: "opening db: disk full".
  Error&& context(std::string_view what) && {
    message_ = fmt::format("{}: {}", what, message_);
    return std::move(*this);
  }

 private:
  Errc code_;
  std::string message_;
  int native_code_;
};

template <class... Args>
Error make_error(Errc code, fmt::format_string<Args...> format, Args&&... args) {
  return Error(code, fmt::format(format, std::forward<Args>(args)...));
}

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(const T& value) : storage_(std::in_place_index<0>, value) {}          // NOLINT(google-explicit-constructor)
  Result(T&& value) : storage_(std::in_place_index<0>, std::move(value)) {}    // NOLINT
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  template <class U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, T> &&
           !std::is_same_v<std::remove_cvref_t<U>, Error> && !std::is_same_v<std::remove_cvref_t<U>, Result>)
      Result(U&& value)
      : storage_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(storage_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(storage_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(storage_));
  }

  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> storage_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const { assert(has_value()); }
  const Error& error() const& {
    assert(!has_value());
    return *error_;
  }
  Error&& error() && {
    assert(!has_value());
    return std::move(*error_);
  }

 private:
  std::optional<Error> error_;
};

inline Result<void> ok() { return {}; }

}  // namespace agentd::support

// Propagates an error from an expression returning Result<T>; yields the value otherwise.
// A GNU statement expression, supported by GCC and Clang, the two compilers we build with.
#define AGENTD_TRY(expr)                                                   \
  ({                                                                       \
    auto agentd_try_result_ = (expr);                                      \
    if (!agentd_try_result_) return std::move(agentd_try_result_).error(); \
    std::move(agentd_try_result_).value();                                 \
  })

#define AGENTD_TRY_VOID(expr)                                              \
  do {                                                                     \
    auto agentd_try_result_ = (expr);                                      \
    if (!agentd_try_result_) return std::move(agentd_try_result_).error(); \
  } while (0)

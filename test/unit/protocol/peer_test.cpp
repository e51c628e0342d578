#include "protocol/peer.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

namespace agentd::protocol {
namespace {

namespace asio = boost::asio;
using support::Json;
using namespace std::chrono_literals;

struct Echo {
  std::string text;
};
bool from_json(const support::JsonIn& in, Echo& out) { return in.required("text", out.text); }
void to_json(support::JsonWriter& w, const Echo& v) { w.begin_object().member("text", v.text).end_object(); }

// A peer wired to a list of sent messages, and a few handlers to poke at.
class PeerTest : public ::testing::Test {
 protected:
  PeerTest()
      : peer_(
            io_.get_executor(), [this](std::string m) { sent_.push_back(std::move(m)); }, options()) {
    peer_.on_request<Echo, Echo>("echo", [](const Echo& e) -> support::Result<Echo> { return Echo{e.text}; });
    peer_.on_request<Echo, Echo>("fail", [](const Echo&) -> support::Result<Echo> {
      return support::Error(support::Errc::not_found, "no such thing");
    });
    peer_.on_request_async<Echo, Echo>("slow", [this](Echo e, CancelToken) -> asio::awaitable<support::Result<Echo>> {
      asio::steady_timer timer(io_, std::chrono::hours(1));
      co_await timer.async_wait(asio::use_awaitable);  // only cancellation ends this
      co_return Echo{e.text};
    });
    peer_.on_request_raw("drop", [](Json, Responder) {});
    peer_.on_request_raw("throw", [](Json, Responder) { throw std::runtime_error("handler bug"); });
    peer_.on_request_raw("hold", [this](Json, Responder r) { held_.push_back(std::move(r)); });
    peer_.on_notification<Echo>("note", [this](const Echo& e) { notes_.push_back(e.text); });
  }

  static PeerOptions options() {
    PeerOptions o;
    o.max_pending_outgoing = 2;
    return o;
  }

  // Feeds a frame, runs ready handlers, returns (and clears) what was sent, parsed.
  std::vector<Json> exchange(std::string_view frame) {
    peer_.handle_frame(frame);
    return take();
  }
  // Runs whatever is ready (an io_context that ran out of work must be restarted first).
  void poll() {
    io_.restart();
    io_.poll();
  }
  std::vector<Json> take() {
    poll();
    std::vector<Json> out;
    for (const auto& s : sent_) {
      auto j = support::parse_json(s);
      EXPECT_TRUE(j) << s;
      out.push_back(j ? *j : Json());
    }
    sent_.clear();
    return out;
  }
  static Json parse(std::string_view s) { return *support::parse_json(s); }

  asio::io_context io_;
  std::vector<std::string> sent_;
  std::vector<std::string> notes_;
  std::vector<Responder> held_;
  Peer peer_;
};

TEST_F(PeerTest, TypedRequestIsAnswered) {
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":1,"result":{"text":"hi"}})")});
}

TEST_F(PeerTest, InvalidParamsNameTheField) {
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":"a","method":"echo","params":{"text":3}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":"a","error":{"code":-32602,
              "message":"params.text: expected string, got integer"}})")});
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":2,"method":"echo"})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32602,
              "message":"params: expected object, got null"}})")});
}

TEST_F(PeerTest, EngineErrorsAreMapped) {
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":1,"method":"fail","params":{"text":""}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"no such thing"}})")});
}

TEST_F(PeerTest, UnknownMethodIsMethodNotFound) {
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":9,"method":"session/frobnicate","params":{}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":9,"error":{"code":-32601,
              "message":"Method not found: session/frobnicate"}})")});
}

TEST_F(PeerTest, TheRequestGateAnswersInsteadOfTheHandler) {
  peer_.set_request_gate([](std::string_view method) -> std::optional<RpcError> {
    if (method == "echo") return std::nullopt;
    return RpcError{error_code::kInvalidRequest, "not yet", std::nullopt};
  });
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":1,"method":"fail","params":{"text":""}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"not yet"}})")});
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"hi"}})"),
            std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":2,"result":{"text":"hi"}})")});
  // An unknown method is still "not found", whatever the gate says.
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":3,"method":"nope","params":{}})")[0]["error"]["code"], Json(-32601));
}

TEST_F(PeerTest, NotificationsAreNeverAnswered) {
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","method":"note","params":{"text":"n1"}})").empty());
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","method":"note","params":{"text":5}})").empty());
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","method":"unknown/notification"})").empty());
  EXPECT_EQ(notes_, std::vector<std::string>{"n1"});
}

TEST_F(PeerTest, MalformedInputGetsAnErrorAndServingContinues) {
  const char* inputs[] = {"{oops", "[1,2]", R"({"jsonrpc":"2.0","id":null,"method":"echo"})", "\xff\xfe",
                          R"({"jsonrpc":"2.0","method":"echo","id":[1]})"};
  for (const char* input : inputs) {
    auto out = exchange(input);
    ASSERT_EQ(out.size(), 1u) << input;
    EXPECT_TRUE(out[0].find("error")) << input;
    EXPECT_TRUE(out[0].find("id")->is_null()) << input;
  }
  EXPECT_EQ(exchange(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"still here"}})").size(), 1u);
}

TEST_F(PeerTest, DroppedResponderAnswersWithInternalError) {
  auto out = exchange(R"({"jsonrpc":"2.0","id":5,"method":"drop"})");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["error"]["code"], Json(-32603));
  EXPECT_EQ(peer_.inflight_incoming(), 0u);
}

TEST_F(PeerTest, ThrowingHandlerAnswersWithInternalError) {
  auto out = exchange(R"({"jsonrpc":"2.0","id":6,"method":"throw"})");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["error"]["code"], Json(-32603));
}

TEST_F(PeerTest, CancelRequestCancelsAnAsyncHandler) {
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":"s1","method":"slow","params":{"text":"x"}})").empty());
  EXPECT_EQ(peer_.inflight_incoming(), 1u);
  auto out = exchange(R"({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"s1"}})");
  for (int i = 0; i < 10 && out.empty(); ++i) {
    io_.restart();
    io_.run_for(10ms);
    out = take();
  }
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], parse(R"({"jsonrpc":"2.0","id":"s1","error":{"code":-32800,"message":"request cancelled"}})"));
  EXPECT_EQ(peer_.inflight_incoming(), 0u);
}

TEST_F(PeerTest, DuplicateInFlightIdIsRefused) {
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":1,"method":"hold"})").empty());
  auto out = exchange(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}})");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["error"]["code"], Json(-32600));
  held_.front().reply(Json::object());
  EXPECT_EQ(take(), std::vector<Json>{parse(R"({"jsonrpc":"2.0","id":1,"result":{}})")});
  // Answering twice sends nothing more.
  held_.front().reply(Json::object());
  EXPECT_TRUE(take().empty());
}

TEST_F(PeerTest, OutgoingCallsAreRoutedByShapeNotId) {
  support::Result<Json> result = support::Error(support::Errc::internal, "not yet");
  bool done = false;
  peer_.async_call("fs/read_text_file", Json(Json::Object{{"path", "/a"}}), [&](support::Result<Json> r) {
    result = std::move(r);
    done = true;
  });
  auto out = take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], parse(R"({"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"path":"/a"}})"));
  // The client's own request with the same id 0 is a request, not our answer.
  auto echoed = exchange(R"({"jsonrpc":"2.0","id":0,"method":"echo","params":{"text":"mine"}})");
  ASSERT_EQ(echoed.size(), 1u);
  EXPECT_FALSE(done);
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":0,"result":{"content":"text"}})").empty());
  ASSERT_TRUE(done);
  ASSERT_TRUE(result);
  EXPECT_EQ(*result, parse(R"({"content":"text"})"));
}

TEST_F(PeerTest, ErrorResponsesBecomeErrors) {
  support::Result<Json> result = Json();
  peer_.async_call("x", Json(), [&](support::Result<Json> r) { result = std::move(r); });
  take();
  exchange(R"({"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"nope"}})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), support::Errc::unsupported);
}

TEST_F(PeerTest, ResponsesToUnknownIdsAreIgnoredSilently) {
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":99,"result":{}})").empty());
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":"zz","error":{"code":1,"message":"x"}})").empty());
}

TEST_F(PeerTest, PendingOutgoingCallsAreBounded) {
  std::vector<support::Result<Json>> results;
  for (int i = 0; i < 3; ++i) {
    peer_.async_call("x", Json(), [&](support::Result<Json> r) { results.push_back(std::move(r)); });
  }
  auto out = take();
  EXPECT_EQ(out.size(), 2u);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error().code(), support::Errc::limit_exceeded);
  EXPECT_EQ(peer_.pending_outgoing(), 2u);
}

TEST_F(PeerTest, CancelledCoroutineCallSendsCancelRequest) {
  using namespace asio::experimental::awaitable_operators;
  std::optional<support::Result<Json>> result;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io_, 5ms);
        // Race the call against a timer: the timer wins, so the call's operation is cancelled.
        auto which =
            co_await (peer_.call("session/request_permission", Json()) || timer.async_wait(asio::use_awaitable));
        if (which.index() == 0) result = std::get<0>(std::move(which));
      },
      asio::detached);
  io_.restart();
  io_.run_for(200ms);
  auto out = take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["method"], Json("session/request_permission"));
  EXPECT_EQ(out[1], parse(R"({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}})"));
  EXPECT_FALSE(result.has_value());
  EXPECT_EQ(peer_.pending_outgoing(), 0u);
  // A late answer is now just an unknown id.
  EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","id":0,"result":{}})").empty());
}

TEST_F(PeerTest, ShutdownFailsPendingAndAnswersEverything) {
  std::optional<support::Result<Json>> outgoing;
  peer_.async_call("x", Json(), [&](support::Result<Json> r) { outgoing = std::move(r); });
  exchange(R"({"jsonrpc":"2.0","id":1,"method":"slow","params":{"text":"x"}})");
  exchange(R"({"jsonrpc":"2.0","id":2,"method":"hold"})");
  take();
  bool joined = false;
  peer_.shutdown();
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        co_await peer_.join();
        joined = true;
      },
      asio::detached);
  io_.restart();
  io_.run_for(500ms);
  EXPECT_TRUE(joined);
  ASSERT_TRUE(outgoing.has_value());
  EXPECT_EQ(outgoing->error().code(), support::Errc::cancelled);
  auto out = take();
  ASSERT_EQ(out.size(), 2u);
  std::set<std::int64_t> codes;
  for (const auto& m : out) codes.insert(m["error"]["code"].as_int64());
  EXPECT_EQ(codes, (std::set<std::int64_t>{-32800, -32603}));
  // The held responder is now inert.
  held_.clear();
  EXPECT_TRUE(take().empty());
  // And new requests are turned away.
  auto late = exchange(R"({"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"x"}})");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0]["error"]["code"], Json(-32000));
}

TEST_F(PeerTest, FrameErrorsAreAnsweredWithNullId) {
  peer_.handle_frame_error(FrameEvent{FrameEvent::Kind::oversize, "too big"});
  auto out = take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too big"}})"));
}

}  // namespace
}  // namespace agentd::protocol

// Drives the real agentd binary as a child process: start-up, framing, shutdown paths, and the rule
// that stdout carries nothing but protocol messages.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/support/json.h"
#include "storage/sqlite.h"
#include "test/support/child_process.h"
#include "test/support/temp_dir.h"

namespace agentd::daemon {
namespace {

using namespace std::chrono_literals;
using support::Json;
using testing::ChildProcess;
using testing::TempDir;

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})";

class DaemonProcess : public ::testing::Test {
 protected:
  ChildProcess::Options child_options() {
    ChildProcess::Options o;
    o.env_overrides = {"XDG_DATA_HOME=" + dir_.file("xdg"), "AGENTD_LOG=info"};
    return o;
  }
  std::unique_ptr<ChildProcess> start(std::vector<std::string> extra = {}, ChildProcess::Options o = {}) {
    std::vector<std::string> argv = {AGENTD_BIN, "--db", dir_.file("agentd.db")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (o.env_overrides.empty()) {
      auto base = child_options();
      base.stdin_file = o.stdin_file;
      o = base;
    }
    return std::make_unique<ChildProcess>(argv, o);
  }
  static Json parse_line(const std::optional<std::string>& line) {
    EXPECT_TRUE(line.has_value());
    if (!line) return Json();
    auto j = support::parse_json(*line);
    EXPECT_TRUE(j) << *line;
    return j ? *j : Json();
  }
  TempDir dir_;
};

TEST_F(DaemonProcess, AnswersInitializeAndExitsCleanlyAtEndOfInput) {
  auto agentd = start();
  agentd->write(std::string(kInitialize) + "\n");
  Json response = parse_line(agentd->read_line(5s));
  EXPECT_EQ(response["id"], Json(1));
  EXPECT_EQ(response["result"]["protocolVersion"], Json(1));
  EXPECT_EQ(response["result"]["agentInfo"]["name"], Json("agentd"));
  agentd->close_stdin();
  auto status = agentd->wait(5s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 0);
  EXPECT_EQ(agentd->read_all_stdout(1s), "");
}

TEST_F(DaemonProcess, ExitsCleanlyOnSigtermAndSigint) {
  for (int signo : {SIGTERM, SIGINT}) {
    auto agentd = start();
    agentd->write(std::string(kInitialize) + "\n");
    parse_line(agentd->read_line(5s));  // running and serving
    agentd->signal(signo);
    auto status = agentd->wait(5s);
    ASSERT_TRUE(status) << "no exit after signal " << signo;
    EXPECT_TRUE(status->exited) << signo;
    EXPECT_EQ(status->code, 0) << signo;
    EXPECT_NE(agentd->stderr_text().find("shutting down"), std::string::npos);
  }
}

TEST_F(DaemonProcess, StdoutCarriesOnlyProtocolEvenWithTraceLogging) {
  auto o = child_options();
  o.env_overrides = {"XDG_DATA_HOME=" + dir_.file("xdg"), "AGENTD_LOG=trace"};
  auto agentd = start({}, o);
  agentd->write(std::string(kInitialize) + "\nnot json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}\n");
  agentd->close_stdin();
  const std::string out = agentd->read_all_stdout(5s);
  ASSERT_TRUE(agentd->wait(5s));
  std::istringstream lines(out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    auto j = support::parse_json(line);
    ASSERT_TRUE(j) << "not JSON on stdout: " << line;
    EXPECT_EQ((*j)["jsonrpc"], Json("2.0"));
    ++count;
  }
  EXPECT_EQ(count, 3);
}

TEST_F(DaemonProcess, ReadsARegularFileOnStdin) {
  const std::string input = dir_.file("input.jsonl");
  std::ofstream(input) << kInitialize << "\n"
                       << R"({"jsonrpc":"2.0","id":2,"method":"_agentd/ping"})";  // no final \n
  ChildProcess::Options o = child_options();
  o.stdin_file = input;
  auto agentd = start({}, o);
  EXPECT_EQ(parse_line(agentd->read_line(5s))["id"], Json(1));
  EXPECT_EQ(parse_line(agentd->read_line(5s)), *support::parse_json(R"({"jsonrpc":"2.0","id":2,"result":{}})"));
  auto status = agentd->wait(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
}

TEST_F(DaemonProcess, DevNullOnStdinExitsAtOnce) {
  ChildProcess::Options o = child_options();
  o.stdin_file = "/dev/null";
  auto agentd = start({}, o);
  auto status = agentd->wait(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
  EXPECT_EQ(agentd->read_all_stdout(1s), "");
}

TEST_F(DaemonProcess, WritesToARegularFileOnStdout) {
  const std::string out = dir_.file("out.jsonl");
  ChildProcess shell(
      {"/bin/sh", "-c", std::string("printf '%s\\n' '") + kInitialize + "' | \"$0\" --db \"$1\" > \"$2\"", AGENTD_BIN,
       dir_.file("agentd.db"), out},
      child_options());
  auto status = shell.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0) << shell.stderr_text();
  std::ifstream in(out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ((*support::parse_json(line))["id"], Json(1));
}

TEST_F(DaemonProcess, AnswersContentLengthFramingInKind) {
  auto agentd = start();
  const std::string body = kInitialize;
  agentd->write("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  agentd->close_stdin();
  const std::string out = agentd->read_all_stdout(5s);
  ASSERT_TRUE(out.starts_with("Content-Length: ")) << out;
  const auto header_end = out.find("\r\n\r\n");
  ASSERT_NE(header_end, std::string::npos);
  const std::size_t length = std::stoul(out.substr(16, header_end - 16));
  EXPECT_EQ(out.size(), header_end + 4 + length);
  EXPECT_EQ((*support::parse_json(out.substr(header_end + 4)))["id"], Json(1));
}

TEST_F(DaemonProcess, OversizeMessagesAreRefusedAndServingGoesOn) {
  auto agentd = start({"--max-frame-bytes", "1024"});
  agentd->write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_agentd/ping\",\"params\":{\"pad\":\"" +
                std::string(5000, 'x') + "\"}}\n" + R"({"jsonrpc":"2.0","id":2,"method":"_agentd/ping"})" + "\n");
  Json first = parse_line(agentd->read_line(5s));
  EXPECT_EQ(first["error"]["code"], Json(-32600));
  EXPECT_TRUE(first["id"].is_null());
  EXPECT_EQ(parse_line(agentd->read_line(5s))["id"], Json(2));
}

TEST_F(DaemonProcess, InputArrivingOneByteAtATimeIsReassembled) {
  auto agentd = start();
  const std::string line = std::string(kInitialize) + "\n";
  for (char c : line) agentd->write(std::string(1, c));
  EXPECT_EQ(parse_line(agentd->read_line(5s))["id"], Json(1));
}

TEST_F(DaemonProcess, NewerDatabaseIsRefusedWithAClearMessage) {
  {
    auto raw = storage::Connection::open(dir_.file("agentd.db"));
    ASSERT_TRUE(raw);
    ASSERT_TRUE(raw->exec("PRAGMA user_version = 42"));
  }
  auto agentd = start();
  auto status = agentd->wait(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 1);
  EXPECT_NE(agentd->stderr_text().find("schema version 42"), std::string::npos) << agentd->stderr_text();
  EXPECT_EQ(agentd->read_all_stdout(1s), "");
}

TEST_F(DaemonProcess, DefaultDatabaseGoesUnderXdgDataHome) {
  ChildProcess agentd({AGENTD_BIN}, child_options());
  agentd.close_stdin();
  ASSERT_TRUE(agentd.wait(5s));
  EXPECT_TRUE(std::filesystem::exists(dir_.file("xdg/agentd/agentd.db")));
}

TEST_F(DaemonProcess, VersionHelpAndBadUsage) {
  {
    ChildProcess p({AGENTD_BIN, "--version"});
    EXPECT_TRUE(p.read_all_stdout(5s).starts_with("agentd "));
    EXPECT_EQ(p.wait(5s)->code, 0);
  }
  {
    ChildProcess p({AGENTD_BIN, "--help"});
    EXPECT_NE(p.read_all_stdout(5s).find("usage: agentd"), std::string::npos);
    EXPECT_EQ(p.wait(5s)->code, 0);
  }
  {
    ChildProcess p({AGENTD_BIN, "--bogus"});
    EXPECT_EQ(p.read_all_stdout(5s), "");
    EXPECT_EQ(p.wait(5s)->code, 2);
    EXPECT_NE(p.stderr_text().find("unknown option '--bogus'"), std::string::npos);
  }
}

}  // namespace
}  // namespace agentd::daemon

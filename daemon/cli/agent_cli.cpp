// One file for the CLI's one class: the turn loop, the drawing of what streams in and the permission
// questions share the terminal's state (spinner, line start, styles). Options are in cli_options.cpp,
// the child process in agent_process.cpp.
#include "daemon/cli/agent_cli.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <editline/readline.h>
#include <fmt/format.h>

#include "core/support/base64.h"
#include "core/support/json.h"
#include "core/support/json_reader.h"
#include "core/support/json_writer.h"
#include "core/support/version.h"
#include "daemon/cli/agent_process.h"
#include "daemon/cli/cli_options.h"
#include "daemon/cli/terminal_text.h"
#include "protocol/acp/client_methods.h"
#include "protocol/acp/ext.h"
#include "protocol/acp/ext_methods.h"
#include "protocol/acp/methods.h"
#include "protocol/acp/session.h"
#include "protocol/acp/session_update.h"
#include "tools/diff.h"

namespace agentd::daemon::cli {

namespace fs = std::filesystem;
namespace acp = protocol::acp;
namespace ext = protocol::acp::ext;
namespace method = protocol::acp::method;
namespace ext_method = protocol::acp::ext::method;
using support::Json;

namespace {

// Ctrl-C: the first cancels the running turn, the second exits. At the prompt it exits at once.
std::atomic<int> g_interrupts{0};
std::atomic<bool> g_at_prompt{false};

void on_sigint(int /*signo*/) {
  if (g_at_prompt.load() || g_interrupts.fetch_add(1) >= 1) {
    const char nl = '\n';
    (void)!::write(STDERR_FILENO, &nl, 1);
    ::_exit(kExitCancelled);
  }
}

void install_sigint() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked keyboard read returns, so a permission prompt can end
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

bool color_for(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return ::isatty(fd) != 0 && (no_color == nullptr || *no_color == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb");
}

struct Style {
  bool on = false;
  std::string wrap(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
  std::string dim(std::string_view t) const { return wrap("2", t); }
  std::string bold(std::string_view t) const { return wrap("1", t); }
  std::string green(std::string_view t) const { return wrap("32", t); }
  std::string red(std::string_view t) const { return wrap("31", t); }
  std::string yellow(std::string_view t) const { return wrap("33", t); }
  std::string cyan(std::string_view t) const { return wrap("36", t); }
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

fs::path state_dir() {
  const std::string home = env_or("HOME", "/tmp");
  fs::path dir = fs::path(env_or("XDG_STATE_HOME", home + "/.local/state")) / "agentd";
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

std::optional<std::string> find_agentd(const CliOptions& o, const std::string& self) {
  if (o.agentd) return *o.agentd;
  if (const char* bin = std::getenv("AGENTD_BIN"); bin != nullptr && *bin != '\0') return std::string(bin);
  std::error_code ec;
  fs::path me = fs::canonical("/proc/self/exe", ec);
  if (ec) me = fs::absolute(self, ec);
  for (const fs::path& candidate : {me.parent_path() / "agentd", me.parent_path().parent_path() / "agentd"}) {
    if (executable(candidate)) return candidate.string();
  }
  std::stringstream path(env_or("PATH", ""));
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (!dir.empty() && executable(fs::path(dir) / "agentd")) return (fs::path(dir) / "agentd").string();
  }
  return std::nullopt;
}

// --allow/--deny become a config file for agentd, on top of --config's contents when given.
support::Result<std::optional<std::string>> rules_config(const CliOptions& o, const fs::path& dir) {
  if (o.allow.empty() && o.deny.empty()) return o.config;
  Json config = Json::object();
  if (o.config) {
    std::ifstream in(*o.config);
    if (!in) return support::Error(support::Errc::not_found, fmt::format("cannot read --config {}", *o.config));
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = support::parse_json(text.str());
    if (!parsed || !parsed->is_object())
      return support::Error(support::Errc::invalid_argument, fmt::format("{} is not a JSON object", *o.config));
    config = std::move(*parsed);
  }
  Json permissions = config["permissions"].is_object() ? config["permissions"] : Json::object();
  auto add = [&](const char* list, const std::vector<std::string>& rules) {
    Json items = permissions[list].is_array() ? permissions[list] : Json::array();
    for (const auto& r : rules) items.push_back(r);
    permissions[list] = std::move(items);
  };
  add("allow", o.allow);
  add("deny", o.deny);
  config["permissions"] = std::move(permissions);
  const fs::path file = dir / fmt::format("agent-config-{}.json", ::getpid());
  std::ofstream(file) << config.dump();
  return std::optional<std::string>(file.string());
}

std::string text_of(const Json& v) { return v.is_string() ? v.as_string() : std::string(); }

// The text of a content block; empty for images, resources and the like.
std::string text_of(const acp::ContentBlock& block) {
  const auto* text = std::get_if<acp::TextContent>(&block);
  return text != nullptr ? text->text : std::string();
}

std::string duration_text(double us) {
  if (us >= 1e6) return fmt::format("{:.2f} s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.1f} ms", us / 1e3);
  return fmt::format("{:.0f} us", us);
}

struct ToolCallView {
  std::string title;
  std::string kind;
  std::string status;
  bool shown = false;
};

// --image FILE as an ACP image block. The file is read here (a screenshot is rarely in the workspace),
// up to agentd's limit; the type is the extension's, which agentd checks against the bytes.
support::Result<acp::ContentBlock> image_block(const std::string& path) {
  constexpr std::size_t kMaxBytes = std::size_t{5} << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) return support::Error(support::Errc::not_found, fmt::format("--image {}: cannot read it", path));
  std::string bytes(kMaxBytes + 1, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() > kMaxBytes) {
    return support::Error(support::Errc::invalid_argument,
                          fmt::format("--image {}: larger than 5 MiB; scale it down or crop it", path));
  }
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string type = ext == ".jpg" || ext == ".jpeg" ? "image/jpeg"
                           : ext == ".gif"                 ? "image/gif"
                           : ext == ".webp"                ? "image/webp"
                                                           : "image/png";
  return acp::ContentBlock(acp::ImageContent{support::base64_encode(bytes), type, std::nullopt, {}, {}});
}

struct TurnResult {
  std::string stop_reason;  // empty when the request failed
  std::string error;
  std::string text;
  std::optional<ext::TurnVerificationInfo> verification;  // for a turn that changed files
};

class Cli {
 public:
  Cli(CliOptions options, AgentProcess& agent)
      : o_(std::move(options)),
        agent_(agent),
        human_(!o_.print || o_.format == OutputFormat::text),
        out_style_{color_for(STDOUT_FILENO)},
        err_style_{color_for(STDERR_FILENO)},
        spinner_(::isatty(STDERR_FILENO) != 0 && !o_.print) {}

  // A request answered, with whatever arrives meanwhile handled; the response, or an error object.
  // `params` is a protocol struct (protocol/acp) or a Json.
  template <class P>
  Json call(std::string_view name, const P& params, bool turn = false) {
    const std::int64_t id = agent_.request(name, params);
    const auto started = std::chrono::steady_clock::now();
    bool cancel_sent = false;
    int frame = 0;
    for (;;) {
      if (turn && g_interrupts.load() > 0 && !cancel_sent) {
        agent_.notify(method::kSessionCancel, acp::CancelNotification{session_, {}});
        cancel_sent = true;
        note("cancelling (Ctrl-C again to quit)");
      }
      Json m;
      const auto next = agent_.next(std::chrono::milliseconds(100), m);
      if (next == AgentProcess::Next::closed) return error_object("agentd exited; its log is " + log_path_);
      if (next == AgentProcess::Next::timeout) {
        // Not while a line of the answer is half written: \r would wipe it.
        if (turn && spinner_ && at_line_start_ &&
            std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300)) {
          static constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
          const std::string label = running_title_.empty() ? "working" : running_title_;
          std::fprintf(stderr, "\r\033[K%s %s", kFrames[frame++ % 10], err_style_.dim(label).c_str());
          std::fflush(stderr);
          spinner_shown_ = true;
        }
        continue;
      }
      if (m.contains("method")) {
        if (m.contains("id")) {
          answer_request(m);
        } else if (text_of(m["method"]) == method::kSessionUpdate) {
          on_update(m["params"]);
        }
        continue;
      }
      if (m["id"].is_integer() && m["id"].as_int64() == id) return m;
    }
  }

  int run() {
    if (o_.command == Command::sessions) return list_sessions();
    if (o_.command == Command::trust || o_.command == Command::untrust) return trust_project();
    if (!open_session()) return kExitError;
    if (o_.command == Command::trace) return show_trace();
    if (o_.command == Command::cost) return show_cost();
    if (o_.command == Command::prompt) return exit_code(prompt(o_.prompt));
    return interactive();
  }

  void set_log_path(std::string path) { log_path_ = std::move(path); }

 private:
  // The typed result of an answer from call(), or nullopt with `error` saying why (agentd's error
  // message, or what in the result did not read).
  template <class R>
  static std::optional<R> result_of(const Json& answer, std::string& error) {
    if (answer.contains("error")) {
      error = text_of(answer["error"]["message"]);
      return std::nullopt;
    }
    auto result = support::read_json<R>(answer["result"], "result");
    if (!result) {
      error = std::string(result.error().message());
      return std::nullopt;
    }
    return std::move(*result);
  }

  static Json error_object(std::string message) {
    Json e = Json::object();
    e["message"] = std::move(message);
    Json m = Json::object();
    m["error"] = std::move(e);
    return m;
  }

  void clear_spinner() {
    if (!spinner_shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    spinner_shown_ = false;
  }

  // A line about the session for people: stderr in -p mode (stdout stays the answer), else stdout.
  void note(const std::string& text) {
    clear_spinner();
    if (o_.print && o_.format != OutputFormat::text) return;
    FILE* f = o_.print ? stderr : stdout;
    const Style& s = o_.print ? err_style_ : out_style_;
    if (!at_line_start_ && f == stdout) std::fputc('\n', f);
    std::fprintf(f, "%s\n", s.dim(terminal_safe(text)).c_str());
    std::fflush(f);
    if (f == stdout) at_line_start_ = true;
  }

  void emit_jsonl(const std::string& type, Json body) {
    body["type"] = type;
    std::fprintf(stdout, "%s\n", body.dump().c_str());
    std::fflush(stdout);
  }

  // Tool call lines: stdout in the interactive and one-turn modes, stderr with -p text.
  FILE* tool_stream() const { return o_.print ? stderr : stdout; }
  const Style& tool_style() const { return o_.print ? err_style_ : out_style_; }

  void print_tool_line(const ToolCallView& call, const std::string& detail) {
    clear_spinner();
    FILE* f = tool_stream();
    const Style& s = tool_style();
    if (f == stdout && !at_line_start_) std::fputc('\n', f);
    const bool ok = call.status == "completed";
    const std::string mark = ok ? s.green("✓") : s.red("✗");
    std::string line = fmt::format("{} {}", mark, s.bold(call.title));
    if (!detail.empty()) line += " " + s.dim("· " + terminal_safe(detail));
    std::fprintf(f, "%s\n", line.c_str());
    std::fflush(f);
    if (f == stdout) at_line_start_ = true;
  }

  void print_diff(const acp::Diff& diff_block) {
    std::string path = diff_block.path;
    std::error_code ec;
    const fs::path relative = fs::path(path).lexically_relative(fs::current_path(ec));
    if (!relative.empty() && *relative.begin() != "..") path = relative.string();
    tools::DiffOptions options;
    path = terminal_safe(path);
    options.old_label = path;
    options.new_label = path;
    const auto diff = tools::unified_diff(diff_block.old_text.value_or(""), diff_block.new_text, options);
    FILE* f = tool_stream();
    const Style& s = tool_style();
    std::istringstream lines(diff.text);
    std::string line;
    while (std::getline(lines, line)) {
      line = terminal_safe(line);  // a file's text is a stranger's: its escapes are shown, not obeyed
      if (line.starts_with("+++") || line.starts_with("---")) {
        line = s.bold(line);
      } else if (line.starts_with("+")) {
        line = s.green(line);
      } else if (line.starts_with("-")) {
        line = s.red(line);
      } else if (line.starts_with("@@")) {
        line = s.cyan(line);
      }
      std::fprintf(f, "    %s\n", line.c_str());
    }
    std::fflush(f);
  }

  // One session/update, read as ACP types. Updates this CLI does not know still reach --output-format
  // jsonl as agentd sent them.
  void on_update(const Json& params) {
    auto notification = support::read_json<acp::SessionNotification>(params, "params");
    const bool commands = notification && std::holds_alternative<acp::AvailableCommandsUpdate>(notification->update);
    if (o_.format == OutputFormat::jsonl && o_.print && !commands) {
      Json body = Json::object();
      body["update"] = params["update"];
      emit_jsonl("update", std::move(body));
    }
    if (!notification) return;
    const acp::SessionUpdate& update = notification->update;
    if (const auto* chunk = std::get_if<acp::AgentMessageChunk>(&update)) {
      const std::string text = text_of(chunk->content);
      turn_text_ += text;
      if (human_ && !text.empty()) {
        clear_spinner();
        std::fputs(terminal_safe(text).c_str(), stdout);
        std::fflush(stdout);
        at_line_start_ = text.back() == '\n';
      }
    } else if (const auto* thought = std::get_if<acp::AgentThoughtChunk>(&update)) {
      if (human_ && !o_.print) {
        clear_spinner();
        std::fputs(out_style_.dim(terminal_safe(text_of(thought->content))).c_str(), stdout);
        std::fflush(stdout);
        at_line_start_ = false;
      }
    } else if (const auto* call = std::get_if<acp::ToolCall>(&update)) {
      on_tool_call(call->tool_call_id, call->title, call->kind, call->status, &call->content);
    } else if (const auto* call_update = std::get_if<acp::ToolCallUpdate>(&update)) {
      on_tool_call(call_update->tool_call_id, call_update->title, call_update->kind, call_update->status,
                   call_update->content ? &*call_update->content : nullptr);
    } else if (const auto* plan = std::get_if<acp::Plan>(&update); plan != nullptr && human_) {
      std::string lines = "plan:";
      for (const auto& e : plan->entries) {
        const char* mark = e.status == acp::PlanEntryStatus::completed     ? "x"
                           : e.status == acp::PlanEntryStatus::in_progress ? ">"
                                                                           : " ";
        lines += fmt::format("\n  [{}] {}", mark, e.content);
      }
      note(lines);
    }
  }

  // tool_call and tool_call_update: what changed, and a line (with its diffs) once the call ends.
  void on_tool_call(const std::string& id, const std::optional<std::string>& title,
                    const std::optional<acp::ToolKind>& kind, const std::optional<acp::ToolCallStatus>& status,
                    const std::vector<acp::ToolCallContent>* content) {
    ToolCallView& call = calls_[id];
    if (call.title.empty()) order_.push_back(id);
    if (title) call.title = terminal_safe(*title);
    if (kind) call.kind = std::string(acp::name(*kind));
    if (status) call.status = std::string(acp::name(*status));
    if (call.status == "in_progress" || call.status == "pending") running_title_ = call.title;
    if ((call.status == "completed" || call.status == "failed") && !call.shown && human_) {
      call.shown = true;
      running_title_.clear();
      std::string detail;
      std::vector<const acp::Diff*> diffs;
      if (content != nullptr) {
        for (const auto& block : *content) {
          if (const auto* diff = std::get_if<acp::Diff>(&block)) {
            diffs.push_back(diff);
          } else if (const auto* text = std::get_if<acp::ToolCallContentBlock>(&block);
                     text != nullptr && detail.empty() && std::holds_alternative<acp::TextContent>(text->content)) {
            detail = text_of(text->content);
            if (const auto nl = detail.find('\n'); nl != std::string::npos) detail = detail.substr(0, nl) + " …";
            if (detail.size() > 160) detail = detail.substr(0, 160) + "…";
          }
        }
      }
      print_tool_line(call, detail);
      for (const acp::Diff* d : diffs) print_diff(*d);
    }
  }

  // session/request_permission: at the keyboard when there is one and -p is not given; else refused
  // (the rules and the mode have already allowed what they allow: what reaches us was not allowed).
  void answer_request(const Json& m) {
    const std::string name = text_of(m["method"]);
    if (name != method::kSessionRequestPermission) {
      Json reply = Json::object();
      reply["jsonrpc"] = "2.0";
      reply["id"] = m["id"];
      Json error = Json::object();
      error["code"] = -32601;
      error["message"] = fmt::format("the agent CLI does not serve {}", name);
      reply["error"] = std::move(error);
      agent_.send(reply);
      return;
    }
    const Json& params = m["params"];
    // A request that does not read offers no option we could pick: it is answered cancelled.
    auto request = support::read_json<acp::RequestPermissionRequest>(params, "params");
    const std::string title = request ? request->tool_call.title.value_or("") : std::string();
    std::map<std::string, std::string> option_of_kind;  // allow_once -> optionId
    if (request) {
      for (const auto& option : request->options)
        option_of_kind[std::string(acp::name(option.kind))] = option.option_id;
    }
    std::string kind = "reject_once";
    const bool can_ask = !o_.print && ::isatty(STDIN_FILENO) != 0;
    if (can_ask) {
      std::string reason;
      if (request) {
        if (auto meta = ext::read_meta<ext::PermissionRequestMeta>(request->meta)) reason = meta->reason;
      }
      kind = ask_keyboard(title.empty() ? std::string("this tool call") : title, reason);
    } else {
      note(fmt::format("refused: {} (no --allow rule or --mode allows it)", title));
    }
    acp::RequestPermissionResponse response;
    if (kind == "cancelled" || !option_of_kind.contains(kind)) {
      response.outcome = acp::CancelledPermissionOutcome{};
    } else {
      response.outcome = acp::SelectedPermissionOutcome{option_of_kind[kind], {}};
    }
    if (o_.print && o_.format == OutputFormat::jsonl) {
      Json body = Json::object();
      body["toolCall"] = params["toolCall"];
      body["decision"] = kind;
      emit_jsonl("permission", std::move(body));
    }
    agent_.respond(m["id"], response);
  }

  std::string ask_keyboard(const std::string& title, const std::string& reason) {
    clear_spinner();
    if (!at_line_start_) std::fputc('\n', stdout);
    std::fprintf(stdout, "%s %s%s\n", out_style_.yellow("?").c_str(), out_style_.bold(terminal_safe(title)).c_str(),
                 reason.empty() ? "" : out_style_.dim(" (" + terminal_safe(reason) + ")").c_str());
    for (;;) {
      std::fprintf(stdout, "  allow? [y]es / [n]o / [a]lways / [r]eject always: ");
      std::fflush(stdout);
      char line[256];
      if (std::fgets(line, sizeof line, stdin) == nullptr) {
        std::clearerr(stdin);
        at_line_start_ = true;
        std::fputc('\n', stdout);
        return "cancelled";  // Ctrl-C or end of input: the turn is being cancelled
      }
      const std::string answer(line, std::strlen(line));
      const char c = answer.empty() ? '\0' : static_cast<char>(std::tolower(static_cast<unsigned char>(answer[0])));
      at_line_start_ = true;
      if (c == 'y') return "allow_once";
      if (c == 'n') return "reject_once";
      if (c == 'a') return "allow_always";
      if (c == 'r') return "reject_always";
    }
  }

  bool open_session() {
    const std::string cwd = fs::current_path().string();
    std::string id;
    if (o_.continue_latest || (o_.resume && o_.resume->empty()) || o_.command == Command::trace ||
        o_.command == Command::cost) {
      if (o_.resume && !o_.resume->empty()) {
        id = *o_.resume;
      } else {
        std::string error;
        auto listed =
            result_of<acp::ListSessionsResponse>(call(method::kSessionList, acp::ListSessionsRequest{cwd}), error);
        if (!listed || listed->sessions.empty()) {
          fail(fmt::format("no session in {} yet: start one with agent \"...\"", cwd));
          return false;
        }
        id = listed->sessions.front().session_id;  // newest first
      }
    } else if (o_.resume) {
      id = *o_.resume;
    }
    std::string error;
    if (!id.empty()) {
      acp::ResumeSessionRequest request;
      request.session_id = id;
      request.cwd = cwd;
      if (!result_of<acp::ResumeSessionResponse>(call(method::kSessionResume, request), error)) {
        fail(fmt::format("cannot resume {}: {}", id, error));
        return false;
      }
      session_ = id;
    } else {
      acp::NewSessionRequest request;
      request.cwd = cwd;
      auto created = result_of<acp::NewSessionResponse>(call(method::kSessionNew, request), error);
      if (!created) {
        fail("cannot start a session: " + error);
        return false;
      }
      session_ = created->session_id;
      if (auto trust = ext::read_meta<ext::ProjectTrustMeta>(created->meta)) note(trust->message);
    }
    if (o_.mode) {
      acp::SetSessionModeRequest request;
      request.session_id = session_;
      request.mode_id = *o_.mode;
      if (!result_of<acp::SetSessionModeResponse>(call(method::kSessionSetMode, request), error)) {
        fail("cannot set the mode: " + error);
        return false;
      }
    }
    if (o_.max_budget_usd) {
      ext::SetBudgetRequest request;
      request.session_id = session_;
      request.budgets.session_usd = *o_.max_budget_usd;
      if (!result_of<ext::Budgets>(call(ext_method::kSessionSetBudget, request), error)) {
        fail("cannot set the budget: " + error);
        return false;
      }
    }
    if (o_.print && o_.format == OutputFormat::jsonl) {
      Json body = Json::object();
      body["sessionId"] = session_;
      emit_jsonl("session", std::move(body));
    }
    return true;
  }

  void fail(const std::string& message) {
    clear_spinner();
    if (o_.print && o_.format == OutputFormat::jsonl) {
      Json body = Json::object();
      body["message"] = message;
      emit_jsonl("error", std::move(body));
    }
    std::fprintf(stderr, "agent: %s\n", terminal_safe(message).c_str());
  }

  TurnResult prompt(const std::string& text) {
    g_interrupts = 0;
    turn_text_.clear();
    calls_.clear();
    order_.clear();
    acp::PromptRequest request;
    request.session_id = session_;
    // The images go first, as the providers advise; agentd checks them (their bytes, not their names).
    for (const auto& path : std::exchange(o_.images, {})) {
      auto image = image_block(path);
      if (!image) {
        TurnResult failed;
        failed.error = image.error().message();
        report(failed);
        return failed;
      }
      request.prompt.emplace_back(std::move(*image));
    }
    request.prompt.emplace_back(acp::TextContent{text, {}, {}});
    Json answer = call(method::kSessionPrompt, request, true);
    clear_spinner();
    TurnResult r;
    r.text = turn_text_;
    if (auto response = result_of<acp::PromptResponse>(answer, r.error)) {
      r.stop_reason = std::string(acp::name(response->stop_reason));
      if (auto meta = ext::read_meta<ext::PromptMeta>(response->meta)) r.verification = std::move(meta->verification);
    }
    report(r);
    return r;
  }

  // After a turn: the stop reason, tokens and cost, in the output format asked for.
  void report(const TurnResult& r) {
    std::string error;
    ext::CostLedger last;  // zeros when the cost cannot be read
    if (auto cost = result_of<ext::CostGetResult>(call(ext_method::kCostGet, ext::SessionRequest{session_}), error)) {
      last = cost->last_turn;
    }
    Json usage = Json::object();
    usage["inputTokens"] = last.input_tokens;
    usage["outputTokens"] = last.output_tokens;
    const Json cost_usd = last.cost_usd ? Json(*last.cost_usd) : Json();
    if (o_.print && o_.format != OutputFormat::text) {
      Json body = Json::object();
      body["sessionId"] = session_;
      body["stopReason"] = r.stop_reason.empty() ? Json() : Json(r.stop_reason);
      if (!r.error.empty()) body["error"] = r.error;
      body["usage"] = usage;
      body["costUsd"] = cost_usd;
      if (r.verification) body["verification"] = r.verification->summary;
      if (o_.format == OutputFormat::json) {
        body["text"] = r.text;
        Json calls = Json::array();
        for (const auto& id : order_) {
          const ToolCallView& c = calls_[id];
          Json call_json = Json::object();
          call_json["id"] = id;
          call_json["title"] = c.title;
          call_json["kind"] = c.kind;
          call_json["status"] = c.status;
          calls.push_back(std::move(call_json));
        }
        body["toolCalls"] = std::move(calls);
        std::fprintf(stdout, "%s\n", body.dump().c_str());
        std::fflush(stdout);
      } else {
        emit_jsonl("result", std::move(body));
      }
    } else {
      if (!at_line_start_) {
        std::fputc('\n', stdout);
        at_line_start_ = true;
      }
      if (!r.error.empty()) std::fprintf(stderr, "agent: %s\n", terminal_safe(r.error).c_str());
      if (r.verification) {
        std::fprintf(stderr, "%s\n", err_style_.dim(terminal_safe(r.verification->summary)).c_str());
      }
      std::string line = fmt::format("{} · {} in / {} out tokens", r.stop_reason.empty() ? "error" : r.stop_reason,
                                     usage["inputTokens"].as_int64(), usage["outputTokens"].as_int64());
      if (cost_usd.is_number()) line += fmt::format(" · ${:.4f}", cost_usd.as_double());
      std::fprintf(stderr, "%s\n", err_style_.dim(line).c_str());
      std::fflush(stderr);
    }
  }

  static int exit_code(const TurnResult& r) {
    if (!r.error.empty()) return kExitError;
    if (r.stop_reason == "end_turn") return kExitOk;
    if (r.stop_reason == "cancelled") return kExitCancelled;
    if (r.stop_reason == "max_tokens" || r.stop_reason == "max_turn_requests") return kExitBudget;
    if (r.stop_reason == "refusal") return kExitRefused;
    return kExitError;
  }

  int interactive() {
    const std::string history = (state_dir() / "history").string();
    ::using_history();
    ::read_history(history.c_str());
    std::fprintf(stdout, "%s\n",
                 out_style_
                     .dim(fmt::format("agentd session {} in {} (/help for commands, /exit or Ctrl-D to leave)",
                                      session_, fs::current_path().string()))
                     .c_str());
    int last = kExitOk;
    for (;;) {
      g_at_prompt = true;
      char* raw = ::readline(out_style_.on ? "\001\033[1m\002> \001\033[0m\002" : "> ");
      g_at_prompt = false;
      if (raw == nullptr) {
        std::fputc('\n', stdout);
        break;
      }
      std::string line(raw);
      std::free(raw);  // NOLINT(cppcoreguidelines-no-malloc): readline allocates with malloc
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos) continue;
      line = line.substr(first);
      ::add_history(line.c_str());
      ::write_history(history.c_str());
      if (line == "/exit" || line == "/quit") break;
      at_line_start_ = true;
      last = exit_code(prompt(line));
    }
    return last == kExitCancelled ? kExitOk : last;
  }

  int trust_project() {
    std::error_code ec;
    const fs::path dir = fs::absolute(o_.directory.empty() ? fs::current_path() : fs::path(o_.directory), ec);
    std::string error;
    auto r = result_of<ext::ProjectTrustResult>(
        call(ext_method::kProjectTrust, ext::ProjectTrustRequest{dir.string(), o_.command == Command::trust}), error);
    if (!r) {
      fail(error);
      return kExitError;
    }
    if (o_.command == Command::untrust) {
      std::fprintf(stdout, "%s is no longer trusted\n", r->project.c_str());
      return kExitOk;
    }
    if (r->settings.empty()) {
      std::fprintf(stdout, "%s is trusted; its config loosens nothing today\n", r->project.c_str());
      return kExitOk;
    }
    std::fprintf(stdout, "%s is trusted with these settings of %s:\n", r->project.c_str(), r->file.c_str());
    for (const auto& setting : r->settings) std::fprintf(stdout, "  %s\n", setting.c_str());
    return kExitOk;
  }

  int list_sessions() {
    acp::ListSessionsRequest request;
    if (!o_.all) request.cwd = fs::current_path().string();
    std::string error;
    auto listed = result_of<acp::ListSessionsResponse>(call(method::kSessionList, request), error);
    if (!listed) {
      fail(error);
      return kExitError;
    }
    if (listed->sessions.empty()) {
      std::fprintf(stdout, "no sessions%s\n", o_.all ? "" : " in this directory (agent sessions --all for every one)");
      return kExitOk;
    }
    for (const auto& s : listed->sessions) {
      std::string line = fmt::format("{}  {}", s.session_id, s.updated_at.value_or(""));
      if (o_.all) line += "  " + s.cwd;
      if (s.title) line += "  " + *s.title;
      std::fprintf(stdout, "%s\n", terminal_safe(line).c_str());
    }
    return kExitOk;
  }

  void print_span(const ext::TraceSpan& span, int depth) {
    std::string line = fmt::format("{}{} {}", std::string(static_cast<std::size_t>(depth) * 2, ' '), span.name,
                                   out_style_.dim(duration_text(static_cast<double>(span.duration_us))));
    if (!span.status.empty() && span.status != "ok") line += " " + out_style_.red(span.status);
    std::fprintf(stdout, "%s\n", line.c_str());
    for (const auto& child : span.children) print_span(child, depth + 1);
  }

  int show_trace() {
    std::string error;
    const auto format = o_.trace_chrome ? ext::TraceFormat::chrome : ext::TraceFormat::tree;
    auto trace = result_of<ext::TraceGetResult>(
        call(ext_method::kTraceGet, ext::TraceGetRequest{session_, o_.turn, format}), error);
    if (!trace) {
      fail(error);
      return kExitError;
    }
    if (o_.trace_chrome) {
      // The result as agentd sent it is the trace file: {turnId, traceEvents, displayTimeUnit}.
      std::string file;
      support::JsonWriter writer(file);
      to_json(writer, *trace);
      std::fprintf(stdout, "%s\n", file.c_str());
      return kExitOk;
    }
    std::fprintf(stdout, "turn %s\n", trace->turn_id.c_str());
    for (const auto& span : trace->spans) print_span(span, 1);
    return kExitOk;
  }

  int show_cost() {
    std::string error;
    auto r = result_of<ext::CostGetResult>(call(ext_method::kCostGet, ext::SessionRequest{session_}), error);
    if (!r) {
      fail(error);
      return kExitError;
    }
    auto ledger = [](const ext::CostLedger& l) {
      std::string usd = l.cost_usd ? fmt::format("${:.4f}", *l.cost_usd) : "unpriced";
      return fmt::format("{} in / {} out tokens ({} cache read, {} cache write), {} model calls, {}", l.input_tokens,
                         l.output_tokens, l.cache_read_tokens, l.cache_write_tokens, l.model_calls, usd);
    };
    // agentd keeps the last turn's ledger in memory only: a session resumed here has none yet.
    std::fprintf(stdout, "session %s, model %s\n  session:   %s\n", session_.c_str(), r->model.c_str(),
                 ledger(r->session).c_str());
    if (r->last_turn.model_calls > 0) std::fprintf(stdout, "  last turn: %s\n", ledger(r->last_turn).c_str());
    return kExitOk;
  }

  CliOptions o_;
  AgentProcess& agent_;
  bool human_;
  Style out_style_;
  Style err_style_;
  bool spinner_;
  bool spinner_shown_ = false;
  bool at_line_start_ = true;
  std::string session_;
  std::string log_path_;
  std::string turn_text_;
  std::string running_title_;
  std::map<std::string, ToolCallView> calls_;
  std::vector<std::string> order_;
};

}  // namespace

int run_cli(const std::string& self, const std::vector<std::string>& args) {
  auto parsed = parse_cli(args);
  if (!parsed) {
    std::fprintf(stderr, "agent: %s (agent --help for the usage)\n", std::string(parsed.error().message()).c_str());
    return kExitUsage;
  }
  CliOptions options = std::move(*parsed);
  if (options.command == Command::help) {
    std::fputs(cli_usage().c_str(), stdout);
    return kExitOk;
  }
  if (options.command == Command::version) {
    std::fprintf(stdout, "agent %s\n", std::string(support::kVersion).c_str());
    return kExitOk;
  }
  if (options.command == Command::interactive && ::isatty(STDIN_FILENO) == 0) {
    std::fprintf(stderr, "agent: no prompt given and stdin is not a terminal; use agent -p \"prompt\"\n");
    return kExitUsage;
  }
  auto agentd = find_agentd(options, self);
  if (!agentd) {
    std::fprintf(stderr, "agent: agentd not found: put it next to agent or on PATH, or give --agentd PATH\n");
    return kExitError;
  }
  const fs::path dir = state_dir();
  auto config = rules_config(options, dir);
  if (!config) {
    std::fprintf(stderr, "agent: %s\n", std::string(config.error().message()).c_str());
    return kExitUsage;
  }
  std::vector<std::string> argv{*agentd};
  if (options.model) argv.insert(argv.end(), {"--model", *options.model});
  if (options.demo) argv.emplace_back("--demo");
  if (*config) argv.insert(argv.end(), {"--config", **config});
  const std::string log_path = options.log.value_or((dir / "agent.log").string());
  install_sigint();
  // The user's character set, so line editing takes what they type (the prompt itself stays ASCII:
  // libedit crashes drawing a multibyte prompt in the C locale).
  std::setlocale(LC_CTYPE, "");
  int code = kExitError;
  {
    auto agent = AgentProcess::spawn(argv, log_path);
    if (!agent) {
      std::fprintf(stderr, "agent: %s\n", std::string(agent.error().message()).c_str());
    } else {
      Cli cli(options, **agent);
      cli.set_log_path(log_path);
      Json init = Json::object();
      init["protocolVersion"] = 1;
      Json caps = Json::object();
      Json fs_caps = Json::object();
      fs_caps["readTextFile"] = false;
      fs_caps["writeTextFile"] = false;
      caps["fs"] = std::move(fs_caps);
      caps["terminal"] = false;
      init["clientCapabilities"] = std::move(caps);
      Json info = Json::object();
      info["name"] = "agent";
      info["version"] = std::string(support::kVersion);
      init["clientInfo"] = std::move(info);
      Json answer = cli.call(method::kInitialize, init);
      if (answer.contains("error")) {
        std::fprintf(stderr, "agent: agentd did not start: %s\n", text_of(answer["error"]["message"]).c_str());
      } else {
        code = cli.run();
      }
    }
  }
  if (*config && (!options.config || **config != *options.config)) {
    std::error_code ec;
    fs::remove(**config, ec);
  }
  return code;
}

}  // namespace agentd::daemon::cli

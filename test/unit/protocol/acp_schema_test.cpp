// A structural check against the real ACP v1 schema: the one the pinned npm SDK ships
// (test/conformance/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json after `npm ci` in
// test/conformance, which scripts/test.sh runs; the repository keeps no copy). Its sha256 is pinned here, so
// an SDK that changes its schema without a version bump fails a test instead of moving the goalposts. Every
// key we write must be declared by the matching $defs entry, every required key present, every type and
// const (enum value) as declared; and so must every message of our example conversation
// (test/fixtures/acp/acp_examples.jsonl). Not a full validator: formats, minimums and
// additionalProperties=false are not checked (the conformance suite validates with Ajv).
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "protocol/acp/client_methods.h"
#include "protocol/acp/initialize.h"
#include "protocol/acp/session.h"
#include "protocol/acp/session_update.h"
#include "test/unit/protocol/acp_test_util.h"
#include "tools/sha256.h"

namespace agentd::protocol::acp {
namespace {

using support::Json;
using testing::json;
using testing::written;

// test/conformance/package.json pins the SDK version; package-lock.json pins its bytes.
constexpr std::string_view kSdkVersion = "2.4.0";
const std::filesystem::path kSdkDir =
    std::filesystem::path(AGENTD_SOURCE_DIR) / "test/conformance/node_modules/@agentclientprotocol/sdk";
const std::filesystem::path kSchemaPath = kSdkDir / "schema/v1/schema.json";
// sha256 of schema/v1/schema.json in @agentclientprotocol/sdk 2.4.0 (as test/conformance/lib/schema.js).
constexpr std::string_view kSchemaSha256 = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a";
// The same SDK's unstable v1 schema (stable plus the unstable methods and fields), for what we implement
// of it: session/fork and its capability flag.
const std::filesystem::path kUnstableSchemaPath = kSdkDir / "schema/v1/schema.unstable.json";
constexpr std::string_view kUnstableSchemaSha256 = "ce7881d10c854bcac4f0e7d3a9ce4fb0f612ec0a09e64b572940beec4668c189";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class SchemaCheck {
 public:
  explicit SchemaCheck(const Json& defs) : defs_(defs) {}

  // Checks `value` against $defs[def]; returns one "path: problem" line per finding.
  std::vector<std::string> check(std::string_view def, const Json& value) const {
    std::vector<std::string> errors;
    const Json* schema = defs_.find(def);
    if (schema == nullptr) return {std::string(def) + ": no such $defs entry"};
    check_value(*schema, value, std::string(def), errors);
    return errors;
  }

 private:
  // A branch whose own `properties` pin a key to a constant (the union's tag) that the value contradicts.
  static bool tag_contradicts(const Json& branch, const Json& value) {
    const Json* properties = branch.find("properties");
    if (properties == nullptr || !value.is_object()) return false;
    for (const auto& [key, sub] : properties->as_object()) {
      const Json* expected = sub.find("const");
      const Json* actual = value.find(key);
      if (expected != nullptr && actual != nullptr && !(*expected == *actual)) return true;
    }
    return false;
  }

  struct Keys {
    bool shaped = false;  // some schema on the way declared `properties`
    std::set<std::string> declared;
  };

  static std::string child(const std::string& path, std::string_view key) {
    std::string out = path;
    out += '.';
    out += key;
    return out;
  }

  static bool type_matches(const std::string& type, const Json& value) {
    if (type == "null") return value.is_null();
    if (type == "boolean") return value.is_bool();
    if (type == "integer") return value.is_integer();
    if (type == "number") return value.is_number();
    if (type == "string") return value.is_string();
    if (type == "array") return value.is_array();
    if (type == "object") return value.is_object();
    return false;
  }

  // Everything but undeclared keys, which check_value() judges once it has collected the declarations of
  // the whole allOf / anyOf tree that applies to this value.
  void match(const Json& schema, const Json& value, const std::string& path, std::vector<std::string>& errors,
             Keys& keys) const {
    if (const Json* ref = schema.find("$ref")) {
      const std::string& target = ref->as_string();
      const std::string name = target.substr(target.rfind('/') + 1);
      match(defs_[name], value, path, errors, keys);
    }
    if (const Json* type = schema.find("type")) {
      bool ok = false;
      if (type->is_string()) {
        ok = type_matches(type->as_string(), value);
      } else {
        for (const Json& t : type->as_array()) ok = ok || type_matches(t.as_string(), value);
      }
      if (!ok) {
        errors.push_back(path + ": type " + std::string(value.type_name()) + " is not " + type->dump());
        return;
      }
    }
    if (const Json* expected = schema.find("const"); expected != nullptr && !(*expected == value)) {
      errors.push_back(path + ": " + value.dump() + " is not the constant " + expected->dump());
      return;
    }
    if (const Json* all = schema.find("allOf")) {
      for (const Json& sub : all->as_array()) match(sub, value, path, errors, keys);
    }
    for (const char* alternatives : {"anyOf", "oneOf"}) {
      const Json* branches = schema.find(alternatives);
      if (branches == nullptr) continue;
      // The closest branch is the one whose tag matched (a const mismatch rules a branch out), then the
      // one with the fewest findings.
      std::vector<std::string> best;
      std::size_t best_score = SIZE_MAX;
      bool matched = false;
      for (const Json& branch : branches->as_array()) {
        std::vector<std::string> branch_errors;
        Keys branch_keys;
        match(branch, value, path, branch_errors, branch_keys);
        if (branch_errors.empty()) {
          matched = true;
          keys.shaped = keys.shaped || branch_keys.shaped;
          keys.declared.insert(branch_keys.declared.begin(), branch_keys.declared.end());
          break;
        }
        std::size_t score = branch_errors.size();
        if (tag_contradicts(branch, value)) score += 1000;
        if (score < best_score) {
          best_score = score;
          best = branch_errors;
        }
      }
      if (!matched) {
        errors.push_back(path + ": matches no branch of " + alternatives + "; closest:");
        errors.insert(errors.end(), best.begin(), best.end());
      }
    }
    if (!value.is_object() && !value.is_array()) return;
    if (value.is_array()) {
      if (const Json* items = schema.find("items")) {
        for (std::size_t i = 0; i < value.size(); ++i) {
          check_value(*items, value.as_array()[i], path + "[" + std::to_string(i) + "]", errors);
        }
      }
      return;
    }
    if (const Json* required = schema.find("required")) {
      for (const Json& key : required->as_array()) {
        if (!value.contains(key.as_string())) errors.push_back(child(path, key.as_string()) + ": required, missing");
      }
    }
    if (const Json* properties = schema.find("properties")) {
      keys.shaped = true;
      for (const auto& [key, sub] : properties->as_object()) {
        keys.declared.insert(key);
        if (const Json* member = value.find(key)) check_value(sub, *member, child(path, key), errors);
      }
    }
  }

  void check_value(const Json& schema, const Json& value, const std::string& path,
                   std::vector<std::string>& errors) const {
    Keys keys;
    match(schema, value, path, errors, keys);
    if (!value.is_object() || !keys.shaped) return;
    for (const auto& [key, member] : value.as_object()) {
      if (keys.declared.count(key) == 0) errors.push_back(child(path, key) + ": not declared in the schema");
    }
  }

  const Json& defs_;
};

class AcpSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kSchemaPath)) {
      GTEST_SKIP() << "the ACP SDK is not installed: run `npm ci` in test/conformance (scripts/test.sh does) "
                      "to check against the schema it ships; looked for "
                   << kSchemaPath;
    }
    const std::string text = read_text(kSchemaPath);
    ASSERT_EQ(tools::sha256_hex(text), kSchemaSha256)
        << kSchemaPath << " is not the schema SDK " << kSdkVersion
        << " ships: a changed SDK needs its schema reviewed, then the new hash recorded here and in "
           "test/conformance/lib/schema.js";
    auto parsed = support::parse_json(text);
    ASSERT_TRUE(parsed) << parsed.error().message();
    schema_ = std::move(*parsed);
    ASSERT_TRUE(schema_["$defs"].is_object());
  }

  // The unstable schema, read and pinned like the stable one.
  Json unstable_schema() const {
    const std::string text = read_text(kUnstableSchemaPath);
    EXPECT_EQ(tools::sha256_hex(text), kUnstableSchemaSha256) << kUnstableSchemaPath << " changed";
    auto parsed = support::parse_json(text);
    EXPECT_TRUE(parsed);
    return parsed ? std::move(*parsed) : Json::object();
  }

  void expect_valid(std::string_view def, const Json& value, const Json* schema = nullptr) const {
    const SchemaCheck check((schema != nullptr ? *schema : schema_)["$defs"]);
    const auto errors = check.check(def, value);
    std::string report;
    for (const auto& e : errors) report += "\n  " + e;
    EXPECT_TRUE(errors.empty()) << def << " " << value.dump() << report;
  }

  Json schema_;
};

Json meta() { return json(R"({"agentd":{"x":1}})"); }

std::vector<ContentBlock> every_content_block() {
  return {
      TextContent{.text = "t", .annotations = json(R"({"audience":["user"],"priority":0.5})"), .meta = meta()},
      ImageContent{.data = "AA==", .mime_type = "image/png", .uri = "file:///a.png", .meta = meta()},
      AudioContent{.data = "AA==", .mime_type = "audio/wav", .meta = meta()},
      ResourceLink{.uri = "file:///a",
                   .name = "a",
                   .title = "A",
                   .description = "d",
                   .mime_type = "text/plain",
                   .size = 3,
                   .meta = meta()},
      EmbeddedResource{
          .resource = TextResourceContents{.uri = "file:///a", .text = "x", .mime_type = "text/plain", .meta = meta()},
          .meta = meta()},
      EmbeddedResource{.resource = BlobResourceContents{.uri = "file:///b", .blob = "AA==", .mime_type = "a/b"}}};
}

std::vector<McpServer> every_mcp_server() {
  return {McpServerStdio{.name = "s",
                         .command = "/bin/s",
                         .args = {"-x"},
                         .env = {{.name = "K", .value = "V", .meta = meta()}},
                         .meta = meta()},
          McpServerHttp{.name = "h", .url = "https://h", .headers = {{.name = "A", .value = "B"}}, .meta = meta()},
          McpServerSse{.name = "e", .url = "https://e", .headers = {}}};
}

SessionModeState modes() {
  return {.current_mode_id = "default",
          .available_modes = {{.id = "default", .name = "Default", .description = "d", .meta = meta()},
                              {.id = "plan", .name = "Plan"}},
          .meta = meta()};
}

std::vector<SessionConfigOption> config_options() {
  return {{.id = "model",
           .name = "Model",
           .description = "d",
           .category = "model",
           .current_value = "a",
           .options = {{.value = "a", .name = "A", .description = "d", .meta = meta()}, {.value = "b", .name = "B"}},
           .meta = meta()}};
}

std::vector<ToolCallContent> every_tool_content() {
  return {ToolCallContentBlock{.content = TextContent{.text = "ok"}, .meta = meta()},
          Diff{.path = "/a", .old_text = "x", .new_text = "y", .meta = meta()}, Diff{.path = "/n", .new_text = "new"},
          Terminal{.terminal_id = "t1", .meta = meta()}};
}

std::vector<SessionUpdate> every_update() {
  const ContentBlock text = TextContent{.text = "x"};
  return {
      UserMessageChunk{.content = text, .message_id = "m1", .meta = meta()},
      AgentMessageChunk{.content = text, .message_id = "m2", .meta = meta()},
      AgentThoughtChunk{.content = text, .message_id = "m3", .meta = meta()},
      ToolCall{.tool_call_id = "tc",
               .title = "T",
               .name = "shell",
               .kind = ToolKind::execute,
               .status = ToolCallStatus::in_progress,
               .content = every_tool_content(),
               .locations = {{.path = "/a", .line = 3, .meta = meta()}},
               .raw_input = json(R"({"command":"ls"})"),
               .raw_output = json(R"({"exit":0})"),
               .meta = meta()},
      ToolCallUpdate{.tool_call_id = "tc",
                     .title = "T",
                     .name = "shell",
                     .kind = ToolKind::switch_mode,
                     .status = ToolCallStatus::failed,
                     .content = every_tool_content(),
                     .locations = std::vector<ToolCallLocation>{{.path = "/a"}},
                     .raw_input = json("[1]"),
                     .raw_output = json(R"("text")"),
                     .meta = meta()},
      Plan{.entries = {{.content = "a",
                        .priority = PlanEntryPriority::low,
                        .status = PlanEntryStatus::completed,
                        .meta = meta()}},
           .meta = meta()},
      AvailableCommandsUpdate{
          .available_commands =
              {{.name = "help", .description = "h"},
               {.name = "model", .description = "m", .input = {{.hint = "name", .meta = meta()}}, .meta = meta()}},
          .meta = meta()},
      CurrentModeUpdate{.current_mode_id = "plan", .meta = meta()},
      ConfigOptionUpdate{.config_options = config_options(), .meta = meta()},
      SessionInfoUpdate{
          .title = std::optional<std::string>("t"), .updated_at = std::optional<std::string>(), .meta = meta()},
      UsageUpdate{.used = 1, .size = 2, .cost = Cost{.amount = 0.5, .currency = "USD", .meta = meta()}, .meta = meta()},
  };
}

TEST_F(AcpSchema, TheCheckerFindsWhatItShould) {
  const SchemaCheck check(schema_["$defs"]);
  EXPECT_FALSE(check.check("PromptRequest", json(R"({"sessionId":"s","prompt":[],"usage":{}})")).empty());
  EXPECT_FALSE(check.check("PromptResponse", json(R"({"stopReason":"stopped"})")).empty());
  EXPECT_FALSE(check.check("PromptRequest", json(R"({"prompt":[]})")).empty());
  EXPECT_FALSE(check.check("ContentBlock", json(R"({"type":"text","text":"a","mime":"x"})")).empty());
  EXPECT_TRUE(check.check("ContentBlock", json(R"({"type":"text","text":"a","_meta":{"anything":1}})")).empty());
  // Deep inside a tagged union, inside an array.
  const auto nested = check.check("SessionNotification", json(R"({"sessionId":"s","update":{
      "sessionUpdate":"tool_call","toolCallId":"t","title":"T","kind":"teleport",
      "content":[{"type":"diff","path":"/a","newText":"x","oldtext":"y"}]}})"));
  std::string all;
  for (const auto& e : nested) all += e + "\n";
  EXPECT_NE(all.find(R"("teleport")"), std::string::npos) << all;
  EXPECT_NE(all.find("oldtext: not declared"), std::string::npos) << all;
}

TEST_F(AcpSchema, ContentBlocks) {
  for (const auto& block : every_content_block()) expect_valid("ContentBlock", written(block));
}

TEST_F(AcpSchema, SessionRequestsAndResponses) {
  expect_valid("NewSessionRequest",
               written(NewSessionRequest{
                   .cwd = "/w", .additional_directories = {"/x"}, .mcp_servers = every_mcp_server(), .meta = meta()}));
  expect_valid("NewSessionResponse",
               written(NewSessionResponse{
                   .session_id = "s", .modes = modes(), .config_options = config_options(), .meta = meta()}));
  expect_valid("LoadSessionRequest", written(LoadSessionRequest{.session_id = "s",
                                                                .cwd = "/w",
                                                                .additional_directories = {"/x"},
                                                                .mcp_servers = every_mcp_server(),
                                                                .meta = meta()}));
  expect_valid("LoadSessionResponse",
               written(LoadSessionResponse{.modes = modes(), .config_options = config_options(), .meta = meta()}));
  expect_valid("ListSessionsRequest", written(ListSessionsRequest{.cwd = "/w", .cursor = "c", .meta = meta()}));
  expect_valid("ListSessionsResponse", written(ListSessionsResponse{.sessions = {{.session_id = "s",
                                                                                  .cwd = "/w",
                                                                                  .additional_directories = {"/x"},
                                                                                  .title = "t",
                                                                                  .updated_at = "2026-01-01T00:00:00Z",
                                                                                  .meta = meta()}},
                                                                    .next_cursor = "n",
                                                                    .meta = meta()}));
  expect_valid("ResumeSessionRequest", written(ResumeSessionRequest{.session_id = "s",
                                                                    .cwd = "/w",
                                                                    .additional_directories = {"/x"},
                                                                    .mcp_servers = every_mcp_server(),
                                                                    .meta = meta()}));
  expect_valid("ResumeSessionResponse",
               written(ResumeSessionResponse{.modes = modes(), .config_options = config_options(), .meta = meta()}));
  expect_valid("CloseSessionRequest", written(CloseSessionRequest{.session_id = "s", .meta = meta()}));
  expect_valid("CloseSessionResponse", written(CloseSessionResponse{.meta = meta()}));
  expect_valid("DeleteSessionRequest", written(DeleteSessionRequest{.session_id = "s", .meta = meta()}));
  expect_valid("DeleteSessionResponse", written(DeleteSessionResponse{.meta = meta()}));
  expect_valid("SetSessionModeRequest",
               written(SetSessionModeRequest{.session_id = "s", .mode_id = "m", .meta = meta()}));
  expect_valid("SetSessionModeResponse", written(SetSessionModeResponse{.meta = meta()}));
  expect_valid(
      "SetSessionConfigOptionRequest",
      written(SetSessionConfigOptionRequest{.session_id = "s", .config_id = "c", .value = "v", .meta = meta()}));
  expect_valid("SetSessionConfigOptionRequest",
               written(SetSessionConfigOptionRequest{.session_id = "s", .config_id = "c", .value = true}));
  expect_valid("SetSessionConfigOptionResponse",
               written(SetSessionConfigOptionResponse{.config_options = config_options(), .meta = meta()}));
  expect_valid("PromptRequest",
               written(PromptRequest{.session_id = "s", .prompt = every_content_block(), .meta = meta()}));
  expect_valid("PromptResponse", written(PromptResponse{.stop_reason = StopReason::refusal, .meta = meta()}));
  expect_valid("CancelNotification", written(CancelNotification{.session_id = "s", .meta = meta()}));
}

TEST_F(AcpSchema, EverySessionUpdate) {
  for (const auto& update : every_update()) {
    expect_valid("SessionNotification",
                 written(SessionNotification{.session_id = "s", .update = update, .meta = meta()}));
  }
}

TEST_F(AcpSchema, ClientMethods) {
  expect_valid(
      "RequestPermissionRequest",
      written(RequestPermissionRequest{
          .session_id = "s",
          .tool_call = std::get<ToolCallUpdate>(every_update()[4]),
          .options = {{.option_id = "a", .name = "A", .kind = PermissionOptionKind::reject_always, .meta = meta()}},
          .meta = meta()}));
  expect_valid("RequestPermissionResponse",
               written(RequestPermissionResponse{.outcome = SelectedPermissionOutcome{.option_id = "a", .meta = meta()},
                                                 .meta = meta()}));
  expect_valid("RequestPermissionResponse",
               written(RequestPermissionResponse{.outcome = CancelledPermissionOutcome{}}));
  expect_valid("ReadTextFileRequest",
               written(ReadTextFileRequest{.session_id = "s", .path = "/a", .line = 1, .limit = 2, .meta = meta()}));
  expect_valid("ReadTextFileResponse", written(ReadTextFileResponse{.content = "x", .meta = meta()}));
  expect_valid("WriteTextFileRequest",
               written(WriteTextFileRequest{.session_id = "s", .path = "/a", .content = "x", .meta = meta()}));
  expect_valid("WriteTextFileResponse", written(WriteTextFileResponse{.meta = meta()}));
}

TEST_F(AcpSchema, InitializeResponseWithSessionCapabilities) {
  InitializeResponse r;
  r.agent_info = Implementation{.name = "agentd", .title = "agentd", .version = "0.1.0"};
  r.agent_capabilities.load_session = true;
  r.agent_capabilities.session = {
      .list = true, .resume = true, .close = true, .delete_session = true, .additional_directories = true};
  expect_valid("InitializeResponse", written(r));
}

// session/fork is unstable in v1: its messages, and initialize's answer that offers it, are the unstable
// schema's; the stable schema (which declares no `fork` capability) is not the yardstick there.
TEST_F(AcpSchema, ForkMessagesAreTheUnstableSchemas) {
  const Json unstable = unstable_schema();
  InitializeResponse r;
  r.agent_capabilities.session = {.list = true, .resume = true, .fork = true};
  expect_valid("InitializeResponse", written(r), &unstable);
  EXPECT_TRUE(json(written(r).dump())["agentCapabilities"]["sessionCapabilities"]["fork"].is_object());
  expect_valid(
      "ForkSessionRequest",
      written(ForkSessionRequest{
          .session_id = "s", .cwd = "/w", .additional_directories = {"/lib"}, .mcp_servers = {}, .meta = meta()}),
      &unstable);
  ForkSessionResponse fork{.session_id = "s2",
                           .modes = SessionModeState{.current_mode_id = "default", .available_modes = {}}};
  expect_valid("ForkSessionResponse", written(fork), &unstable);
  auto back = testing::read<ForkSessionRequest>(R"({"sessionId":"s","cwd":"/w","_meta":{"agentd":{"turnId":"t_1"}}})");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->session_id, "s");
  EXPECT_EQ(back->cwd, "/w");
  EXPECT_EQ(back->meta["agentd"]["turnId"].as_string(), "t_1");
  auto no_cwd = testing::read<ForkSessionRequest>(R"({"sessionId":"s"})");
  ASSERT_FALSE(no_cwd);
  EXPECT_NE(no_cwd.error().message().find("cwd"), std::string::npos) << no_cwd.error().message();
}

// Our enum tables hold exactly the schema's values, no more and no fewer.
template <class E>
std::set<std::string> our_names(E last) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(last); ++i) names.emplace(name(static_cast<E>(i)));
  return names;
}

TEST_F(AcpSchema, EnumValuesAreTheSchemas) {
  const auto schema_names = [this](std::string_view def) {
    std::set<std::string> names;
    for (const Json& branch : schema_["$defs"][def]["oneOf"].as_array()) names.insert(branch["const"].as_string());
    return names;
  };
  EXPECT_EQ(our_names(StopReason::cancelled), schema_names("StopReason"));
  EXPECT_EQ(our_names(ToolKind::other), schema_names("ToolKind"));
  EXPECT_EQ(our_names(ToolCallStatus::failed), schema_names("ToolCallStatus"));
  EXPECT_EQ(our_names(PlanEntryPriority::low), schema_names("PlanEntryPriority"));
  EXPECT_EQ(our_names(PlanEntryStatus::completed), schema_names("PlanEntryStatus"));
  EXPECT_EQ(our_names(PermissionOptionKind::reject_always), schema_names("PermissionOptionKind"));
}

TEST_F(AcpSchema, TheInstalledSdkIsThePinnedOne) {
  auto package = support::parse_json(read_text(kSdkDir / "package.json"));
  ASSERT_TRUE(package) << package.error().message();
  EXPECT_EQ((*package)["version"], Json(std::string(kSdkVersion)));
}

// Our example conversation is ACP as the schema defines it, message by message: requests and
// notifications by method, results by the method of the request they answer.
TEST_F(AcpSchema, EveryExampleMessage) {
  std::ifstream file(std::filesystem::path(AGENTD_SOURCE_DIR) / "test/fixtures/acp/acp_examples.jsonl");
  ASSERT_TRUE(file);
  const std::map<std::string, std::pair<std::string, std::string>> kTypes = {
      {"initialize", {"InitializeRequest", "InitializeResponse"}},
      {"authenticate", {"AuthenticateRequest", "AuthenticateResponse"}},
      {"logout", {"LogoutRequest", "LogoutResponse"}},
      {"session/new", {"NewSessionRequest", "NewSessionResponse"}},
      {"session/prompt", {"PromptRequest", "PromptResponse"}},
      {"session/cancel", {"CancelNotification", ""}},
      {"session/update", {"SessionNotification", ""}},
      {"session/set_mode", {"SetSessionModeRequest", "SetSessionModeResponse"}},
      {"session/set_config_option", {"SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse"}},
      {"session/list", {"ListSessionsRequest", "ListSessionsResponse"}},
      {"session/resume", {"ResumeSessionRequest", "ResumeSessionResponse"}},
      {"session/close", {"CloseSessionRequest", "CloseSessionResponse"}},
      {"session/request_permission", {"RequestPermissionRequest", "RequestPermissionResponse"}},
      {"fs/read_text_file", {"ReadTextFileRequest", "ReadTextFileResponse"}},
      {"fs/write_text_file", {"WriteTextFileRequest", "WriteTextFileResponse"}},
  };
  std::map<std::pair<std::string, std::int64_t>, std::string> pending;  // (sender, id) -> method
  std::string text;
  int checked = 0;
  while (std::getline(file, text)) {
    const Json line = json(text);
    const std::string& dir = line["dir"].as_string();
    const Json& msg = line["msg"];
    SCOPED_TRACE(dir + ": " + line["note"].as_string());
    if (const Json* method = msg.find("method")) {
      const auto type = kTypes.find(method->as_string());
      ASSERT_NE(type, kTypes.end()) << method->as_string();
      if (const Json* id = msg.find("id")) pending[{dir, id->as_int64()}] = method->as_string();
      expect_valid(type->second.first, msg["params"]);
    } else {
      const auto request = pending.find({dir == "c2a" ? "a2c" : "c2a", msg["id"].as_int64()});
      ASSERT_NE(request, pending.end()) << msg.dump();
      expect_valid(kTypes.at(request->second).second, msg["result"]);
      pending.erase(request);
    }
    ++checked;
  }
  EXPECT_GE(checked, 30);
  EXPECT_TRUE(pending.empty());
}

}  // namespace
}  // namespace agentd::protocol::acp

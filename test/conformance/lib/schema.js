// The ACP v1 JSON Schema, taken from the pinned @agentclientprotocol/sdk package (never copied into the
// repository), compiled with Ajv's draft 2020-12 build, and a checker for every message agentd writes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";

const require = createRequire(import.meta.url);

export const SCHEMA_PATH = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
// Package root: .../@agentclientprotocol/sdk/schema/v1/schema.json -> .../@agentclientprotocol/sdk
export const SDK_DIR = path.resolve(path.dirname(SCHEMA_PATH), "..", "..");
export const SDK_VERSION = JSON.parse(readFileSync(path.join(SDK_DIR, "package.json"), "utf8")).version;

// The v1 schema that SDK 2.4.0 ships (test/unit/protocol/acp_schema_test.cpp pins the same hash).
export const EXPECTED_SCHEMA_SHA256 = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a";

const schemaText = readFileSync(SCHEMA_PATH);
export const SCHEMA_SHA256 = createHash("sha256").update(schemaText).digest("hex");
export const schema = JSON.parse(schemaText.toString("utf8"));

const ID = "acp-v1.json";
// strict: false because the schema carries annotation keywords Ajv does not know (x-side, x-method,
// discriminator, ...); they annotate and do not constrain, so ignoring them loses nothing.
const ajv = new Ajv2020({ strict: false, allErrors: true });
const intFormat = (min, max) => ({
  type: "number",
  validate: (n) => Number.isInteger(n) && n >= min && n <= max,
});
ajv.addFormat("int32", intFormat(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat("int64", intFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat("uint16", intFormat(0, 65535));
ajv.addFormat("uint32", intFormat(0, 2 ** 32 - 1));
ajv.addFormat("uint64", intFormat(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
ajv.addFormat("uri", {
  type: "string",
  validate: (s) => {
    try {
      new URL(s);
      return true;
    } catch {
      return false;
    }
  },
});
ajv.addSchema({ ...schema, $id: ID });

const compiled = new Map();
function validator(pointer) {
  let v = compiled.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `${ID}#${pointer}` });
    compiled.set(pointer, v);
  }
  return v;
}
const def = (name) => `/$defs/${name}`;

// The schema's top-level anyOf: [0] is "Agent" (any message an agent sends), [1] "Client".
const AGENT_MESSAGE = "/anyOf/0";
const CLIENT_MESSAGE = "/anyOf/1";

// Results of the client's requests, by the method of the request they answer.
const RESPONSE_DEFS = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  logout: "LogoutResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/delete": "DeleteSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/close": "CloseSessionResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  "session/prompt": "PromptResponse",
};
// Requests an agent may send to the client.
const AGENT_REQUEST_DEFS = {
  "fs/write_text_file": "WriteTextFileRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "session/request_permission": "RequestPermissionRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/release": "ReleaseTerminalRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
  "elicitation/create": "CreateElicitationRequest",
};
// Notifications an agent may send.
const AGENT_NOTIFICATION_DEFS = {
  "session/update": "SessionNotification",
  "elicitation/complete": "CompleteElicitationNotification",
};
// Client requests (used to check our own side, so that a failure is attributed correctly).
const CLIENT_REQUEST_DEFS = {
  initialize: "InitializeRequest",
  "session/new": "NewSessionRequest",
  "session/load": "LoadSessionRequest",
  "session/prompt": "PromptRequest",
};

for (const name of [
  ...Object.values(RESPONSE_DEFS),
  ...Object.values(AGENT_REQUEST_DEFS),
  ...Object.values(AGENT_NOTIFICATION_DEFS),
  ...Object.values(CLIENT_REQUEST_DEFS),
  "Error",
]) {
  if (!schema.$defs[name]) throw new Error(`the ACP v1 schema has no $defs/${name}`);
}

function errorsOf(v) {
  return (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
}

function check(pointer, value, where, out) {
  const v = validator(pointer);
  if (!v(value)) out.push({ against: `#${pointer}`, where, errors: errorsOf(v) });
}

const idKey = (id) => JSON.stringify(id);

/**
 * Checks one message agentd wrote. `pending` maps JSON-stringified ids of the client's requests to
 * their methods (so that a response is checked against the result type of its request).
 * Returns a list of problems: {against, where, errors}.
 */
export function checkAgentMessage(msg, pending) {
  const out = [];
  check(AGENT_MESSAGE, msg, "the whole message, as the schema's Agent message", out);
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return out;
  const hasId = Object.hasOwn(msg, "id");
  if (typeof msg.method === "string") {
    const defs = hasId ? AGENT_REQUEST_DEFS : AGENT_NOTIFICATION_DEFS;
    const name = defs[msg.method];
    if (name) check(def(name), msg.params, `params of ${hasId ? "request" : "notification"} ${msg.method}`, out);
    else if (!msg.method.startsWith("_"))
      out.push({
        against: "method names",
        where: `method ${msg.method}`,
        errors: [`an agent-to-client ${hasId ? "request" : "notification"} that ACP v1 does not define (extension methods start with "_")`],
      });
    return out;
  }
  // A response.
  const method = hasId ? pending.get(idKey(msg.id)) : undefined;
  if (hasId) pending.delete(idKey(msg.id));
  if (Object.hasOwn(msg, "error")) {
    check(def("Error"), msg.error, `error of the response to ${method ?? "an unknown request"}`, out);
  } else if (Object.hasOwn(msg, "result")) {
    if (method === undefined)
      out.push({ against: "request ids", where: `response id ${idKey(msg.id)}`, errors: ["answers no request the client sent"] });
    else if (RESPONSE_DEFS[method]) check(def(RESPONSE_DEFS[method]), msg.result, `result of ${method}`, out);
  }
  return out;
}

/** Checks one message the client (the SDK) wrote, and records its request id. */
export function checkClientMessage(msg, pending) {
  const out = [];
  check(CLIENT_MESSAGE, msg, "the whole message, as the schema's Client message", out);
  if (msg && typeof msg.method === "string" && Object.hasOwn(msg, "id")) {
    pending.set(idKey(msg.id), msg.method);
    const name = CLIENT_REQUEST_DEFS[msg.method];
    if (name) check(def(name), msg.params, `params of request ${msg.method}`, out);
  }
  return out;
}

// ACP v1 conformance of agentd against the published client SDK (@agentclientprotocol/sdk, pinned),
// with every message agentd writes validated against the schema that SDK ships.
//   cd test/conformance && npm ci && node --test
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import {
  AGENTD_BIN,
  AGENTD_MOCK_MODEL,
  INIT_PARAMS,
  acp,
  describeViolations,
  startAgent,
  startMockModel,
  tempDir,
  withTimeout,
} from "./lib/harness.js";
import {
  EXPECTED_SCHEMA_SHA256,
  SCHEMA_PATH,
  SCHEMA_SHA256,
  SDK_VERSION,
  checkAgentMessage,
  checkClientMessage,
} from "./lib/schema.js";

const TURN_MS = 20000;
const CANCEL_BOUND_MS = 5000;

const isChunk = (kind) => (u) => u.update?.sessionUpdate === kind;
const textOf = (updates, kind) =>
  updates
    .filter(isChunk(kind))
    .map((u) => (u.update.content?.type === "text" ? u.update.content.text : ""))
    .join("");

/**
 * Runs `body` with a mock model playing `script` and an agentd connected through the SDK, then reports
 * two results: the scenario's behaviour, and the schema check of every line agentd wrote.
 */
async function scenario(t, script, body) {
  const mock = await startMockModel(script);
  const home = tempDir("home");
  const work = tempDir("cwd");
  const db = path.join(home.dir, "agentd.db");
  const started = [];
  const spawnAgent = (options = {}) => {
    const a = startAgent({ db, cwd: work.dir, home: home.dir, mockUrl: mock.url, ...options });
    started.push(a);
    return a;
  };
  let failure;
  try {
    await body({ spawnAgent, mock, cwd: work.dir, db });
  } catch (e) {
    failure = e;
  }
  for (const a of started) await a.close(5000);
  await mock.stop();
  const violations = started.flatMap((a) => a.violations);
  const clientViolations = started.flatMap((a) => a.clientViolations);
  const stderr = started.map((a) => a.stderr()).join("\n--- next agentd ---\n");
  const fromAgent = started.flatMap((a) => a.wire.filter((w) => w.dir === "in"));
  const kinds = {};
  for (const { msg } of fromAgent) {
    const k = msg.method ? `${msg.method}${msg.method === "session/update" ? ":" + msg.params?.update?.sessionUpdate : ""}` : "response";
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
  t.diagnostic(`validated ${fromAgent.length} message(s) from agentd: ${JSON.stringify(kinds)}`);
  if (process.env.CONFORMANCE_DUMP) for (const w of started.flatMap((a) => a.wire)) t.diagnostic(`${w.dir === "in" ? "<" : ">"} ${JSON.stringify(w.msg)}`);
  home.remove();
  work.remove();

  await t.test("behaviour", () => {
    if (failure) {
      t.diagnostic(`agentd stderr (tail):\n${stderr.slice(-3000)}`);
      throw failure;
    }
  });
  await t.test("every message agentd wrote matches the ACP v1 schema", () => {
    if (violations.length) {
      const text = describeViolations(violations);
      t.diagnostic(text);
      assert.fail(`${violations.length} message(s) from agentd violate the ACP v1 schema:\n${text}`);
    }
  });
  if (clientViolations.length)
    t.diagnostic(`the SDK's own messages did not validate (harness problem?):\n${describeViolations(clientViolations)}`);
}

async function initialize(a) {
  return withTimeout(a.agent.request(acp.methods.agent.initialize, INIT_PARAMS), TURN_MS, "initialize");
}
async function newSession(a, cwd) {
  return withTimeout(
    a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
    TURN_MS,
    "session/new",
  );
}

// Wire position of the response to the client's request sent with `method` (the last one).
function responseIndex(wire, method) {
  const req = wire.findLast((w) => w.dir === "out" && w.msg.method === method && Object.hasOwn(w.msg, "id"));
  assert.ok(req, `no ${method} request on the wire`);
  const idx = wire.findIndex((w) => w.dir === "in" && !w.msg.method && JSON.stringify(w.msg.id) === JSON.stringify(req.msg.id));
  assert.ok(idx >= 0, `no response to ${method} on the wire`);
  return idx;
}

test("the ACP schema is the one SDK 2.4.0 ships", () => {
  assert.equal(SDK_VERSION, "2.4.0", "@agentclientprotocol/sdk must be pinned to 2.4.0");
  assert.equal(SCHEMA_SHA256, EXPECTED_SCHEMA_SHA256, `sha256 of ${SCHEMA_PATH}`);
});

test("the validator rejects what the schema forbids (self-test)", () => {
  const pending = new Map();
  checkClientMessage({ jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: "s", prompt: [] } }, pending);
  assert.notDeepEqual(checkAgentMessage({ jsonrpc: "2.0", id: 7, result: { stopReason: "finished" } }, pending), []);
  const bad = { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "txt", text: "x" } } };
  assert.notDeepEqual(checkAgentMessage({ jsonrpc: "2.0", method: "session/update", params: bad }, pending), []);
  const good = { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } } };
  assert.deepEqual(checkAgentMessage({ jsonrpc: "2.0", method: "session/update", params: good }, pending), []);
  assert.notDeepEqual(checkAgentMessage({ id: 3, method: "session/request_permission", params: { sessionId: "s" } }, pending), []);
  assert.notDeepEqual(checkAgentMessage({ jsonrpc: "2.0", method: "session/oops", params: {} }, pending), []);
});

test("the binaries exist", () => {
  assert.ok(existsSync(AGENTD_BIN), `AGENTD_BIN ${AGENTD_BIN} does not exist (build agentd, or set AGENTD_BIN)`);
  assert.ok(existsSync(AGENTD_MOCK_MODEL), `AGENTD_MOCK_MODEL ${AGENTD_MOCK_MODEL} does not exist`);
});

test("1. initialize: protocol version 1 and the agent's capabilities", async (t) => {
  await scenario(t, "text.json", async ({ spawnAgent }) => {
    const a = spawnAgent();
    const init = await initialize(a);
    assert.equal(init.protocolVersion, 1);
    assert.equal(typeof init.agentCapabilities, "object");
    assert.equal(init.agentCapabilities.loadSession, true, "agentd persists sessions, so it should offer session/load");
    assert.ok(Array.isArray(init.authMethods ?? []), "authMethods is a list");
  });
});

test("2. session/new in a temporary directory", async (t) => {
  await scenario(t, "text.json", async ({ spawnAgent, cwd }) => {
    const a = spawnAgent();
    await initialize(a);
    const s = await newSession(a, cwd);
    assert.equal(typeof s.sessionId, "string");
    assert.ok(s.sessionId.length > 0);
    const s2 = await newSession(a, cwd);
    assert.notEqual(s2.sessionId, s.sessionId, "two sessions get two ids");
  });
});

test("3. prompt: streamed agent_message_chunk updates, then stopReason end_turn", async (t) => {
  await scenario(t, "text.json", async ({ spawnAgent, cwd, mock }) => {
    const a = spawnAgent();
    await initialize(a);
    const { sessionId } = await newSession(a, cwd);
    const res = await withTimeout(
      a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Say hello." }] }),
      TURN_MS,
      "session/prompt",
    );
    assert.equal(res.stopReason, "end_turn");
    const mine = a.updates.filter((u) => u.sessionId === sessionId);
    const chunks = mine.filter(isChunk("agent_message_chunk"));
    assert.ok(chunks.length >= 2, `expected the text streamed in several chunks, got ${chunks.length}`);
    assert.equal(
      textOf(mine, "agent_message_chunk"),
      "Hello from the conformance mock. This answer is streamed in small pieces.",
    );
    // On the wire, every chunk comes before the prompt's response.
    const respAt = responseIndex(a.wire, "session/prompt");
    const lastChunkAt = a.wire.findLastIndex(
      (w) => w.dir === "in" && w.msg.method === "session/update" && w.msg.params?.update?.sessionUpdate === "agent_message_chunk",
    );
    assert.ok(lastChunkAt >= 0 && lastChunkAt < respAt, "agent_message_chunk updates precede the session/prompt response");
    const reqs = await mock.requests();
    assert.equal(reqs.length, 1, "one model request");
    assert.equal(reqs[0].expectation_failures, undefined, JSON.stringify(reqs[0].expectation_failures));
  });
});

test("4. permission round trip: write_file asks, the client allows once, the file is written", async (t) => {
  await scenario(t, "permission.json", async ({ spawnAgent, cwd, mock }) => {
    const a = spawnAgent();
    await initialize(a);
    const { sessionId } = await newSession(a, cwd);
    const res = await withTimeout(
      a.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "Write the file." }],
      }),
      TURN_MS,
      "session/prompt",
    );
    assert.equal(a.permissionRequests.length, 1, "one session/request_permission");
    const req = a.permissionRequests[0];
    assert.equal(req.sessionId, sessionId);
    assert.ok(
      req.options.some((o) => o.kind === "allow_once"),
      `an allow_once option among ${JSON.stringify(req.options)}`,
    );
    assert.equal(res.stopReason, "end_turn");
    const file = path.join(cwd, "conformance-out.txt");
    assert.ok(existsSync(file), `${file} exists after the turn`);
    assert.equal(readFileSync(file, "utf8"), "written through an ACP permission round trip\n");
    // The tool call was reported, and its id is the one the permission request named.
    const toolCallIds = a.updates
      .filter((u) => u.update.sessionUpdate === "tool_call" || u.update.sessionUpdate === "tool_call_update")
      .map((u) => u.update.toolCallId);
    assert.ok(toolCallIds.includes(req.toolCall.toolCallId), "the permission's toolCallId was announced by a tool_call update");
    assert.match(textOf(a.updates, "agent_message_chunk"), /The file is written\./);
    const reqs = await mock.requests();
    assert.equal(reqs.length, 2, "two model requests (tool call, then answer)");
    assert.equal(reqs[1].expectation_failures, undefined, JSON.stringify(reqs[1].expectation_failures));
  });
});

test("5. cancel: a stalled stream, session/cancel after the first chunk, stopReason cancelled", async (t) => {
  await scenario(t, "cancel.json", async ({ spawnAgent, cwd }) => {
    const a = spawnAgent();
    await initialize(a);
    const { sessionId } = await newSession(a, cwd);
    const prompt = a.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Talk until I stop you." }],
    });
    // Keep a rejection from going unhandled while we wait for the chunk.
    prompt.catch(() => {});
    await a.waitForUpdate(
      (u) => u.sessionId === sessionId && isChunk("agent_message_chunk")(u),
      TURN_MS,
      "the first agent_message_chunk",
    );
    const cancelledAt = Date.now();
    await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const res = await withTimeout(prompt, CANCEL_BOUND_MS, "session/prompt after session/cancel");
    const took = Date.now() - cancelledAt;
    assert.equal(res.stopReason, "cancelled");
    t.diagnostic(`prompt resolved ${took} ms after session/cancel`);
    // The connection is still usable afterwards.
    const again = await newSession(a, cwd);
    assert.equal(typeof again.sessionId, "string");
  });
});

test("6. load: a second agentd on the same database replays the session, then answers", async (t) => {
  await scenario(t, "text.json", async ({ spawnAgent, cwd }) => {
    const first = spawnAgent();
    await initialize(first);
    const { sessionId } = await newSession(first, cwd);
    const res = await withTimeout(
      first.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Say hello." }] }),
      TURN_MS,
      "session/prompt",
    );
    assert.equal(res.stopReason, "end_turn");
    const said = textOf(first.updates, "agent_message_chunk");
    assert.ok(said.length > 0);
    const exit = await first.close();
    assert.deepEqual(exit, { code: 0, signal: null }, "agentd exits 0 when its stdin closes");

    const second = spawnAgent();
    const init = await initialize(second);
    assert.equal(init.agentCapabilities.loadSession, true);
    const loaded = await withTimeout(
      second.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }),
      TURN_MS,
      "session/load",
    );
    assert.equal(typeof loaded, "object");
    const replay = second.updates.filter((u) => u.sessionId === sessionId);
    assert.equal(textOf(replay, "agent_message_chunk"), said, "the replay carries the earlier answer");
    assert.match(textOf(replay, "user_message_chunk"), /Say hello\./, "the replay carries the user's prompt");
    // Anything sent after the answer has had time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const respAt = responseIndex(second.wire, "session/load");
    // The history (messages, tool calls, usage) and the current command list come before the response,
    // and nothing of the session after it (the ACP TCK's ACP-LOAD-002).
    const after = second.wire.slice(respAt + 1).filter(
      (w) => w.dir === "in" && w.msg.method === "session/update" && w.msg.params?.sessionId === sessionId,
    );
    assert.deepEqual(after.map((w) => w.msg.params.update.sessionUpdate), [], "nothing of the session after session/load's answer");
    const commandsAt = second.wire.findIndex(
      (w) => w.dir === "in" && w.msg.method === "session/update" && w.msg.params?.update?.sessionUpdate === "available_commands_update",
    );
    assert.ok(commandsAt >= 0 && commandsAt < respAt, "the loaded session's commands come before the answer");
    const replayKinds = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"]);
    const lastReplayAt = second.wire.findLastIndex(
      (w) => w.dir === "in" && w.msg.method === "session/update" && replayKinds.has(w.msg.params?.update?.sessionUpdate),
    );
    assert.ok(lastReplayAt >= 0 && lastReplayAt < respAt, "the replay comes before the session/load response");
  });
});

test("7. terminal: a client with terminals runs shell's command in one, under agentd sandbox-exec", async (t) => {
  await scenario(t, "terminal.json", async ({ spawnAgent, cwd, mock }) => {
    const log = [];
    const a = spawnAgent({ permission: "allow_once", terminals: log });
    await withTimeout(
      a.agent.request(acp.methods.agent.initialize, {
        ...INIT_PARAMS,
        clientCapabilities: { ...INIT_PARAMS.clientCapabilities, terminal: true },
      }),
      TURN_MS,
      "initialize",
    );
    const { sessionId } = await newSession(a, cwd);
    const res = await withTimeout(
      a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run it." }] }),
      TURN_MS,
      "session/prompt",
    );
    assert.equal(res.stopReason, "end_turn");
    assert.deepEqual(
      log.map((l) => l.method),
      ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"],
    );
    const created = log[0].params;
    assert.equal(created.sessionId, sessionId);
    assert.equal(created.args[0], "sandbox-exec");
    assert.deepEqual(created.args.slice(-3), ["/bin/sh", "-c", "echo from the editor terminal"]);
    const withTerminal = a.updates.filter(
      (u) =>
        u.update.sessionUpdate === "tool_call_update" &&
        (u.update.content ?? []).some((c) => c.type === "terminal" && c.terminalId === "term-1"),
    );
    assert.ok(withTerminal.length >= 1, "a tool_call_update carries the terminal");
    const reqs = await mock.requests();
    assert.equal(reqs.length, 2);
    assert.equal(reqs[1].expectation_failures, undefined, JSON.stringify(reqs[1].expectation_failures));
  });
});

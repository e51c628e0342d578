// Spawns agentd-mock-model and agentd, and connects the published ACP client SDK to agentd over its
// stdio, with every line in both directions tapped and checked against the ACP v1 schema.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { checkAgentMessage, checkClientMessage } from "./schema.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "..", "..", "..");
export const MOCK_DIR = path.resolve(HERE, "..", "mock");
export const AGENTD_BIN = path.resolve(ROOT, process.env.AGENTD_BIN ?? "build/default/daemon/agentd");
export const AGENTD_MOCK_MODEL = path.resolve(
  ROOT,
  process.env.AGENTD_MOCK_MODEL ?? "build/default/test/mock_model/agentd-mock-model",
);

export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), `agentd-conformance-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function waitExit(proc, ms) {
  if (proc.exitCode !== null || proc.signalCode !== null)
    return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      resolve({ code: null, signal: "SIGKILL (timed out)" });
    }, ms);
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** Starts agentd-mock-model with a script from mock/; resolves once it listens. */
export async function startMockModel(scriptName) {
  const proc = spawn(AGENTD_MOCK_MODEL, ["--script", path.join(MOCK_DIR, scriptName)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, AGENTD_LOG: "warn" },
  });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const lines = readline.createInterface({ input: proc.stdout });
  const first = await withTimeout(
    new Promise((resolve, reject) => {
      lines.once("line", resolve);
      proc.once("error", reject);
      proc.once("exit", (code) => reject(new Error(`agentd-mock-model exited (${code}): ${stderr}`)));
    }),
    10000,
    "agentd-mock-model start",
  );
  const { url } = JSON.parse(first);
  return {
    url,
    async requests() {
      const res = await fetch(`${url}/_mock/requests`);
      return res.json();
    },
    async stop() {
      lines.close();
      proc.kill("SIGTERM");
      await waitExit(proc, 5000);
    },
  };
}

function lineSplitter(onLine) {
  const decoder = new TextDecoder();
  let buffered = "";
  return (chunk) => {
    buffered += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== "") onLine(line);
    }
  };
}

/**
 * Spawns agentd (cwd = the session directory, HOME and XDG dirs in `home` so that no user config is
 * read) pointed at the mock model, and connects an ACP client app to it.
 *
 * Returns {agent (ClientContext), wire, violations, updates, permissionRequests, stderr(), close()}.
 * `wire` is every line in order: {dir: "in"|"out", msg}. `violations` are schema problems in
 * agentd's output (and, separately, `clientViolations` in ours).
 */
export function startAgent({ db, cwd, home, mockUrl, permission = "allow_once", terminals = null }) {
  const env = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: path.join(home, "data"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: "conformance-mock",
    AGENTD_MODEL: "anthropic:claude-sonnet-4-5",
    AGENTD_LOG: process.env.AGENTD_LOG ?? "info",
  };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  const proc = spawn(AGENTD_BIN, ["--db", db], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  proc.on("error", (e) => (stderr += `\nspawn error: ${e.message}`));

  const pending = new Map();
  const wire = [];
  const violations = [];
  const clientViolations = [];

  const onAgentLine = (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      violations.push({ line, problems: [{ against: "JSON", where: "the line", errors: [e.message] }] });
      return;
    }
    wire.push({ dir: "in", msg });
    const problems = checkAgentMessage(msg, pending);
    if (problems.length) violations.push({ line, problems });
  };
  const onClientLine = (line) => {
    const msg = JSON.parse(line);
    wire.push({ dir: "out", msg });
    const problems = checkClientMessage(msg, pending);
    if (problems.length) clientViolations.push({ line, problems });
  };

  const tapIn = lineSplitter(onAgentLine);
  const input = Readable.toWeb(proc.stdout).pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        tapIn(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  const tapOut = lineSplitter(onClientLine);
  const stdinWriter = Writable.toWeb(proc.stdin).getWriter();
  const output = new WritableStream({
    write(chunk) {
      tapOut(chunk);
      return stdinWriter.write(chunk);
    },
    close: () => stdinWriter.close(),
    abort: (reason) => stdinWriter.abort(reason),
  });

  const updates = [];
  const permissionRequests = [];
  const updateListeners = new Set();
  const app = acp
    .client({ name: "agentd-conformance" })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissionRequests.push(params);
      const option = params.options.find((o) => o.kind === permission);
      if (!option) return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const l of updateListeners) l(params);
    });
  // An editor's terminals (clientCapabilities.terminal): each one a process running what was asked.
  if (terminals) serveTerminals(app, terminals);
  const connection = app.connect(acp.ndJsonStream(output, input));

  return {
    proc,
    agent: connection.agent,
    connection,
    wire,
    violations,
    clientViolations,
    updates,
    permissionRequests,
    stderr: () => stderr,
    /** Resolves with the first update (from now on, or already received) that `pred` accepts. */
    waitForUpdate(pred, ms, what) {
      const seen = updates.find(pred);
      if (seen) return Promise.resolve(seen);
      let listener;
      return withTimeout(
        new Promise((resolve) => {
          listener = (u) => pred(u) && resolve(u);
          updateListeners.add(listener);
        }),
        ms,
        what,
      ).finally(() => updateListeners.delete(listener));
    },
    /** Closes agentd's stdin (end of session for a stdio agent) and waits for it to exit. */
    async close(ms = 10000) {
      try {
        await stdinWriter.close();
      } catch {
        // already closed
      }
      const exit = await waitExit(proc, ms);
      connection.close();
      return exit;
    },
  };
}

/**
 * Serves terminal/* as an editor does: terminal/create starts the command (agentd asks for
 * `agentd sandbox-exec ... -- /bin/sh -c <command>`), output is stdout and stderr together, kill sends
 * SIGTERM. `log` gets every request's method and params, in order.
 */
function serveTerminals(app, log) {
  const terminals = new Map();
  let next = 1;
  const t = acp.methods.client.terminal;
  app
    .onRequest(t.create, async ({ params }) => {
      log.push({ method: t.create, params });
      const id = `term-${next++}`;
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, stdio: ["ignore", "pipe", "pipe"] });
      const term = { output: "", exit: null };
      term.done = new Promise((resolve) =>
        child.on("close", (code, signal) => {
          term.exit = { exitCode: code, signal: signal ?? null };
          resolve(term.exit);
        }),
      );
      child.stdout.on("data", (d) => (term.output += d));
      child.stderr.on("data", (d) => (term.output += d));
      term.child = child;
      terminals.set(id, term);
      return { terminalId: id };
    })
    .onRequest(t.waitForExit, async ({ params }) => {
      log.push({ method: t.waitForExit, params });
      return await terminals.get(params.terminalId).done;
    })
    .onRequest(t.output, async ({ params }) => {
      log.push({ method: t.output, params });
      const term = terminals.get(params.terminalId);
      return { output: term.output, truncated: false, ...(term.exit ? { exitStatus: term.exit } : {}) };
    })
    .onRequest(t.kill, async ({ params }) => {
      log.push({ method: t.kill, params });
      terminals.get(params.terminalId).child.kill("SIGTERM");
      return {};
    })
    .onRequest(t.release, async ({ params }) => {
      log.push({ method: t.release, params });
      terminals.delete(params.terminalId);
      return {};
    });
}

/** Formats the schema violations for an assertion message, with the offending JSON. */
export function describeViolations(violations) {
  return violations
    .map(({ line, problems }) =>
      [
        `offending message: ${line.length > 4000 ? line.slice(0, 4000) + "...(cut)" : line}`,
        ...problems.map((p) => `  vs ${p.against} (${p.where}):\n    ${p.errors.slice(0, 12).join("\n    ")}`),
      ].join("\n"),
    )
    .join("\n\n");
}

export const INIT_PARAMS = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "agentd-conformance", version: "0.0.0" },
};

export { acp };

// An ACP client for agentd built on the official ACP TypeScript SDK (@agentclientprotocol/sdk 2.4.0).
// It spawns agentd, lets the SDK do the JSON-RPC (ids, framing, typed methods), and runs one turn:
// initialize, session/new, session/prompt, printing the agent's text as it streams, tool calls, and the
// stop reason. Permission requests are refused unless --yes is given.
// Setup: (cd examples/node && npm ci). Usage:
//   node examples/node/client.mjs [--agentd PATH] [--cwd DIR] [--yes] [--demo] [--db PATH] "prompt"
import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as acp from "@agentclientprotocol/sdk";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    agentd: { type: "string", default: process.env.AGENTD ?? path.join(here, "../../build/default/daemon/agentd") },
    cwd: { type: "string", default: process.cwd() },
    yes: { type: "boolean", default: false },
    demo: { type: "boolean", default: false },
    db: { type: "string" },
  },
});
const promptText = positionals[0] ?? "What is in this project?";
const cwd = path.resolve(opts.cwd);

const args = [...(opts.demo ? ["--demo"] : []), ...(opts.db ? ["--db", opts.db] : [])];
// A relative path means relative to here, not to --cwd (where agentd runs); a bare name is looked up in PATH.
const command = opts.agentd.includes("/") ? path.resolve(opts.agentd) : opts.agentd;
const agentd = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => agentd.once("exit", (code, signal) => resolve(code ?? signal)));
agentd.once("error", (e) => {
  console.error(`client.mjs: cannot start ${opts.agentd}: ${e.message}`);
  process.exit(1);
});

const write = (text) => process.stdout.write(text);
// The SDK's client app: handlers for what agentd may ask of us, and for its notifications.
const app = acp
  .client({ name: "agentd-example-node" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const wanted = opts.yes ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
    const option = params.options.find((o) => wanted.includes(o.kind));
    write(`\n[permission asked: ${params.toolCall.title} -> ${opts.yes ? "allowed" : "refused"}]\n`);
    return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const u = params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") write(u.content.text);
    else if (u.sessionUpdate === "tool_call") write(`\n[tool call ${u.title} (${u.kind ?? "other"}): ${u.status ?? "pending"}]\n`);
    else if (u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))
      write(`[tool call ${u.toolCallId}: ${u.status}]\n`);
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(agentd.stdin), Readable.toWeb(agentd.stdout)));
const agent = connection.agent;

let status = 0;
try {
  const init = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "client.mjs", version: "1" },
  });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  write(`${init.agentInfo?.name} ${init.agentInfo?.version}, ACP ${init.protocolVersion}; session ${sessionId} in ${cwd}\n`);
  write(`> ${promptText}\n`);
  const result = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: promptText }],
  });
  write(`\nstop reason: ${result.stopReason}\n`);
} catch (e) {
  console.error(`\nclient.mjs: ${e?.message ?? e}`);
  status = 1;
}
// Closing agentd's stdin is a clean shutdown.
agentd.stdin.end();
const code = await exited;
connection.close();
process.exit(status || (code === 0 ? 0 : 1));

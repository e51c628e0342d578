#!/usr/bin/env python3
"""A complete ACP client for agentd in one file, Python 3 standard library only.

It starts agentd as a subprocess, does the handshake (initialize), opens a session (session/new), sends one
prompt (session/prompt) and prints what streams back: the agent's text as it arrives, each tool call and its
status, and the stop reason. agentd's requests to the client are answered too: session/request_permission
with allow or reject (--yes / --no), fs/read_text_file and fs/write_text_file inside the session directory.
A reader thread owns agentd's stdout; the main thread writes requests and waits on their answers.

Usage: python3 examples/python/acp_client.py [--agentd PATH] [--cwd DIR] [--yes | --no] [--demo] "prompt"
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_AGENTD = HERE.parent.parent / "build" / "default" / "daemon" / "agentd"


class AgentError(Exception):
    """A JSON-RPC error answered by agentd, or agentd going away."""


class AcpClient:
    """JSON-RPC 2.0 over agentd's stdio, one JSON message per line."""

    def __init__(self, argv, cwd, allow, timeout=120.0):
        self.cwd = Path(cwd).resolve()
        self.allow = allow
        self.timeout = timeout
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr, cwd=self.cwd
        )
        self.next_id = 0
        self.pending = {}  # request id -> queue.Queue that gets the response message
        self.lock = threading.Lock()  # guards next_id, pending and writes to stdin
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    # --- writing ---------------------------------------------------------------------------------
    def _write(self, message):
        line = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        with self.lock:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):  # agentd has exited, or we closed its input
                raise AgentError(f"agentd is not running (exit status {self.proc.poll()})") from None

    def request(self, method, params):
        """Sends a request and blocks until its response; returns the result or raises AgentError."""
        answer = queue.Queue(maxsize=1)
        with self.lock:
            request_id = self.next_id
            self.next_id += 1
            self.pending[request_id] = answer
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            message = answer.get(timeout=self.timeout)
        except queue.Empty:
            raise AgentError(f"{method}: no answer within {self.timeout:.0f} s") from None
        if message is None:
            raise AgentError(f"{method}: agentd closed its output (exit status {self.proc.poll()})")
        if "error" in message:
            error = message["error"]
            raise AgentError(f"{method} failed: {error.get('message')} (code {error.get('code')})")
        return message["result"]

    def close(self):
        """Closing stdin is a clean shutdown for agentd; returns its exit status."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    # --- reading (the reader thread) -------------------------------------------------------------
    def _read_loop(self):
        for raw in self.proc.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                print(f"\n[not JSON from agentd: {raw[:200]!r}]", file=sys.stderr)
                continue
            if "method" not in message:  # a response to one of our requests
                with self.lock:
                    waiter = self.pending.pop(message.get("id"), None)
                if waiter is not None:
                    waiter.put(message)
            elif "id" in message:  # a request from agentd to us
                self._answer(message)
            elif message["method"] == "session/update":
                show_update(message["params"]["update"])
        with self.lock:  # agentd is gone: wake everyone still waiting
            waiters, self.pending = list(self.pending.values()), {}
        for waiter in waiters:
            waiter.put(None)

    def _answer(self, message):
        method, params = message["method"], message.get("params", {})
        try:
            result = self._serve(method, params)
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        except Exception as error:  # noqa: BLE001 - any failure becomes a JSON-RPC error for agentd
            code = -32601 if isinstance(error, NotImplementedError) else -32603
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": str(error)}})

    def _serve(self, method, params):
        if method == "session/request_permission":
            wanted = ("allow_once", "allow_always") if self.allow else ("reject_once", "reject_always")
            option = next((o for o in params["options"] if o["kind"] in wanted), None)
            title = params["toolCall"].get("title", "a tool call")
            print(f"\n[permission asked: {title} -> {'allowed' if self.allow else 'refused'}]", flush=True)
            if option is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        if method == "fs/read_text_file":
            print(f"\n[agentd reads {params['path']} through the client]", flush=True)
            text = self._inside(params["path"]).read_text(encoding="utf-8")
            line, limit = params.get("line"), params.get("limit")
            if line is not None or limit is not None:
                lines = text.splitlines(keepends=True)
                start = max((line or 1) - 1, 0)
                text = "".join(lines[start : start + limit if limit is not None else None])
            return {"content": text}
        if method == "fs/write_text_file":
            self._inside(params["path"]).write_text(params["content"], encoding="utf-8")
            return {}
        raise NotImplementedError(f"method not found: {method}")

    def _inside(self, path):
        """A client should only serve files in the session's directory."""
        resolved = Path(path).resolve()
        if resolved != self.cwd and self.cwd not in resolved.parents:
            raise PermissionError(f"{path} is outside {self.cwd}")
        return resolved


def show_update(update):
    """Prints one session/update as it arrives."""
    kind = update.get("sessionUpdate")
    if kind == "agent_message_chunk" and update["content"].get("type") == "text":
        print(update["content"]["text"], end="", flush=True)
    elif kind == "agent_thought_chunk" and update["content"].get("type") == "text":
        text = update["content"]["text"]
        print(f"\x1b[2m{text}\x1b[0m" if sys.stdout.isatty() else text, end="", flush=True)
    elif kind == "tool_call":
        print(f"\n[tool call {update.get('title')} ({update.get('kind', 'other')}): {update.get('status', 'pending')}]",
              flush=True)
    elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
        print(f"[tool call {update['toolCallId']}: {update['status']}]", flush=True)
    elif kind == "plan":
        for entry in update.get("entries", []):
            print(f"\n[plan: {entry.get('status')}: {entry.get('content')}]", end="", flush=True)


def main():
    parser = argparse.ArgumentParser(description="One agentd turn over ACP, standard library only.")
    parser.add_argument("prompt", help="what to ask")
    parser.add_argument("--agentd", default=os.environ.get("AGENTD", str(DEFAULT_AGENTD)),
                        help="the agentd executable (default: $AGENTD, else build/default/daemon/agentd)")
    parser.add_argument("--cwd", default=".", help="the session's working directory (default: .)")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--yes", dest="allow", action="store_true", help="allow every permission request")
    answer.add_argument("--no", dest="allow", action="store_false", help="refuse them (the default)")
    parser.add_argument("--demo", action="store_true", help="run agentd --demo: a scripted model, no API key")
    parser.add_argument("--db", help="agentd's database (default: agentd's own default)")
    args = parser.parse_args()

    # A relative path means relative to here, not to --cwd (where agentd runs); a bare name is looked up in PATH.
    agentd = os.path.abspath(args.agentd) if os.sep in args.agentd else args.agentd
    argv = [agentd] + (["--demo"] if args.demo else []) + (["--db", args.db] if args.db else [])
    try:
        client = AcpClient(argv, args.cwd, args.allow)
    except OSError as error:
        sys.exit(f"acp_client: cannot start {args.agentd}: {error}")
    status = 0
    try:
        init = client.request("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False},
            "clientInfo": {"name": "acp_client.py", "version": "1"},
        })
        info = init.get("agentInfo", {})
        session = client.request("session/new", {"cwd": str(client.cwd), "mcpServers": []})
        print(f"{info.get('name')} {info.get('version')}, ACP {init['protocolVersion']}; "
              f"session {session['sessionId']} in {client.cwd}\n> {args.prompt}", flush=True)
        result = client.request("session/prompt", {
            "sessionId": session["sessionId"],
            "prompt": [{"type": "text", "text": args.prompt}],
        })
        print(f"\nstop reason: {result['stopReason']}")
    except AgentError as error:
        print(f"\nacp_client: {error}", file=sys.stderr)
        status = 1
    finally:
        exit_status = client.close()
    sys.exit(status or (1 if exit_status else 0))


if __name__ == "__main__":
    main()

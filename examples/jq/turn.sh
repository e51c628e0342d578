#!/usr/bin/env bash
# One agent turn over ACP, with jq doing all the JSON: jq builds every request (so any prompt text is escaped
# correctly) and picks apart every message agentd sends. It runs initialize, session/new and one
# session/prompt in a scratch copy of examples/demo/workspace, prints the agent's text as it streams in, the
# tool calls, and the stop reason. Permission requests are refused, so nothing is changed.
# Without ANTHROPIC_API_KEY or OPENAI_API_KEY it runs `agentd --demo` (a scripted mock model) and says so.
# examples/turn.sh is the same turn in plain bash + sed (no jq), with colours and a /cost summary.
# Usage: examples/jq/turn.sh [path/to/agentd] "prompt"     ($AGENTD names agentd when no path is given)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 2 ]; then
  agentd=$1 prompt=$2
else
  agentd=${AGENTD:-$here/../../build/default/daemon/agentd} prompt=${1:-"What is in this project?"}
fi
command -v jq >/dev/null || { echo "jq/turn.sh: jq is not installed" >&2; exit 1; }
[ -x "$agentd" ] || { echo "jq/turn.sh: $agentd not found; build first or set AGENTD" >&2; exit 1; }

workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cp -r "$here/../demo/workspace" "$workdir/project"
project=$(cd "$workdir/project" && pwd -P)

mode=()
if [ -z "${ANTHROPIC_API_KEY:-}" ] && [ -z "${OPENAI_API_KEY:-}" ]; then
  mode=(--demo)
  echo "jq/turn.sh: no API key set: using agentd --demo, a SCRIPTED mock model" >&2
fi
coproc AGENTD { exec "$agentd" "${mode[@]}" --db "$workdir/agentd.db" 2>"$workdir/agentd.log"; }

# send METHOD ID PARAMS_JSON: one JSON-RPC request (ID "" makes a notification).
send() {
  jq -nc --arg method "$1" --arg id "$2" --argjson params "$3" \
    '{jsonrpc: "2.0", method: $method, params: $params} + (if $id == "" then {} else {id: ($id | tonumber)} end)' \
    >&"${AGENTD[1]}"
}
reply() { jq -nc --argjson id "$1" --argjson result "$2" '{jsonrpc: "2.0", id: $id, result: $result}' >&"${AGENTD[1]}"; }
# receive: the next message into $msg, or fail with agentd's log.
receive() {
  if ! IFS= read -r -t 120 msg <&"${AGENTD[0]}"; then
    echo "jq/turn.sh: no message from agentd within 120 s; its log:" >&2
    sed 's/^/  /' "$workdir/agentd.log" >&2
    exit 1
  fi
}
# await ID: read until the response to request ID; its result goes to $result, its error ends the script.
# (No $(...) around it: bash does not pass coproc descriptors to subshells.)
await() {
  while receive; do
    [ "$(jq -r '.id // empty | tostring' <<<"$msg")" = "$1" ] || continue
    if jq -e 'has("error")' <<<"$msg" >/dev/null; then
      echo "jq/turn.sh: request $1 failed: $(jq -c .error <<<"$msg")" >&2
      exit 1
    fi
    result=$(jq -c .result <<<"$msg")
    return
  done
}

send initialize 0 '{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"jq/turn.sh","version":"1"}}'
await 0
agent=$(jq -r '"\(.agentInfo.name) \(.agentInfo.version), ACP \(.protocolVersion)"' <<<"$result")
send session/new 1 "$(jq -nc --arg cwd "$project" '{cwd: $cwd, mcpServers: []}')"
await 1
session=$(jq -r .sessionId <<<"$result")
echo "$agent; session $session in $project"
echo "> $prompt"

send session/prompt 2 "$(jq -nc --arg s "$session" --arg text "$prompt" '{sessionId: $s, prompt: [{type: "text", text: $text}]}')"
while receive; do
  kind=$(jq -r 'if .method then .method elif .id == 2 then "done" else "other" end' <<<"$msg")
  case $kind in
    session/update)
      # One jq call turns any update into the text to show (raw, no trailing newline added).
      jq -j '.params.update | if .sessionUpdate == "agent_message_chunk" and .content.type == "text" then .content.text
             elif .sessionUpdate == "tool_call" then "\n[tool \(.title) (\(.kind // "other")): \(.status // "pending")]\n"
             elif .sessionUpdate == "tool_call_update" and (.status == "completed" or .status == "failed")
               then "[tool \(.toolCallId): \(.status)]\n"
             else empty end' <<<"$msg" ;;
    session/request_permission)
      echo "[permission asked: $(jq -r .params.toolCall.title <<<"$msg") - refused]"
      # The option whose kind is reject_once; the optionId is agentd's to choose.
      reply "$(jq .id <<<"$msg")" "$(jq -c '{outcome: {outcome: "selected",
        optionId: ([.params.options[] | select(.kind == "reject_once")][0].optionId)}}' <<<"$msg")" ;;
    done)
      if jq -e 'has("error")' <<<"$msg" >/dev/null; then
        echo; echo "jq/turn.sh: turn failed: $(jq -r .error.message <<<"$msg")" >&2
        exit 1
      fi
      printf '\nstop reason: %s\n' "$(jq -r .result.stopReason <<<"$msg")"
      break ;;
    *)
      # Any other request (fs/*, terminal/*: not offered in initialize) gets an error, so agentd never waits.
      if jq -e 'has("id") and has("method")' <<<"$msg" >/dev/null; then
        jq -c '{jsonrpc: "2.0", id: .id, error: {code: -32601, message: "method not found: \(.method)"}}' \
          <<<"$msg" >&"${AGENTD[1]}"
      fi ;;
  esac
done

# Closing agentd's stdin ends the session cleanly (exit 0).
# shellcheck disable=SC1083,SC2093 # {var}>&- closes the descriptor in $var (bash 4.1+)
exec {AGENTD[1]}>&-
wait "$AGENTD_PID"

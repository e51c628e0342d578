#!/usr/bin/env bash
# The main job: one real agent turn over ACP, streamed to the terminal as it happens.
# Starts agentd in a scratch copy of examples/demo/workspace, opens a session, sends one prompt, and
# prints what agentd streams back: the answer text as it arrives, tool calls with their status, token
# usage, and the stop reason. With ANTHROPIC_API_KEY or OPENAI_API_KEY set it talks to that provider
# (AGENTD_MODEL picks the model); without one it runs `agentd --demo`, a scripted mock model, and says so.
# Permission requests (edits, commands) show what is asked (an edit's diff too, with jq installed). With a
# real model they are refused, so it cannot change anything; the demo's are allowed once, because its script
# is known and it works on a scratch copy: it reads calc.py, edits it, and runs the tests with `verify`.
# Usage: examples/turn.sh ["prompt"] [path/to/agentd]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prompt=${1:-"What is in this project, and is there a bug in it?"}
agentd=${2:-$here/../build/default/daemon/agentd}
if [ ! -x "$agentd" ]; then
  echo "turn: $agentd not found; build first (scripts/build.sh)" >&2
  exit 1
fi
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cp -r "$here/demo/workspace" "$workdir/project"
project=$(cd "$workdir/project" && pwd -P)

mode=() answer=reject_once verdict="refused by turn.sh"
if [ -z "${ANTHROPIC_API_KEY:-}" ] && [ -z "${OPENAI_API_KEY:-}" ]; then
  mode=(--demo) answer=allow_once verdict="allowed once (the demo's known script, on a scratch copy)"
  echo "turn: no ANTHROPIC_API_KEY or OPENAI_API_KEY set: using agentd --demo, a SCRIPTED mock model" >&2
fi

bold="" dim="" plain=""
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' dim=$'\033[2m' plain=$'\033[0m'; fi

coproc AGENTD { exec "$agentd" "${mode[@]}" --db "$workdir/agentd.db" 2>"$workdir/agentd.log"; }

send() { printf '%s\n' "$1" >&"${AGENTD[1]}"; }
# The value of a string field of a one-line JSON message (first occurrence), with JSON escapes decoded.
field() {
  local value
  value=$(printf '%s' "$1" | sed -n 's/.*"'"$2"'":"\(\([^"\\]\|\\.\)*\)".*/\1/p')
  printf '%b' "${value//\\\//\/}"
}
receive() {
  if ! IFS= read -r -t 120 line <&"${AGENTD[0]}"; then
    echo "turn: no message from agentd within 120 s; its log:" >&2
    sed 's/^/  /' "$workdir/agentd.log" >&2
    exit 1
  fi
}

# An edit's diff from a permission request (ACP diff content: the file's whole old and new text), as
# `diff -u` prints it; needs jq, silently nothing without it.
show_diff() {
  command -v jq >/dev/null || return 0
  local count i path
  count=$(printf '%s' "$1" | jq '[.params.toolCall.content[]? | select(.type == "diff")] | length' 2>/dev/null) || return 0
  for ((i = 0; i < count; i++)); do
    path=$(printf '%s' "$1" | jq -r "[.params.toolCall.content[] | select(.type == \"diff\")][$i].path")
    diff -u --label "a/${path#"$project"/}" --label "b/${path#"$project"/}" \
      <(printf '%s' "$1" | jq -j "[.params.toolCall.content[] | select(.type == \"diff\")][$i].oldText // \"\"") \
      <(printf '%s' "$1" | jq -j "[.params.toolCall.content[] | select(.type == \"diff\")][$i].newText") |
      sed "s/^/  /" || true  # diff exits 1 when the texts differ, which they do
  done
}

send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"turn.sh","version":"1"}}}'
receive
send '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"'"$project"'","mcpServers":[]}}'
until receive && [[ $line == *'"id":1,'* ]]; do :; done
session=$(field "$line" sessionId)
[ -n "$session" ] || { echo "turn: session/new failed: $line" >&2; exit 1; }
printf '%ssession %s in %s%s\n\n%s> %s%s\n\n' "$dim" "$session" "$project" "$plain" "$bold" "$prompt" "$plain"

escaped=$(printf '%s' "$prompt" | sed 's/\\/\\\\/g; s/"/\\"/g')
send '{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"'"$session"'","prompt":[{"type":"text","text":"'"$escaped"'"}]}}'
status=0
while receive; do
  case $line in
    *'"id":2,"result"'*)
      printf '\n\n%sstop reason: %s%s\n' "$bold" "$(field "$line" stopReason)" "$plain"
      # What agentd itself saw run (not the model's account of it), when the turn changed files.
      verification=$(field "$line" summary)
      [ -z "$verification" ] || printf '%s%s%s\n' "$bold" "$verification" "$plain"
      break ;;
    *'"id":2,"error"'*)
      printf '\n\nturn failed: %s\n' "$(field "$line" message)" >&2
      status=1
      break ;;
    *'"method":"session/request_permission"'*)
      id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\),"method".*/\1/p')
      printf '\n%s[permission asked: %s - %s]%s\n' "$dim" "$(field "$line" title)" "$verdict" "$plain"
      show_diff "$line"
      send '{"jsonrpc":"2.0","id":'"$id"',"result":{"outcome":{"outcome":"selected","optionId":"'"$answer"'"}}}' ;;
    *'"sessionUpdate":"agent_message_chunk"'*) printf '%s' "$(field "$line" text)" ;;
    *'"sessionUpdate":"agent_thought_chunk"'*) printf '%s%s%s' "$dim" "$(field "$line" text)" "$plain" ;;
    *'"sessionUpdate":"tool_call"'*) printf '\n%s[tool %s: %s]%s' "$dim" "$(field "$line" title)" "$(field "$line" status)" "$plain" ;;
    *'"sessionUpdate":"tool_call_update"'*'"status":"completed"'*) printf '\n%s[tool completed]%s\n' "$dim" "$plain" ;;
    *'"sessionUpdate":"tool_call_update"'*'"status":"failed"'*) printf '\n%s[tool failed]%s\n' "$dim" "$plain" ;;
    *'"sessionUpdate":"usage_update"'*)
      used=$(printf '%s' "$line" | sed -n 's/.*"used":\([0-9]*\).*/\1/p')
      size=$(printf '%s' "$line" | sed -n 's/.*"size":\([0-9]*\).*/\1/p')
      printf '\n%s[context %s of %s tokens]%s\n' "$dim" "$used" "$size" "$plain" ;;
  esac
done

# What the session cost, from agentd's ledger.
send '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"'"$session"'","prompt":[{"type":"text","text":"/cost"}]}}'
while receive; do
  case $line in
    *'"sessionUpdate":"agent_message_chunk"'*) printf '%s%s%s\n' "$dim" "$(field "$line" text)" "$plain" ;;
    *'"id":3,'*) break ;;
  esac
done

exec {AGENTD[1]}>&-
wait "$AGENTD_PID" || status=$?
exit "$status"

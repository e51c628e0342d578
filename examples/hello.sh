#!/usr/bin/env bash
# Starts agentd and holds a short JSON-RPC exchange with it over stdio, printing each message:
# the ACP handshake (initialize), an extension method (_agentd/ping), a method agentd does not
# serve yet, and a malformed line. Usage: examples/hello.sh [path/to/agentd]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
agentd=${1:-$here/../build/default/daemon/agentd}
if [ ! -x "$agentd" ]; then
  echo "hello: $agentd not found; build first (scripts/build.sh)" >&2
  exit 1
fi
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT

# agentd's stdout is protocol only; its log goes to stderr (here: a file, shown at the end).
coproc AGENTD { exec "$agentd" --db "$workdir/agentd.db" 2>"$workdir/agentd.log"; }

bold="" plain=""
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; fi

exchange() {
  printf '\n%s>>> %s%s\n' "$bold" "$1" "$plain"
  printf '%s\n' "$1" >&"${AGENTD[1]}"
  local reply
  if ! IFS= read -r -t 5 reply <&"${AGENTD[0]}"; then
    echo "hello: no answer from agentd within 5 s" >&2
    exit 1
  fi
  printf '<<< %s\n' "$reply"
}

exchange '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}},"clientInfo":{"name":"hello.sh","version":"1"}}}'
exchange '{"jsonrpc":"2.0","id":1,"method":"_agentd/ping"}'
exchange '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"'"$PWD"'","mcpServers":[]}}'
exchange '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"one"}}'
exchange 'this line is not JSON'

# End of input is a clean shutdown: agentd cancels what is running, flushes, and exits 0.
exec {AGENTD[1]}>&-
status=0
wait "$AGENTD_PID" || status=$?
printf '\nagentd exited with status %s; its log (stderr):\n' "$status"
sed 's/^/  /' "$workdir/agentd.log"
exit "$status"

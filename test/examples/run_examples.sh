#!/usr/bin/env bash
# Runs the main job (examples/turn.sh) and the client examples (examples/jq, examples/python, examples/node) against `agentd --demo` and checks
# what they print and what they leave on disk, and checks the editor configurations' syntax.
# Usage: test/examples/run_examples.sh path/to/agentd [all|turn|jq|python|node|editors]
# Exit: 0 all ran and passed, 1 something failed, 77 nothing failed but something was skipped (a tool is
# missing: jq, python3, node, the ACP SDK package, luac, emacs); each skip says why.
# Offline: the model is agentd-mock-model ($AGENTD_MOCK_MODEL, else agentd finds it in its build tree).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
agentd=${1:?usage: run_examples.sh path/to/agentd [all|turn|jq|python|node|editors]}
which=${2:-all}
agentd=$(cd "$(dirname "$agentd")" && pwd)/$(basename "$agentd")
[ -x "$agentd" ] || { echo "run_examples: $agentd is not an executable" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# No user config, no real provider: every run gets the scripted model.
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/config XDG_DATA_HOME=$tmp/home/data NO_COLOR=1
mkdir -p "$HOME"
unset ANTHROPIC_API_KEY OPENAI_API_KEY ANTHROPIC_BASE_URL OPENAI_BASE_URL AGENTD_MODEL AGENTD
demo_script=$root/examples/demo/script.json
permission_script=$root/test/examples/permission_script.json
marker="[scripted demo model]"

failed=0 skipped=0 passed=0
fail() { echo "FAIL [$current]: $*" >&2; failed=$((failed + 1)); }
skip() { echo "SKIP [$current]: $*"; skipped=$((skipped + 1)); }
ok() { echo "ok   [$current]: $*"; passed=$((passed + 1)); }
# expect FILE STRING WHAT: the run's output FILE contains STRING.
expect() {
  if grep -qF -- "$2" "$1"; then ok "$3"; else
    fail "$3: output lacks '$2'; output was:"
    sed 's/^/    /' "$1" >&2
  fi
}
# run NAME CMD...: runs CMD (stdout+stderr to $tmp/NAME.out) with a time limit; $status is its exit code.
run() {
  local name=$1
  shift
  out=$tmp/$name.out
  timeout 60 "$@" >"$out" 2>&1
  status=$?
  if [ "$status" -ne 0 ]; then
    fail "$name exited with $status; output:"
    sed 's/^/    /' "$out" >&2
  fi
}
# workspace NAME: a fresh copy of the demo workspace; prints its path.
workspace() {
  rm -rf "${tmp:?}/$1"
  cp -r "$root/examples/demo/workspace" "$tmp/$1"
  printf '%s' "$tmp/$1"
}

# The permission checks: the scripted model asks to write NOTES.md; a refusal must leave no file.
check_refused() { # NAME WORKSPACE
  expect "$out" "[permission asked: Write NOTES.md" "$1: the permission request is shown"
  expect "$out" ": failed]" "$1: the refused tool call is reported failed"
  if [ -e "$2/NOTES.md" ]; then fail "$1: refused, yet NOTES.md was written"; else ok "$1: refused, nothing written"; fi
}
check_allowed() { # NAME WORKSPACE
  expect "$out" "[permission asked: Write NOTES.md -> allowed]" "$1: the permission request is allowed"
  if [ "$(cat "$2/NOTES.md" 2>/dev/null)" = "written by the scripted model" ]; then ok "$1: allowed, NOTES.md written"
  else fail "$1: allowed, but NOTES.md is missing or wrong"; fi
}

test_jq() {
  current=jq
  if ! command -v jq >/dev/null; then skip "jq is not installed (apt-get install jq)"; return; fi
  # Quotes and a backslash in the prompt: jq must escape them, and agentd must accept the request.
  AGENTD_DEMO_SCRIPT=$demo_script run jq_demo "$root/examples/jq/turn.sh" "$agentd" 'say "hi" \ ok'
  expect "$out" "$marker" "jq: streams the demo model's text"
  expect "$out" '> say "hi" \ ok' "jq: the prompt round-trips"
  expect "$out" "[tool read_file (read): pending]" "jq: shows the tool call"
  expect "$out" "stop reason: end_turn" "jq: prints the stop reason"
  AGENTD="$agentd" AGENTD_DEMO_SCRIPT=$permission_script run jq_refuse "$root/examples/jq/turn.sh" "write it"
  expect "$out" "[permission asked: Write NOTES.md - refused]" "jq: \$AGENTD is honoured and permission is refused"
  expect "$out" ": failed]" "jq: the refused tool call is reported failed"
}

test_python() {
  current=python
  if ! command -v python3 >/dev/null; then skip "python3 is not installed"; return; fi
  local client=$root/examples/python/acp_client.py ws
  ws=$(workspace py_demo)
  AGENTD_DEMO_SCRIPT=$demo_script run py_demo python3 "$client" --agentd "$agentd" --demo --db "$tmp/py.db" --cwd "$ws" "hello"
  expect "$out" "$marker" "python: streams the demo model's text"
  expect "$out" "[tool call read_file (read): pending]" "python: shows the tool call"
  expect "$out" "stop reason: end_turn" "python: prints the stop reason"
  ws=$(workspace py_no)
  AGENTD_DEMO_SCRIPT=$permission_script run py_no python3 "$client" --agentd "$agentd" --demo --db "$tmp/py.db" --cwd "$ws" --no "write it"
  check_refused python "$ws"
  expect "$out" "[agentd reads $ws/calc.py through the client]" "python: serves fs/read_text_file"
  expect "$out" "[tool call toolu_mock_0001_1: completed]" "python: the read tool call completed"
  ws=$(workspace py_yes)
  AGENTD_DEMO_SCRIPT=$permission_script run py_yes python3 "$client" --agentd "$agentd" --demo --db "$tmp/py.db" --cwd "$ws" --yes "write it"
  check_allowed python "$ws"
}

test_node() {
  current=node
  if ! command -v node >/dev/null; then skip "node is not installed"; return; fi
  # The SDK: examples/node/node_modules (npm ci there), else test/conformance/node_modules, which pins the
  # same version. NODE_PATH does not reach ES module imports, so for the latter the client is copied next to
  # a node_modules link.
  local client=$root/examples/node/client.mjs sdk ws
  for sdk in "$root/examples/node/node_modules" "$root/test/conformance/node_modules"; do
    [ -f "$sdk/@agentclientprotocol/sdk/package.json" ] && break
    sdk=""
  done
  if [ -z "$sdk" ]; then
    skip "@agentclientprotocol/sdk is not installed: run (cd examples/node && npm ci)"
    return
  fi
  local want version
  want=$(jq -r '.dependencies["@agentclientprotocol/sdk"]' "$root/examples/node/package.json" 2>/dev/null ||
    sed -n 's/.*"@agentclientprotocol\/sdk": "\([^"]*\)".*/\1/p' "$root/examples/node/package.json")
  version=$(node -p "require('$sdk/@agentclientprotocol/sdk/package.json').version")
  [ "$version" = "$want" ] || { fail "the SDK in $sdk is $version, examples/node pins $want"; return; }
  if [ "$sdk" != "$root/examples/node/node_modules" ]; then
    mkdir -p "$tmp/node"
    cp "$client" "$tmp/node/client.mjs"
    ln -sfn "$sdk" "$tmp/node/node_modules"
    client=$tmp/node/client.mjs
  fi
  echo "     [node]: SDK $version from $sdk"
  ws=$(workspace node_demo)
  AGENTD_DEMO_SCRIPT=$demo_script run node_demo node "$client" --agentd "$agentd" --demo --db "$tmp/node.db" --cwd "$ws" "hello"
  expect "$out" "$marker" "node: streams the demo model's text"
  expect "$out" "[tool call read_file (read): pending]" "node: shows the tool call"
  expect "$out" "stop reason: end_turn" "node: prints the stop reason"
  ws=$(workspace node_no)
  AGENTD_DEMO_SCRIPT=$permission_script run node_no node "$client" --agentd "$agentd" --demo --db "$tmp/node.db" --cwd "$ws" "write it"
  check_refused node "$ws"
  ws=$(workspace node_yes)
  AGENTD_DEMO_SCRIPT=$permission_script run node_yes node "$client" --agentd "$agentd" --demo --db "$tmp/node.db" --cwd "$ws" --yes "write it"
  check_allowed node "$ws"
}

# The main job (README's first command): examples/turn.sh with the demo model plays the whole demo turn:
# reads calc.py, shows the edit's diff with the permission question, edits, runs the tests with verify,
# and prints agentd's own verification line.
test_turn() {
  current=turn
  # What agentd's verification probes too: `python3 -m pytest`, else a `pytest` on PATH.
  if ! python3 -m pytest --version >/dev/null 2>&1 && ! pytest --version >/dev/null 2>&1; then
    skip "pytest is not installed: the demo's tests cannot run"
    return
  fi
  AGENTD_DEMO_SCRIPT=$demo_script run turn "$root/examples/turn.sh" "Is there a bug in calc.py?" "$agentd"
  expect "$out" "no ANTHROPIC_API_KEY or OPENAI_API_KEY set: using agentd --demo" "turn: says the model is a script"
  expect "$out" "$marker" "turn: streams the demo model's text"
  expect "$out" "[tool read_file: pending]" "turn: shows the read"
  expect "$out" "[permission asked: Edit calc.py - allowed once" "turn: shows the permission question"
  if command -v jq >/dev/null; then
    expect "$out" '+        raise ValueError("div: division by zero")' "turn: shows the edit's diff"
  fi
  expect "$out" "stop reason: end_turn" "turn: prints the stop reason"
  expect "$out" "verified: \`" "turn: prints what agentd verified"
  expect "$out" "test_calc.py\` passed" "turn: the demo's edit makes the tests pass"
  expect "$out" "Session: " "turn: prints the session's cost"
}

test_editors() {
  current=editors
  local dir=$root/examples/editors
  if command -v python3 >/dev/null; then
    if python3 - "$dir/zed/settings.json" <<'EOF'; then ok "zed/settings.json is JSON with a custom agent_servers entry"; else fail "zed/settings.json"; fi
import json, sys
servers = json.load(open(sys.argv[1]))["agent_servers"]
for name, server in servers.items():
    assert server["type"] == "custom", name
    assert server["command"].endswith("/agentd"), name
    assert isinstance(server.get("args", []), list) and isinstance(server.get("env", {}), dict), name
assert "agentd" in servers
EOF
  else skip "python3 is not installed: zed/settings.json not checked"; fi
  local luac
  luac=$(command -v luac || command -v luac5.4 || command -v luac5.3 || command -v luac5.1 || true)
  if [ -n "$luac" ]; then
    if "$luac" -p "$dir/neovim/codecompanion.lua"; then ok "neovim/codecompanion.lua parses ($luac)"
    else fail "neovim/codecompanion.lua does not parse"; fi
  else skip "luac is not installed: neovim/codecompanion.lua not checked"; fi
  if command -v emacs >/dev/null; then
    # Reads every form (a syntax check; agent-shell itself is not needed for that) and checks the parens.
    if emacs --batch -Q --eval '(with-temp-buffer
        (insert-file-contents (car command-line-args-left))
        (emacs-lisp-mode) (check-parens) (goto-char (point-min))
        (condition-case nil (while t (read (current-buffer))) (end-of-file nil)))' "$dir/emacs/agent-shell.el" 2>"$tmp/emacs.err"
    then ok "emacs/agent-shell.el reads"; else fail "emacs/agent-shell.el: $(cat "$tmp/emacs.err")"; fi
    # Loads it against stand-ins with agent-shell's and acp.el's keyword signatures (agent_shell_stub.el).
    if emacs --batch -Q -l "$root/test/examples/agent_shell_stub.el" "$dir/emacs/agent-shell.el" >"$tmp/emacs.out" 2>&1
    then ok "emacs/agent-shell.el loads and builds its config and client"
    else fail "emacs/agent-shell.el against the stand-ins:"; sed 's/^/    /' "$tmp/emacs.out" >&2; fi
  else skip "emacs is not installed: emacs/agent-shell.el not checked"; fi
}

case $which in
  all) test_turn; test_jq; test_python; test_node; test_editors ;;
  turn | jq | python | node | editors) "test_$which" ;;
  *) echo "run_examples: unknown example '$which'" >&2; exit 2 ;;
esac
echo "run_examples ($which): $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
exit 0

#!/usr/bin/env bash
# Installs what building and testing agentd needs on Debian 12 (bookworm), as root (or via sudo).
# Idempotent, and quick when everything is already there: it asks dpkg first and apt only if needed.
set -euo pipefail

packages=(
  # toolchain
  cmake ninja-build g++ pkg-config ca-certificates git
  # libraries; Boost 1.81 exactly, NOT Debian's default 1.74 (Asio/Beast are header-only here)
  libboost1.81-dev libsimdjson-dev libfmt-dev libsqlite3-dev libssl-dev
  libre2-dev
  libstemmer-dev  # Snowball's English stemmer: the report's words match their other forms (BSD licensed)
  libedit-dev  # the agent CLI's line editing and history (BSD licensed)
  libcli11-dev  # command-line parsing of agentd and agent (header-only, BSD licensed)
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  ripgrep
  patch  # the oracle that applies edit_file's unified diffs
  # the sanitizer build and the fuzz targets (clang + its sanitizer and libFuzzer runtimes), the format
  # and tidy checks
  clang clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14
  python3-pytest  # the pytest fixture project of the verification tests
  jq              # examples/jq
  lua5.4 emacs-nox  # the syntax checks of the Neovim and Emacs configurations in examples/editors
)
# The ACP conformance test (test/conformance) needs node and npm. Debian's nodejs and npm when they are
# missing; a node that is already there is kept (NodeSource's nodejs bundles npm and conflicts with
# Debian's npm package, so asking dpkg for "npm" would replace it).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then packages+=(nodejs npm); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

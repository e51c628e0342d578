#!/usr/bin/env bash
# Configures and builds agentd (RelWithDebInfo, the `default` preset) into build/default.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default

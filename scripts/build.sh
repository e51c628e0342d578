#!/usr/bin/env bash
# Configures the `default` preset (RelWithDebInfo, into build/default) and builds what the main job needs
# and no more: agentd, the `agent` CLI and agentd-mock-model (the scripted model behind `--demo`). The
# tests and benchmarks are in the same build tree, built by scripts/test.sh (or `cmake --build --preset
# default`) when they are wanted; leaving them out here takes the first build from the whole tree's
# 285 compiles to the 147 these three need.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default --target agentd agent agentd-mock-model

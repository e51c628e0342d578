#!/usr/bin/env bash
# The whole test suite, as CI runs it: format and layering checks, the default build with every test,
# the unit and transcript tests again under ASan+UBSan, the fuzz targets for a bounded time, and a
# smoke run of the benchmarks. Prints the time each stage took.
#   AGENTD_FUZZ_SECONDS   seconds per fuzz target (default 60; 0 skips fuzzing)
#   AGENTD_SKIP_ASAN=1    skip the sanitizer stage (for quick local runs)
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds=${AGENTD_FUZZ_SECONDS:-60}
jobs=$(nproc)
declare -a stage_names=() stage_times=()
suite_start=$(date +%s)

stage() {
  local name=$1
  shift
  echo
  echo "=== stage: $name"
  local start
  start=$(date +%s)
  "$@"
  local took=$(($(date +%s) - start))
  stage_names+=("$name")
  stage_times+=("$took")
  echo "=== stage: $name done in ${took}s"
}

check_format() {
  local files
  mapfile -t files < <(git ls-files '*.cpp' '*.h' ':!test/fixtures' 2>/dev/null || find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.h' \) -print)
  local formatter=clang-format
  command -v clang-format >/dev/null || formatter=clang-format-14
  "$formatter" --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files clean"
}

build_default() {
  cmake --preset default >/dev/null
  cmake --build --preset default -j "$jobs"
}

test_default() { ctest --preset default -j "$jobs"; }

# clang-tidy (.clang-tidy at the root) over our own sources, with the default build's compile
# database; any finding fails the stage. The two files that only instantiate Asio/Beast are skipped.
tidy() {
  local tidy_bin=clang-tidy
  command -v clang-tidy >/dev/null || tidy_bin=clang-tidy-14
  git ls-files 'core/*.cpp' 'protocol/*.cpp' 'storage/*.cpp' 'tools/*.cpp' 'daemon/*.cpp' |
    grep -v -e 'asio_impl.cpp' -e 'beast_impl.cpp' |
    xargs -P "$jobs" -n 4 "$tidy_bin" -p build/default --quiet --warnings-as-errors='*' 2>/dev/null
  echo "tidy: clean"
}

build_asan() {
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
}

# Under ASan the process tests still run the (sanitized) real binary.
test_asan() { ctest --preset asan -j "$jobs"; }

fuzz() {
  if ! command -v clang++ >/dev/null; then
    echo "fuzz: clang++ not found, skipped"
    return
  fi
  cmake --preset fuzz >/dev/null
  local targets=(jsonrpc_fuzz gitignore_fuzz edit_fuzz)
  [ -f test/fuzz/sse_fuzz.cpp ] && targets+=(sse_fuzz)
  cmake --build --preset fuzz -j "$jobs" --target "${targets[@]}"
  # Seeds: our own corpus for the protocol, the SSE fixtures for the stream decoders.
  declare -A seeds=([jsonrpc_fuzz]=test/fuzz/corpus/jsonrpc [sse_fuzz]=test/fixtures/sse [gitignore_fuzz]=test/fuzz/corpus/gitignore [edit_fuzz]=test/fuzz/corpus/edit)
  for t in "${targets[@]}"; do
    local corpus
    corpus=$(mktemp -d)
    echo "fuzz: $t for ${fuzz_seconds}s"
    # One worker: CI has two cores, and the other one keeps the machine responsive.
    local log="$corpus.log"
    if ! build/fuzz/test/fuzz/"$t" -max_total_time="$fuzz_seconds" -print_final_stats=1 -timeout=10 \
      -rss_limit_mb=4096 "$corpus" ${seeds[$t]:-} >"$log" 2>&1; then
      tail -n 80 "$log"
      echo "fuzz: $t FAILED (the crashing input is saved as crash-* in $(pwd))"
      return 1
    fi
    tail -n 6 "$log"
    rm -rf "$corpus" "$log"
  done
}

# ACP v1 conformance with the published client SDK (test/conformance/README.md): every message agentd
# writes is validated against the schema the pinned SDK ships.
# The npm packages the tests use, pinned by test/conformance/package-lock.json (the ACP SDK, the MCP
# reference servers) and examples/node/package-lock.json: installed before the tests, which skip, saying
# so, where they are missing.
npm_deps() {
  (cd test/conformance && npm ci --no-audit --no-fund)
  if [ -f examples/node/package-lock.json ]; then (cd examples/node && npm ci --no-audit --no-fund); fi
}

conformance() {
  (
    cd test/conformance
    AGENTD_BIN="$PWD/../../build/default/daemon/agentd" \
      AGENTD_MOCK_MODEL="$PWD/../../build/default/test/mock_model/agentd-mock-model" \
      node --test
  )
}

bench_smoke() {
  local ran=0
  for b in build/default/bench/agentd_bench_*; do
    [ -x "$b" ] || continue
    "$b" --quick
    ran=1
  done
  ((ran)) || echo "bench: no benchmarks built"
}

stage "format check" check_format
stage "include rules" scripts/check_includes.sh
stage "build (default)" build_default
stage "npm packages" npm_deps
stage "tests (default)" test_default
stage "conformance" conformance
stage "clang-tidy" tidy
if [ "${AGENTD_SKIP_ASAN:-0}" != 1 ]; then
  stage "build (asan)" build_asan
  stage "tests (asan)" test_asan
fi
if [ "$fuzz_seconds" != 0 ]; then stage "fuzz" fuzz; fi
stage "bench smoke" bench_smoke

echo
echo "=== timings"
for i in "${!stage_names[@]}"; do printf '  %-18s %5ss\n' "${stage_names[$i]}" "${stage_times[$i]}"; done
printf '  %-18s %5ss\n' "total" "$(($(date +%s) - suite_start))"

#!/usr/bin/env bash
# The whole test suite, as CI runs it: format and layering checks, the default build (GCC, optimised)
# with the tests that run the engine and the binaries, clang-tidy on what changed, one clang sanitizer
# build (ASan+UBSan, with libFuzzer's coverage) that runs every test and whose fuzz targets run for a
# bounded time, and a smoke run of the benchmarks. Prints the time each stage took.
#   AGENTD_FUZZ_SECONDS   seconds per fuzz target (default 60; 0 skips fuzzing)
#   AGENTD_SKIP_ASAN=1    skip the sanitizer build, its tests and fuzzing (for quick local runs: the
#                         library unit tests then do not run; the debug preset has them too)
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

# The security suite runs in its own stage (below), whole, so its table of attacks prints once.
test_default() { ctest --preset default -j "$jobs" -LE security; }

security() { build/default/test/security/security_tests; }

# clang-tidy over our own sources with the default build's compile database, skipping the files whose
# verdict cannot have changed since they were found clean (scripts/tidy.py says how it knows).
tidy() { python3 scripts/tidy.py build/default; }

build_asan() {
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
}

# Under ASan the process tests run the (sanitized) real binary.
test_asan() { ctest --preset asan -j "$jobs"; }

# The fuzz targets come from the sanitizer build, two at a time (one per core). Seeds: the target's own
# corpus under test/fuzz/corpus/, and the SSE fixtures for the stream decoders.
fuzz_one() {
  local t=$1 seeds=test/fuzz/corpus/${1%_fuzz}
  [ "$t" = sse_fuzz ] && seeds=test/fixtures/sse
  [ -d "$seeds" ] || seeds=
  local corpus log
  corpus=$(mktemp -d)
  log="$corpus.log"
  if ! build/asan/test/fuzz/"$t" -max_total_time="$fuzz_seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$PWD/fuzz-$t-" "$corpus" $seeds >"$log" 2>&1; then
    tail -n 80 "$log"
    echo "fuzz: $t FAILED (the crashing input is saved as $PWD/fuzz-$t-*)"
    return 1
  fi
  echo "fuzz: $t: $(grep -aE '^stat::number_of_executed_units' "$log" | awk '{print $2}') executions in ${fuzz_seconds}s," \
    "coverage $(grep -aoE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)"
  rm -rf "$corpus" "$log"
}
export -f fuzz_one

fuzz() {
  local targets=()
  for t in build/asan/test/fuzz/*_fuzz; do [ -x "$t" ] && targets+=("$(basename "$t")"); done
  ((${#targets[@]})) || { echo "fuzz: no fuzz targets built"; return 1; }
  echo "fuzz: ${targets[*]}, ${fuzz_seconds}s each, $jobs at a time"
  printf '%s\n' "${targets[@]}" | fuzz_seconds=$fuzz_seconds xargs -P "$jobs" -I{} bash -c 'fuzz_one "$1"' _ {}
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
stage "security" security
stage "conformance" conformance
stage "clang-tidy" tidy
if [ "${AGENTD_SKIP_ASAN:-0}" != 1 ]; then
  stage "build (asan)" build_asan
  stage "tests (asan)" test_asan
  if [ "$fuzz_seconds" != 0 ]; then stage "fuzz" fuzz; fi
fi
stage "bench smoke" bench_smoke

echo
echo "=== timings"
for i in "${!stage_names[@]}"; do printf '  %-18s %5ss\n' "${stage_names[$i]}" "${stage_times[$i]}"; done
printf '  %-18s %5ss\n' "total" "$(($(date +%s) - suite_start))"

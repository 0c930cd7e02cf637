#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, in their own build
# directory) and runs each one for a while, starting from the seeds in
# tests/fuzz/corpus/<target>/. Fails on any crash, leak, timeout, out-of-memory
# or sanitizer report; the input that caused it is kept in
# BUILD/fuzz-artifacts/. Prints executions and coverage per target.
#
# usage: scripts/fuzz.sh [--smoke] [BUILD_DIR]
#   --smoke      30 s per target (make check); otherwise FUZZ_SECONDS (default 300)
#   FUZZ_JOBS    targets run at once (default 2); FUZZ_TARGETS: a subset
#   BUILD_DIR    default: build-fuzz
# The corpus a run grows is kept in BUILD_DIR/fuzz-corpus/<target>/ (the
# committed seeds are not touched).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-300}
if [ "${1:-}" = "--smoke" ]; then
  seconds=${FUZZ_SMOKE_SECONDS:-30}
  shift
fi
build=${1:-build-fuzz}

echo "== fuzz: clang build in $build"
if [ ! -f "$build/build.ninja" ]; then
  # werror off here only: clang warns about things gcc does not; the gcc
  # builds keep -Werror.
  CC=clang meson setup "$build" -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dwerror=false -Dc_args=-fsanitize=fuzzer-no-link
fi
targets=(record ktls-cmsg handshake-server handshake-client)
# The file server's HTTP parser is fuzzed when the tree has it (issue 5).
if [ -f examples/http_request.c ]; then
  targets+=(http-request)
fi
# FUZZ_TARGETS="record http-request" runs only those.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
fi
ninja -C "$build" $(printf 'tests/fuzz/fuzz-%s ' "${targets[@]}")

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
mkdir -p "$build/fuzz-artifacts"
# Targets run FUZZ_JOBS at a time (default 2), each single-process.
jobs=${FUZZ_JOBS:-2}
run_one() {
  local t=$1 corpus="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" max_len=8192
  [ "$t" = record ] && max_len=65536
  [ "$t" = ktls-cmsg ] && max_len=16384
  mkdir -p "$corpus"
  local rc=0
  "$build/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" \
    "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  echo "$rc" >"$log.rc"
}
echo "== fuzz: ${targets[*]}, ${seconds}s each, $jobs at a time"
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
wait

summary=()
failed=0
for t in "${targets[@]}"; do
  log="$build/fuzz-$t.log"
  rc=$(cat "$log.rc" 2>/dev/null || echo 99)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  corp=$(ls "$build/fuzz-corpus/$t" | wc -l)
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "fuzz-$t FAILED (status $rc):"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -20 || true
    tail -40 "$log"
    summary+=("fuzz-$t: FAILED, see $log")
  else
    summary+=("fuzz-$t: ok, ${execs:-?} executions in ${seconds}s, ${cov:-cov: ?} (edges, features), corpus $corp inputs")
  fi
done
echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
exit "$failed"

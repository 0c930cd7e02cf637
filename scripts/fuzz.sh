#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, in their own build
# directory) and runs each one for a while, starting from the seeds in
# tests/fuzz/corpus/<target>/. Fails on any crash, leak, timeout, out-of-memory
# or sanitizer report; the input that caused it is kept in
# BUILD/fuzz-artifacts/. Prints executions and coverage per target.
#
# usage: scripts/fuzz.sh [--smoke] [BUILD_DIR]
#   --smoke      20 s per target (make check); otherwise FUZZ_SECONDS (default 300)
#   FUZZ_JOBS    targets run at once (default 2); FUZZ_TARGETS: a subset
#   FUZZ_COVERAGE=1 (the default without --smoke): then replays each target's
#                corpus in a source-coverage build (BUILD_DIR-cov, clang
#                -fprofile-instr-generate) and prints llvm-cov's line and
#                branch coverage of the code the target is for
#   BUILD_DIR    default: build-fuzz
# The corpus a run grows is kept in BUILD_DIR/fuzz-corpus/<target>/ (the
# committed seeds are not touched).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-300}
coverage=${FUZZ_COVERAGE:-1}
if [ "${1:-}" = "--smoke" ]; then
  seconds=${FUZZ_SMOKE_SECONDS:-20}
  coverage=${FUZZ_COVERAGE:-0}
  shift
fi
build=${1:-build-fuzz}

echo "== fuzz: clang build in $build"
if [ ! -f "$build/build.ninja" ]; then
  # werror off here only: clang warns about things gcc does not; the gcc
  # builds keep -Werror.
  CC=clang meson setup "$build" -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dwerror=false -Dtests=enabled -Dexamples=enabled \
    -Dc_args=-fsanitize=fuzzer-no-link
fi
targets=(record ktls-cmsg handshake-server handshake-client handshake-live session
  ticket-keyfile engine-server)
# The file server's HTTP parser is fuzzed when the tree has it (issue 5).
if [ -f examples/http_request.c ]; then
  targets+=(http-request)
fi
# FUZZ_TARGETS="record http-request" runs only those.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
fi
binaries=()
for t in "${targets[@]}"; do binaries+=("tests/fuzz/fuzz-$t"); done
ninja -C "$build" "${binaries[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
mkdir -p "$build/fuzz-artifacts"
# Targets run FUZZ_JOBS at a time (default 2), each single-process.
jobs=${FUZZ_JOBS:-2}
run_one() {
  local t=$1 corpus="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" max_len=8192
  [ "$t" = record ] && max_len=65536
  [ "$t" = ktls-cmsg ] && max_len=16384
  # One byte past SOTLS_SESSION_MAX, the largest session sotls keeps.
  [ "$t" = session ] && max_len=16385
  # Room for more than SOTLS_TICKET_KEYS_MAX (64) key lines of 150 bytes.
  [ "$t" = ticket-keyfile ] && max_len=16384
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
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    summary+=("fuzz-$t: ok, ${execs:-?} executions in ${seconds}s (${rate:-?}/s), ${cov:-cov: ?} (edges, features), corpus $corp inputs")
  fi
done
echo "== fuzz summary"
printf '%s\n' "${summary[@]}"

# The code each target is for: its coverage is what the numbers above mean.
sources_of() {
  case $1 in
    record) echo lib/record/record.c ;;
    ktls-cmsg) echo lib/ktls/kconn.c lib/ktls/ktls.c ;;
    handshake-*) echo lib/handshake/hs.c lib/conn.c ;;
    session) echo lib/handshake/session_state.c lib/handshake/resume.c lib/handshake/peer_identity.c ;;
    ticket-keyfile) echo lib/handshake/ticket_keyfile.c ;;
    http-request) echo examples/http_request.c ;;
  esac
}
if [ "$coverage" = 1 ]; then
  llvm_bin=/usr/lib/llvm-14/bin
  profdata=$(command -v llvm-profdata || echo "$llvm_bin/llvm-profdata")
  llvmcov=$(command -v llvm-cov || echo "$llvm_bin/llvm-cov")
  cov_build="$build-cov"
  echo "== coverage: replaying each corpus in $cov_build"
  # Programs meson and ninja run while building would drop profiles here.
  export LLVM_PROFILE_FILE=/dev/null
  if [ ! -f "$cov_build/build.ninja" ]; then
    # The link flag too: programs the build runs (p256_gen_table) link no
    # fuzzer, and without it nothing defines the coverage callbacks.
    mkdir -p "$cov_build"
    CC=clang meson setup "$cov_build" -Dfuzzing=true -Db_lundef=false -Dwerror=false -Dtests=enabled -Dexamples=enabled \
      -Dc_args="-fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping" \
      -Dc_link_args="-fprofile-instr-generate -fsanitize=fuzzer-no-link" \
      >"$cov_build/setup.log" 2>&1 ||
      { cat "$cov_build/setup.log"; exit 1; }
  fi
  ninja -C "$cov_build" "${binaries[@]}" >"$cov_build/build.log" 2>&1 ||
    { tail -30 "$cov_build/build.log"; echo "fuzz: the coverage build failed"; exit 1; }
  for t in "${targets[@]}"; do
    raw="$cov_build/fuzz-$t.profraw"
    rm -f "$raw"
    LLVM_PROFILE_FILE="$raw" "$cov_build/tests/fuzz/fuzz-$t" -runs=0 \
      "$build/fuzz-corpus/$t" "tests/fuzz/corpus/$t" >"$cov_build/fuzz-$t.replay.log" 2>&1 ||
      { echo "fuzz-$t: the corpus replay failed, see $cov_build/fuzz-$t.replay.log"; failed=1; continue; }
    "$profdata" merge -o "$cov_build/fuzz-$t.profdata" "$raw"
    echo "fuzz-$t (lines, branches covered by its corpus):"
    "$llvmcov" report "$cov_build/tests/fuzz/fuzz-$t" -instr-profile="$cov_build/fuzz-$t.profdata" |
      awk -v want=" $(sources_of "$t") " 'index(want, " " $1 " ") && NF >= 13 {
        printf "  %-24s lines %6s of %4d, branches %6s of %4d\n", $1, $10, $8, $13, $11 }'
  done
fi
exit "$failed"

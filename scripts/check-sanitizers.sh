#!/usr/bin/env bash
# The sanitizer part of `make check`:
#  1. builds the library, tests and examples with ASan+UBSan (gcc) in their own
#     build directory and runs the unit (crypto, tls, pk), interop, conformance,
#     hostile, fault, load, sendfile and examples suites there; any sanitizer report fails the
#     test that triggered it (not suite ct: valgrind cannot run ASan binaries);
#  2. runs an echo transfer (sotls-echo-server --once <-> sotls-echo-client)
#     under valgrind memcheck, with the AES-NI level (valgrind cannot execute
#     AVX-512): any error or definite/indirect leak fails.
#
# usage: scripts/check-sanitizers.sh [PLAIN_BUILD_DIR [ASAN_BUILD_DIR]]
#   PLAIN_BUILD_DIR  an ordinary build (for valgrind), default: build
#   ASAN_BUILD_DIR   default: build-asan
set -euo pipefail
cd "$(dirname "$0")/.."

plain=${1:-build}
asan=${2:-build-asan}

echo "== sanitizers: ASan+UBSan build in $asan"
# werror off in this build only: gcc's -O3 with sanitizers warns about code
# paths the instrumentation creates; the plain build keeps -Werror.
[ -f "$asan/build.ninja" ] || meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
  -Dwerror=false -Dtests=enabled -Dexamples=enabled
ninja -C "$asan"

# Any ASan or LeakSanitizer report makes the program exit non-zero (status 1;
# a leak at exit turns a 0 into 1); a UBSan report is a failure, not a warning.
# Not abort_on_error: tests/interop/sotls-peer returns 1 on an expected
# handshake failure without freeing its connection, and the interop cases
# check for exactly that status.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
meson test -C "$asan" --print-errorlogs --num-processes 2 \
  --suite crypto --suite tls --suite interop --suite conformance --suite hostile --suite fault \
  --suite load --suite sendfile --suite examples --suite pk

echo "== valgrind memcheck: echo transfer, SOTLS_CPU=aesni"
ninja -C "$plain" examples/sotls-echo-server examples/sotls-echo-client
work=$(mktemp -d)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
    --track-fds=no --quiet)
SOTLS_CPU=aesni timeout 300 "${vg[@]}" --log-file="$work/server.vg" \
  "$plain/examples/sotls-echo-server" --once --quiet --port 0 --port-file "$work/port" &
srv_pid=$!
for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "valgrind: the echo server did not start"; exit 1; }
rc=0
SOTLS_CPU=aesni timeout 300 "${vg[@]}" --log-file="$work/client.vg" \
  "$plain/examples/sotls-echo-client" --insecure --quiet --port "$(cat "$work/port")" \
  --bytes 2M || rc=$?
wait "$srv_pid" || rc=$?
srv_pid=
for f in server client; do
  if [ -s "$work/$f.vg" ]; then
    echo "valgrind ($f):"
    cat "$work/$f.vg"
  fi
done
if [ "$rc" -ne 0 ]; then
  echo "valgrind memcheck: FAILED (status $rc)"
  exit 1
fi
echo "valgrind memcheck: echo transfer of 2 MiB clean (server and client, no errors, no leaks)"

#!/usr/bin/env bash
# make check's aarch64 stage: cross-builds the unit tests of lib/crypto for
# 64-bit Arm (cross/aarch64-linux-gnu.ini) and runs them under qemu-aarch64
# with -cpu max (AES, PMULL, SHA2), first as detected, then with SOTLS_CPU
# taking each feature away down to the portable code.
#
#   scripts/check-aarch64.sh [BUILD-DIR]     default build-aarch64
#
# Only the unit-style suites run: crypto, and of pk the tests that need no
# TLS peer. Left out, and why:
#   - suite ct: valgrind is an x86 program here; it cannot run an arm64
#     binary, and valgrind:arm64 under qemu-user does not work.
#   - rsa-server, private-key (suite pk): they run the handshake's peer on a
#     thread, and Debian 12's qemu-aarch64 (7.2) here never returns from the
#     first pthread_create (a five-line program hangs the same way, on every
#     -cpu model); the RSA code they use is test_rsa's.
#   - interop, vm, tls, ...: need x86 peers (OpenSSL, curl, the VM).
# Trimmed under emulation (about 10x slower than native), each to keep the
# stage within about four minutes:
#   - p256: 200 random keys instead of 2000 (SOTLS_P256_TEST_KEYS); the
#     portable field code is the same C that every x86 run checks in full.
#   - rsa: the Wycheproof vectors only: its threads test hangs as above, and
#     the differential test generates a dozen keys with OpenSSL, minutes
#     under qemu.
# The test binaries are named to ninja, so the examples, which meson wants
# configured beside the tests, are never compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-aarch64}

for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" >/dev/null || {
    echo "check-aarch64: $tool missing (run scripts/setup.sh as root)" >&2
    exit 1
  }
done

if [ ! -f "$B/build.ninja" ]; then
  log=$(mktemp)
  meson setup "$B" --cross-file cross/aarch64-linux-gnu.ini -Dwerror=true \
    -Dtests=enabled -Dexamples=auto -Dbench=disabled >"$log" 2>&1 ||
    { cat "$log" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
fi

TESTS=(test_aria test_aes test_gcm test_cpu test_aead_wycheproof test_sha256 test_p256
  test_p256_wycheproof test_ecdsa test_rsa)
echo "check-aarch64: building the tests ($B/ninja.log)"
nice ninja -C "$B" "${TESTS[@]/#/tests/unit/}" >"$B/ninja.log" 2>&1 ||
  { cat "$B/ninja.log"; exit 1; }

WRAP=(qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu)
VECTORS=$(cd .. && pwd)/shared/vectors/wycheproof
export SOTLS_P256_TEST_KEYS=200

# Every implementation the emulated CPU runs, the portable ones included, is
# already iterated over by aes, aria, gcm, aead-wycheproof and sha256; the
# runs under SOTLS_CPU check that the defaults follow it and that each step
# down still passes. gcm is left out of them: its length sweep over every
# combination takes half a minute under qemu, and its first run has covered
# each combination the steps down pick.
CRYPTO=(aria aes gcm aead-wycheproof cpu cpu-detect-max cpu-env-generic cpu-env-arm-minus
  cpu-env-arm-list cpu-env-arm-no-aes sha256 sha256-generic wycheproof)
echo "check-aarch64: crypto and pk tests under qemu-aarch64 -cpu max"
nice meson test -C "$B" --no-rebuild --print-errorlogs --num-processes 2 \
  "${CRYPTO[@]}" p256 ecdsa

for cpu in -pmull -aes -sha2 -asimd generic; do
  echo "check-aarch64: SOTLS_CPU=$cpu"
  SOTLS_CPU=$cpu nice meson test -C "$B" --no-rebuild --print-errorlogs \
    --num-processes 2 aria aes aead-wycheproof cpu sha256 >"$B/cpu$cpu.log" 2>&1 ||
    { cat "$B/cpu$cpu.log"; exit 1; }
  grep -E '^(Ok|Fail|Timeout):' "$B/cpu$cpu.log" | tr '\n' ' '
  echo
done

echo "check-aarch64: rsa (Wycheproof only)"
SOTLS_VECTORS=$VECTORS nice "${WRAP[@]}" "$B/tests/unit/test_rsa" 'test_wycheproof_*' \
  >"$B/rsa.log" 2>&1 || { cat "$B/rsa.log"; exit 1; }
tail -1 "$B/rsa.log"
echo "check-aarch64: passed"

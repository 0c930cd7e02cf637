#!/usr/bin/env bash
# make bench: runs every benchmark against an already built tree.
#   scripts/bench.sh BUILD_DIR
# Each step prints its table on the terminal and leaves machine-readable
# results under BUILD_DIR/bench/. Add new benchmarks as further steps.
set -euo pipefail
BUILD=${1:-build}
OUT=$BUILD/bench
if [ ! -x "$BUILD/bench/sotls-bench-aead" ]; then
  echo "bench: $BUILD/bench/sotls-bench-aead not found; run 'make build' first" >&2
  exit 1
fi

step() { printf '\n== %s\n' "$*"; }
SRC=$(cd "$(dirname "$0")/.." && pwd)

# --- 1. AEAD record crypto: sotls levels vs OpenSSL vs mbedTLS (~45 s) -------
# One run: the table goes to the terminal (stderr), the JSON to the file.
step "ARIA-GCM and AES-GCM seal/open, one core (sotls-bench-aead) -> $OUT/aead.json"
"$BUILD/bench/sotls-bench-aead" --json > "$OUT/aead.json"

# --- 1a. ARIA-GCM against libgcrypt 1.11, optional: bench-slope is built
# from Debian's source package into .cache/libgcrypt on first use (a few
# minutes; bench/libgcrypt/build.sh), and the step is skipped if that fails.
# Three interleaved rounds per CPU-feature mask (~5 min).
step "ARIA-GCM, sotls vs libgcrypt with the same CPU features masked -> $OUT/aria-libgcrypt.txt"
if "$SRC/bench/libgcrypt/build.sh" > /dev/null; then
  "$SRC/bench/libgcrypt/compare.sh" "$BUILD" 3 | tee "$OUT/aria-libgcrypt.txt"
else
  echo "bench: libgcrypt's bench-slope could not be built (.cache/libgcrypt/build.log): skipped"
fi

# --- 1b. Public-key operations: sotls's P-256 levels, libsodium's X25519,
# OpenSSL, mbedTLS's own ECP and RSA, nettle, side by side (~1 min).
step "P-256, X25519 and RSA-2048/3072/4096 operations, one core (sotls-bench-pk) -> $OUT/pk.json"
"$BUILD/bench/sotls-bench-pk" --json > "$OUT/pk.json"

# --- 2. End-to-end TLS over loopback: sotls vs mbedTLS vs OpenSSL vs TCP -----
# Bulk, small messages, handshakes (full and resumed), memory per connection
# (after full and resumed handshakes), two streams (~3.5 min before the
# resumed rows; the handshake and memory tests alone took 58 s on
# 2026-12-02). Tables and per-second lines on the terminal; results.json, the
# gnuplot tables (*.dat) and the PNG figures in $OUT (see bench/README.md).
step "TLS end to end over loopback (sotls-bench-tls) -> $OUT/results.json, $OUT/tls-*.png"
"$BUILD/bench/sotls-bench-tls" --tests all --out-dir "$OUT"
if command -v gnuplot > /dev/null; then
  gnuplot -e "dir='$OUT'; stamp='($(date -u +%Y-%m-%d))'" "$SRC/bench/plot.gnuplot"
  printf 'plots: %s\n' "$(cd "$OUT" && ls tls-*.png | tr '\n' ' ')"
else
  echo "bench: gnuplot not found (apt-get install gnuplot-nox): no plots" >&2
fi

# --- 3. File sending: sotls_sendfile's paths vs read+sotls_send vs OpenSSL ----
step "File sending (sotls-bench-sendfile) -> $OUT/sendfile.json"
"$BUILD/bench/sotls-bench-sendfile" --json > "$OUT/sendfile.json"

# --- 3a. Servers: CPU per message and memory per idle connection ------------
# sotls-uring-server (a "not built" row until it exists), the epoll echo
# servers and sotls-https-server against nginx from Debian with OpenSSL
# (installed with wrk by apt-get when missing, as root), loaded by
# sotls-loadgen; only the servers' CPU counts. At nice -15 as root, since
# the machine is shared: the cells are interleaved anyway (~5 min;
# SOTLS_BENCH_SERVERS_ARGS=--quick for a subset; bench/README.md, "Servers").
step "Servers: echo, static files vs nginx, memory per idle connection (bench_servers.py) -> $OUT/servers.json, $OUT/servers-*.png"
if [ -x "$BUILD/examples/sotls-loadgen" ]; then
  nice_arg=()
  [ "$(id -u)" = 0 ] && nice_arg=(nice -n -15)
  # shellcheck disable=SC2086 # the variable holds several arguments
  "${nice_arg[@]}" python3 "$SRC/bench/bench_servers.py" --build "$BUILD" --out "$OUT" \
    ${SOTLS_BENCH_SERVERS_ARGS:-}
else
  echo "bench: $BUILD/examples/sotls-loadgen not built (-Dexamples=enabled): skipped"
fi

# --- 3b. aarch64: instructions per byte under qemu against Debian's arm64
# OpenSSL (time under emulation means nothing; counts are exact). Needs the
# aarch64 stage's cross build (scripts/setup.sh installs it; ~1 min the
# first time, plus qemu's plugin header from Debian's source package).
step "aarch64: AES- and ARIA-128-GCM seal, instructions per byte vs OpenSSL (bench/aarch64/insn-count.sh) -> $OUT/aarch64-insn.txt"
if command -v aarch64-linux-gnu-gcc > /dev/null && command -v qemu-aarch64 > /dev/null; then
  "$SRC/bench/aarch64/insn-count.sh" "$BUILD-aarch64" | tee "$OUT/aarch64-insn.txt"
else
  echo "bench: no aarch64 cross compiler or qemu-aarch64 (scripts/setup.sh as root): skipped"
fi

# --- 4. The kernel TX path of sotls_sendfile, in the VM (tests/vm) ----------
# kTLS with ARIA needs the VM's kernel and aria_generic.ko. Under TCG emulation
# only the ratios mean anything: io_uring SPLICE against sendfile(2) and
# read + sotls_send, all sealed by the kernel (~20 s).
step "File sending on the kTLS path, in the VM (sotls-bench-sendfile --ktls) -> $OUT/sendfile-ktls-vm.txt"
set +e
"$SRC/tests/vm/run.sh" --modules aria --timeout 600 --bin "$BUILD/bench/sotls-bench-sendfile" \
  -- sotls-bench-sendfile --ktls --size 16 --runs 1 > "$OUT/sendfile-ktls-vm.txt" 2>&1
rc=$?
set -e
grep -E '^(sotls-bench-sendfile|method|kTLS)' "$OUT/sendfile-ktls-vm.txt" || true
case $rc in
  0) ;;
  77) echo "bench: the VM cannot run here (qemu): no kernel-path figures" ;;
  *) echo "bench: the VM run failed ($rc); see $OUT/sendfile-ktls-vm.txt" >&2; exit 1 ;;
esac

printf '\nbench: results in %s/\n' "$OUT"

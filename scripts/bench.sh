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

# --- 1. AEAD record crypto: sotls levels vs OpenSSL vs mbedTLS (~25 s) -------
# One run: the table goes to the terminal (stderr), the JSON to the file.
step "ARIA-GCM seal/open, one core (sotls-bench-aead) -> $OUT/aead.json"
"$BUILD/bench/sotls-bench-aead" --json > "$OUT/aead.json"

printf '\nbench: results in %s/\n' "$OUT"

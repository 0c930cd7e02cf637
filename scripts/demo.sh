#!/usr/bin/env bash
# make demo: a short look at what works today.
#   scripts/demo.sh BUILD_DIR
# Until the TLS engine lands: the crypto self-test, then a quick speed table.
set -euo pipefail
BUILD=${1:-build}

printf '== 1. crypto self-test: known answers, OpenSSL differential, forgeries\n'
meson test -C "$BUILD" --suite crypto --print-errorlogs

printf '\n== 2. ARIA-128-GCM speed on 16 KiB records (a short run: expect noise)\n'
"$BUILD/bench/sotls-bench-aead" --cipher ARIA-128-GCM --size 16384 --seconds 0.2

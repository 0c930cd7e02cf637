#!/usr/bin/env bash
# Guest instructions per byte of AES-128-GCM and ARIA-128-GCM seal (16 KiB
# records) on aarch64, sotls against Debian's arm64 OpenSSL (libssl-dev:arm64),
# both under qemu-aarch64 -cpu max (AES, PMULL, SHA2: each library picks its
# best code) with a counting plugin (insn_plugin.c).
#
#   bench/aarch64/insn-count.sh [BUILD-DIR]     default build-aarch64
#
# Each case runs insn_seal twice, with LO and HI records; the difference over
# (HI - LO) * 16384 bytes is the seal alone (start-up, key set-up and exit
# cancel). Instruction counts are exact and the same on every run, unlike
# time under emulation. The plugin is built against qemu-plugin.h from
# Debian's qemu source package, fetched once into .cache/ (scripts/apt-source.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-aarch64}
LO=1 HI=9 LEN=16384

[ -f "$B/build.ninja" ] || scripts/check-aarch64.sh "$B" >/dev/null
nice ninja -C "$B" bench/aarch64/insn_seal >/dev/null

# The header must be the running qemu's: its plugin API version is checked.
qver=$(qemu-aarch64 -version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)
src=$PWD/.cache/qemu-src
hdr=$(find "$src" -path "*qemu-${qver%.*}*/include/qemu/qemu-plugin.h" 2>/dev/null | head -1 || true)
if [ -z "$hdr" ]; then
  # shellcheck source=../../scripts/apt-source.sh
  . scripts/apt-source.sh
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  apt_source "$codename" "$src" qemu >/dev/null
  tar -xJf "$src"/dl/qemu_*.orig.tar.xz -C "$src" --wildcards '*/include/qemu/qemu-plugin.h'
  hdr=$(find "$src" -name qemu-plugin.h | head -1)
fi
plugin=$B/bench/aarch64/insn_plugin.so
if [ ! -f "$plugin" ] || [ bench/aarch64/insn_plugin.c -nt "$plugin" ]; then
  gcc -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC -I "$(dirname "$hdr")" \
    -o "$plugin" bench/aarch64/insn_plugin.c
fi

count() { # lib alg records -> instructions
  qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu -plugin "$plugin" \
    "$B/bench/aarch64/insn_seal" "$1" "$2" "$3" 2>&1 >/dev/null |
    sed -n 's/^insn-count: //p'
}
per_byte() { # lib alg -> instructions per byte
  local lo hi
  lo=$(count "$1" "$2" $LO)
  hi=$(count "$1" "$2" $HI)
  awk -v lo="$lo" -v hi="$hi" -v n=$(((HI - LO) * LEN)) 'BEGIN { printf "%.3f", (hi - lo) / n }'
}

printf '%-14s %-50s %-16s %7s\n' "cipher" "sotls" "OpenSSL" "ratio"
for alg in aes aria; do
  name=$(qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu "$B/bench/aarch64/insn_seal" sotls \
    "$alg" 0 | cut -d' ' -f1)
  s=$(per_byte sotls "$alg")
  o=$(per_byte openssl "$alg")
  ratio=$(awk -v o="$o" -v s="$s" 'BEGIN { printf "%.2f", o / s }')
  label=$([ "$alg" = aes ] && echo AES-128-GCM || echo ARIA-128-GCM)
  printf '%-14s %-50s %-16s %6sx\n' "$label" "$s insn/B ($name)" "$o insn/B" "$ratio"
done
echo "(ratio: OpenSSL's instructions per byte over sotls's; 16 KiB seals, qemu-aarch64 -cpu max)"

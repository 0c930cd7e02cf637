#!/usr/bin/env bash
# ARIA-GCM, sotls against libgcrypt 1.11 (bench/libgcrypt/build.sh), each
# with the same CPU features masked, in interleaved rounds on one core:
#   bench/libgcrypt/compare.sh BUILD_DIR [ROUNDS]
# sotls: sotls-bench-aead's best implementation under SOTLS_CPU, seal and
# open at 1500 and 16384 bytes. libgcrypt: bench-slope's GCM enc and dec,
# whose figure is the slope of time over length (the cost of one more byte,
# no per-call overhead): comparable with long records, and flattering
# libgcrypt at 1500 bytes. Prints every round, then the median of each cell
# and sotls / libgcrypt.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SLOPE=$SRC/.cache/libgcrypt/bin/bench-slope
AEAD=$BUILD/bench/sotls-bench-aead
[ -x "$SLOPE" ] || { echo "compare: $SLOPE missing (bench/libgcrypt/build.sh)" >&2; exit 1; }

# label | libgcrypt --disable-hwf | SOTLS_CPU
CONFIGS=(
  "no-gfni-vaes-avx512|intel-gfni,intel-vaes-vpclmul,intel-avx512|-gfni,-vaes,-vpclmulqdq,-avx512f"
  "no-gfni-avx512|intel-gfni,intel-avx512|-gfni,-avx512f"
)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# Lines: config cipher op size lib mibps impl
for round in $(seq "$ROUNDS"); do
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r label hwf cpu <<<"$c"
    for bits in 128 256; do
      # The first row of each (cipher, op, size) group is the default pick.
      # sotls-bench-aead prints MB/s (10^6 bytes); bench-slope MiB/s (2^20):
      # both are compared in MiB/s.
      SOTLS_CPU=$cpu "$AEAD" --cipher "ARIA-$bits-GCM" --impl sotls --size 1500,16384 --seconds 0.3 2>/dev/null |
        awk -v l="$label" -v r="$round" '$1 ~ /^ARIA-/ && $4 ~ /^sotls-/ && !seen[$1 $2 $3]++ {
          print r, l, $1, $2, $3, "sotls", $5 * 1e6 / 1048576, $4 }'
      "$SLOPE" --csv --disable-hwf "$hwf" cipher "aria$bits" 2>/dev/null |
        awk -F, -v l="$label" -v r="$round" -v b="$bits" '$3 == "GCM enc" || $3 == "GCM dec" {
          op = $3 == "GCM enc" ? "seal" : "open"
          print r, l, "ARIA-" b "-GCM", op, "slope", "libgcrypt", $8, "bench-slope" }'
    done
  done
done | tee "$results"

echo
echo "median of $ROUNDS rounds (MiB/s); ratio = sotls / libgcrypt's slope"
printf "%-20s %-13s %-5s %6s %10s %10s %6s  %s\n" masked cipher op size sotls libgcrypt ratio \
  "sotls implementation"
# The median, not the best: on a shared machine a disturbed bench-slope run
# can fit a slope that is too flat (too fast) as easily as too steep.
awk 'function median(key,   i, j, t, m) {
       m = n[key]
       for (i = 2; i <= m; i++)
         for (j = i; j > 1 && v[key, j - 1] > v[key, j]; j--) {
           t = v[key, j]; v[key, j] = v[key, j - 1]; v[key, j - 1] = t }
       return m % 2 ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2 }
     { k = $2 " " $3 " " $4; key = ($6 == "sotls") ? k " " $5 : k " lib"
       v[key, ++n[key]] = $7 + 0; if ($6 == "sotls") impl[key] = $8 }
     END { for (key in impl) { split(key, f, " "); g = median(f[1] " " f[2] " " f[3] " lib")
             r = (g > 0) ? median(key) / g : 0
             printf "%-20s %-13s %-5s %6s %10.1f %10.1f %6.2f  %s\n", f[1], f[2], f[3], f[4],
               median(key), g, r, impl[key] } }' "$results" | sort

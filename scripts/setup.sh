#!/usr/bin/env bash
# Installs what the build, tests and benchmarks need on Debian 12, as root, and
# fetches mbedTLS's source. Idempotent: a second run installs and downloads nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential meson ninja-build pkg-config gcc clang
  liburing-dev libcmocka-dev libssl-dev openssl libsodium-dev libjansson-dev nettle-dev
  dpkg-dev xz-utils curl gnuplot-nox valgrind python3 python3-cryptography
  libclang-rt-14-dev iproute2 tshark
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # wireshark-common (tshark's) asks whether non-root users may capture:
  # no; the key log test captures as root in its own network namespace.
  echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

scripts/fetch-mbedtls.sh

# Meson applies the overlay (subprojects/packagefiles/mbedtls/) only when it
# unpacks the tarball; a checkout whose overlay changed since would keep
# building mbedTLS with the old configuration. Refresh the unpacked copy.
for dir in subprojects/mbedtls-*/; do
  [ -d "$dir" ] || continue
  for f in subprojects/packagefiles/mbedtls/*; do
    cmp -s "$f" "$dir$(basename "$f")" || cp "$f" "$dir"
  done
done

#!/usr/bin/env bash
# Installs what the build, tests and benchmarks need on Debian 12, as root, and
# fetches mbedTLS's source. Idempotent: a second run installs and downloads nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential meson ninja-build pkg-config gcc clang
  liburing-dev libcmocka-dev libssl-dev openssl
  dpkg-dev xz-utils curl gnuplot-nox valgrind python3
  libclang-rt-14-dev iproute2 libjansson-dev
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
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

scripts/fetch-mbedtls.sh

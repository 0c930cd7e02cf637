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
  # The aarch64 stage of make check (scripts/check-aarch64.sh): the cross
  # compiler, qemu-aarch64, and the arm64 builds of what the tests link.
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  libsodium-dev:arm64 liburing-dev:arm64 libcmocka-dev:arm64 libjansson-dev:arm64
  libssl-dev:arm64
)

# With a foreign architecture a package may be installed once per
# architecture: the one asked for (name:arch, else the native one or "all")
# must be.
native=$(dpkg --print-architecture)
missing=()
for p in "${PACKAGES[@]}"; do
  name=${p%%:*} arch=$native
  [ "$name" = "$p" ] || arch=${p#*:}
  dpkg-query -W -f='${Status} ${Architecture}\n' "$name" 2>/dev/null |
    grep -Eq "^install ok installed ($arch|all)\$" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The :arm64 packages come from the same archive once dpkg takes the
  # architecture (apt-get update below then fetches its lists).
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
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

#!/usr/bin/env bash
# Puts mbedTLS 3.6's source (the orig tarball of Debian's source package in
# the next release, $SUITE) where meson's wrap looks for it, through a
# private apt configuration (scripts/apt-source.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=trixie
WRAP=subprojects/mbedtls.wrap
file=$(sed -n 's/^source_filename *= *//p' "$WRAP")
hash=$(sed -n 's/^source_hash *= *//p' "$WRAP")
dest=subprojects/packagefiles/$file

verify() { echo "$hash  $1" | sha256sum -c --status; }

if [ -f "$dest" ] && verify "$dest"; then
  exit 0
fi

cache=$PWD/.cache/apt-src
. scripts/apt-source.sh
apt_source "$SUITE" "$cache" mbedtls

if [ ! -f "$cache/dl/$file" ] || ! verify "$cache/dl/$file"; then
  echo "fetch-mbedtls: Debian's source package did not provide $file with the expected" \
       "SHA-256 ($hash); got: $(ls "$cache/dl")" >&2
  exit 1
fi
mv "$cache/dl/$file" "$dest"
rm -rf "$cache"
echo "fetch-mbedtls: $dest"

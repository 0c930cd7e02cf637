#!/usr/bin/env bash
# Puts mbedTLS 3.6's source (the orig tarball of Debian's source package in
# the next release, $SUITE) where meson's wrap looks for it. The deb-src
# entries are derived from this machine's own apt sources, with this
# release's codename replaced by $SUITE, into a private apt configuration, so
# neither the system's apt state nor this repository names any archive host.
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

here=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$here" ]; then
  echo "fetch-mbedtls: /etc/os-release names no VERSION_CODENAME" >&2
  exit 1
fi

cache=$PWD/.cache/apt-src
rm -rf "$cache"
mkdir -p "$cache/sources" "$cache/lists/partial" "$cache/archives/partial" "$cache/dl"

# deb822 files: every "Types: deb" stanza becomes deb-src of $SUITE
# (bookworm-updates -> trixie-updates, and so on).
for f in /etc/apt/sources.list.d/*.sources; do
  [ -e "$f" ] || continue
  sed -E -e 's/^(Types:.*)\bdeb\b/\1deb-src/' \
         -e "/^Suites:/s/\\b$here\\b/$SUITE/g" "$f" > "$cache/sources/$(basename "$f")"
done
# One-line format, in sources.list and sources.list.d/*.list.
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -e "$f" ] || continue
  sed -nE "s/^deb(\\s.*\\s)$here(\\S*\\s)/deb-src\\1$SUITE\\2/p" "$f" \
    > "$cache/sources/$(basename "$f" .list)-src.list"
done

apt_opts=(
  -o Dir::Etc::SourceList=/dev/null
  -o "Dir::Etc::SourceParts=$cache/sources"
  -o "Dir::State::Lists=$cache/lists"
  -o "Dir::Cache=$cache"
  -o APT::Sandbox::User=root
)
echo "fetch-mbedtls: reading $SUITE's source indexes"
# A suite the archive lacks (e.g. no $SUITE-security yet) must not stop the
# others; whether the package came is checked below.
apt-get "${apt_opts[@]}" -q update >"$cache/update.log" 2>&1 || true
if ! (cd "$cache/dl" && apt-get "${apt_opts[@]}" -q source --download-only mbedtls \
      >"$cache/source.log" 2>&1); then
  echo "fetch-mbedtls: apt-get source mbedtls ($SUITE) failed:" >&2
  cat "$cache/update.log" "$cache/source.log" >&2
  exit 1
fi

if [ ! -f "$cache/dl/$file" ] || ! verify "$cache/dl/$file"; then
  echo "fetch-mbedtls: Debian's source package did not provide $file with the expected" \
       "SHA-256 ($hash); got: $(ls "$cache/dl")" >&2
  exit 1
fi
mv "$cache/dl/$file" "$dest"
rm -rf "$cache"
echo "fetch-mbedtls: $dest"

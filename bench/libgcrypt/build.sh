#!/usr/bin/env bash
# Builds libgcrypt 1.11's bench-slope (from Debian's source package of
# $SUITE, which has ARIA with AES-NI/AVX2/GFNI code) into .cache/libgcrypt,
# for comparing ARIA-GCM speeds only: nothing in sotls links it.
#   bench/libgcrypt/build.sh      prints the path of bench-slope on success
# libgcrypt is configured static-only, so bench-slope needs nothing at run
# time. If the system's libgpg-error is older than libgcrypt asks for, the one
# of $SUITE is built into the same private prefix first.
set -euo pipefail
cd "$(dirname "$0")/../.."

SUITE=trixie
top=$PWD/.cache/libgcrypt
prefix=$top/prefix
bin=$top/bin/bench-slope
jobs=$(nproc)

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

. scripts/apt-source.sh
log=$top/build.log
mkdir -p "$top"
apt_source "$SUITE" "$top/apt" libgcrypt20 libgpg-error >&2

unpack() { # package name -> source directory
  local tarball
  tarball=$(ls "$top/apt/dl/$1"_*.orig.tar.* | head -n 1)
  rm -rf "$top/src/$1"
  mkdir -p "$top/src/$1"
  tar -xf "$tarball" -C "$top/src/$1" --strip-components=1
  echo "$top/src/$1"
}

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

gcrypt_src=$(unpack libgcrypt20)
need=$(sed -n 's/^NEED_GPGRT_VERSION=//p; s/^NEED_GPG_ERROR_VERSION=//p' \
  "$gcrypt_src/configure.ac" | head -n 1)
# An earlier run's own libgpg-error (in $prefix) counts as the system's.
have=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion gpg-error 2>/dev/null ||
  echo 0)
gpgerr_opt=()
if [ -x "$prefix/bin/gpgrt-config" ]; then
  gpgerr_opt=(--with-libgpg-error-prefix="$prefix")
  export PATH=$prefix/bin:$PATH
fi
if ! version_ge "$have" "$need"; then
  echo "libgcrypt: needs libgpg-error $need, the system has $have: building $SUITE's" >&2
  err_src=$(unpack libgpg-error)
  (cd "$err_src" && ./configure --prefix="$prefix" --disable-shared --enable-static \
     --disable-doc --disable-tests --disable-nls && make -j"$jobs" && make install) \
    >>"$log" 2>&1
  gpgerr_opt=(--with-libgpg-error-prefix="$prefix")
  export PATH=$prefix/bin:$PATH
fi

echo "libgcrypt: building $(basename "$gcrypt_src") ($(ls "$top/apt/dl" | grep -m1 '^libgcrypt20_.*orig')) into $top" >&2
(cd "$gcrypt_src" && ./configure --prefix="$prefix" --disable-shared --enable-static \
   --disable-doc "${gpgerr_opt[@]}" && make -j"$jobs" && make -j"$jobs" -C tests bench-slope) >>"$log" 2>&1
mkdir -p "$top/bin"
cp "$gcrypt_src/tests/bench-slope" "$bin"
rm -rf "$top/apt"
echo "$bin"

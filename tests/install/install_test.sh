#!/usr/bin/env bash
# install_test.sh BUILD_DIR embed_echo.c
# meson install into a scratch prefix; build embed_echo.c against it with
# pkg-config only (shared, then static); run a server and a client of each.
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/root" --quiet --no-rebuild >/dev/null
pcdir=$(dirname "$(find "$work/root" -name sotls.pc | head -1)")
[ -f "$pcdir/sotls.pc" ] || { echo "sotls.pc was not installed"; exit 1; }
libdir=$(dirname "$(find "$work/root" -name 'libsotls.so' | head -1)")
# The sysroot prefixes the .pc's paths with the scratch root, as for any DESTDIR install.
# The ABI of libsotls.so.1: struct sotls_info with its size field.
soname=$(readelf -d "$libdir/libsotls.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libsotls.so.1 ] || { echo "soname is '$soname', want libsotls.so.1"; exit 1; }
pc() { PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$work/root pkg-config "$@" sotls; }

cc -std=c11 -Wall -Wextra -Werror -o "$work/echo-shared" "$src" $(pc --cflags --libs)
cc -std=c11 -Wall -Wextra -Werror -o "$work/echo-static" "$src" $(pc --cflags) \
  "$libdir/libsotls.a" $(pc --static --libs-only-l | sed 's/-lsotls//')

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

port=$(( 20000 + RANDOM % 20000 ))
for kind in shared static; do
  port=$((port + 1))
  export LD_LIBRARY_PATH=$libdir
  "$work/echo-$kind" server "$port" "$work/cert.pem" "$work/key.pem" > "$work/server.out" &
  server=$!
  for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.05; done
  "$work/echo-$kind" client "$port"
  wait "$server"
  if [ "$kind" = static ] && ldd "$work/echo-static" | grep -q libsotls; then
    echo "the static build still needs libsotls.so"; exit 1
  fi
done
echo "out-of-tree builds against the installed sotls (shared and static) work"

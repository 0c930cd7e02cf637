#!/usr/bin/env bash
# install_test.sh BUILD_DIR embed_echo.c
# meson install into a scratch prefix; build embed_echo.c against it with
# pkg-config only: shared (sotls.pc), static (sotls-static.pc), and static
# beside a program that defines mbedTLS symbols of its own (as one linking
# another mbedTLS does); run a server and a client of each.
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/root" --quiet --no-rebuild >/dev/null
pcdir=$(dirname "$(find "$work/root" -name sotls.pc | head -1)")
[ -f "$pcdir/sotls.pc" ] || { echo "sotls.pc was not installed"; exit 1; }
[ -f "$pcdir/sotls-static.pc" ] || { echo "sotls-static.pc was not installed"; exit 1; }
# pkg-config must work without liburing's and libsodium's .pc files.
if grep -n '^Requires' "$pcdir"/sotls*.pc; then
  echo "a .pc file requires other .pc files"; exit 1
fi
libdir=$(dirname "$(find "$work/root" -name 'libsotls.so' | head -1)")
# The sysroot prefixes the .pc's paths with the scratch root, as for any DESTDIR install.
# The ABI of libsotls.so.1: struct sotls_info with its size field.
soname=$(readelf -d "$libdir/libsotls.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libsotls.so.1 ] || { echo "soname is '$soname', want libsotls.so.1"; exit 1; }
pc() { PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$work/root pkg-config "$@"; }

# With -Dinstall_examples=true (sotls's own builds) the tools come along; a
# crontab's sotls-ticket-keys must run from where it was installed.
if meson introspect "$build" --buildoptions | grep -q '"name": "install_examples", "value": true'; then
  # Each one's --help is a manual page (examples/help_text.h): an operator
  # reads it where the program was installed.
  for tool in sotls-ticket-keys sotls-echo-server sotls-https-server sotls-event-echo-server \
              sotls-engine-echo-server sotls-uring-server sotls-keyless-server sotls-key-server \
              sotls-echo-client; do
    bin=$(find "$work/root" -name "$tool" -type f | head -1)
    [ -x "$bin" ] || { echo "$tool was not installed"; exit 1; }
    help=$(LD_LIBRARY_PATH=$libdir "$bin" --help) || { echo "$tool --help failed"; exit 1; }
    for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' EXAMPLES; do
      printf '%s\n' "$help" | grep -qx "$section" ||
        { echo "the installed $tool --help has no $section section"; exit 1; }
    done
  done
  LD_LIBRARY_PATH=$libdir "$(find "$work/root" -name sotls-ticket-keys -type f)" --help |
    grep -q rotate || { echo "the installed sotls-ticket-keys does not run"; exit 1; }
  echo "the tools are installed and run; each --help is a manual page"
fi

# The static library's globals are exactly the shared library's exports.
nm -g --defined-only "$libdir/libsotls.a" | awk 'NF == 3 {print $3}' | sort > "$work/a.syms"
nm -D --defined-only "$libdir/libsotls.so" | awk '{print $3}' | sort > "$work/so.syms"
if ! cmp -s "$work/a.syms" "$work/so.syms"; then
  echo "libsotls.a's global symbols differ from libsotls.so's exports:"
  diff "$work/a.syms" "$work/so.syms" | head -20
  exit 1
fi
echo "libsotls.a: $(wc -l < "$work/a.syms") global symbols, all exported by libsotls.so"

# Names another mbedTLS defines: linking them beside libsotls.a must not
# clash with the copy inside it.
cat > "$work/other_mbedtls.c" <<'C'
void mbedtls_ssl_init(void *ssl);
void mbedtls_ssl_init(void *ssl) { (void)ssl; }
int mbedtls_sha256(const unsigned char *in, unsigned long n, unsigned char out[32], int is224);
int mbedtls_sha256(const unsigned char *in, unsigned long n, unsigned char out[32], int is224)
{ (void)in; (void)n; (void)out; return is224; }
C

cc -std=c11 -Wall -Wextra -Werror -o "$work/echo-shared" "$src" $(pc --cflags --libs sotls)
cc -std=c11 -Wall -Wextra -Werror -o "$work/echo-static" "$src" $(pc --cflags --libs sotls-static)
cc -std=c11 -Wall -Wextra -Werror -o "$work/echo-beside" "$src" "$work/other_mbedtls.c" \
  $(pc --cflags --libs sotls-static)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

port=$(( 20000 + RANDOM % 20000 ))
for kind in shared static beside; do
  port=$((port + 1))
  export LD_LIBRARY_PATH=$libdir
  "$work/echo-$kind" server "$port" "$work/cert.pem" "$work/key.pem" > "$work/server.out" &
  server=$!
  for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.05; done
  "$work/echo-$kind" client "$port" | tee "$work/client.out"
  wait "$server"
  # One version everywhere: the library says what its .pc file says.
  grep -q "with sotls $(pc --modversion sotls) (" "$work/client.out" ||
    { echo "sotls_version() is not the .pc file's $(pc --modversion sotls)"; exit 1; }
  if [ "$kind" != shared ] && ldd "$work/echo-$kind" | grep -q libsotls; then
    echo "the static build $kind still needs libsotls.so"; exit 1
  fi
done
echo "out-of-tree builds against the installed sotls (shared, static, static beside another mbedTLS) work"

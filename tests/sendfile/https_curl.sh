#!/usr/bin/env bash
# The example HTTPS server as a user meets it: curl (OpenSSL) downloads files
# of every edge size and compares them by SHA-256; HEAD, 404, keep-alive,
# 400 on a malformed request; traversal (.., %2e%2e, absolute paths,
# symlinks out) never serves a byte from outside the root.
#   https_curl.sh SERVER_BINARY [--sendfile mode of the server]
set -euo pipefail
SERVER=$1
MODE=${2:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sotls-https-XXXXXX")
PID=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$WORK/server.log" ] && sed 's/^/  server: /' "$WORK/server.log" >&2; exit 1; }

ROOT=$WORK/root
mkdir -p "$ROOT/dir" "$ROOT/empty-dir"
for n in 0 1 16383 16384 16385 1048579; do
  head -c "$n" /dev/urandom > "$ROOT/f$n"
done
head -c 5000000 /dev/urandom > "$ROOT/dir/big.bin"
echo '<p>index</p>' > "$ROOT/dir/index.html"
echo 'top secret' > "$WORK/secret.txt"
ln -s "$WORK/secret.txt" "$ROOT/link-out"
ln -s /etc/passwd "$ROOT/passwd-out"
ln -s f16384 "$ROOT/link-in"

"$SERVER" --root "$ROOT" --port 0 --port-file "$WORK/port" --sendfile "${MODE:-auto}" \
  > "$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || fail "server did not start"
PORT=$(cat "$WORK/port")
URL=https://127.0.0.1:$PORT
CURL=(curl -sS -k --tlsv1.2 --ciphers ECDHE-ECDSA-ARIA128-GCM-SHA256 --max-time 60)

# Downloads, byte-exact by hash.
for f in f0 f1 f16383 f16384 f16385 f1048579 dir/big.bin link-in; do
  got=$("${CURL[@]}" "$URL/$f" | sha256sum | cut -d' ' -f1)
  want=$(sha256sum < "$ROOT/$f" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "GET /$f: sha256 $got, want $want"
done
echo "ok: downloads match by sha256"

# Several files on one kept-alive connection.
"${CURL[@]}" -v "$URL/f16385" -o "$WORK/k1" "$URL/dir/big.bin" -o "$WORK/k2" \
  "$URL/f1" -o "$WORK/k3" 2> "$WORK/keepalive.log"
grep -qi 're-using existing connection' "$WORK/keepalive.log" || fail "no keep-alive reuse"
cmp -s "$WORK/k1" "$ROOT/f16385" && cmp -s "$WORK/k2" "$ROOT/dir/big.bin" &&
  cmp -s "$WORK/k3" "$ROOT/f1" || fail "keep-alive downloads differ"
echo "ok: keep-alive"

# HEAD: the length, no body.
"${CURL[@]}" -I "$URL/f1048579" > "$WORK/head"
grep -qi '^content-length: 1048579' "$WORK/head" || fail "HEAD content-length: $(cat "$WORK/head")"
grep -q '^HTTP/1.1 200' "$WORK/head" || fail "HEAD status"
echo "ok: HEAD"

code() { "${CURL[@]}" -o "$WORK/body" -w '%{http_code}' "$@" || true; }
# Directory index, missing files.
[ "$(code "$URL/dir/")" = 200 ] && grep -q index "$WORK/body" || fail "directory index"
[ "$(code "$URL/nope")" = 404 ] || fail "missing file not 404"
[ "$(code "$URL/empty-dir/")" = 404 ] || fail "directory without index not 404"
echo "ok: index, 404"

# Traversal: never a byte from outside the root.
for p in /../secret.txt /dir/../../secret.txt /%2e%2e/secret.txt /dir/%2E%2E/%2e%2e/secret.txt \
  /..%2fsecret.txt //etc/passwd /%2fetc%2fpasswd /link-out /passwd-out /dir/..%5c..%5csecret.txt; do
  c=$(code --path-as-is "$URL$p")
  case "$c" in 400|404) ;; *) fail "$p answered $c" ;; esac
  if grep -q 'top secret\|root:' "$WORK/body" 2>/dev/null; then fail "$p leaked a file"; fi
done
echo "ok: traversal refused"

# A malformed request: 400 and the connection closes.
resp=$(printf 'GARBAGE\r\n\r\n' | timeout 10 openssl s_client -quiet -connect "127.0.0.1:$PORT" \
  -tls1_2 -cipher ECDHE-ECDSA-ARIA128-GCM-SHA256 2>/dev/null | head -1 || true)
case "$resp" in "HTTP/1.1 400"*) ;; *) fail "malformed request answered: $resp" ;; esac
resp=$(printf 'GET /f1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' |
  timeout 10 openssl s_client -quiet -connect "127.0.0.1:$PORT" -tls1_2 \
  -cipher ECDHE-ECDSA-ARIA128-GCM-SHA256 2>/dev/null | head -1 || true)
case "$resp" in "HTTP/1.1 400"*) ;; *) fail "request with a body answered: $resp" ;; esac
echo "ok: 400 on malformed requests"

kill -0 "$PID" || fail "server died"
grep -q "sendfile" "$WORK/server.log" 2>/dev/null || true
sed -n 's/.*-> 200, [0-9]* bytes (\(.*\))/\1/p' "$WORK/server.log" | sort | uniq -c | sed 's/^/paths used: /'
echo "https_curl${MODE:+ ($MODE)}: all ok"

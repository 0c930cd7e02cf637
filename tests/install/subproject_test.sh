#!/usr/bin/env bash
# subproject_test.sh SOURCE_ROOT embed_echo.c
# A consumer project that uses sotls as a meson subproject, set up as an
# embedder would: sotls's files under subprojects/sotls (without the mbedTLS
# tarball, so configure fetches it), `dependency('sotls')`, the consumer's
# default (debug) build type. Checks that it builds the library and nothing
# else of sotls's, registers none of sotls's tests, compiles sotls's code
# optimised, and that a server and a client built on it complete a handshake.
set -euo pipefail
root=$1
src=$2
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
consumer=$work/consumer
mkdir -p "$consumer/subprojects/sotls"

# What a clone or a release tarball holds: the tracked files (and new ones
# not ignored, so that a tree being worked on is tested as it stands).
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -C "$consumer/subprojects/sotls" -xf -
[ ! -e "$consumer/subprojects/sotls/subprojects/packagefiles/mbedtls_3.6.6.orig.tar.bz2" ]
cp "$src" "$consumer/embed_echo.c"
cat > "$consumer/meson.build" <<'M'
project('consumer', 'c', default_options : ['c_std=c11'])
executable('embed_echo', 'embed_echo.c', dependencies : dependency('sotls'))
M

(cd "$consumer" && meson setup build) > "$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
grep -E 'Parts|tests|examples|bench|fetch' "$work/setup.log" || true
ninja -C "$consumer/build" > "$work/ninja.log" 2>&1 || { tail -30 "$work/ninja.log"; exit 1; }
steps=$(grep -c '^\[' "$work/ninja.log")
echo "consumer build: $steps steps"

# Nothing of sotls's but the library: no test or benchmark program, no test.
progs=$(find "$consumer/build/subprojects/sotls" -type f -perm -u+x ! -name '*.so*' ! -name '*.sh' \
        ! -name 'p256_gen_table' | grep -v '\.p/' || true)
[ -z "$progs" ] || { echo "programs of sotls built in a consumer: $progs"; exit 1; }
listed=$(meson test -C "$consumer/build" --list 2>/dev/null | grep -v -e '^ninja' -e '^No tests defined' || true)
[ -z "$listed" ] || { echo "tests registered in the consumer: $listed"; exit 1; }

# sotls's code, mbedTLS's included, at -O3 whatever the consumer's build
# type (debug here: its own code at -O0).
python3 - "$consumer/build/compile_commands.json" <<'P'
import json, shlex, sys
seen = 0
for e in json.load(open(sys.argv[1])):
    if '/subprojects/' not in e['file']:
        continue
    seen += 1
    opts = [a for a in shlex.split(e['command']) if a.startswith('-O')]
    if opts[-1:] != ['-O3']:
        sys.exit('%s compiled with %s' % (e['file'], opts))
print('in a debug consumer, %d files of sotls and mbedTLS compiled at -O3' % seen)
P

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
port=$(( 20000 + RANDOM % 20000 ))
"$consumer/build/embed_echo" server "$port" "$work/cert.pem" "$work/key.pem" > "$work/server.out" &
server=$!
for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.05; done
"$consumer/build/embed_echo" client "$port"
wait "$server"
echo "a consumer with sotls as a subproject builds and completes a handshake"

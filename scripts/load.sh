#!/usr/bin/env bash
# Load: sotls-event-echo-server (epoll, non-blocking API; or LOAD_SERVER,
# another echo server with its flags and statistics: sotls-uring-server) and
# sotls-loadgen holding CONNS concurrent TLS connections with random message
# sizes for SECONDS. Fails if any connection fails, any echo is wrong, any connection
# does not close cleanly, or the server does not free everything at exit.
# STALLED more peers open a connection, send 3 bytes of a record header and
# stall (until the server drops them at its 60 s handshake deadline): the
# single-threaded server must serve everyone else meanwhile.
#
# Then slowloris: SLOWLORIS peers trickle a ClientHello a byte every INTERVAL
# seconds (a second server) while 10 honest clients, one after the other, must each be served
# within HONEST_MAX seconds; every peer must be dropped at the server's
# --handshake-timeout HS_TIMEOUT (a per-read timeout would hold them forever).
#
# usage: scripts/load.sh [BUILD_DIR [CONNS [SECONDS [STALLED [SLOWLORIS [HS_TIMEOUT
#                        [INTERVAL [HONEST_MAX]]]]]]]]
#        (default: build 1000 60 50 1000 10 20 1)
set -euo pipefail
server=${LOAD_SERVER:-sotls-event-echo-server}
build=$(cd "${1:-build}" && pwd)
conns=${2:-1000}
seconds=${3:-60}
stalled=${4:-50}
slowloris=${5:-1000}
hs_timeout=${6:-10}
interval=${7:-20}
honest_max=${8:-1}
cd "$(dirname "$0")/.."

work=$(mktemp -d)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# start_server ARGS...: a fresh server, its port in $port.
start_server() {
  rm -f "$work/port"
  "$build/examples/$server" --port 0 --port-file "$work/port" "$@" \
    >"$work/server.out" 2>&1 &
  srv_pid=$!
  for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { echo "load: the server did not start"; cat "$work/server.out"; exit 1; }
  port=$(cat "$work/port")
}
# stop_server: SIGTERM, its statistics; a failed status goes into $src.
src=0
stop_server() {
  kill -TERM "$srv_pid"
  wait "$srv_pid" || src=$?
  srv_pid=
  sed 's/^/server: /' "$work/server.out"
}

# The load measures throughput, not deadlines: a handshake deadline far
# beyond what a burst of CONNS handshakes takes on one thread (seconds in
# a sanitizer build); the stalled peers are dropped at it.
start_server --handshake-timeout 60
echo "== load ($server): $conns connections for ${seconds}s, $stalled stalled peers"
rc=0
"$build/examples/sotls-loadgen" --port "$port" --conns "$conns" \
  --seconds "$seconds" --server-pid "$srv_pid" --stalled "$stalled" || rc=$?
stop_server

start_server --handshake-timeout "$hs_timeout"
echo "== load: $slowloris slowloris peers (a byte every ${interval}s), 10 honest clients"
"$build/examples/sotls-loadgen" --port "$port" --slowloris "$slowloris" \
  --interval "$interval" --honest 10 --honest-max "$honest_max" \
  --expect-drop "$hs_timeout" || rc=$?
stop_server
if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ]; then
  echo "load: FAILED (loadgen status $rc, server status $src)"
  exit 1
fi
echo "load: ok"

#!/bin/sh
# shellcheck shell=dash
# Runs inside the test VM (busybox sh): sotls-uring-server on the kernel
# path (--ktls require: a connection the kernel does not take fails), as an
# echo server for sotls-echo-client and as a file server for openssl
# s_client, each body compared byte for byte.
#   uring_suite.sh CIPHER   ARIA-128-GCM with aria_generic.ko loaded, or an
#                           AES-GCM suite with the stock modules
cipher=$1
fail=0
say() { echo "uring_suite: $*"; }

# start_server ARGS...: the server in the background, its port in $port.
start_server() {
	rm -f /tmp/uport
	sotls-uring-server --port 0 --port-file /tmp/uport --ktls require --cipher "$cipher" \
		"$@" >/tmp/uring.log 2>&1 &
	spid=$!
	i=0
	while [ ! -s /tmp/uport ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat /tmp/uport)
	[ -n "$port" ] || { say "FAIL: the server did not start"; cat /tmp/uring.log; exit 1; }
}
stop_server() {
	kill -TERM "$spid"
	wait "$spid"
	st=$?
	sed 's/^/  [server] /' /tmp/uring.log
	[ "$st" -eq 0 ] || { say "FAIL: server exit status $st"; fail=1; }
	if grep -q "ktls-fallback" /tmp/uring.log; then
		say "FAIL: a connection fell back to userspace records"
		fail=1
	fi
}

# Echo: both directions of every connection in the kernel, the client in
# userspace (so the records cross two implementations).
start_server
for n in 1 2; do
	out=$(sotls-echo-client --port "$port" --insecure --cipher "$cipher" --ktls off \
		--bytes 1M 2>&1)
	st=$?
	echo "$out" | sed "s/^/  [client $n] /"
	if [ "$st" -eq 0 ] && echo "$out" | grep -qF "close_notify both ways"; then
		say "ok: echo of 1 MiB, $cipher, kernel records on the server ($n)"
	else
		say "FAIL: echo $n (exit $st)"
		fail=1
	fi
done
stop_server

# Files: IORING_OP_SPLICE from the file into the kTLS socket.
mkdir -p /tmp/www
dd if=/dev/urandom of=/tmp/www/f bs=65536 count=48 2>/dev/null
echo small >/tmp/www/s
start_server --root /tmp/www
case $cipher in
ARIA-128-GCM) ossl=ECDHE-ECDSA-ARIA128-GCM-SHA256 ;;
AES-128-GCM) ossl=ECDHE-ECDSA-AES128-GCM-SHA256 ;;
*) ossl=ECDHE-ECDSA-AES256-GCM-SHA384 ;;
esac
for f in f s; do
	printf 'GET /%s HTTP/1.1\r\nHost: vm\r\nConnection: close\r\n\r\n' "$f" |
		openssl s_client -connect "127.0.0.1:$port" -tls1_2 -cipher "$ossl" -quiet \
			>/tmp/got 2>/tmp/s_client.err
	size=$(wc -c </tmp/www/$f)
	if tail -c "$size" /tmp/got | cmp -s - /tmp/www/$f &&
		head -n 1 /tmp/got | grep -q "200"; then
		say "ok: GET /$f ($size bytes) through the kernel, $cipher"
	else
		say "FAIL: GET /$f"
		head -c 300 /tmp/got
		cat /tmp/s_client.err
		fail=1
	fi
done
stop_server
if ! grep -q "GET /f -> 200, $(wc -c </tmp/www/f) bytes (io_uring-splice)" /tmp/uring.log; then
	say "FAIL: the body did not go through io_uring splice"
	fail=1
fi
exit $fail

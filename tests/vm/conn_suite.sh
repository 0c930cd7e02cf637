#!/bin/sh
# shellcheck shell=dash
# Runs inside the test VM (busybox sh): ktls_conn_test, then the echo
# examples over loopback with --ktls auto / require / tx / rx / off,
# checking the paths and reasons they print.
#   conn_suite.sh kernel   aria_generic.ko loaded: kTLS takes ARIA
#   conn_suite.sh stock    kTLS without ARIA: fallback with the reason; and
#                          AES-GCM in the kernel: sotls_sendfile over kTLS TX
#                          (test_sendfile --mode ktls, when it is in /bin)
mode=$1
fail=0
say() { echo "conn_suite: $*"; }

ktls_conn_test --expect "$mode" || fail=1

# sotls_sendfile with an AES suite, both directions in the kernel on both
# sides: io_uring SPLICE, sendfile(2) forced, sendfile(2) non-blocking.
if [ "$mode" = stock ] && command -v test_sendfile >/dev/null 2>&1; then
	for s in AES-128-GCM AES-256-GCM; do
		if test_sendfile --mode ktls --suite "$s"; then
			say "ok: sendfile over kTLS TX, $s"
		else
			say "FAIL: sendfile over kTLS TX, $s"
			fail=1
		fi
	done
fi

rm -f /tmp/port
sotls-echo-server --port 0 --port-file /tmp/port --cipher ARIA-256-GCM >/tmp/server.log 2>&1 &
spid=$!
i=0
while [ ! -s /tmp/port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat /tmp/port)

# client: NAME EXPECTED-STATUS PATTERN... -- ARGS...
client() {
	name=$1 want=$2
	shift 2
	pats=""
	while [ "$1" != "--" ]; do pats="$pats|$1"; shift; done
	shift
	out=$(sotls-echo-client --port "$port" --insecure "$@" 2>&1)
	st=$?
	echo "$out" | sed "s/^/  [$name] /"
	ok=1
	[ "$st" -eq "$want" ] || ok=0
	IFS='|'
	for p in ${pats#|}; do
		echo "$out" | grep -qF "$p" || { say "[$name] missing: $p"; ok=0; }
	done
	unset IFS
	if [ $ok -eq 1 ]; then say "ok: $name"; else say "FAIL: $name (exit $st, want $want)"; fail=1; fi
}

if [ "$mode" = kernel ]; then
	client "echo auto: kernel both ways" 0 "TX path: kernel" "RX path: kernel" \
		"closed with close_notify both ways" -- --bytes 1M --ktls auto
	client "echo require: kernel both ways" 0 "TX path: kernel" "RX path: kernel" \
		-- --bytes 1M --ktls require
	client "echo mixed: kernel TX, userspace RX" 0 "TX path: kernel" \
		"RX path: userspace (kTLS not tried for this direction (configuration: kTLS TX only))" \
		-- --bytes 1M --ktls tx
	client "echo mixed: userspace TX, kernel RX" 0 \
		"TX path: userspace (kTLS not tried for this direction (configuration: kTLS RX only))" \
		"RX path: kernel" -- --bytes 1M --ktls rx
	client "echo off: userspace" 0 "TX path: userspace (kTLS disabled by configuration)" \
		-- --bytes 1M --ktls off
	# max_fragment_length: Linux 6.1 cannot cap kTLS TX records nor refuse
	# larger RX records, so both directions stay in userspace, saying why,
	# where the kernel takes them otherwise (the cases above).
	client "echo max_fragment_length 512: userspace both ways" 0 "max_fragment_length: 512" \
		"TX path: userspace (kTLS not tried: max_fragment_length negotiated" \
		"RX path: userspace (kTLS not tried: max_fragment_length negotiated" \
		"closed with close_notify both ways" -- --bytes 1M --ktls auto --max-frag-len 512
	client "echo max_fragment_length require: fails" 1 "kernel TLS required by configuration" \
		"max_fragment_length negotiated" -- --bytes 1M --ktls require --max-frag-len 1024
	if grep -q "RX userspace (kTLS not tried: max_fragment_length.*max_fragment_length 512" \
		/tmp/server.log; then
		say "ok: echo server: max_fragment_length 512 kept in userspace, with the reason"
	else
		say "FAIL: echo server: no max_fragment_length 512 in userspace"
		fail=1
	fi
else
	client "echo auto: fallback" 0 "TX path: userspace (kernel cannot do gcm(aria)" \
		"RX path: userspace (kernel cannot do gcm(aria)" -- --bytes 1M --ktls auto
	client "echo require: fails" 1 "kernel TLS required by configuration" \
		-- --bytes 1M --ktls require
fi
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
sed 's/^/  [server] /' /tmp/server.log
say "$([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail

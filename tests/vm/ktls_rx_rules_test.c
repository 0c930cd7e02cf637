/*
 * The record rules on the kernel path (lib/ktls/kconn.c), against a peer that
 * holds the keys: the caps on useless records, strict alerts, post-handshake
 * handshake messages (also read in pieces, the old "continuation" bypass)
 * and the AEAD usage limit both ways. Runs in the VM (tests/vm/run.sh) with
 * aria_generic.ko: both ends of a loopback TCP pair get kTLS with fixed
 * keys; the hostile end seals with the kernel (any record type and content)
 * or with sotls's userspace record layer (empty records, exact sequence
 * numbers), and reads the answers with the userspace record layer.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kconn.h"
#include "ktls.h"
#include "record.h"
#include "vm_check.h"

static const uint8_t K_AB[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint8_t K_BA[16] = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
static const uint8_t S_AB[4] = {0xde, 0xad, 0xbe, 0xef};
static const uint8_t S_BA[4] = {0x01, 0x23, 0x45, 0x67};
#define ALG SOTLS_AEAD_ARIA_128_GCM

/*
 * A talks to B over loopback TCP. B, under test, has kTLS both ways and a
 * sotls_kconn. A (the hostile peer) seals A->B in the kernel (kernel_tx) or
 * in its record layer, and opens B->A in its record layer.
 */
struct pair {
	int a, b;
	struct sotls_wire aw;	/* A's socket */
	struct sotls_record ar; /* A's record layer */
	struct sotls_kconn k;	/* B */
	bool kernel_tx;
};

static int install(int fd, enum sotls_ktls_dir dir, const uint8_t *key, const uint8_t *salt)
{
	const struct sotls_dir_keys k = {key, salt, 1};
	return sotls_ktls_install(fd, dir, ALG, &k, NULL);
}

static bool pair_open(struct pair *p, bool kernel_tx, bool b_server, uint64_t limit)
{
	memset(p, 0, sizeof(*p));
	p->kernel_tx = kernel_tx;
	vm_tcp_pair(&p->a, &p->b);
	struct sotls_dir_keys ab = {K_AB, S_AB, 1}, ba = {K_BA, S_BA, 1};
	p->aw.fd = p->a;
	if (sotls_record_init(&p->ar, &p->aw, ALG, &ab, &ba, NULL, 0) != 0)
		return false;
	if (kernel_tx && install(p->a, SOTLS_KTLS_TX, K_AB, S_AB) != SOTLS_OK)
		return false;
	if (install(p->b, SOTLS_KTLS_TX, K_BA, S_BA) != SOTLS_OK ||
	    install(p->b, SOTLS_KTLS_RX, K_AB, S_AB) != SOTLS_OK)
		return false;
	fcntl(p->a, F_SETFL, O_NONBLOCK);
	fcntl(p->b, F_SETFL, O_NONBLOCK);
	struct sotls_kconn_setup s = {true, true, b_server, ALG, limit, 1, 1};
	sotls_kconn_init(&p->k, p->b, &s, NULL);
	return true;
}

static void pair_close(struct pair *p)
{
	sotls_record_free(&p->ar);
	close(p->a);
	close(p->b);
}

/* A -> B: one record. */
static void a_send(struct pair *p, uint8_t type, const void *pt, size_t len)
{
	if (p->kernel_tx) {
		sotls_ktls_send_record(p->a, type, pt, len);
		return;
	}
	/* Only application data in userspace: enough for empty records. */
	uint8_t rec[SOTLS_REC_OVERHEAD + 64];
	memcpy(rec + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE, pt, len);
	sotls_record_seal_in_place(&p->ar, rec, len);
	send(p->a, rec, SOTLS_REC_OVERHEAD + len, 0);
}

static void a_send_n(struct pair *p, unsigned n, uint8_t type, const void *pt, size_t len)
{
	for (unsigned i = 0; i < n; i++)
		a_send(p, type, pt, len);
}

/* B receives with buffers of len bytes until it gets data, 0 or an error. */
static ssize_t b_recv(struct pair *p, uint8_t *buf, size_t len)
{
	for (int spins = 0; spins < 2000; spins++) {
		ssize_t n = sotls_kconn_recv(&p->k, buf, len);
		if (n != SOTLS_WANT_READ)
			return n;
		usleep(1000);
	}
	return SOTLS_WANT_READ;
}

#define FATAL(d) (SOTLS_ALERT_FATAL << 8 | (d))

/* The next alert B sent, as A reads it: level << 8 | desc, or -1. */
static int a_alert(struct pair *p)
{
	uint8_t buf[16];
	p->ar.pol.peer_alert = -1;
	for (int spins = 0; spins < 500; spins++) {
		ssize_t n = sotls_record_recv(&p->ar, buf, sizeof(buf));
		if (n == 0)
			return SOTLS_ALERT_WARNING << 8 | SOTLS_ALERT_CLOSE_NOTIFY;
		if (n == SOTLS_ERR_PEER_ALERT)
			return FATAL(p->ar.pol.peer_alert);
		if (p->ar.pol.peer_alert >= 0)
			return SOTLS_ALERT_WARNING << 8 | p->ar.pol.peer_alert;
		if (n != SOTLS_WANT_READ)
			return -1;
		usleep(1000);
	}
	return -1;
}

static void check_cap(const char *what, bool kernel_tx, uint8_t type, const void *pt, size_t len,
		      unsigned cap, bool server)
{
	struct pair p;
	uint8_t buf[64];
	if (!pair_open(&p, kernel_tx, server, 0)) {
		check(0, "%s: set-up: %s", what, strerror(errno));
		return;
	}
	bool ok = true;
	for (int round = 0; round < 2 && ok; round++) {
		a_send_n(&p, cap, type, pt, len);
		a_send(&p, SOTLS_CT_APPLICATION_DATA, "data", 4);
		ok = b_recv(&p, buf, sizeof(buf)) == 4 && memcmp(buf, "data", 4) == 0;
	}
	check(ok, "%s: %u in a row accepted, twice, data between resets", what, cap);
	/* cap + 1 in a row, no data behind: unexpected_message and
	 * SOTLS_ERR_RECORD_FLOOD. (Empty records the kernel skips within the
	 * recvmsg that returns data are bounded, not counted exactly.) */
	a_send_n(&p, cap + 1, type, pt, len);
	ssize_t n = b_recv(&p, buf, sizeof(buf));
	check(n == SOTLS_ERR_RECORD_FLOOD && p.k.pol.why.value == cap,
	      "%s: the %u-th is SOTLS_ERR_RECORD_FLOOD (%s)", what, cap + 1,
	      sotls_strerror((int)n));
	pair_close(&p);
}

static void test_caps(void)
{
	static const uint8_t hello_request[4] = {0, 0, 0, 0};
	static const uint8_t client_hello[8] = {1, 0, 0, 4, 3, 3, 0, 0};
	check_cap("empty records", false, SOTLS_CT_APPLICATION_DATA, NULL, 0,
		  SOTLS_REC_MAX_EMPTY_RECORDS, false);
	check_cap("warnings (unassigned 255)", true, SOTLS_CT_ALERT, "\x01\xff", 2,
		  SOTLS_REC_MAX_WARNING_ALERTS, false);
	check_cap("HelloRequest to a client", true, SOTLS_CT_HANDSHAKE, hello_request, 4,
		  SOTLS_REC_MAX_RENEG_REFUSALS, false);
	check_cap("ClientHello to a server", true, SOTLS_CT_HANDSHAKE, client_hello, 8,
		  SOTLS_REC_MAX_RENEG_REFUSALS, true);

	/* The old bypass: handshake records exactly as long as the buffer
	 * were taken for continuations and never counted. */
	struct pair p;
	uint8_t buf[4];
	if (pair_open(&p, true, false, 0)) {
		a_send_n(&p, SOTLS_REC_MAX_RENEG_REFUSALS + 1, SOTLS_CT_HANDSHAKE, hello_request, 4);
		ssize_t n = b_recv(&p, buf, sizeof(buf));
		check(n == SOTLS_ERR_RECORD_FLOOD,
		      "HelloRequests read with a 4-byte buffer are each counted (%s)",
		      sotls_strerror((int)n));
		pair_close(&p);
	}
	/* Empty records alone, none behind: consumed with WANT_READ, counted. */
	if (pair_open(&p, false, false, 0)) {
		a_send_n(&p, 200, SOTLS_CT_APPLICATION_DATA, NULL, 0);
		ssize_t n = b_recv(&p, buf, sizeof(buf));
		check(n == SOTLS_ERR_RECORD_FLOOD, "200 empty records, nothing else: %s",
		      sotls_strerror((int)n));
		pair_close(&p);
	}
}

/* One alert record of len bytes from a; B's recv result and alert. */
static void check_alert(const char *what, const uint8_t *a, size_t len, size_t blen, ssize_t want,
			int want_alert)
{
	struct pair p;
	uint8_t buf[64];
	if (!pair_open(&p, true, false, 0)) {
		check(0, "%s: set-up", what);
		return;
	}
	a_send(&p, SOTLS_CT_ALERT, a, len);
	a_send(&p, SOTLS_CT_APPLICATION_DATA, "x", 1);
	ssize_t n = b_recv(&p, buf, blen);
	int alert = want_alert >= 0 ? a_alert(&p) : -1;
	check(n == want && (want_alert < 0 || alert == want_alert),
	      "%s: %s (want %s), alert %#x (want %#x)", what, sotls_strerror((int)n),
	      sotls_strerror((int)want), alert, want_alert);
	pair_close(&p);
}

static void test_alerts(void)
{
	check_alert("warning close_notify", (const uint8_t *)"\x01\x00", 2, 64, 0, -1);
	check_alert("fatal close_notify", (const uint8_t *)"\x02\x00", 2, 64, SOTLS_ERR_PEER_ALERT,
		    -1);
	check_alert("level 7", (const uint8_t *)"\x07\x00", 2, 64, SOTLS_ERR_DECODE,
		    FATAL(SOTLS_ALERT_ILLEGAL_PARAMETER));
	check_alert("level 7, 1-byte buffer", (const uint8_t *)"\x07\x00", 2, 1, SOTLS_ERR_DECODE,
		    FATAL(SOTLS_ALERT_ILLEGAL_PARAMETER));
	check_alert("3-byte alert", (const uint8_t *)"\x01\x5a\x00", 3, 64, SOTLS_ERR_DECODE,
		    FATAL(SOTLS_ALERT_DECODE_ERROR));
	check_alert("3-byte alert, 2-byte buffer", (const uint8_t *)"\x01\x5a\x00", 3, 2,
		    SOTLS_ERR_DECODE, FATAL(SOTLS_ALERT_DECODE_ERROR));
	check_alert("1-byte alert", (const uint8_t *)"\x01", 1, 64, SOTLS_ERR_DECODE,
		    FATAL(SOTLS_ALERT_DECODE_ERROR));
	check_alert("warning, 1-byte buffer: data after it", (const uint8_t *)"\x01\x5a", 2, 1, 1,
		    -1);

	/* Alert halves with data between are two short alerts, not one. */
	struct pair p;
	uint8_t buf[64];
	if (pair_open(&p, true, false, 0)) {
		a_send(&p, SOTLS_CT_ALERT, "\x01", 1);
		a_send(&p, SOTLS_CT_APPLICATION_DATA, "x", 1);
		a_send(&p, SOTLS_CT_ALERT, "\x00", 1);
		ssize_t n = b_recv(&p, buf, 1);
		check(n == SOTLS_ERR_DECODE, "alert bytes are not joined across data: %s",
		      sotls_strerror((int)n));
		pair_close(&p);
	}
}

static void check_hs(const char *what, bool server, const uint8_t *msg, size_t len, size_t cut,
		     ssize_t want, int want_alert)
{
	struct pair p;
	uint8_t buf[64];
	if (!pair_open(&p, true, server, 0)) {
		check(0, "%s: set-up", what);
		return;
	}
	/* cut: the message goes in records of that many bytes */
	for (size_t i = 0; i < len; i += cut)
		a_send(&p, SOTLS_CT_HANDSHAKE, msg + i, len - i < cut ? len - i : cut);
	a_send(&p, SOTLS_CT_APPLICATION_DATA, "ok", 2);
	ssize_t n = b_recv(&p, buf, sizeof(buf));
	int alert = a_alert(&p);
	check(n == want && alert == want_alert, "%s: %s (want %s), alert %#x (want %#x)", what,
	      sotls_strerror((int)n), sotls_strerror((int)want), alert, want_alert);
	pair_close(&p);
}

static void test_handshake_messages(void)
{
	static const uint8_t hello_request[4] = {0, 0, 0, 0};
	static const uint8_t hello_request_body[5] = {0, 0, 0, 1, 0};
	static const uint8_t client_hello[8] = {1, 0, 0, 4, 3, 3, 0, 0};
	static const uint8_t finished[16] = {20, 0, 0, 12};
	const int refused = SOTLS_ALERT_WARNING << 8 | SOTLS_ALERT_NO_RENEGOTIATION;
	check_hs("HelloRequest to a client", false, hello_request, 4, 4, 2, refused);
	check_hs("HelloRequest in 1-byte records", false, hello_request, 4, 1, 2, refused);
	check_hs("ClientHello to a server, split", true, client_hello, 8, 3, 2, refused);
	check_hs("HelloRequest with a body", false, hello_request_body, 5, 5,
		 SOTLS_ERR_UNEXPECTED_MESSAGE, FATAL(SOTLS_ALERT_UNEXPECTED_MESSAGE));
	check_hs("HelloRequest to a server", true, hello_request, 4, 4,
		 SOTLS_ERR_UNEXPECTED_MESSAGE, FATAL(SOTLS_ALERT_UNEXPECTED_MESSAGE));
	check_hs("ClientHello to a client", false, client_hello, 8, 8,
		 SOTLS_ERR_UNEXPECTED_MESSAGE, FATAL(SOTLS_ALERT_UNEXPECTED_MESSAGE));
	check_hs("Finished after the handshake", true, finished, 16, 16,
		 SOTLS_ERR_UNEXPECTED_MESSAGE, FATAL(SOTLS_ALERT_UNEXPECTED_MESSAGE));
}

/* The usage limit: B (kernel TX) closes before passing it; B (kernel RX)
 * refuses a peer that passes it. */
static void test_key_usage_limit(void)
{
	const uint64_t limit = 64;
	struct pair p;
	uint8_t buf[64 * 1024];
	if (!pair_open(&p, false, false, limit)) {
		check(0, "usage limit: set-up");
		return;
	}
	sotls_record_set_policy(&p.ar, false, limit);
	size_t sent = 0;
	ssize_t n;
	/* small sends, then one that cannot fit */
	while ((n = sotls_kconn_send(&p.k, (const uint8_t *)"abcdefgh", 8)) > 0)
		sent += (size_t)n;
	check(n == SOTLS_ERR_KEY_USAGE_LIMIT && p.k.pol.tx_limited,
	      "kernel TX: SOTLS_ERR_KEY_USAGE_LIMIT after %zu bytes (%s)", sent,
	      sotls_strerror((int)n));
	check(sotls_kconn_send(&p.k, buf, 1) == SOTLS_ERR_KEY_USAGE_LIMIT,
	      "kernel TX: later sends fail the same way");
	uint64_t seq = 0;
	check(sotls_ktls_get_seq(p.b, SOTLS_KTLS_TX, ALG, &seq) == SOTLS_OK && seq <= limit,
	      "kernel TX: the kernel's sequence number %llu stays within %llu",
	      (unsigned long long)seq, (unsigned long long)limit);
	size_t got = 0;
	for (int spins = 0; spins < 2000; spins++) {
		n = sotls_record_recv(&p.ar, buf + got, sizeof(buf) - got);
		if (n > 0)
			got += (size_t)n;
		else if (n == SOTLS_WANT_READ)
			usleep(1000);
		else
			break;
	}
	check(n == 0 && got == sent && p.ar.rx.seq <= limit,
	      "kernel TX: the peer (same limit) reads all %zu bytes, then close_notify at "
	      "sequence number %llu (%s)",
	      got, (unsigned long long)p.ar.rx.seq - 1, sotls_strerror((int)n));
	bool same = got == sent;
	for (size_t i = 0; same && i < got; i++)
		same = buf[i] == "abcdefgh"[i % 8];
	check(same, "kernel TX: the bytes are the ones sent");
	pair_close(&p);

	/* A goes past B's limit: refused. */
	if (!pair_open(&p, false, false, limit)) {
		check(0, "usage limit: set-up");
		return;
	}
	for (uint64_t i = 0; i < limit + 4; i++)
		a_send(&p, SOTLS_CT_APPLICATION_DATA, "q", 1);
	got = 0;
	while ((n = b_recv(&p, buf, sizeof(buf))) > 0)
		got += (size_t)n;
	int alert = a_alert(&p);
	check(n == SOTLS_ERR_KEY_USAGE_LIMIT && got < limit &&
		      alert == FATAL(SOTLS_ALERT_UNEXPECTED_MESSAGE),
	      "kernel RX: a peer past the limit gets unexpected_message (%s, %zu bytes before)",
	      sotls_strerror((int)n), got);
	pair_close(&p);
}

int main(void)
{
	struct sotls_ktls_result res;
	if (sotls_ktls_probe(ALG, &res) != SOTLS_OK) {
		printf("FAIL: kTLS with ARIA-128-GCM: %s\n", res.text);
		return 1;
	}
	uint64_t seq;
	int a, b;
	vm_tcp_pair(&a, &b);
	if (install(a, SOTLS_KTLS_TX, K_AB, S_AB) == SOTLS_OK &&
	    install(b, SOTLS_KTLS_RX, K_AB, S_AB) == SOTLS_OK) {
		check(sotls_ktls_get_seq(a, SOTLS_KTLS_TX, ALG, &seq) == SOTLS_OK && seq == 1,
		      "getsockopt(TLS_TX) gives rec_seq");
		check(sotls_ktls_get_seq(b, SOTLS_KTLS_RX, ALG, &seq) == SOTLS_OK && seq == 1,
		      "getsockopt(TLS_RX) gives rec_seq");
	}
	test_caps();
	test_alerts();
	test_handshake_messages();
	test_key_usage_limit();
	printf("ktls_rx_rules_test: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 ? 0 : 1;
}

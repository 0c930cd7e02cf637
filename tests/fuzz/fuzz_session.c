/*
 * libFuzzer target: a session's bytes (resume.h gives the layout), what a
 * client application hands to sotls_conn_set_session and what a server reads
 * back from its session store or a ticket's plaintext. The input goes
 *  - to sotls_session_state_decode; a state it accepts is checked against
 *    the time rules at the fixed clock, and its peer identity
 *    (sotls_peer_load) and mbedTLS session (mbedtls_ssl_session_load) are
 *    loaded, saved, loaded again and saved again;
 *  - through the public path: a client connection is given the bytes with
 *    sotls_conn_set_session and started with sotls_handshake, which offers
 *    the session if resume.c's rules take it (fresh, same server name, same
 *    trust context, an allowed suite, a peer that loads, mbedTLS's own load)
 *    and writes a ClientHello into a socket whose peer sends nothing but EOF.
 * Oracles beyond the sanitizers: decoding is strict, so encoding a decoded
 * state gives the input back byte for byte; sotls_conn_set_session takes
 * exactly the states decode takes with the client role and not from the
 * future; no state from the future is fresh; an identity or an
 * mbedTLS session that loads saves to bytes that load and save the same.
 * Seeds (tests/fuzz/corpus/session/) are real sessions from
 * make_session_seeds.c, at the same clock (fuzz_session.h), made by a client
 * configured as this one is, so that their trust context is this one's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mbedtls/ssl.h>

#include "fuzz_session.h"
#include "mbedtls_internals.h"
#include "peer_identity.h"
#include "resume.h"
#include "sotls.h"

static struct sotls_config *g_cfg;

/* An oracle's failure: says which, then crashes for libFuzzer. */
static _Noreturn void fail(const char *why)
{
	fprintf(stderr, "fuzz-session: %s\n", why);
	abort();
}

static int64_t fixed_clock(void)
{
	return FUZZ_SESSION_NOW;
}

static void setup(void)
{
	sotls_resume_set_test_clock(fixed_clock);
	/* VERIFY_NONE: a session whose peer was not verified may be offered,
	 * so more of resume.c's rules are reached. */
	g_cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	if (g_cfg == NULL || sotls_config_set_verify(g_cfg, SOTLS_VERIFY_NONE) != 0 ||
	    sotls_config_set_server_name(g_cfg, FUZZ_SESSION_NAME) != 0)
		fail("set-up failed");
}

/* The identity's bytes, malloc'd. */
static uint8_t *peer_bytes(const struct sotls_peer *p, size_t *len)
{
	*len = sotls_peer_save(p, NULL);
	uint8_t *b = malloc(*len);
	if (b == NULL || sotls_peer_save(p, b) != *len)
		fail("out of memory");
	return b;
}

static void check_peer(const uint8_t *in, size_t len)
{
	struct sotls_peer *p = sotls_peer_load(in, len);
	if (p == NULL)
		return;
	size_t n1, n2;
	uint8_t *b1 = peer_bytes(p, &n1);
	struct sotls_peer *q = sotls_peer_load(b1, n1);
	if (q == NULL)
		fail("sotls_peer_save made bytes sotls_peer_load refuses");
	uint8_t *b2 = peer_bytes(q, &n2);
	if (n1 != n2 || memcmp(b1, b2, n1) != 0)
		fail("an identity saved, loaded and saved again changed");
	free(b1);
	free(b2);
	sotls_peer_free(p);
	sotls_peer_free(q);
}

/* mbedTLS's session bytes, malloc'd. */
static uint8_t *mbed_bytes(const mbedtls_ssl_session *s, size_t *len)
{
	*len = 0;
	if (mbedtls_ssl_session_save(s, NULL, 0, len) != MBEDTLS_ERR_SSL_BUFFER_TOO_SMALL)
		fail("mbedtls_ssl_session_save cannot measure");
	uint8_t *b = malloc(*len);
	if (b == NULL || mbedtls_ssl_session_save(s, b, *len, len) != 0)
		fail("mbedtls_ssl_session_save failed");
	return b;
}

static void check_mbed(const uint8_t *in, size_t len)
{
	mbedtls_ssl_session s, t;
	mbedtls_ssl_session_init(&s);
	mbedtls_ssl_session_init(&t);
	if (mbedtls_ssl_session_load(&s, in, len) == 0) {
		size_t tlen, n1, n2;
		uint32_t hint;
		(void)sotls_mbed_session_suite(&s);
		(void)sotls_mbed_session_ticket(&s, &tlen, &hint);
		(void)sotls_mbed_session_id(&s, &tlen);
		uint8_t *b1 = mbed_bytes(&s, &n1);
		if (mbedtls_ssl_session_load(&t, b1, n1) != 0)
			fail("mbedTLS refuses a session it saved");
		uint8_t *b2 = mbed_bytes(&t, &n2);
		if (n1 != n2 || memcmp(b1, b2, n1) != 0)
			fail("an mbedTLS session saved, loaded and saved again changed");
		free(b1);
		free(b2);
	}
	mbedtls_ssl_session_free(&s);
	mbedtls_ssl_session_free(&t);
}

/* sotls_conn_set_session, then the handshake that offers it. */
static void offer(const uint8_t *data, size_t size, int want_rc)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		fail("socketpair failed");
	shutdown(sp[1], SHUT_WR); /* the server says nothing: EOF */
	struct sotls_conn *c = NULL;
	if (sotls_conn_new(g_cfg, sp[0], &c) != 0)
		fail("sotls_conn_new failed");
	if (sotls_conn_set_session(c, data, size) != want_rc)
		fail("sotls_conn_set_session disagrees with decoding");
	if (want_rc == 0) {
		int rc = sotls_handshake(c);
		if (rc == 0 || rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
			fail("a handshake without a server did not fail");
		(void)sotls_conn_error_detail(c);
	}
	sotls_conn_free(c);
	close(sp[0]);
	close(sp[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_cfg == NULL)
		setup();
	if (size > SOTLS_SESSION_MAX + 1)
		return 0;
	struct sotls_session_state st;
	int want_rc = SOTLS_ERR_SESSION;
	if (sotls_session_state_decode(&st, data, size) == 0) {
		uint8_t *again = malloc(size);
		if (again == NULL || sotls_session_state_size(&st) != size)
			fail("a decoded state has another size");
		sotls_session_state_encode(&st, again);
		if (memcmp(again, data, size) != 0)
			fail("two encodings of one state");
		free(again);
		const bool future = sotls_session_state_from_future(&st, FUZZ_SESSION_NOW);
		if (sotls_session_state_fresh(&st, FUZZ_SESSION_NOW) && future)
			fail("a session from the future is fresh");
		if (st.peer_len != 0)
			check_peer(st.peer, st.peer_len);
		check_mbed(st.mbed, st.mbed_len);
		/* A client takes a session of its role not from the future. */
		if (st.role == SOTLS_SESSION_ROLE_CLIENT && !future)
			want_rc = 0;
	}
	offer(data, size, want_rc);
	return 0;
}

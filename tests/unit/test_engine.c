/*
 * The engine (sotls_conn_new_engine): a client engine and a server engine
 * wired back to back in memory, no socket anywhere. Each direction is a
 * byte pipe; the bytes cross it in chunks of a chosen size (1 byte, small
 * primes, a record, everything at once) or of random sizes, so every flight
 * is cut at many places, records and headers included. Over every suite,
 * both roles, full and resumed handshakes (ticket and session ID):
 *  - the handshake completes on both ends, data crosses both ways intact;
 *  - sotls_pending counts decrypted bytes held after a short read;
 *  - a failure (a client that does not trust the server) leaves its alert
 *    in the send buffer, and the server, fed it, fails with PEER_ALERT;
 *  - a server whose key is elsewhere (sotls_cert_new_external), the
 *    signature pending for some rounds: the engine says so
 *    (SOTLS_ENGINE_PRIVATE_KEY) and goes on once it completes;
 *  - certificate selection per connection (sotls_config_set_cert_select):
 *    the callback gets the connection (and its user pointer), answers at
 *    once or later (SOTLS_WANT_CERTIFICATE until sotls_conn_set_cert, with
 *    nothing read meanwhile), or refuses the name (unrecognized_name);
 *  - the kTLS handoff: two engines attached to a socketpair go on over it
 *    (this host has no kTLS: both directions stay in userspace, with the
 *    reason), and the traffic keys one side exports are the other's;
 *  - the argument and state rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemeral_cert.h"
#include "key_holder.h"
#include "sotls.h"
#include "test_rsa_cert.h"

/* Room for a client session (sotls_conn_get_session says how much). */
#define SESSION_CAP 16384

static char g_ec_cert[4096], g_ec_key[1024];
static char g_rsa_cert[4096], g_rsa_key[4096];

struct pipe_ {
	uint8_t *buf;
	size_t len, cap;
};

struct run {
	struct sotls_conn *c, *s;
	struct pipe_ c2s, s2c;
	size_t chunk;	/* fixed chunk size, 0: random */
	uint64_t rng;	/* xorshift state for random chunks */
	size_t max_rand;
};

static size_t next_chunk(struct run *r)
{
	if (r->chunk != 0)
		return r->chunk;
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return 1 + (size_t)(r->rng % r->max_rand);
}

static void pipe_put(struct pipe_ *p, const void *data, size_t n)
{
	if (p->len + n > p->cap) {
		p->cap = (p->len + n) * 2;
		p->buf = realloc(p->buf, p->cap);
		assert_non_null(p->buf);
	}
	memcpy(p->buf + p->len, data, n);
	p->len += n;
}

/* What from holds for sending goes into the pipe, and from the pipe into to,
 * each in chunks. Returns how many bytes moved. */
static size_t move(struct run *r, struct sotls_conn *from, struct pipe_ *p, struct sotls_conn *to)
{
	size_t moved = 0, len;
	const void *out;
	while ((out = sotls_engine_send_buf(from, &len)) != NULL) {
		assert_true(len > 0);
		size_t k = next_chunk(r);
		k = k < len ? k : len;
		pipe_put(p, out, k);
		assert_int_equal(sotls_engine_send_done(from, k), 0);
		moved += k;
	}
	assert_int_equal(len, 0);
	while (p->len > 0) {
		size_t k = next_chunk(r);
		k = k < p->len ? k : p->len;
		size_t took = sotls_engine_feed(to, p->buf, k);
		if (took == 0)
			break;
		assert_true(took <= k);
		memmove(p->buf, p->buf + took, p->len - took);
		p->len -= took;
		moved += took;
	}
	return moved;
}

static size_t move_both(struct run *r)
{
	return move(r, r->c, &r->c2s, r->s) + move(r, r->s, &r->s2c, r->c);
}

static bool waiting(int rc)
{
	return rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE;
}

/* Both handshakes to their end; *crc and *src what each returned last. */
static void handshake(struct run *r, int *crc, int *src)
{
	*crc = *src = SOTLS_WANT_READ;
	for (int round = 0;; round++) {
		int c0 = *crc, s0 = *src;
		if (waiting(*crc))
			*crc = sotls_handshake(r->c);
		if (waiting(*src))
			*src = sotls_handshake(r->s);
		size_t moved = move_both(r);
		if (!waiting(*crc) && !waiting(*src) && moved == 0)
			return;
		/* Someone must make progress: bytes move, or a call's answer changes. */
		if (round > 0 && moved == 0 && *crc == c0 && *src == s0)
			fail_msg("stuck: client %d server %d (%s / %s)", *crc, *src,
				 sotls_conn_error_detail(r->c), sotls_conn_error_detail(r->s));
	}
}

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 8));
}

/* One send or recv of the echo: n bytes move *pos on, or the engine waits
 * for exactly what the pipes have not yet given it. */
static bool advanced(ssize_t n, size_t *pos, ssize_t waiting)
{
	if (n > 0) {
		*pos += (size_t)n;
		return true;
	}
	assert_int_equal(n, waiting);
	return false;
}

/* The client sends total bytes, the server echoes them as they come, the
 * client reads them back; through the pipes in the run's chunks. */
static void echo(struct run *r, size_t total)
{
	uint8_t *data = malloc(total), *sbuf = malloc(total), *cbuf = malloc(total);
	assert_true(data && sbuf && cbuf);
	fill_pattern(data, total, 7);
	size_t cs = 0, sr = 0, ss = 0, cr = 0;
	for (int round = 0; cr < total; round++) {
		assert_true(round < 1000000);
		bool acted = false;
		if (cs < total)
			acted |= advanced(sotls_send(r->c, data + cs, total - cs), &cs,
					  SOTLS_WANT_WRITE);
		if (sr < total)
			acted |= advanced(sotls_recv(r->s, sbuf + sr, total - sr), &sr,
					  SOTLS_WANT_READ);
		if (ss < sr)
			acted |= advanced(sotls_send(r->s, sbuf + ss, sr - ss), &ss,
					  SOTLS_WANT_WRITE);
		acted |= advanced(sotls_recv(r->c, cbuf + cr, total - cr), &cr, SOTLS_WANT_READ);
		if (move_both(r) == 0 && !acted)
			fail_msg("echo stuck at %zu/%zu/%zu/%zu", cs, sr, ss, cr);
	}
	assert_memory_equal(cbuf, data, total);
	free(data);
	free(sbuf);
	free(cbuf);
}

static struct sotls_config *server_cfg(bool rsa, const char *suite)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_non_null(cfg);
	const char *cert = rsa ? g_rsa_cert : g_ec_cert, *key = rsa ? g_rsa_key : g_ec_key;
	assert_int_equal(sotls_config_set_cert_mem(cfg, cert, strlen(cert) + 1, key,
						   strlen(key) + 1),
			 0);
	if (suite != NULL)
		assert_int_equal(sotls_config_set_suites(cfg, suite), 0);
	return cfg;
}

/* A client that trusts the server's own self-signed certificate. */
static struct sotls_config *client_cfg(bool rsa, bool tickets)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_non_null(cfg);
	const char *ca = rsa ? g_rsa_cert : g_ec_cert;
	assert_int_equal(sotls_config_set_ca_mem(cfg, ca, strlen(ca) + 1), 0);
	assert_int_equal(sotls_config_set_server_name(cfg, "localhost"), 0);
	if (!tickets)
		assert_int_equal(sotls_config_set_session_tickets(cfg, 0, 0), 0);
	return cfg;
}

static void run_open(struct run *r, struct sotls_config *ccfg, struct sotls_config *scfg,
		     size_t chunk, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->chunk = chunk;
	r->rng = seed | 1;
	r->max_rand = 2000;
	assert_int_equal(sotls_conn_new_engine(ccfg, &r->c), 0);
	assert_int_equal(sotls_conn_new_engine(scfg, &r->s), 0);
}

static void run_close(struct run *r)
{
	sotls_conn_free(r->c);
	sotls_conn_free(r->s);
	free(r->c2s.buf);
	free(r->s2c.buf);
}

static const struct {
	bool rsa;
	const char *suite;
} SUITES[] = {
	{false, "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256"},
	{false, "TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384"},
	{false, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
	{false, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
	{true, "TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256"},
	{true, "TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384"},
	{true, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
	{true, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
};

/* 1 byte at a time, small primes, a header and a bit, about a record, all. */
static const size_t CHUNKS[] = {1, 2, 3, 7, 13, 64, 517, 4096, 20000, SIZE_MAX};

/* One connection, full or resumed from *session (updated from the client). */
static void one(const char *suite, bool rsa, struct sotls_config *ccfg, struct sotls_config *scfg,
		size_t chunk, uint64_t seed, uint8_t *session, size_t *session_len,
		enum sotls_resumption expect)
{
	struct run r;
	run_open(&r, ccfg, scfg, chunk, seed);
	if (*session_len > 0)
		assert_int_equal(sotls_conn_set_session(r.c, session, *session_len), 0);
	int crc, src;
	handshake(&r, &crc, &src);
	if (crc != 0 || src != 0)
		fail_msg("%s chunk %zu: client %d (%s), server %d (%s)", suite, chunk, crc,
			 sotls_conn_error_detail(r.c), src, sotls_conn_error_detail(r.s));
	struct sotls_info ci = {.size = sizeof(ci)}, si = {.size = sizeof(si)};
	assert_int_equal(sotls_get_info(r.c, &ci), 0);
	assert_int_equal(sotls_get_info(r.s, &si), 0);
	assert_string_equal(ci.suite, suite);
	assert_string_equal(si.suite, suite);
	assert_int_equal(ci.resumed, expect);
	assert_int_equal(si.resumed, expect);
	assert_int_equal(ci.tx_path, SOTLS_PATH_USERSPACE);
	assert_true(strstr(si.rx_reason, "engine") != NULL);
	(void)rsa;
	unsigned st = sotls_engine_state(r.c);
	assert_true(st & SOTLS_ENGINE_OPEN);
	assert_false(st & (SOTLS_ENGINE_FAILED | SOTLS_ENGINE_SEND));
	echo(&r, chunk == 1 ? 3000 : 70000);
	*session_len = 0;
	size_t len;
	if (sotls_conn_get_session(r.c, session, SESSION_CAP, &len) == 0)
		*session_len = len;
	run_close(&r);
}

static void each_suite(bool tickets, size_t chunk_from, size_t chunk_to)
{
	for (size_t i = 0; i < sizeof(SUITES) / sizeof(SUITES[0]); i++) {
		struct sotls_config *scfg = server_cfg(SUITES[i].rsa, SUITES[i].suite);
		struct sotls_config *ccfg = client_cfg(SUITES[i].rsa, tickets);
		uint8_t *session = malloc(SESSION_CAP);
		assert_non_null(session);
		for (size_t k = chunk_from; k < chunk_to; k++) {
			size_t len = 0;
			one(SUITES[i].suite, SUITES[i].rsa, ccfg, scfg, CHUNKS[k], k, session,
			    &len, SOTLS_RESUMED_NONE);
			assert_true(len > 0);
			one(SUITES[i].suite, SUITES[i].rsa, ccfg, scfg, CHUNKS[k], k + 100,
			    session, &len,
			    tickets ? SOTLS_RESUMED_TICKET : SOTLS_RESUMED_SESSION_ID);
		}
		free(session);
		sotls_config_free(ccfg);
		sotls_config_free(scfg);
	}
}

static void test_every_suite_every_chunk_ticket(void **state)
{
	(void)state;
	each_suite(true, 0, sizeof(CHUNKS) / sizeof(CHUNKS[0]));
}

static void test_every_suite_session_id(void **state)
{
	(void)state;
	/* Session IDs with a few chunk sizes (the cut points are the same). */
	each_suite(false, 2, 6);
}

/* Random cuts, different on every flight and every record. */
static void test_random_splits(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, NULL);
	struct sotls_config *ccfg = client_cfg(false, true);
	for (uint64_t seed = 1; seed <= 60; seed++) {
		struct run r;
		run_open(&r, ccfg, scfg, 0, seed * 0x9e3779b97f4a7c15ull);
		r.max_rand = seed % 3 == 0 ? 8 : seed % 3 == 1 ? 300 : 5000;
		int crc, src;
		handshake(&r, &crc, &src);
		assert_int_equal(crc, 0);
		assert_int_equal(src, 0);
		echo(&r, 40000);
		run_close(&r);
	}
	sotls_config_free(ccfg);
	sotls_config_free(scfg);
}

/* A server whose key sits in a key holder that answers after `rounds`
 * PENDINGs: every flight split in every chunk size, ECDSA and RSA. */
static void test_pending_private_key(void **state)
{
	(void)state;
	for (int rsa = 0; rsa <= 1; rsa++) {
		const char *cert = rsa ? g_rsa_cert : g_ec_cert, *key = rsa ? g_rsa_key : g_ec_key;
		for (size_t k = 0; k < sizeof(CHUNKS) / sizeof(CHUNKS[0]); k++) {
			struct holder h;
			assert_int_equal(key_holder_init(&h, key, ASYNC, (int)(k % 3)), 0);
			struct sotls_config *scfg = sotls_config_new(SOTLS_ROLE_SERVER);
			struct sotls_cert *c;
			assert_int_equal(sotls_cert_new_external(cert, strlen(cert) + 1,
								 &key_holder_method, &h, &c),
					 0);
			assert_int_equal(sotls_config_add_cert(scfg, c, NULL, 0), 0);
			sotls_cert_free(c);
			struct sotls_config *ccfg = client_cfg(rsa, true);
			struct run r;
			run_open(&r, ccfg, scfg, CHUNKS[k], k);
			int crc = SOTLS_WANT_READ, src = SOTLS_WANT_READ;
			bool saw_pk = false;
			for (int round = 0; waiting(crc) || waiting(src) ||
					    src == SOTLS_WANT_PRIVATE_KEY;
			     round++) {
				assert_true(round < 100000);
				if (waiting(crc))
					crc = sotls_handshake(r.c);
				if (waiting(src) || src == SOTLS_WANT_PRIVATE_KEY)
					src = sotls_handshake(r.s);
				if (src == SOTLS_WANT_PRIVATE_KEY) {
					saw_pk = true;
					assert_true(sotls_engine_state(r.s) &
						    SOTLS_ENGINE_PRIVATE_KEY);
				}
				move_both(&r);
			}
			assert_int_equal(crc, 0);
			assert_int_equal(src, 0);
			assert_true(saw_pk);
			assert_int_equal(h.sign_calls, 1);
			assert_int_equal(h.complete_calls, (int)(k % 3) + 1);
			echo(&r, 5000);
			run_close(&r);
			sotls_config_free(ccfg);
			sotls_config_free(scfg);
			mbedtls_pk_free(&h.key);
		}
	}
}

/* The selection callback's instructions and what it saw. */
struct selector {
	int answer; /* 0: give `cert` now, SOTLS_CERT_PENDING, or -1: refuse */
	struct sotls_cert *cert;
	int calls;
	struct sotls_conn *seen;
	void *seen_user;
	char name[64];
};

static int select_cb(struct sotls_conn *c, void *arg, const char *server_name,
		     struct sotls_cert **cert)
{
	struct selector *sel = arg;
	sel->calls++;
	sel->seen = c;
	sel->seen_user = sotls_conn_user(c);
	snprintf(sel->name, sizeof(sel->name), "%s", server_name);
	*cert = sel->answer == 0 ? sel->cert : NULL;
	return sel->answer;
}

static void test_cert_select(void **state)
{
	(void)state;
	struct sotls_cert *rsa_cert;
	assert_int_equal(sotls_cert_new_mem(g_rsa_cert, strlen(g_rsa_cert) + 1, g_rsa_key,
					    strlen(g_rsa_key) + 1, &rsa_cert),
			 0);
	/* The configuration has the ECDSA certificate; the callback hands out
	 * the RSA one, which is the only one the client trusts. */
	for (int mode = 0; mode < 3; mode++) {
		struct selector sel = {.answer = mode == 1 ? SOTLS_CERT_PENDING : mode == 2 ? -1 : 0,
				       .cert = rsa_cert};
		struct sotls_config *scfg = server_cfg(false, NULL);
		assert_int_equal(sotls_config_set_cert_select(scfg, select_cb, &sel), 0);
		struct sotls_config *ccfg = client_cfg(true, true);
		for (size_t k = 0; k < sizeof(CHUNKS) / sizeof(CHUNKS[0]); k += 2) {
			struct run r;
			run_open(&r, ccfg, scfg, CHUNKS[k], k);
			sotls_conn_set_user(r.s, &sel);
			sel.calls = 0;
			int crc = SOTLS_WANT_READ, src = SOTLS_WANT_READ;
			bool saw_wait = false;
			for (int round = 0;; round++) {
				assert_true(round < 100000);
				if (waiting(crc))
					crc = sotls_handshake(r.c);
				if (waiting(src) || src == SOTLS_WANT_CERTIFICATE)
					src = sotls_handshake(r.s);
				if (src == SOTLS_WANT_CERTIFICATE) {
					/* Nothing is taken meanwhile; then the answer. */
					size_t cap;
					assert_null(sotls_engine_recv_buf(r.s, &cap));
					assert_true(sotls_engine_state(r.s) &
						    SOTLS_ENGINE_CERTIFICATE);
					if (saw_wait)
						assert_int_equal(
							sotls_conn_set_cert(r.s, rsa_cert), 0);
					saw_wait = true;
				}
				if (move_both(&r) == 0 && !waiting(crc) &&
				    !(waiting(src) || src == SOTLS_WANT_CERTIFICATE))
					break;
			}
			assert_int_equal(sel.calls, 1);
			assert_ptr_equal(sel.seen, r.s);
			assert_ptr_equal(sel.seen_user, &sel);
			assert_string_equal(sel.name, "localhost");
			if (mode == 2) {
				/* RFC 6066 §3: unrecognized_name (112), fatal. */
				assert_int_equal(src, SOTLS_ERR_UNRECOGNIZED_NAME);
				assert_int_equal(crc, SOTLS_ERR_PEER_ALERT);
				struct sotls_info ci = {.size = sizeof(ci)};
				assert_int_equal(sotls_get_info(r.c, &ci), 0);
				assert_int_equal(ci.peer_alert, 112);
			} else {
				assert_int_equal(crc, 0);
				assert_int_equal(src, 0);
				assert_int_equal(saw_wait, mode == 1);
				struct sotls_info si = {.size = sizeof(si)};
				assert_int_equal(sotls_get_info(r.s, &si), 0);
				assert_int_equal(si.cert_index, SOTLS_CERT_INDEX_CALLBACK);
				assert_int_equal(sotls_conn_set_cert(r.s, rsa_cert),
						 SOTLS_ERR_BAD_STATE);
				echo(&r, 2000);
			}
			run_close(&r);
		}
		sotls_config_free(ccfg);
		sotls_config_free(scfg);
	}
	sotls_cert_free(rsa_cert);
}

/* sotls_pending: what a short read leaves inside sotls (SSL_pending). */
static void test_pending(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, NULL);
	struct sotls_config *ccfg = client_cfg(false, true);
	struct run r;
	run_open(&r, ccfg, scfg, SIZE_MAX, 1);
	int crc, src;
	handshake(&r, &crc, &src);
	assert_int_equal(crc, 0);
	assert_int_equal(src, 0);
	uint8_t data[10000], got[10000];
	fill_pattern(data, sizeof(data), 3);
	assert_int_equal(sotls_pending(r.c), 0);
	assert_int_equal(sotls_send(r.s, data, sizeof(data)), SOTLS_WANT_WRITE);
	move_both(&r);
	assert_int_equal(sotls_send(r.s, data, sizeof(data)), (ssize_t)sizeof(data));
	move_both(&r);
	assert_int_equal(sotls_recv(r.c, got, 100), 100);
	assert_int_equal(sotls_pending(r.c), sizeof(data) - 100);
	/* Nothing more crosses: the rest comes from inside sotls. */
	assert_int_equal(sotls_recv(r.c, got + 100, sizeof(got) - 100), sizeof(data) - 100);
	assert_int_equal(sotls_pending(r.c), 0);
	assert_memory_equal(got, data, sizeof(data));
	assert_int_equal(sotls_recv(r.c, got, 1), SOTLS_WANT_READ);
	/* close_notify, and the state says so. */
	assert_int_equal(sotls_shutdown(r.s), SOTLS_WANT_WRITE);
	move_both(&r);
	assert_int_equal(sotls_recv(r.c, got, 1), 0);
	assert_true(sotls_engine_state(r.c) & SOTLS_ENGINE_CLOSED);
	run_close(&r);
	sotls_config_free(ccfg);
	sotls_config_free(scfg);
}

/* A client that does not trust the server: its alert waits in the send
 * buffer after the failure; the server, fed it, learns it (RFC 5246
 * §7.2.2: bad_certificate / unknown_ca is fatal). */
static void test_failure_alert_reaches_peer(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, NULL);
	struct sotls_config *ccfg = client_cfg(true, true); /* trusts the RSA cert only */
	for (size_t k = 0; k < sizeof(CHUNKS) / sizeof(CHUNKS[0]); k += 3) {
		struct run r;
		run_open(&r, ccfg, scfg, CHUNKS[k], k);
		int crc, src;
		handshake(&r, &crc, &src);
		assert_int_equal(crc, SOTLS_ERR_CERT_VERIFY);
		assert_int_equal(src, SOTLS_ERR_PEER_ALERT);
		assert_true(sotls_engine_state(r.c) & SOTLS_ENGINE_FAILED);
		assert_false(sotls_engine_state(r.c) & SOTLS_ENGINE_SEND);
		struct sotls_info si = {.size = sizeof(si)};
		assert_int_equal(sotls_get_info(r.s, &si), 0);
		assert_int_equal(si.peer_alert, 48); /* unknown_ca */
		run_close(&r);
	}
	sotls_config_free(ccfg);
	sotls_config_free(scfg);
}

/* The handoff: both engines go on over a socketpair. */
static void test_attach_fd_and_keys(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256");
	struct sotls_config *ccfg = client_cfg(false, true);
	struct run r;
	run_open(&r, ccfg, scfg, SIZE_MAX, 1);
	int crc, src;
	handshake(&r, &crc, &src);
	assert_int_equal(crc, 0);
	assert_int_equal(src, 0);
	assert_int_equal(sotls_sendfile(r.c, 0, NULL, 1), SOTLS_ERR_UNSUPPORTED);
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	assert_int_equal(sotls_engine_attach_fd(r.c, -1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_engine_attach_fd(r.c, sp[0]), 0);
	assert_int_equal(sotls_engine_attach_fd(r.s, sp[1]), 0);
	struct sotls_info ci = {.size = sizeof(ci)};
	assert_int_equal(sotls_get_info(r.c, &ci), 0);
	assert_int_equal(ci.tx_path, SOTLS_PATH_USERSPACE); /* AF_UNIX: no kTLS */
	assert_null(strstr(ci.tx_reason, "engine"));
	/* No engine buffers any more, either way. */
	size_t n;
	assert_null(sotls_engine_send_buf(r.c, &n));
	assert_null(sotls_engine_recv_buf(r.c, &n));
	assert_int_equal(sotls_engine_recv_done(r.c, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_send(r.c, "over the socket", 15), 15);
	char got[32];
	assert_int_equal(sotls_recv(r.s, got, sizeof(got)), 15);
	assert_memory_equal(got, "over the socket", 15);
	run_close(&r);
	close(sp[0]);
	close(sp[1]);

	/* Exported keys: the client's TX is the server's RX, and back. */
	run_open(&r, ccfg, scfg, 517, 2);
	handshake(&r, &crc, &src);
	assert_int_equal(crc, 0);
	assert_int_equal(src, 0);
	struct sotls_traffic_keys ct, cr, st, sr;
	assert_int_equal(sotls_engine_traffic_keys(r.c, &ct, &cr), 0);
	assert_int_equal(sotls_engine_traffic_keys(r.s, &st, &sr), 0);
	assert_int_equal(ct.key_len, 16);
	assert_int_equal(ct.suite_id, 0xc05c);
	assert_memory_equal(ct.key, sr.key, 16);
	assert_memory_equal(ct.salt, sr.salt, 4);
	assert_int_equal(ct.seq, sr.seq);
	assert_int_equal(ct.seq, 1); /* Finished was record 0 */
	assert_memory_equal(st.key, cr.key, 16);
	assert_int_equal(st.seq, cr.seq);
	assert_memory_not_equal(ct.key, st.key, 16);
	/* Once only; then no records here. */
	assert_int_equal(sotls_engine_traffic_keys(r.c, &ct, &cr), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_send(r.c, "x", 1), SOTLS_ERR_BAD_STATE);
	run_close(&r);

	/* After a record moved: too late to hand over. */
	run_open(&r, ccfg, scfg, SIZE_MAX, 3);
	handshake(&r, &crc, &src);
	assert_int_equal(sotls_send(r.c, "x", 1), SOTLS_WANT_WRITE);
	assert_int_equal(sotls_engine_attach_fd(r.c, 0), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_engine_traffic_keys(r.c, &ct, &cr), SOTLS_ERR_BAD_STATE);
	run_close(&r);
	sotls_config_free(ccfg);
	sotls_config_free(scfg);
}

/* sotls_engine_recv_done(c, 0), "the socket had nothing": the receive
 * buffer sotls_engine_recv_buf lent goes back, so an idle connection holds
 * none. Seen through the thread's spare buffer: the one connection A gives
 * back is the one connection B borrows next (had A kept it, B would get
 * another). */
static void test_recv_done_zero_gives_back(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, NULL), *ccfg = client_cfg(false, true);
	struct run a, b;
	int crc, src;
	run_open(&a, ccfg, scfg, 0, 5);
	run_open(&b, ccfg, scfg, 0, 6);
	handshake(&a, &crc, &src);
	assert_int_equal(crc, 0);
	assert_int_equal(src, 0);
	handshake(&b, &crc, &src);
	assert_int_equal(src, 0);
	echo(&a, 3000);
	echo(&b, 3000);
	size_t cap_a, cap_b;
	uint8_t *pa = sotls_engine_recv_buf(a.s, &cap_a); /* takes the spare, if any */
	assert_non_null(pa);
	assert_int_equal(sotls_engine_recv_done(a.s, 0), 0);
	uint8_t *pb = sotls_engine_recv_buf(b.s, &cap_b);
	assert_ptr_equal(pb, pa);
	assert_int_equal(cap_b, cap_a);
	assert_int_equal(sotls_engine_recv_done(b.s, 0), 0);
	/* Still a working connection afterwards. */
	echo(&a, 20000);
	run_close(&a);
	run_close(&b);
	sotls_config_free(ccfg);
	sotls_config_free(scfg);
}

static void test_args_and_state(void **state)
{
	(void)state;
	struct sotls_config *scfg = server_cfg(false, NULL);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new_engine(NULL, &c), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_conn_new_engine(scfg, NULL), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_conn_new_engine(scfg, &c), 0);
	size_t n = 99;
	/* Nothing to take before the handshake runs; then the first header. */
	assert_null(sotls_engine_recv_buf(c, &n));
	assert_int_equal(n, 0);
	assert_int_equal(sotls_engine_state(c), 0);
	assert_int_equal(sotls_handshake(c), SOTLS_WANT_READ);
	assert_non_null(sotls_engine_recv_buf(c, &n));
	assert_int_equal(n, 5);
	assert_int_equal(sotls_engine_state(c), SOTLS_ENGINE_RECV);
	assert_int_equal(sotls_engine_recv_done(c, 6), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_engine_send_done(c, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_null(sotls_engine_send_buf(c, &n));
	/* The stream ends before a byte came: truncated, as on a socket. */
	assert_int_equal(sotls_engine_recv_eof(c), 0);
	assert_int_equal(sotls_handshake(c), SOTLS_ERR_TRUNCATED);
	assert_true(sotls_engine_state(c) & SOTLS_ENGINE_FAILED);
	/* The user pointer. */
	assert_null(sotls_conn_user(c));
	sotls_conn_set_user(c, &n);
	assert_ptr_equal(sotls_conn_user(c), &n);
	sotls_conn_free(c);
	/* fd connections are not engines. */
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	assert_int_equal(sotls_conn_new(scfg, sp[0], &c), 0);
	assert_int_equal(sotls_engine_state(c), 0);
	assert_int_equal(sotls_engine_feed(c, "x", 1), 0);
	assert_int_equal(sotls_engine_attach_fd(c, sp[1]), SOTLS_ERR_BAD_STATE);
	sotls_conn_free(c);
	close(sp[0]);
	close(sp[1]);
	sotls_config_free(scfg);
}

int main(void)
{
	if (ephemeral_cert("localhost", g_ec_cert, sizeof(g_ec_cert), g_ec_key, sizeof(g_ec_key)) !=
		    0 ||
	    test_rsa_cert(g_rsa_cert, sizeof(g_rsa_cert), g_rsa_key, sizeof(g_rsa_key)) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_and_state),
		cmocka_unit_test(test_every_suite_every_chunk_ticket),
		cmocka_unit_test(test_every_suite_session_id),
		cmocka_unit_test(test_random_splits),
		cmocka_unit_test(test_pending_private_key),
		cmocka_unit_test(test_cert_select),
		cmocka_unit_test(test_pending),
		cmocka_unit_test(test_failure_alert_reaches_peer),
		cmocka_unit_test(test_attach_fd_and_keys),
		cmocka_unit_test(test_recv_done_zero_gives_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

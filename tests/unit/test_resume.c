/*
 * Session resumption's modules (lib/handshake/session_cache.c,
 * session_state.c, ticket_keys.c, resume.c) and the rules they apply,
 * sotls <-> sotls and sotls <-> a plain mbedTLS client over socketpairs,
 * with the clock in the test's hand. The real-peer tests (OpenSSL,
 * Python) are tests/interop/resumption.py.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_cache.h>
#include <mbedtls/x509_crt.h>

#include "ephemeral_cert.h"
#include "peer_identity.h"
#include "resume.h"
#include "sotls.h"

static char g_cert[4096], g_key[1024]; /* CN=localhost */
static int64_t g_now = 1800000000;

static int64_t test_clock(void)
{
	return g_now;
}

/* ---- the cache ---- */

static void id_of(uint8_t id[32], unsigned i)
{
	memset(id, 0xA5, 32);
	memcpy(id, &i, sizeof(i));
}

/* The bound: 10,000 distinct sessions into a cache of 1,000. */
static void test_cache_bound(void **state)
{
	(void)state;
	struct sotls_session_cache *c = sotls_session_cache_new(1000, 1u << 20);
	assert_non_null(c);
	uint8_t id[32], data[200], buf[SOTLS_SESSION_MAX];
	size_t n, bytes, peak = 0;
	for (unsigned i = 0; i < 10000; i++) {
		id_of(id, i);
		memset(data, (int)(i & 0xff), sizeof(data));
		sotls_session_cache_put(c, id, 32, data, 100 + i % 100, 3600);
		sotls_session_cache_usage(c, &n, &bytes);
		assert_true(n <= 1000);
		assert_true(bytes <= 1u << 20);
		peak = n > peak ? n : peak;
	}
	assert_int_equal(peak, 1000);
	/* The oldest went first; the newest 1,000 are all there, intact. */
	id_of(id, 8999);
	assert_int_equal(sotls_session_cache_get(c, id, 32, buf, sizeof(buf)), 0);
	for (unsigned i = 9000; i < 10000; i++) {
		id_of(id, i);
		ssize_t got = sotls_session_cache_get(c, id, 32, buf, sizeof(buf));
		assert_int_equal(got, 100 + i % 100);
		assert_int_equal(buf[0], i & 0xff);
	}
	/* Too small a buffer is a miss, not a partial copy. */
	assert_int_equal(sotls_session_cache_get(c, id, 32, buf, 10), 0);
	sotls_session_cache_del(c, id, 32);
	assert_int_equal(sotls_session_cache_get(c, id, 32, buf, sizeof(buf)), 0);
	sotls_session_cache_free(c);
}

/* The byte bound, replacement under the same ID, and expiry. */
static void test_cache_bytes_and_time(void **state)
{
	(void)state;
	struct sotls_session_cache *c = sotls_session_cache_new(1000, 10000);
	uint8_t id[32], data[3000] = {0}, buf[4000];
	size_t n, bytes;
	for (unsigned i = 0; i < 50; i++) {
		id_of(id, i);
		sotls_session_cache_put(c, id, 32, data, sizeof(data), 60);
		sotls_session_cache_usage(c, &n, &bytes);
		assert_true(bytes <= 10000);
	}
	assert_int_equal(n, 3);
	data[0] = 7;
	sotls_session_cache_put(c, id, 32, data, 10, 60); /* the same ID again */
	sotls_session_cache_usage(c, &n, &bytes);
	assert_int_equal(n, 3);
	assert_int_equal(sotls_session_cache_get(c, id, 32, buf, sizeof(buf)), 10);
	assert_int_equal(buf[0], 7);
	g_now += 61;
	assert_int_equal(sotls_session_cache_get(c, id, 32, buf, sizeof(buf)), 0);
	/* A session larger than the whole bound is not kept. */
	uint8_t big[12000] = {0};
	sotls_session_cache_put(c, id, 32, big, sizeof(big), 60);
	assert_int_equal(sotls_session_cache_get(c, id, 32, big, sizeof(big)), 0);
	sotls_session_cache_free(c);
}

/* Eight threads putting and getting at once (run under ASan by the
 * sanitizer suite). Each session's bytes name its ID, so a get that
 * returns another entry's bytes, a torn copy or a wrong length is seen;
 * a miss is allowed only because the others evict (3000 IDs, 2000 slots). */
static void *cache_worker(void *arg)
{
	struct sotls_session_cache *c = arg;
	uint8_t id[32], data[64], buf[80];
	unsigned *hits = calloc(1, sizeof(*hits));
	for (unsigned i = 0; i < 20000 && hits != NULL; i++) {
		unsigned k = i % 3000;
		id_of(id, k);
		for (size_t j = 0; j < sizeof(data); j++)
			data[j] = (uint8_t)(k * 7 + j);
		sotls_session_cache_put(c, id, 32, data, sizeof(data), 3600);
		memset(buf, 0xee, sizeof(buf));
		ssize_t n = sotls_session_cache_get(c, id, 32, buf, sizeof(buf));
		if (n == 0)
			continue;
		if (n != (ssize_t)sizeof(data) || memcmp(buf, data, sizeof(data)) != 0 ||
		    buf[sizeof(data)] != 0xee) {
			free(hits);
			return NULL; /* a wrong answer: the joiner sees NULL */
		}
		(*hits)++;
	}
	return hits;
}

static void test_cache_threads(void **state)
{
	(void)state;
	struct sotls_session_cache *c = sotls_session_cache_new(2000, 1u << 20);
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, cache_worker, c), 0);
	unsigned hits = 0;
	for (int i = 0; i < 8; i++) {
		unsigned *h;
		pthread_join(t[i], (void **)&h);
		assert_non_null(h); /* every get answered right */
		hits += *h;
		free(h);
	}
	/* A put followed at once by a get of the same ID finds it nearly
	 * always; a cache that never returned anything would pass the above. */
	assert_true(hits > 8 * 20000 / 2);
	size_t n, bytes;
	sotls_session_cache_usage(c, &n, &bytes);
	assert_true(n <= 2000 && bytes == n * 64);
	sotls_session_cache_free(c);
}

/* ---- the session's bytes ---- */

static void test_state_strict(void **state)
{
	(void)state;
	uint8_t mbed[40], peer[7] = {1, 2, 3, 4, 5, 6, 7};
	memset(mbed, 0x3c, sizeof(mbed));
	struct sotls_session_state st = {.role = SOTLS_SESSION_ROLE_SERVER, .suite = 0xC05C,
					 .issued = 12345, .lifetime = 600, .peer = peer,
					 .peer_len = sizeof(peer), .mbed = mbed,
					 .mbed_len = sizeof(mbed)};
	strcpy(st.sni, "a.test");
	size_t len = sotls_session_state_size(&st);
	uint8_t buf[256];
	sotls_session_state_encode(&st, buf);
	struct sotls_session_state out;
	assert_int_equal(sotls_session_state_decode(&out, buf, len), 0);
	assert_int_equal(out.suite, 0xC05C);
	assert_int_equal(out.issued, 12345);
	assert_string_equal(out.sni, "a.test");
	assert_int_equal(out.mbed_len, sizeof(mbed));
	assert_memory_equal(out.peer, peer, sizeof(peer));
	/* Every truncation and every extension is refused. */
	for (size_t i = 0; i < len; i++)
		assert_int_equal(sotls_session_state_decode(&out, buf, i), SOTLS_ERR_SESSION);
	buf[len] = 0;
	assert_int_equal(sotls_session_state_decode(&out, buf, len + 1), SOTLS_ERR_SESSION);
	/* A length field that points past the end, another version (1 had no
	 * trust context: such sessions are refused). */
	buf[4] = SOTLS_SESSION_VERSION - 1;
	assert_int_equal(sotls_session_state_decode(&out, buf, len), SOTLS_ERR_SESSION);
	buf[4] = SOTLS_SESSION_VERSION;
	buf[20 + SOTLS_SESSION_CONTEXT_LEN] = 200; /* sni_len */
	assert_int_equal(sotls_session_state_decode(&out, buf, len), SOTLS_ERR_SESSION);
}

/* The context digest travels with the state. */
static void test_state_context(void **state)
{
	(void)state;
	uint8_t mbed[8] = {1};
	struct sotls_session_state st = {.role = SOTLS_SESSION_ROLE_SERVER, .issued = 1,
					 .lifetime = 60, .mbed = mbed, .mbed_len = sizeof(mbed)};
	for (size_t i = 0; i < sizeof(st.context); i++)
		st.context[i] = (uint8_t)(i * 7 + 1);
	uint8_t buf[256];
	sotls_session_state_encode(&st, buf);
	struct sotls_session_state out;
	assert_int_equal(sotls_session_state_decode(&out, buf, sotls_session_state_size(&st)), 0);
	assert_memory_equal(out.context, st.context, sizeof(st.context));
}

/* The identity as session bytes: it loads back the same, and every
 * truncation or extension is refused. */
static void test_peer_bytes(void **state)
{
	(void)state;
	mbedtls_x509_crt crt;
	mbedtls_x509_crt_init(&crt);
	assert_int_equal(mbedtls_x509_crt_parse(&crt, (const unsigned char *)g_cert,
						strlen(g_cert) + 1),
			 0);
	mbedtls_x509_crt *chain[1] = {&crt};
	uint32_t flags[1] = {0x8};
	struct sotls_peer *p = sotls_peer_new(chain, flags, 1, NULL);
	assert_non_null(p);
	p->verified = true;
	size_t n = sotls_peer_save(p, NULL);
	uint8_t *buf = malloc(n + 1);
	assert_int_equal(sotls_peer_save(p, buf), n);
	struct sotls_peer *q = sotls_peer_load(buf, n);
	assert_non_null(q);
	assert_true(q->verified);
	assert_int_equal(q->n_certs, 1);
	assert_int_equal(q->certs[0].flags, 0x8);
	assert_int_equal(q->certs[0].der_len, crt.raw.len);
	assert_memory_equal(q->certs[0].der, crt.raw.p, crt.raw.len);
	assert_string_equal(q->subject, p->subject);
	sotls_peer_free(q);
	for (size_t i = 0; i < n; i++)
		assert_null(sotls_peer_load(buf, i));
	buf[n] = 0;
	assert_null(sotls_peer_load(buf, n + 1));
	free(buf);
	sotls_peer_free(p);
	mbedtls_x509_crt_free(&crt);
}

/* ---- tickets ---- */

static void test_ticket_tamper(void **state)
{
	(void)state;
	struct sotls_ticket_keyring *r = sotls_ticket_keyring_new();
	sotls_ticket_keyring_set_times(r, 7200, 3600);
	uint8_t st[100], t[100 + SOTLS_TICKET_OVERHEAD], out[100];
	for (size_t i = 0; i < sizeof(st); i++)
		st[i] = (uint8_t)i;
	uint32_t hint;
	assert_int_equal(sotls_ticket_seal(r, st, sizeof(st), t, &hint), 0);
	assert_int_equal(hint, 7200);
	size_t n;
	bool renew;
	assert_int_equal(sotls_ticket_open(r, t, sizeof(t), out, &n, &renew), 0);
	assert_int_equal(n, sizeof(st));
	assert_memory_equal(out, st, sizeof(st));
	assert_false(renew);
	/* Any flipped bit (name, nonce, ciphertext, tag) fails, as does any
	 * truncation. */
	for (size_t i = 0; i < sizeof(t); i++) {
		t[i] ^= 0x10;
		assert_int_equal(sotls_ticket_open(r, t, sizeof(t), out, &n, &renew),
				 SOTLS_ERR_SESSION);
		t[i] ^= 0x10;
	}
	for (size_t len = 0; len < sizeof(t); len++)
		assert_int_not_equal(sotls_ticket_open(r, t, len, out, &n, &renew), 0);
	sotls_ticket_keyring_free(r);
}

/* Automatic keys: a new one issues after the period, the old one still
 * opens (renewing) for a ticket lifetime, then not. */
static void test_ticket_rotation(void **state)
{
	(void)state;
	struct sotls_ticket_keyring *r = sotls_ticket_keyring_new();
	sotls_ticket_keyring_set_times(r, 100, 50);
	uint8_t st[10] = {0}, t1[10 + SOTLS_TICKET_OVERHEAD], t2[sizeof(t1)], out[10];
	uint32_t hint;
	size_t n;
	bool renew;
	assert_int_equal(sotls_ticket_seal(r, st, sizeof(st), t1, &hint), 0);
	g_now += 60;
	assert_int_equal(sotls_ticket_seal(r, st, sizeof(st), t2, &hint), 0);
	assert_memory_not_equal(t1, t2, 16); /* another key name */
	assert_int_equal(sotls_ticket_open(r, t1, sizeof(t1), out, &n, &renew), 0);
	assert_true(renew);
	assert_int_equal(sotls_ticket_open(r, t2, sizeof(t2), out, &n, &renew), 0);
	assert_false(renew);
	g_now += 100; /* t1's key: intro + 50 + 100 is past */
	assert_int_equal(sotls_ticket_open(r, t1, sizeof(t1), out, &n, &renew), SOTLS_ERR_SESSION);
	sotls_ticket_keyring_free(r);
}

/* Given keys: the latest intro that has come issues; a future one does not;
 * an expired one neither issues nor opens. */
static void test_ticket_given_keys(void **state)
{
	(void)state;
	struct sotls_ticket_keyring *r = sotls_ticket_keyring_new();
	struct sotls_ticket_key a = {.intro = g_now - 100, .expiry = g_now + 1000};
	struct sotls_ticket_key b = {.intro = g_now + 50, .expiry = 0};
	memset(a.name, 'a', 16);
	memset(b.name, 'b', 16);
	assert_int_equal(sotls_ticket_keyring_add(r, &b), 0);
	assert_int_equal(sotls_ticket_keyring_add(r, &a), 0);
	uint8_t st[10] = {0}, t[10 + SOTLS_TICKET_OVERHEAD], out[10];
	uint32_t hint;
	size_t n;
	bool renew;
	assert_int_equal(sotls_ticket_seal(r, st, sizeof(st), t, &hint), 0);
	assert_int_equal(t[0], 'a');
	g_now += 60;
	assert_int_equal(sotls_ticket_open(r, t, sizeof(t), out, &n, &renew), 0);
	assert_true(renew); /* b issues now */
	assert_int_equal(sotls_ticket_seal(r, st, sizeof(st), t, &hint), 0);
	assert_int_equal(t[0], 'b');
	g_now += 2000;
	memset(t, 'a', 16);
	assert_int_equal(sotls_ticket_open(r, t, sizeof(t), out, &n, &renew), SOTLS_ERR_SESSION);
	sotls_ticket_keyring_free(r);
}

/* ---- sotls <-> sotls ---- */

struct side {
	struct sotls_config *cfg;
	int fd;
	int rc;
	struct sotls_info info;
	char detail[256];
};

static void *server_main(void *arg)
{
	struct side *s = arg;
	struct sotls_conn *c;
	s->rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->rc == 0) {
		s->rc = sotls_handshake(c);
		snprintf(s->detail, sizeof(s->detail), "%s", sotls_conn_error_detail(c));
		s->info = (struct sotls_info)SOTLS_INFO_INIT;
		sotls_get_info(c, &s->info);
		char b[4];
		if (s->rc == 0 && sotls_recv(c, b, sizeof(b)) == 4)
			(void)sotls_send(c, b, 4);
		sotls_conn_free(c);
	}
	close(s->fd);
	return NULL;
}

/* One connection; the client offers sess (NULL: none) and exports into
 * out. Returns the client's handshake result; *srv gets the server's. */
static int connect_once(struct sotls_config *scfg, struct sotls_config *ccfg, const char *name,
			const uint8_t *sess, size_t sess_len, uint8_t *out, size_t *out_len,
			struct side *srv, struct sotls_info *cinfo)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	*srv = (struct side){.cfg = scfg, .fd = fd[1]};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, server_main, srv), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(ccfg, fd[0], &c), 0);
	if (name != NULL)
		assert_int_equal(sotls_conn_set_server_name(c, name), 0);
	if (sess != NULL)
		assert_int_equal(sotls_conn_set_session(c, sess, sess_len), 0);
	int rc = sotls_handshake(c);
	*cinfo = (struct sotls_info)SOTLS_INFO_INIT;
	sotls_get_info(c, cinfo);
	/* The strings live as long as the connection. */
	static char name_copy[256], suite_copy[64];
	snprintf(name_copy, sizeof(name_copy), "%s", cinfo->server_name);
	snprintf(suite_copy, sizeof(suite_copy), "%s", cinfo->suite);
	cinfo->server_name = name_copy;
	cinfo->suite = suite_copy;
	if (rc == 0) {
		char b[4];
		assert_int_equal(sotls_send(c, "ping", 4), 4);
		assert_int_equal(sotls_recv(c, b, 4), 4);
		assert_memory_equal(b, "ping", 4);
	}
	if (out != NULL && rc == 0) {
		int grc = sotls_conn_get_session(c, out, *out_len, out_len);
		if (grc != 0)
			*out_len = 0;
	}
	sotls_conn_free(c);
	close(fd[0]);
	pthread_join(t, NULL);
	return rc;
}

static struct sotls_config *server_cfg(void)
{
	struct sotls_config *s = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_cert_mem(s, g_cert, strlen(g_cert) + 1, g_key,
						   strlen(g_key) + 1),
			 0);
	return s;
}

static struct sotls_config *client_cfg(bool tickets)
{
	struct sotls_config *c = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_verify(c, SOTLS_VERIFY_NONE), 0);
	if (!tickets)
		assert_int_equal(sotls_config_set_session_tickets(c, 0, 0), 0);
	return c;
}

/* Full, then resumed by ticket or by session ID; both ends agree, the
 * peer's chain carries over, and a session made for one name is not
 * offered under another (RFC 6066 §3). */
static void resume_both_ways(bool tickets)
{
	struct sotls_config *s = server_cfg(), *c = client_cfg(tickets);
	uint8_t sess[SOTLS_SESSION_MAX], again[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess), len2 = sizeof(again);
	struct side srv;
	struct sotls_info ci;
	enum sotls_resumption want = tickets ? SOTLS_RESUMED_TICKET : SOTLS_RESUMED_SESSION_ID;

	assert_int_equal(connect_once(s, c, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_true(len > 0);
	assert_int_equal(connect_once(s, c, "localhost", sess, len, again, &len2, &srv, &ci), 0);
	assert_int_equal(srv.rc, 0);
	assert_int_equal(ci.resumed, want);
	assert_int_equal(srv.info.resumed, want);
	assert_int_equal(ci.peer_chain_len, 1); /* the server's chain, from the session */
	assert_string_equal(ci.server_name, "localhost");
	/* The session exported after a resumption resumes again. */
	assert_true(len2 > 0);
	assert_int_equal(connect_once(s, c, "localhost", again, len2, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, want);
	/* Another name: not offered, a full handshake. */
	assert_int_equal(connect_once(s, c, "other.test", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	/* Past its lifetime (7200 s by default on the server): full. */
	g_now += 7300;
	assert_int_equal(connect_once(s, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	sotls_config_free(s);
	sotls_config_free(c);
}

static void test_resume_ticket(void **state)
{
	(void)state;
	resume_both_ways(true);
}

static void test_resume_id(void **state)
{
	(void)state;
	resume_both_ways(false);
}

/* A server with ticket key k and the suites in this order. */
static struct sotls_config *ticket_server(const struct sotls_ticket_key *k, const char *suites)
{
	struct sotls_config *s = server_cfg();
	assert_int_equal(sotls_config_add_ticket_key(s, k), 0);
	assert_int_equal(sotls_config_set_suites(s, suites), 0);
	return s;
}

/* A server's ticket under the client's session, taken to a server whose
 * suite order now picks another suite: RFC 5246 §7.4.1.3, a full
 * handshake, never the old secret under a new suite. */
static void test_ticket_other_suite(void **state)
{
	(void)state;
	struct sotls_ticket_key k = {.intro = g_now - 10};
	memset(k.name, 'k', 16);
	memset(k.secret, 's', 32);
	struct sotls_config *c = client_cfg(true);
	struct sotls_config *s1 = ticket_server(&k, "ARIA-128-GCM:AES-128-GCM");
	struct sotls_config *s2 = ticket_server(&k, "AES-128-GCM:ARIA-128-GCM");
	struct sotls_config *s3 = ticket_server(&k, "ARIA-128-GCM:AES-128-GCM");
	uint8_t sess[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess);
	struct side srv;
	struct sotls_info ci;
	assert_int_equal(connect_once(s1, c, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_string_equal(ci.suite, "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256");
	assert_int_equal(connect_once(s2, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	assert_string_equal(ci.suite, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
	/* With the same key and order, another server takes it. */
	assert_int_equal(connect_once(s3, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_TICKET);
	sotls_config_free(s1);
	sotls_config_free(s2);
	sotls_config_free(s3);
	sotls_config_free(c);
}

/* A ticket renewed in an abbreviated handshake (its key no longer issues)
 * keeps the client's verified identity: a server that requires one
 * resumes the renewed ticket too, and still reports the chain. */
static void test_renewal_keeps_identity(void **state)
{
	(void)state;
	static char ccert[4096], ckey[1024];
	assert_int_equal(ephemeral_cert("client", ccert, sizeof(ccert), ckey, sizeof(ckey)), 0);
	struct sotls_ticket_key a = {.intro = g_now - 10}, b = {.intro = g_now + 5};
	memset(a.name, 'a', 16);
	memset(b.name, 'b', 16);
	struct sotls_config *s = ticket_server(&a, "AES-128-GCM");
	assert_int_equal(sotls_config_set_verify(s, SOTLS_VERIFY_REQUIRED), 0);
	assert_int_equal(sotls_config_set_ca_mem(s, ccert, strlen(ccert) + 1), 0);
	struct sotls_config *c = client_cfg(true);
	assert_int_equal(sotls_config_set_cert_mem(c, ccert, strlen(ccert) + 1, ckey,
						   strlen(ckey) + 1),
			 0);
	uint8_t sess[SOTLS_SESSION_MAX], renewed[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess), len2 = sizeof(renewed);
	struct side srv;
	struct sotls_info ci;
	assert_int_equal(connect_once(s, c, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_int_equal(srv.info.peer_verified, 1);
	assert_int_equal(sotls_config_add_ticket_key(s, &b), 0);
	g_now += 10; /* b issues now: a's ticket is renewed under b */
	assert_int_equal(connect_once(s, c, "localhost", sess, len, renewed, &len2, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_TICKET);
	assert_true(len2 > 0);
	assert_int_equal(connect_once(s, c, "localhost", renewed, len2, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_TICKET);
	assert_int_equal(srv.info.peer_verified, 1);
	assert_int_equal(srv.info.peer_chain_len, 1);
	sotls_config_free(s);
	sotls_config_free(c);
}

/* Session bytes from a file are untrusted: an issue time near INT64_MIN
 * was "fresh" for ever (now - issued overflowed), a future one or an
 * endless client lifetime was taken as it came. */
static void test_state_times(void **state)
{
	(void)state;
	uint8_t mbed[8] = {1}, buf[256];
	struct sotls_session_state st = {.role = SOTLS_SESSION_ROLE_CLIENT, .suite = 0xC05C,
					 .issued = INT64_MIN + 5, .lifetime = 600, .mbed = mbed,
					 .mbed_len = sizeof(mbed)}, out;
	sotls_session_state_encode(&st, buf);
	size_t len = sotls_session_state_size(&st);
	assert_int_equal(sotls_session_state_decode(&out, buf, len), SOTLS_ERR_SESSION);
	/* However such a state came about, it is not fresh, without overflow
	 * (UBSan watches this in the sanitizer suite). */
	assert_false(sotls_session_state_fresh(&st, g_now));
	st.issued = INT64_MAX - 5;
	assert_false(sotls_session_state_fresh(&st, g_now));
	assert_true(sotls_session_state_fresh(&st, INT64_MAX));
	assert_false(sotls_session_state_fresh(&st, -1));

	struct sotls_config *c = client_cfg(true);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	struct sotls_conn *conn;
	assert_int_equal(sotls_conn_new(c, fd[0], &conn), 0);
	assert_int_equal(sotls_conn_set_session(conn, buf, len), SOTLS_ERR_SESSION);
	/* An hour in the future: refused. Within the fleet's clock skew, and
	 * in the past: taken. */
	st.issued = g_now + 3600;
	sotls_session_state_encode(&st, buf);
	assert_int_equal(sotls_session_state_decode(&out, buf, len), 0);
	assert_true(sotls_session_state_from_future(&out, g_now));
	assert_false(sotls_session_state_fresh(&out, g_now));
	assert_int_equal(sotls_conn_set_session(conn, buf, len), SOTLS_ERR_SESSION);
	st.issued = g_now + 30;
	sotls_session_state_encode(&st, buf);
	assert_int_equal(sotls_conn_set_session(conn, buf, len), 0);
	st.issued = g_now - 30;
	sotls_session_state_encode(&st, buf);
	assert_int_equal(sotls_conn_set_session(conn, buf, len), 0);
	/* A client session longer-lived than the week sotls gives one. */
	st.lifetime = SOTLS_SESSION_CLIENT_MAX_LIFETIME + 1;
	sotls_session_state_encode(&st, buf);
	assert_int_equal(sotls_session_state_decode(&out, buf, len), SOTLS_ERR_SESSION);
	assert_int_equal(sotls_conn_set_session(conn, buf, len), SOTLS_ERR_SESSION);
	/* A server's lifetime is its configuration's, unbounded. */
	st.role = SOTLS_SESSION_ROLE_SERVER;
	st.lifetime = UINT32_MAX;
	sotls_session_state_encode(&st, buf);
	assert_int_equal(sotls_session_state_decode(&out, buf, len), 0);
	sotls_conn_free(conn);
	close(fd[0]);
	close(fd[1]);
	sotls_config_free(c);
}

/* ---- the trust a session is bound to ---- */

static char g_ca_a[4096], g_key_a[1024], g_ca_b[4096], g_key_b[1024];

/* A server that requires a client certificate issued by ca (self-signed
 * ones here: each is its own CA), with ticket key k or, k NULL, tickets
 * off and the shared store. */
static struct sotls_config *client_auth_server(const char *ca, const struct sotls_ticket_key *k,
					       struct sotls_session_cache *store)
{
	struct sotls_config *s = server_cfg();
	assert_int_equal(sotls_config_set_verify(s, SOTLS_VERIFY_REQUIRED), 0);
	assert_int_equal(sotls_config_set_ca_mem(s, ca, strlen(ca) + 1), 0);
	if (k != NULL) {
		assert_int_equal(sotls_config_add_ticket_key(s, k), 0);
	} else {
		assert_int_equal(sotls_config_set_session_tickets(s, 0, 0), 0);
		assert_int_equal(sotls_config_set_session_store(s, sotls_session_cache_put,
								sotls_session_cache_get,
								sotls_session_cache_del, store),
				 0);
	}
	return s;
}

/*
 * Server side, by ticket (a shared key file) and by session ID (a shared
 * store): service A trusts client CA A, service B client CA B. A client of
 * A resumes at A (and at another process of A), but its session taken to B
 * is a full handshake, where B refuses its certificate (unknown_ca);
 * before, B resumed it with peer_verified and A's client as the peer. The
 * same trust with another application context is a full handshake too,
 * after which that service's own fresh session resumes.
 */
static void server_trust_bound(bool tickets)
{
	struct sotls_ticket_key k = {.intro = g_now - 10};
	memset(k.name, 'f', 16);
	memset(k.secret, 'F', 32);
	struct sotls_session_cache *store = sotls_session_cache_new(100, 1u << 20);
	const struct sotls_ticket_key *key = tickets ? &k : NULL;
	struct sotls_config *a = client_auth_server(g_ca_a, key, store);
	struct sotls_config *a2 = client_auth_server(g_ca_a, key, store);
	struct sotls_config *b = client_auth_server(g_ca_b, key, store);
	struct sotls_config *a3 = client_auth_server(g_ca_a, key, store);
	assert_int_equal(sotls_config_set_session_context(a3, "service-3", 9), 0);
	struct sotls_config *c = client_cfg(tickets);
	assert_int_equal(sotls_config_set_cert_mem(c, g_ca_a, strlen(g_ca_a) + 1, g_key_a,
						   strlen(g_key_a) + 1),
			 0);
	enum sotls_resumption kind = tickets ? SOTLS_RESUMED_TICKET : SOTLS_RESUMED_SESSION_ID;
	uint8_t sess[SOTLS_SESSION_MAX], fresh[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess), len2 = sizeof(fresh);
	struct side srv;
	struct sotls_info ci;
	assert_int_equal(connect_once(a, c, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_int_equal(srv.info.peer_verified, 1);
	assert_true(len > 0);

	assert_int_not_equal(connect_once(b, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(srv.rc, SOTLS_ERR_CERT_VERIFY);
	assert_int_equal(srv.info.peer_verified, 0);

	assert_int_equal(connect_once(a2, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, kind);
	assert_int_equal(srv.info.peer_verified, 1);

	assert_int_equal(connect_once(a3, c, "localhost", sess, len, fresh, &len2, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(srv.info.peer_verified, 1); /* verified afresh */
	assert_true(len2 > 0);
	assert_int_equal(connect_once(a3, c, "localhost", fresh, len2, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, kind);
	sotls_config_free(a);
	sotls_config_free(a2);
	sotls_config_free(a3);
	sotls_config_free(b);
	sotls_config_free(c);
	sotls_session_cache_free(store);
}

static void test_trust_bound_ticket(void **state)
{
	(void)state;
	server_trust_bound(true);
}

static void test_trust_bound_store(void **state)
{
	(void)state;
	server_trust_bound(false);
}

static struct sotls_config *trusting_client(const char *ca, enum sotls_verify mode)
{
	struct sotls_config *c = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_verify(c, mode), 0);
	assert_int_equal(sotls_config_set_ca_mem(c, ca, strlen(ca) + 1), 0);
	return c;
}

/*
 * Client side: a session saved by a client that trusted the server's
 * private CA without the name check is not offered by a client that trusts
 * only another CA (before, it resumed and reported the server as verified),
 * nor by one with the same CA and the name check: each makes a full
 * handshake and reaches its own verdict. The same configuration resumes.
 * The CA order does not matter: a set is a set.
 */
static void test_trust_bound_client(void **state)
{
	(void)state;
	struct sotls_config *s = server_cfg();
	struct sotls_config *lax = trusting_client(g_cert, SOTLS_VERIFY_CHAIN_ONLY);
	struct sotls_config *other_ca = trusting_client(g_ca_b, SOTLS_VERIFY_REQUIRED);
	struct sotls_config *named = trusting_client(g_cert, SOTLS_VERIFY_REQUIRED);
	struct sotls_config *lax_again = trusting_client(g_ca_b, SOTLS_VERIFY_CHAIN_ONLY);
	assert_int_equal(sotls_config_set_ca_mem(lax, g_ca_b, strlen(g_ca_b) + 1), 0);
	assert_int_equal(sotls_config_set_ca_mem(lax_again, g_cert, strlen(g_cert) + 1), 0);
	uint8_t sess[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess);
	struct side srv;
	struct sotls_info ci;
	assert_int_equal(connect_once(s, lax, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_true(len > 0);
	assert_int_equal(connect_once(s, other_ca, "localhost", sess, len, NULL, NULL, &srv, &ci),
			 SOTLS_ERR_CERT_VERIFY);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(ci.peer_verified, 0);
	assert_int_equal(connect_once(s, named, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_NONE);
	assert_int_equal(connect_once(s, lax_again, "localhost", sess, len, NULL, NULL, &srv, &ci),
			 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_TICKET);
	assert_int_equal(ci.peer_verified, 1);
	sotls_config_free(s);
	sotls_config_free(lax);
	sotls_config_free(other_ca);
	sotls_config_free(named);
	sotls_config_free(lax_again);
}

/* A server that asks for no client certificate has no trust to bind: its
 * CA set (unused) does not split a fleet. The context's bounds. */
static void test_trust_none_and_api(void **state)
{
	(void)state;
	struct sotls_ticket_key k = {.intro = g_now - 10};
	memset(k.name, 'n', 16);
	struct sotls_config *s1 = ticket_server(&k, "AES-128-GCM");
	struct sotls_config *s2 = ticket_server(&k, "AES-128-GCM");
	assert_int_equal(sotls_config_set_ca_mem(s2, g_ca_b, strlen(g_ca_b) + 1), 0);
	struct sotls_config *c = client_cfg(true);
	uint8_t sess[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess);
	struct side srv;
	struct sotls_info ci;
	assert_int_equal(connect_once(s1, c, "localhost", NULL, 0, sess, &len, &srv, &ci), 0);
	assert_int_equal(connect_once(s2, c, "localhost", sess, len, NULL, NULL, &srv, &ci), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_TICKET);
	uint8_t big[SOTLS_SESSION_CONTEXT_MAX + 1] = {0};
	struct sotls_config *unused = client_cfg(true);
	assert_int_equal(sotls_config_set_session_context(unused, big, sizeof(big)),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_session_context(unused, NULL, 1),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_session_context(NULL, big, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_session_context(unused, big, SOTLS_SESSION_CONTEXT_MAX),
			 0);
	assert_int_equal(sotls_config_set_session_context(unused, NULL, 0), 0);
	sotls_config_free(unused);
	/* In use: frozen. */
	assert_int_equal(sotls_config_set_session_context(s1, big, 4), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_session_context(c, big, 4), SOTLS_ERR_BAD_STATE);
	sotls_config_free(s1);
	sotls_config_free(s2);
	sotls_config_free(c);
}

/* Session bytes that are not a session; the API's state rules. */
static void test_api_rules(void **state)
{
	(void)state;
	struct sotls_config *s = server_cfg(), *c = client_cfg(true);
	assert_int_equal(sotls_config_set_session_cache(c, 10, 0, 0), SOTLS_ERR_INVALID_ARGUMENT);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	struct sotls_conn *conn;
	assert_int_equal(sotls_conn_new(c, fd[0], &conn), 0);
	uint8_t junk[64] = "STLS";
	assert_int_equal(sotls_conn_set_session(conn, junk, sizeof(junk)), SOTLS_ERR_SESSION);
	size_t len;
	assert_int_equal(sotls_conn_get_session(conn, NULL, 0, &len), SOTLS_ERR_BAD_STATE);
	sotls_conn_free(conn);
	assert_int_equal(sotls_config_set_session_store(s, sotls_session_cache_put, NULL, NULL,
							NULL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_ticket_rotation(s, 0), SOTLS_ERR_INVALID_ARGUMENT);
	/* The key file's rule for times holds for added keys too. */
	struct sotls_ticket_key neg = {.intro = -5}, backwards = {.intro = 100, .expiry = 50};
	assert_int_equal(sotls_config_add_ticket_key(s, &neg), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_add_ticket_key(s, &backwards), SOTLS_ERR_INVALID_ARGUMENT);
	close(fd[0]);
	close(fd[1]);
	sotls_config_free(s);
	sotls_config_free(c);
}

/* ---- a plain mbedTLS client: the extended master secret rule ---- */

static int mbed_rng(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}

static int fd_send(void *ctx, const unsigned char *buf, size_t len)
{
	ssize_t n = send(*(int *)ctx, buf, len, MSG_NOSIGNAL);
	return n < 0 ? MBEDTLS_ERR_SSL_INTERNAL_ERROR : (int)n;
}

static int fd_recv(void *ctx, unsigned char *buf, size_t len)
{
	ssize_t n = recv(*(int *)ctx, buf, len, 0);
	return n <= 0 ? MBEDTLS_ERR_SSL_CONN_EOF : (int)n;
}

/* A handshake with mbedTLS as the client, extended master secret on or
 * off, offering *sess if it holds one; *sess gets the new session. */
static int mbed_connect(struct sotls_config *scfg, bool ems, mbedtls_ssl_session *sess,
			bool offer, struct side *srv)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	*srv = (struct side){.cfg = scfg, .fd = fd[1]};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, server_main, srv), 0);
	mbedtls_ssl_config conf;
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config_init(&conf);
	mbedtls_ssl_init(&ssl);
	assert_int_equal(mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT,
						     MBEDTLS_SSL_TRANSPORT_STREAM,
						     MBEDTLS_SSL_PRESET_DEFAULT),
			 0);
	mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&conf, mbed_rng, NULL);
	mbedtls_ssl_conf_extended_master_secret(&conf, ems ? MBEDTLS_SSL_EXTENDED_MS_ENABLED
							   : MBEDTLS_SSL_EXTENDED_MS_DISABLED);
	mbedtls_ssl_conf_session_tickets(&conf, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
	assert_int_equal(mbedtls_ssl_setup(&ssl, &conf), 0);
	mbedtls_ssl_set_bio(&ssl, &fd[0], fd_send, fd_recv, NULL);
	if (offer)
		assert_int_equal(mbedtls_ssl_set_session(&ssl, sess), 0);
	int rc = mbedtls_ssl_handshake(&ssl);
	if (rc == 0) {
		unsigned char b[4];
		assert_int_equal(mbedtls_ssl_write(&ssl, (const unsigned char *)"ping", 4), 4);
		assert_int_equal(mbedtls_ssl_read(&ssl, b, 4), 4);
		mbedtls_ssl_session_free(sess);
		mbedtls_ssl_session_init(sess);
		assert_int_equal(mbedtls_ssl_get_session(&ssl, sess), 0);
	}
	mbedtls_ssl_free(&ssl);
	mbedtls_ssl_config_free(&conf);
	close(fd[0]);
	pthread_join(t, NULL);
	return rc;
}

static void test_ems_rule(void **state)
{
	(void)state;
	struct sotls_config *s = server_cfg();
	mbedtls_ssl_session sess;
	mbedtls_ssl_session_init(&sess);
	struct side srv;
	/* With EMS: cached, and resumed. */
	assert_int_equal(mbed_connect(s, true, &sess, false, &srv), 0);
	assert_int_equal(mbed_connect(s, true, &sess, true, &srv), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_SESSION_ID);
	/* The same session in a ClientHello without EMS: RFC 7627 §5.3,
	 * the server aborts. */
	assert_int_not_equal(mbed_connect(s, false, &sess, true, &srv), 0);
	assert_int_equal(srv.rc, SOTLS_ERR_HANDSHAKE);
	assert_non_null(strstr(srv.detail, "7627"));
	/* A session made without EMS is not kept: offering it again gives a
	 * full handshake, not an abort. */
	mbedtls_ssl_session_free(&sess);
	mbedtls_ssl_session_init(&sess);
	assert_int_equal(mbed_connect(s, false, &sess, false, &srv), 0);
	assert_int_equal(mbed_connect(s, false, &sess, true, &srv), 0);
	assert_int_equal(srv.info.resumed, SOTLS_RESUMED_NONE);
	mbedtls_ssl_session_free(&sess);
	sotls_config_free(s);
}

/* The client's side of RFC 7627 §5.3: a plain mbedTLS server that keeps
 * sessions in its own cache, first with EMS (the sotls client's session is
 * made), then without: it resumes the session, and the client must abort. */
struct mbed_server {
	mbedtls_ssl_cache_context *cache;
	bool ems;
	int fd;
	int rc;
};

static void *mbed_server_main(void *arg)
{
	struct mbed_server *m = arg;
	mbedtls_x509_crt crt;
	mbedtls_pk_context key;
	mbedtls_ssl_config conf;
	mbedtls_ssl_context ssl;
	mbedtls_x509_crt_init(&crt);
	mbedtls_pk_init(&key);
	mbedtls_ssl_config_init(&conf);
	mbedtls_ssl_init(&ssl);
	m->rc = mbedtls_x509_crt_parse(&crt, (const unsigned char *)g_cert, strlen(g_cert) + 1);
	if (m->rc == 0)
		m->rc = mbedtls_pk_parse_key(&key, (const unsigned char *)g_key, strlen(g_key) + 1,
					     NULL, 0, mbed_rng, NULL);
	if (m->rc == 0)
		m->rc = mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_SERVER,
						    MBEDTLS_SSL_TRANSPORT_STREAM,
						    MBEDTLS_SSL_PRESET_DEFAULT);
	if (m->rc == 0) {
		mbedtls_ssl_conf_rng(&conf, mbed_rng, NULL);
		mbedtls_ssl_conf_extended_master_secret(&conf,
							m->ems ? MBEDTLS_SSL_EXTENDED_MS_ENABLED
							       : MBEDTLS_SSL_EXTENDED_MS_DISABLED);
		mbedtls_ssl_conf_session_cache(&conf, m->cache, mbedtls_ssl_cache_get,
					       mbedtls_ssl_cache_set);
		m->rc = mbedtls_ssl_conf_own_cert(&conf, &crt, &key);
	}
	if (m->rc == 0)
		m->rc = mbedtls_ssl_setup(&ssl, &conf);
	if (m->rc == 0) {
		mbedtls_ssl_set_bio(&ssl, &m->fd, fd_send, fd_recv, NULL);
		m->rc = mbedtls_ssl_handshake(&ssl);
		unsigned char b[4];
		if (m->rc == 0 && mbedtls_ssl_read(&ssl, b, 4) == 4)
			(void)mbedtls_ssl_write(&ssl, b, 4);
	}
	mbedtls_ssl_free(&ssl);
	mbedtls_ssl_config_free(&conf);
	mbedtls_pk_free(&key);
	mbedtls_x509_crt_free(&crt);
	close(m->fd);
	return NULL;
}

static int to_mbed_server(mbedtls_ssl_cache_context *cache, bool ems, const uint8_t *sess,
			  size_t sess_len, uint8_t *out, size_t *out_len, struct sotls_info *ci,
			  char *detail, size_t detail_len)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	struct mbed_server m = {.cache = cache, .ems = ems, .fd = fd[1]};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, mbed_server_main, &m), 0);
	struct sotls_config *cc = client_cfg(false);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd[0], &c), 0);
	assert_int_equal(sotls_conn_set_server_name(c, "localhost"), 0);
	if (sess != NULL)
		assert_int_equal(sotls_conn_set_session(c, sess, sess_len), 0);
	int rc = sotls_handshake(c);
	*ci = (struct sotls_info)SOTLS_INFO_INIT;
	sotls_get_info(c, ci);
	snprintf(detail, detail_len, "%s", sotls_conn_error_detail(c));
	if (rc == 0) {
		char b[4];
		assert_int_equal(sotls_send(c, "ping", 4), 4);
		assert_int_equal(sotls_recv(c, b, 4), 4);
		if (out != NULL && sotls_conn_get_session(c, out, *out_len, out_len) != 0)
			*out_len = 0;
	}
	sotls_conn_free(c);
	sotls_config_free(cc);
	close(fd[0]);
	pthread_join(t, NULL);
	return rc;
}

static void test_ems_rule_client(void **state)
{
	(void)state;
	mbedtls_ssl_cache_context cache;
	mbedtls_ssl_cache_init(&cache);
	uint8_t sess[SOTLS_SESSION_MAX];
	size_t len = sizeof(sess);
	struct sotls_info ci;
	char detail[256];
	/* mbedTLS's cache reads the real clock. */
	sotls_resume_set_test_clock(NULL);
	assert_int_equal(to_mbed_server(&cache, true, NULL, 0, sess, &len, &ci, detail,
					sizeof(detail)),
			 0);
	assert_true(len > 0);
	assert_int_equal(to_mbed_server(&cache, true, sess, len, NULL, NULL, &ci, detail,
					sizeof(detail)),
			 0);
	assert_int_equal(ci.resumed, SOTLS_RESUMED_SESSION_ID);
	assert_int_equal(to_mbed_server(&cache, false, sess, len, NULL, NULL, &ci, detail,
					sizeof(detail)),
			 SOTLS_ERR_HANDSHAKE);
	assert_non_null(strstr(detail, "7627"));
	/* A full handshake without EMS leaves nothing to export. */
	len = sizeof(sess);
	assert_int_equal(to_mbed_server(&cache, false, NULL, 0, sess, &len, &ci, detail,
					sizeof(detail)),
			 0);
	assert_int_equal(len, 0);
	sotls_resume_set_test_clock(test_clock);
	mbedtls_ssl_cache_free(&cache);
}

static int setup(void **state)
{
	(void)state;
	sotls_resume_set_test_clock(test_clock);
	if (ephemeral_cert("client-of-service-a", g_ca_a, sizeof(g_ca_a), g_key_a,
			   sizeof(g_key_a)) != 0 ||
	    ephemeral_cert("client-of-service-b", g_ca_b, sizeof(g_ca_b), g_key_b,
			   sizeof(g_key_b)) != 0)
		return -1;
	return ephemeral_cert("localhost", g_cert, sizeof(g_cert), g_key, sizeof(g_key));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_bound),	  cmocka_unit_test(test_cache_bytes_and_time),
		cmocka_unit_test(test_cache_threads),	  cmocka_unit_test(test_state_strict),
		cmocka_unit_test(test_peer_bytes),
		cmocka_unit_test(test_ticket_tamper),	  cmocka_unit_test(test_ticket_rotation),
		cmocka_unit_test(test_ticket_given_keys), cmocka_unit_test(test_resume_ticket),
		cmocka_unit_test(test_resume_id),	  cmocka_unit_test(test_ticket_other_suite),
		cmocka_unit_test(test_api_rules),	  cmocka_unit_test(test_ems_rule),
		cmocka_unit_test(test_ems_rule_client),	  cmocka_unit_test(test_renewal_keeps_identity),
		cmocka_unit_test(test_state_context),	  cmocka_unit_test(test_state_times),
		cmocka_unit_test(test_trust_bound_ticket), cmocka_unit_test(test_trust_bound_store),
		cmocka_unit_test(test_trust_bound_client), cmocka_unit_test(test_trust_none_and_api),
	};
	return cmocka_run_group_tests_name("resume", tests, setup, NULL);
}

/*
 * sotls-bench-tls: end-to-end TLS 1.2 over loopback TCP, sotls against
 * mbedTLS's own record layer, OpenSSL's libssl and plain TCP, in one run.
 *
 * Tests (--tests, comma-separated; default "bulk"):
 *   bulk       one stream, 16 KiB records, each direction, ARIA-128/256-GCM and
 *              AES-128/256-GCM
 *   small      64- and 1500-byte request/response echo, round trips per second
 *   handshake  handshakes per second, ECDHE-ECDSA P-256 and ECDHE-RSA 2048: full
 *              ones, and resumed by session ID and by session ticket (--resume)
 *   memory     heap and RSS per idle established connection (N connections),
 *              after a full handshake and after resumed ones (--resume)
 *   streams    two bulk streams at once, aggregate throughput
 *
 * Method. Every measurement runs between two threads of this process, one per
 * end of a loopback TCP connection (TCP_NODELAY), so on a 2-core machine each
 * end has a core. Each end has its own configuration/context object. The
 * handshake happens first; then both ends and the timing thread meet at a
 * barrier, and the timing thread samples the receiver's counter once per
 * second (the per-second lines) until --seconds have passed, then tells the
 * ends to stop. Bulk: the sender writes --write-size (256 KiB) buffers, which
 * every TLS implementation cuts into 16 KiB records; the receiver reads into a
 * 256 KiB buffer. Rate = bytes received in the window / window length. Each
 * row is measured --rounds times; the rounds sweep all rows of a test in turn
 * (contenders interleaved, so background load hits all alike) and the median
 * round is reported (also min and max in the JSON).
 *
 * Memory: two child processes (client side, server side) each make one
 * warm-up connection, take a baseline, establish N more connections and keep
 * them open, and report (heap now - baseline) / N, heap being glibc
 * mallinfo2() uordblks + hblkhd (bytes handed out by malloc, including mmap'ed
 * chunks), and the same for VmRSS. Kernel socket buffers are not counted.
 *
 * Resumption: a resumed row's client keeps the session of one full handshake
 * made first (the memory test's warm-up connection) and offers it on every
 * later connection, whose handshake is checked as resumed by the mechanism
 * the row names; one that is not fails the row (check_resumed).
 *
 * Output: tables and per-second lines on stderr. --json prints the rows of
 * the tests run as one JSON array on stdout. --out-dir DIR writes
 * DIR/results.json and DIR/<test>.dat (whitespace tables for gnuplot; the
 * resumed rows of handshake and memory in DIR/<test>-resumed.dat).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_cache.h>
#include <mbedtls/ssl_ticket.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "ephemeral_cert.h"
#include "sotls.h"

/* ------------------------------------------------------------------------ */
/* Contenders                                                                */
/* ------------------------------------------------------------------------ */

enum impl { IMPL_SOTLS, IMPL_SOTLS_KERNEL, IMPL_MBEDTLS, IMPL_OPENSSL, IMPL_TCP, N_IMPLS };
static const char *const IMPL_NAMES[N_IMPLS] = {"sotls-user", "sotls-kernel", "mbedtls",
						"openssl", "tcp"};
enum certkind { CERT_ECDSA, CERT_RSA };
static const char *const CERT_NAMES[] = {"ECDHE-ECDSA-P256", "ECDHE-RSA-2048"};
/* How a handshake row's connections are made: full handshakes with every
 * resumption mechanism off, or abbreviated ones (RFC 5246 §7.3) resuming the
 * session of one full handshake made before the timing starts, through the
 * server's session cache (session ID) or a session ticket (RFC 5077). */
enum resume { RESUME_FULL, RESUME_ID, RESUME_TICKET, N_RESUME };
static const char *const RESUME_NAMES[N_RESUME] = {"full", "id", "ticket"};
enum cipher { ARIA128, ARIA256, AES128, AES256, NO_CIPHER };
#define N_CIPHERS NO_CIPHER
static const char *const CIPHER_NAMES[] = {"ARIA-128-GCM", "ARIA-256-GCM", "AES-128-GCM",
					   "AES-256-GCM", ""};

/* OpenSSL names (sotls accepts them too) and IANA ids (the MBEDTLS_TLS_*
 * ciphersuite ids), [cert][cipher]. */
static const char *const SUITE_NAMES[2][N_CIPHERS] = {
	{"ECDHE-ECDSA-ARIA128-GCM-SHA256", "ECDHE-ECDSA-ARIA256-GCM-SHA384",
	 "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384"},
	{"ECDHE-ARIA128-GCM-SHA256", "ECDHE-ARIA256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256",
	 "ECDHE-RSA-AES256-GCM-SHA384"},
};
static const int SUITE_IDS[2][N_CIPHERS] = {{0xC05C, 0xC05D, 0xC02B, 0xC02C},
					    {0xC060, 0xC061, 0xC02F, 0xC030}};

/* PEM certificate and key per certkind, made once at start-up. */
static char g_cert[2][8192], g_key[2][8192];
/* The kernel takes both directions of this cipher (probed at start-up);
 * g_have_kernel: of ARIA-128-GCM, which the tests other than bulk use. */
static bool g_kernel_ok[N_CIPHERS];
static bool g_have_kernel;
/* A failed handshake is an answer here, not an error: the kTLS probe; and
 * quiet: the handshake loop's server, whose client says why it failed. */
static bool g_probing;
static _Thread_local bool t_quiet;

struct mb_ctx {
	mbedtls_ssl_config conf;
	mbedtls_x509_crt crt;
	mbedtls_pk_context pk;
	int suites[2];
	/* Server: mbedTLS's own session cache (RESUME_ID) or ticket keys
	 * (RESUME_TICKET). stores counts the sessions handed to either: mbedTLS
	 * stores one only at the end of a full handshake (it does not renew a
	 * ticket it accepted), so a count that moved during a handshake says it
	 * was a full one. One thread uses a server configuration at a time. */
	mbedtls_ssl_cache_context cache;
	mbedtls_ssl_ticket_context ticket;
	unsigned long stores;
	/* Client: the session every connection offers, once kept. */
	mbedtls_ssl_session session;
	bool have_session;
};

/* One end's configuration: one per thread in the timed tests. */
struct ctx {
	enum impl impl;
	bool server;
	enum resume resume;
	struct sotls_config *s;
	struct mb_ctx *m;
	SSL_CTX *o;
	/* Client: the session kept from the first full handshake
	 * (ctx_keep_session), offered by every later connection. */
	SSL_SESSION *o_session;
	uint8_t *s_session;
	size_t s_session_len;
};

/* One end of one connection. */
struct peer {
	enum impl impl;
	int fd;
	struct sotls_conn *s;
	mbedtls_ssl_context *m;
	unsigned long mb_stores; /* mb_ctx.stores when the handshake began */
	SSL *o;
};

static int mb_send(void *p, const unsigned char *buf, size_t len)
{
	ssize_t n = send(*(int *)p, buf, len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EINTR ? MBEDTLS_ERR_SSL_WANT_WRITE : MBEDTLS_ERR_NET_SEND_FAILED;
	return (int)n;
}

static int mb_recv(void *p, unsigned char *buf, size_t len)
{
	ssize_t n = recv(*(int *)p, buf, len, 0);
	if (n < 0)
		return errno == EINTR ? MBEDTLS_ERR_SSL_WANT_READ : MBEDTLS_ERR_NET_RECV_FAILED;
	if (n == 0)
		return MBEDTLS_ERR_NET_CONN_RESET;
	return (int)n;
}

static const uint16_t MB_GROUPS[] = {MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
				     MBEDTLS_SSL_IANA_TLS_GROUP_NONE};

/* mbedTLS's own cache and ticket functions, counting what they store. */
static int mb_cache_set(void *arg, const unsigned char *id, size_t len,
			const mbedtls_ssl_session *session)
{
	struct mb_ctx *m = arg;
	m->stores++;
	return mbedtls_ssl_cache_set(&m->cache, id, len, session);
}

static int mb_cache_get(void *arg, const unsigned char *id, size_t len,
			mbedtls_ssl_session *session)
{
	return mbedtls_ssl_cache_get(&((struct mb_ctx *)arg)->cache, id, len, session);
}

static int mb_ticket_write(void *arg, const mbedtls_ssl_session *session, unsigned char *start,
			   const unsigned char *end, size_t *len, uint32_t *lifetime)
{
	struct mb_ctx *m = arg;
	m->stores++;
	return mbedtls_ssl_ticket_write(&m->ticket, session, start, end, len, lifetime);
}

static int mb_ticket_parse(void *arg, mbedtls_ssl_session *session, unsigned char *buf,
			   size_t len)
{
	return mbedtls_ssl_ticket_parse(&((struct mb_ctx *)arg)->ticket, session, buf, len);
}

static void ctx_free(struct ctx *c)
{
	if (c == NULL)
		return;
	sotls_config_free(c->s);
	if (c->m != NULL) {
		mbedtls_ssl_config_free(&c->m->conf);
		mbedtls_x509_crt_free(&c->m->crt);
		mbedtls_pk_free(&c->m->pk);
		mbedtls_ssl_cache_free(&c->m->cache);
		mbedtls_ssl_ticket_free(&c->m->ticket);
		mbedtls_ssl_session_free(&c->m->session);
		free(c->m);
	}
	SSL_SESSION_free(c->o_session);
	SSL_CTX_free(c->o);
	free(c->s_session);
	free(c);
}

/* Resumption as res asks (see enum resume): RESUME_FULL turns off every
 * mechanism; the others turn on one and leave the other off, so that a
 * connection that resumed at all resumed by that one. */
static struct ctx *ctx_new(enum impl impl, bool server, enum certkind ck, enum cipher ci,
			   enum resume res)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->impl = impl;
	c->server = server;
	c->resume = res;
	size_t clen = strlen(g_cert[ck]) + 1, klen = strlen(g_key[ck]) + 1;
	const char *suite = ci == NO_CIPHER ? NULL : SUITE_NAMES[ck][ci];

	switch (impl) {
	case IMPL_SOTLS:
	case IMPL_SOTLS_KERNEL:
		c->s = sotls_config_new(server ? SOTLS_ROLE_SERVER : SOTLS_ROLE_CLIENT);
		if (c->s == NULL || sotls_config_set_suites(c->s, suite) != 0 ||
		    sotls_config_set_ktls(c->s, impl == IMPL_SOTLS ? SOTLS_KTLS_OFF
								   : SOTLS_KTLS_REQUIRE) != 0)
			goto fail;
		if (server ? sotls_config_set_cert_mem(c->s, g_cert[ck], clen, g_key[ck], klen)
			   : sotls_config_set_verify(c->s, SOTLS_VERIFY_NONE))
			goto fail;
		/* The defaults give a server cache and tickets on both sides:
		 * full rows turn all off, session-ID rows the client's tickets. */
		if (res != RESUME_TICKET && !server &&
		    sotls_config_set_session_tickets(c->s, 0, 0) != 0)
			goto fail;
		if (res == RESUME_FULL && server &&
		    (sotls_config_set_session_tickets(c->s, 0, 0) != 0 ||
		     sotls_config_set_session_cache(c->s, 0, 0, 0) != 0))
			goto fail;
		break;
	case IMPL_MBEDTLS: {
		struct mb_ctx *m = c->m = calloc(1, sizeof(*m));
		if (m == NULL)
			goto fail;
		mbedtls_ssl_config_init(&m->conf);
		mbedtls_x509_crt_init(&m->crt);
		mbedtls_pk_init(&m->pk);
		mbedtls_ssl_cache_init(&m->cache);
		mbedtls_ssl_ticket_init(&m->ticket);
		mbedtls_ssl_session_init(&m->session);
		if (mbedtls_ssl_config_defaults(&m->conf,
						server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
						MBEDTLS_SSL_TRANSPORT_STREAM,
						MBEDTLS_SSL_PRESET_DEFAULT) != 0)
			goto fail;
		mbedtls_ssl_conf_min_tls_version(&m->conf, MBEDTLS_SSL_VERSION_TLS1_2);
		mbedtls_ssl_conf_max_tls_version(&m->conf, MBEDTLS_SSL_VERSION_TLS1_2);
		m->suites[0] = SUITE_IDS[ck][ci];
		m->suites[1] = 0;
		mbedtls_ssl_conf_ciphersuites(&m->conf, m->suites);
		mbedtls_ssl_conf_rng(&m->conf, ephemeral_cert_random, NULL);
		mbedtls_ssl_conf_groups(&m->conf, MB_GROUPS);
		mbedtls_ssl_conf_authmode(&m->conf, MBEDTLS_SSL_VERIFY_NONE);
		/* A client asks for a ticket only in ticket rows; a server takes
		 * them only with the ticket callbacks set. */
		mbedtls_ssl_conf_session_tickets(&m->conf, res == RESUME_TICKET
								   ? MBEDTLS_SSL_SESSION_TICKETS_ENABLED
								   : MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
		if (server && res == RESUME_ID)
			mbedtls_ssl_conf_session_cache(&m->conf, m, mb_cache_get, mb_cache_set);
		if (server && res == RESUME_TICKET) {
			/* AES-256-GCM: the AEAD sotls seals its tickets with. */
			if (mbedtls_ssl_ticket_setup(&m->ticket, ephemeral_cert_random, NULL,
						     MBEDTLS_CIPHER_AES_256_GCM, 7200) != 0)
				goto fail;
			mbedtls_ssl_conf_session_tickets_cb(&m->conf, mb_ticket_write,
							    mb_ticket_parse, m);
		}
		if (server) {
			if (mbedtls_x509_crt_parse(&m->crt, (const unsigned char *)g_cert[ck],
						   clen) != 0 ||
			    mbedtls_pk_parse_key(&m->pk, (const unsigned char *)g_key[ck], klen,
						 NULL, 0, ephemeral_cert_random, NULL) != 0 ||
			    mbedtls_ssl_conf_own_cert(&m->conf, &m->crt, &m->pk) != 0)
				goto fail;
		}
		break;
	}
	case IMPL_OPENSSL: {
		c->o = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
		if (c->o == NULL)
			goto fail;
		SSL_CTX_set_min_proto_version(c->o, TLS1_2_VERSION);
		SSL_CTX_set_max_proto_version(c->o, TLS1_2_VERSION);
		if (res != RESUME_TICKET)
			SSL_CTX_set_options(c->o, SSL_OP_NO_TICKET);
		/* The client keeps its session itself (ctx_keep_session). */
		SSL_CTX_set_session_cache_mode(c->o, server && res == RESUME_ID
							     ? SSL_SESS_CACHE_SERVER
							     : SSL_SESS_CACHE_OFF);
		if (SSL_CTX_set_cipher_list(c->o, suite) != 1 ||
		    SSL_CTX_set1_groups_list(c->o, "P-256") != 1)
			goto fail;
		if (server) {
			BIO *b = BIO_new_mem_buf(g_cert[ck], -1);
			X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
			BIO_free(b);
			b = BIO_new_mem_buf(g_key[ck], -1);
			EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
			BIO_free(b);
			int ok = x && k && SSL_CTX_use_certificate(c->o, x) == 1 &&
				 SSL_CTX_use_PrivateKey(c->o, k) == 1;
			X509_free(x);
			EVP_PKEY_free(k);
			if (!ok)
				goto fail;
		}
		break;
	}
	case IMPL_TCP:
	case N_IMPLS:
		break;
	}
	return c;
fail:
	fprintf(stderr, "bench: cannot configure %s %s\n", IMPL_NAMES[impl],
		server ? "server" : "client");
	ERR_print_errors_fp(stderr);
	ctx_free(c);
	return NULL;
}

static void peer_free(struct peer *p)
{
	if (p == NULL)
		return;
	sotls_conn_free(p->s);
	if (p->m != NULL) {
		mbedtls_ssl_free(p->m);
		free(p->m);
	}
	/* Without a close_notify either way OpenSSL would take the session
	 * out of its cache and mark it not resumable: the loops here end
	 * connections without one for speed, not because they failed, and
	 * sotls and mbedTLS keep such sessions. */
	if (p->o != NULL)
		SSL_set_shutdown(p->o, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(p->o);
	free(p);
}

/* A new end on fd with the handshake done, or NULL. */
static struct peer *peer_open(struct ctx *c, int fd)
{
	struct peer *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->impl = c->impl;
	p->fd = fd;
	int rc = 0;
	switch (c->impl) {
	case IMPL_SOTLS:
	case IMPL_SOTLS_KERNEL:
		if (sotls_conn_new(c->s, fd, &p->s) != 0 ||
		    (c->s_session != NULL &&
		     (rc = sotls_conn_set_session(p->s, c->s_session, c->s_session_len)) != 0) ||
		    (rc = sotls_handshake(p->s)) != 0) {
			if (rc != 0 && !g_probing && !t_quiet)
				fprintf(stderr, "bench: %s %s handshake: %s (%s)\n",
					IMPL_NAMES[c->impl], c->server ? "server" : "client",
					sotls_strerror(rc), sotls_conn_error_detail(p->s));
			goto fail;
		}
		break;
	case IMPL_MBEDTLS:
		p->m = malloc(sizeof(*p->m));
		if (p->m == NULL)
			goto fail;
		mbedtls_ssl_init(p->m);
		if (mbedtls_ssl_setup(p->m, &c->m->conf) != 0 ||
		    (c->m->have_session && mbedtls_ssl_set_session(p->m, &c->m->session) != 0))
			goto fail;
		p->mb_stores = c->m->stores;
		mbedtls_ssl_set_bio(p->m, &p->fd, mb_send, mb_recv, NULL);
		do
			rc = mbedtls_ssl_handshake(p->m);
		while (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE);
		if (rc != 0)
			goto fail;
		break;
	case IMPL_OPENSSL:
		p->o = SSL_new(c->o);
		if (p->o == NULL || SSL_set_fd(p->o, fd) != 1 ||
		    (c->o_session != NULL && SSL_set_session(p->o, c->o_session) != 1) ||
		    (c->server ? SSL_accept(p->o) : SSL_connect(p->o)) != 1)
			goto fail;
		break;
	case IMPL_TCP:
	case N_IMPLS:
		break;
	}
	return p;
fail:
	ERR_clear_error();
	peer_free(p);
	return NULL;
}

/* Client: keeps the session of p's completed handshake in c, for every later
 * connection of c to offer. 0 or -1. */
static int ctx_keep_session(struct ctx *c, const struct peer *p)
{
	int rc;
	switch (c->impl) {
	case IMPL_SOTLS:
	case IMPL_SOTLS_KERNEL:
		rc = sotls_conn_get_session(p->s, NULL, 0, &c->s_session_len);
		if (rc == SOTLS_ERR_BUFFER_TOO_SMALL) {
			if ((c->s_session = malloc(c->s_session_len)) == NULL) {
				fprintf(stderr, "bench: no memory for the session\n");
				return -1;
			}
			rc = sotls_conn_get_session(p->s, c->s_session, c->s_session_len,
						    &c->s_session_len);
		}
		if (rc == 0)
			return 0;
		fprintf(stderr, "bench: sotls_conn_get_session: %s (%s)\n", sotls_strerror(rc),
			sotls_conn_error_detail(p->s));
		return -1;
	case IMPL_MBEDTLS:
		if (mbedtls_ssl_get_session(p->m, &c->m->session) != 0)
			return -1;
		c->m->have_session = true;
		return 0;
	case IMPL_OPENSSL:
		c->o_session = SSL_get1_session(p->o);
		return c->o_session != NULL ? 0 : -1;
	case IMPL_TCP:
	case N_IMPLS:
		break;
	}
	return -1;
}

/* How p's handshake went, as its end can tell: enum resume, or -1 where it
 * cannot (an mbedTLS client: mbedTLS has no public call for it). Each
 * configuration allows one mechanism (ctx_new), so "resumed" names it. */
static int resumed_as(const struct peer *p, const struct ctx *c)
{
	struct sotls_info info = SOTLS_INFO_INIT;
	switch (c->impl) {
	case IMPL_SOTLS:
	case IMPL_SOTLS_KERNEL:
		/* A failure leaves resumed NONE: a resumed row fails. */
		sotls_get_info(p->s, &info);
		return info.resumed == SOTLS_RESUMED_SESSION_ID ? RESUME_ID
		       : info.resumed == SOTLS_RESUMED_TICKET	? RESUME_TICKET
								: RESUME_FULL;
	case IMPL_MBEDTLS:
		if (!c->server)
			return -1;
		return c->m->stores == p->mb_stores ? (int)c->resume : RESUME_FULL;
	case IMPL_OPENSSL:
		return SSL_session_reused(p->o) ? (int)c->resume : RESUME_FULL;
	case IMPL_TCP:
	case N_IMPLS:
		break;
	}
	return -1;
}

/* 0 if p's handshake went as c's configuration asks; otherwise says so on
 * stderr (what a failed row's numbers would hide) and -1. */
static int check_resumed(const struct peer *p, const struct ctx *c, const char *what)
{
	int got = resumed_as(p, c);
	if (got < 0 || got == (int)c->resume)
		return 0;
	fprintf(stderr, "bench: %s: %s %s: handshake %s, expected %s\n", what, IMPL_NAMES[c->impl],
		c->server ? "server" : "client", RESUME_NAMES[got], RESUME_NAMES[c->resume]);
	return -1;
}

/* Sends all len bytes. 0 or -1. */
static int peer_send(struct peer *p, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = -1;
		switch (p->impl) {
		case IMPL_SOTLS:
		case IMPL_SOTLS_KERNEL:
			n = sotls_send(p->s, buf, len);
			break;
		case IMPL_MBEDTLS:
			n = mbedtls_ssl_write(p->m, buf, len);
			if (n == MBEDTLS_ERR_SSL_WANT_WRITE || n == MBEDTLS_ERR_SSL_WANT_READ)
				continue;
			break;
		case IMPL_OPENSSL:
			n = SSL_write(p->o, buf, len > INT32_MAX ? INT32_MAX : (int)len);
			break;
		case IMPL_TCP:
			n = send(p->fd, buf, len, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			break;
		case N_IMPLS:
			break;
		}
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Some bytes (> 0), or <= 0 at the end of the stream or on an error. */
static ssize_t peer_recv(struct peer *p, uint8_t *buf, size_t len)
{
	for (;;) {
		ssize_t n = -1;
		switch (p->impl) {
		case IMPL_SOTLS:
		case IMPL_SOTLS_KERNEL:
			n = sotls_recv(p->s, buf, len);
			break;
		case IMPL_MBEDTLS:
			n = mbedtls_ssl_read(p->m, buf, len);
			if (n == MBEDTLS_ERR_SSL_WANT_WRITE || n == MBEDTLS_ERR_SSL_WANT_READ)
				continue;
			break;
		case IMPL_OPENSSL:
			n = SSL_read(p->o, buf, len > INT32_MAX ? INT32_MAX : (int)len);
			break;
		case IMPL_TCP:
			n = recv(p->fd, buf, len, 0);
			if (n < 0 && errno == EINTR)
				continue;
			break;
		case N_IMPLS:
			break;
		}
		return n;
	}
}

/* Exactly len bytes: 0, or -1 if the stream ended first. */
static int peer_recv_all(struct peer *p, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = peer_recv(p, buf, len);
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* close_notify (best effort) and FIN; frees p, does not close fd. */
static void peer_close(struct peer *p)
{
	if (p == NULL)
		return;
	switch (p->impl) {
	case IMPL_SOTLS:
	case IMPL_SOTLS_KERNEL:
		sotls_shutdown(p->s);
		break;
	case IMPL_MBEDTLS:
		mbedtls_ssl_close_notify(p->m);
		break;
	case IMPL_OPENSSL:
		SSL_shutdown(p->o);
		break;
	case IMPL_TCP:
	case N_IMPLS:
		break;
	}
	shutdown(p->fd, SHUT_WR);
	peer_free(p);
}

/* ------------------------------------------------------------------------ */
/* Certificates                                                              */
/* ------------------------------------------------------------------------ */

/* A self-signed RSA 2048 certificate, made with OpenSSL (the bench links it). */
static int make_rsa_cert(char *cert, size_t csize, char *key, size_t ksize)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	X509 *x = X509_new();
	BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
	int rc = -1;
	if (k == NULL || x == NULL || bc == NULL || bk == NULL)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
				   -1, 0);
	X509_set_issuer_name(x, n);
	X509_set_pubkey(x, k);
	if (X509_sign(x, k, EVP_sha256()) <= 0 || PEM_write_bio_X509(bc, x) != 1 ||
	    PEM_write_bio_PrivateKey(bk, k, NULL, NULL, 0, NULL, NULL) != 1)
		goto out;
	int nc = BIO_read(bc, cert, (int)csize - 1), nk = BIO_read(bk, key, (int)ksize - 1);
	if (nc <= 0 || nk <= 0 || BIO_pending(bc) > 0 || BIO_pending(bk) > 0)
		goto out;
	cert[nc] = '\0';
	key[nk] = '\0';
	rc = 0;
out:
	if (rc != 0)
		ERR_print_errors_fp(stderr);
	BIO_free(bc);
	BIO_free(bk);
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Sockets, threads, timing                                                  */
/* ------------------------------------------------------------------------ */

static double cpu_seconds(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	double d = t - now();
	if (d <= 0)
		return;
	struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void tune(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A listening socket on 127.0.0.1, any port; *port gets it. */
static int listener(int *port)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1024) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &len) != 0) {
		perror("bench: listen");
		exit(1);
	}
	*port = ntohs(sa.sin_port);
	return ls;
}

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("bench: connect");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	tune(fd);
	return fd;
}

static int accept_one(int ls)
{
	int fd;
	do
		fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd >= 0)
		tune(fd);
	return fd;
}

/* A connected pair over loopback: client end, server end. */
static int make_pair(int *cfd, int *sfd)
{
	int port, ls = listener(&port);
	*cfd = dial(port);
	*sfd = *cfd >= 0 ? accept_one(ls) : -1;
	close(ls);
	if (*sfd < 0) {
		if (*cfd >= 0)
			close(*cfd);
		return -1;
	}
	return 0;
}

static bool g_pin;
static size_t g_write_size = 256 * 1024;
static int g_seconds = 2, g_rounds = 3, g_conns = 200;
/* Bulk measures 1 s per row and round unless --seconds says otherwise: four
 * ciphers x three libraries x two directions keep the default run near
 * 1.5 minutes. */
static bool g_seconds_given;

static void pin(int cpu)
{
	if (!g_pin)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % 2, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* ------------------------------------------------------------------------ */
/* Two-ended runs                                                            */
/* ------------------------------------------------------------------------ */

enum work { W_BULK, W_ECHO, W_NONE };

struct run;
/* One thread: one end of one connection. */
struct end {
	struct run *run;
	struct ctx *ctx;
	int fd;
	bool sender; /* bulk: writes; echo: the client that asks */
	int cpu;
	bool ok;
	struct sotls_info info;
	pthread_t thread;
};

#define MAX_ENDS 4
struct run {
	enum work work;
	size_t msg_size;
	pthread_barrier_t barrier;
	atomic_bool stop;
	atomic_bool failed;
	_Atomic uint64_t count[MAX_ENDS / 2]; /* bytes received, or round trips */
	int n_ends;
	struct end ends[MAX_ENDS];
};

static void *end_main(void *arg)
{
	struct end *e = arg;
	struct run *r = e->run;
	int idx = (int)(e - r->ends) / 2;
	pin(e->cpu);
	struct peer *p = peer_open(e->ctx, e->fd);
	if (p == NULL) {
		atomic_store(&r->failed, true);
		shutdown(e->fd, SHUT_RDWR);
	} else if (p->s != NULL) {
		e->info = (struct sotls_info)SOTLS_INFO_INIT;
		sotls_get_info(p->s, &e->info);
	}
	pthread_barrier_wait(&r->barrier);
	if (atomic_load(&r->failed) || r->work == W_NONE) {
		peer_free(p);
		close(e->fd);
		e->ok = p != NULL;
		return NULL;
	}

	size_t bsize = r->work == W_BULK ? g_write_size : r->msg_size;
	uint8_t *buf = malloc(bsize);
	if (buf == NULL)
		abort();
	memset(buf, 0x5a, bsize);
	bool ok = true;
	if (r->work == W_BULK && e->sender) {
		while (!atomic_load_explicit(&r->stop, memory_order_relaxed))
			if (peer_send(p, buf, bsize) != 0) {
				ok = false;
				break;
			}
	} else if (r->work == W_BULK) {
		for (;;) {
			ssize_t n = peer_recv(p, buf, bsize);
			if (n <= 0)
				break;
			atomic_fetch_add_explicit(&r->count[idx], (uint64_t)n,
						  memory_order_relaxed);
		}
	} else if (e->sender) {
		while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
			if (peer_send(p, buf, bsize) != 0 || peer_recv_all(p, buf, bsize) != 0) {
				ok = false;
				break;
			}
			atomic_fetch_add_explicit(&r->count[idx], 1, memory_order_relaxed);
		}
	} else {
		while (peer_recv_all(p, buf, bsize) == 0)
			if (peer_send(p, buf, bsize) != 0)
				break;
	}
	if (!ok) {
		atomic_store(&r->failed, true);
		peer_free(p);
	} else if (e->sender) {
		peer_close(p);
	} else {
		peer_free(p);
	}
	free(buf);
	close(e->fd);
	e->ok = ok;
	return NULL;
}

struct sample_result {
	double rate[MAX_ENDS / 2 + 1]; /* per stream, then the sum; units per second */
	/* The same count per CPU-second: count / (CPU seconds of the busier end)
	 * for one stream, count / (all ends' CPU seconds / 2) for several: the
	 * rate this run would reach with a whole core per end. */
	double cpu_rate;
	/* CPU seconds per unit (byte or round trip) of stream 0's two ends:
	 * [0] the client, [1] the server. */
	double cpu_per_unit[2];
	bool ok;
	struct sotls_info info[2]; /* client, server of stream 0 */
};

/*
 * Runs `streams` connections of impl/cipher; with bulk, c2s says which end
 * sends. label heads the per-second lines. Rates are per second: bytes for
 * bulk, round trips for echo.
 */
static struct sample_result run_pair(enum impl impl, enum cipher ci, enum work work,
				     size_t msg_size, bool c2s, int streams, int seconds,
				     const char *label)
{
	struct sample_result res = {.ok = false};
	struct run *r = calloc(1, sizeof(*r));
	if (r == NULL)
		abort();
	r->work = work;
	r->msg_size = msg_size;
	r->n_ends = 2 * streams;
	pthread_barrier_init(&r->barrier, NULL, (unsigned)r->n_ends + 1);
	for (int s = 0; s < streams; s++) {
		struct end *cl = &r->ends[2 * s], *sv = &r->ends[2 * s + 1];
		if (make_pair(&cl->fd, &sv->fd) != 0)
			abort();
		cl->ctx = ctx_new(impl, false, CERT_ECDSA, ci, RESUME_FULL);
		sv->ctx = ctx_new(impl, true, CERT_ECDSA, ci, RESUME_FULL);
		if (cl->ctx == NULL || sv->ctx == NULL)
			exit(1);
		cl->sender = work == W_ECHO ? true : c2s;
		sv->sender = work == W_ECHO ? false : !c2s;
		/* Sender on one core, receiver on the other. */
		cl->cpu = cl->sender ? 0 : 1;
		sv->cpu = sv->sender ? 0 : 1;
	}
	for (int i = 0; i < r->n_ends; i++) {
		r->ends[i].run = r;
		pthread_create(&r->ends[i].thread, NULL, end_main, &r->ends[i]);
	}
	pthread_barrier_wait(&r->barrier);
	bool failed = atomic_load(&r->failed);
	clockid_t cid[MAX_ENDS];
	double cpu0[MAX_ENDS];
	bool have_cpu = !failed && work != W_NONE;
	for (int i = 0; i < r->n_ends && have_cpu; i++) {
		/* The ends run until told to stop, so their clocks stay valid. */
		if (pthread_getcpuclockid(r->ends[i].thread, &cid[i]) != 0)
			have_cpu = false;
		else
			cpu0[i] = cpu_seconds(cid[i]);
	}
	if (!failed && work != W_NONE) {
		double t0 = now(), tprev = t0;
		uint64_t prev[MAX_ENDS / 2] = {0}, first[MAX_ENDS / 2];
		for (int s = 0; s < streams; s++)
			first[s] = prev[s] = atomic_load(&r->count[s]);
		for (int sec = 1; sec <= seconds; sec++) {
			sleep_until(t0 + sec);
			double t = now();
			uint64_t sum = 0;
			for (int s = 0; s < streams; s++) {
				uint64_t c = atomic_load(&r->count[s]);
				sum += c - prev[s];
				prev[s] = c;
			}
			double rate = (double)sum / (t - tprev);
			if (work == W_BULK)
				fprintf(stderr, "  [%-34s] %5.2f-%5.2f s  %8.1f MiB  %7.3f Gbit/s\n",
					label, tprev - t0, t - t0, (double)sum / 1048576.0,
					rate * 8e-9);
			else
				fprintf(stderr, "  [%-34s] %5.2f-%5.2f s  %10.0f round trips/s\n",
					label, tprev - t0, t - t0, rate);
			tprev = t;
		}
		double total = 0;
		for (int s = 0; s < streams; s++) {
			res.rate[s] = (double)(prev[s] - first[s]) / (tprev - t0);
			total += res.rate[s];
		}
		res.rate[streams] = total;
		double busiest = 0, sum = 0;
		for (int i = 0; i < r->n_ends && have_cpu; i++) {
			double c = cpu_seconds(cid[i]) - cpu0[i];
			if (i < 2 && prev[0] > first[0])
				res.cpu_per_unit[i] = c / (double)(prev[0] - first[0]);
			busiest = c > busiest ? c : busiest;
			sum += c;
		}
		double cpu = streams == 1 ? busiest : sum / 2;
		res.cpu_rate = cpu > 0 ? total * (tprev - t0) / cpu : 0;
	}
	atomic_store(&r->stop, true);
	for (int i = 0; i < r->n_ends; i++)
		pthread_join(r->ends[i].thread, NULL);
	res.ok = !failed && !atomic_load(&r->failed);
	if (work == W_NONE)
		res.ok = r->ends[0].ok && r->ends[1].ok;
	res.info[0] = r->ends[0].info;
	res.info[1] = r->ends[1].info;
	for (int i = 0; i < r->n_ends; i++)
		ctx_free(r->ends[i].ctx);
	pthread_barrier_destroy(&r->barrier);
	free(r);
	return res;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_ROUNDS 16
struct row {
	const char *test;
	enum impl impl;
	enum cipher cipher;
	const char *dir;	/* "c2s" / "s2c" (bulk, streams) */
	size_t msg_size;	/* small */
	enum certkind cert;	/* handshake */
	enum resume resume;	/* handshake, memory */
	int streams;		/* streams */
	int secs;		/* measuring seconds per round */
	int n;
	double v[MAX_ROUNDS];	/* per round: Gbit/s, msgs/s, handshakes/s */
	double value;		/* median */
	double cv[MAX_ROUNDS];	/* per round: the same per CPU-second (see cpu_rate) */
	double cpu_value;	/* median */
	double snd_ns[MAX_ROUNDS], rcv_ns[MAX_ROUNDS]; /* bulk: CPU ns per byte, per end */
	bool failed;
	/* memory */
	double heap_client, heap_server, rss_client, rss_server;
	char note[96];
};

#define MAX_ROWS 128
static struct row g_rows[MAX_ROWS];
static int g_nrows;

static struct row *add_row(const char *test, enum impl impl, enum cipher ci)
{
	if (g_nrows == MAX_ROWS)
		abort();
	struct row *r = &g_rows[g_nrows++];
	memset(r, 0, sizeof(*r));
	r->test = test;
	r->impl = impl;
	r->cipher = ci;
	r->dir = "";
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void finish_row(struct row *r)
{
	double s[MAX_ROUNDS];
	if (r->n == 0) {
		r->failed = true;
		return;
	}
	memcpy(s, r->v, sizeof(double) * (size_t)r->n);
	qsort(s, (size_t)r->n, sizeof(double), cmp_double);
	r->value = r->n % 2 ? s[r->n / 2] : (s[r->n / 2 - 1] + s[r->n / 2]) / 2;
	memcpy(s, r->cv, sizeof(double) * (size_t)r->n);
	qsort(s, (size_t)r->n, sizeof(double), cmp_double);
	r->cpu_value = r->n % 2 ? s[r->n / 2] : (s[r->n / 2 - 1] + s[r->n / 2]) / 2;
}

static double minv(const struct row *r)
{
	double m = r->n ? r->v[0] : 0;
	for (int i = 1; i < r->n; i++)
		m = r->v[i] < m ? r->v[i] : m;
	return m;
}

static double maxv(const struct row *r)
{
	double m = r->n ? r->v[0] : 0;
	for (int i = 1; i < r->n; i++)
		m = r->v[i] > m ? r->v[i] : m;
	return m;
}

static struct row *find_row_resumed(const char *test, enum impl impl, enum cipher ci,
				     const char *dir, size_t msg, enum certkind ck, enum resume res)
{
	for (int i = 0; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		if (strcmp(r->test, test) == 0 && r->impl == impl && r->cipher == ci &&
		    strcmp(r->dir, dir) == 0 && r->msg_size == msg && r->cert == ck &&
		    r->resume == res && !r->failed)
			return r;
	}
	return NULL;
}

/* A row of full handshakes (all tests but handshake and memory have only those). */
static struct row *find_row(const char *test, enum impl impl, enum cipher ci, const char *dir,
			    size_t msg, enum certkind ck)
{
	return find_row_resumed(test, impl, ci, dir, msg, ck, RESUME_FULL);
}

static struct row *find_hs_row(enum impl impl, enum certkind ck, enum resume res)
{
	return find_row_resumed("handshake", impl, ARIA128, "", 0, ck, res);
}

static void json_row(FILE *f, const struct row *r)
{
	fprintf(f, "{\"test\": \"%s\", \"impl\": \"%s\", \"cipher\": \"%s\"", r->test,
		IMPL_NAMES[r->impl], CIPHER_NAMES[r->cipher]);
	/* Rows of full handshakes have no "resumption", as before it existed. */
	if (r->resume != RESUME_FULL)
		fprintf(f, ", \"resumption\": \"%s\"", RESUME_NAMES[r->resume]);
	if (strcmp(r->test, "memory") == 0) {
		fprintf(f,
			", \"connections\": %d, \"client_heap_bytes_per_conn\": %.0f, "
			"\"server_heap_bytes_per_conn\": %.0f, \"client_rss_bytes_per_conn\": %.0f, "
			"\"server_rss_bytes_per_conn\": %.0f",
			g_conns, r->heap_client, r->heap_server, r->rss_client, r->rss_server);
	} else {
		const char *unit = strcmp(r->test, "small") == 0	   ? "msgs_per_s"
				   : strcmp(r->test, "handshake") == 0 ? "handshakes_per_s"
								       : "gbps";
		if (r->dir[0] != '\0')
			fprintf(f, ", \"direction\": \"%s\"", r->dir);
		if (strcmp(r->test, "bulk") == 0 || strcmp(r->test, "streams") == 0)
			fprintf(f, ", \"record_size\": 16384, \"write_size\": %zu", g_write_size);
		if (r->msg_size)
			fprintf(f, ", \"msg_size\": %zu", r->msg_size);
		if (strcmp(r->test, "handshake") == 0 && r->cipher != NO_CIPHER)
			fprintf(f, ", \"cert\": \"%s\"", CERT_NAMES[r->cert]);
		if (r->streams)
			fprintf(f, ", \"streams\": %d", r->streams);
		fprintf(f, ", \"%s\": %.6g, \"min\": %.6g, \"max\": %.6g, \"rounds\": [", unit,
			r->value, minv(r), maxv(r));
		for (int i = 0; i < r->n; i++)
			fprintf(f, "%s%.6g", i ? ", " : "", r->v[i]);
		fprintf(f, "], \"seconds_per_round\": %d", r->secs);
		/* Full handshake rows as before resumption rows existed. */
		bool full_hs = strcmp(r->test, "handshake") == 0 && r->resume == RESUME_FULL &&
			       r->impl != IMPL_TCP;
		if (!full_hs)
			fprintf(f, ", \"%s_per_cpu\": %.6g", unit, r->cpu_value);
		const struct row *full = r->resume == RESUME_FULL
						 ? NULL
						 : find_hs_row(r->impl, r->cert, RESUME_FULL);
		if (strcmp(r->test, "handshake") == 0 && full != NULL && full->value > 0 &&
		    full->cpu_value > 0)
			fprintf(f, ", \"x_full\": %.4g, \"x_full_per_cpu\": %.4g",
				r->value / full->value, r->cpu_value / full->cpu_value);
		if (strcmp(r->test, "bulk") == 0) {
			fprintf(f, ", \"sender_cpu_ns_per_byte\": [");
			for (int i = 0; i < r->n; i++)
				fprintf(f, "%s%.3f", i ? ", " : "", r->snd_ns[i]);
			fprintf(f, "], \"receiver_cpu_ns_per_byte\": [");
			for (int i = 0; i < r->n; i++)
				fprintf(f, "%s%.3f", i ? ", " : "", r->rcv_ns[i]);
			fprintf(f, "]");
		}
	}
	if (r->note[0])
		fprintf(f, ", \"note\": \"%s\"", r->note);
	if (r->failed)
		fprintf(f, ", \"failed\": true");
	fprintf(f, "}");
}

static void json_all(FILE *f, const char *only)
{
	int k = 0;
	fprintf(f, "[\n");
	for (int i = 0; i < g_nrows; i++) {
		if (only != NULL && strcmp(g_rows[i].test, only) != 0)
			continue;
		fprintf(f, "%s  ", k++ ? ",\n" : "");
		json_row(f, &g_rows[i]);
	}
	fprintf(f, "\n]\n");
}

/* ------------------------------------------------------------------------ */
/* The tests                                                                 */
/* ------------------------------------------------------------------------ */

static bool g_want[N_IMPLS];

static bool impl_on(enum impl i)
{
	return g_want[i] && (i != IMPL_SOTLS_KERNEL || g_have_kernel);
}

static bool impl_on_cipher(enum impl i, enum cipher c)
{
	return g_want[i] && (i != IMPL_SOTLS_KERNEL || g_kernel_ok[c]);
}

static const enum impl TLS_IMPLS[] = {IMPL_SOTLS, IMPL_SOTLS_KERNEL, IMPL_MBEDTLS, IMPL_OPENSSL};
#define N_TLS_IMPLS 4

static void label_of(char *out, size_t n, const struct row *r)
{
	snprintf(out, n, "%s %s%s%s", IMPL_NAMES[r->impl],
		 r->cipher == NO_CIPHER ? "" : CIPHER_NAMES[r->cipher], r->cipher == NO_CIPHER ? "" : " ",
		 r->dir);
}

static void test_bulk(const char *test, int streams)
{
	int first = g_nrows;
	static const char *const dirs[] = {"c2s", "s2c"};
	int ndirs = streams == 1 ? 2 : 1;
	int secs = g_seconds_given ? g_seconds : 1;
	for (int d = 0; d < ndirs; d++) {
		for (int c = 0; c < N_CIPHERS; c++)
			for (int i = 0; i < N_TLS_IMPLS; i++)
				if (impl_on_cipher(TLS_IMPLS[i], (enum cipher)c)) {
					struct row *r = add_row(test, TLS_IMPLS[i], (enum cipher)c);
					r->dir = dirs[d];
					r->streams = streams > 1 ? streams : 0;
					r->secs = secs;
				}
		if (impl_on(IMPL_TCP)) {
			struct row *r = add_row(test, IMPL_TCP, NO_CIPHER);
			r->dir = dirs[d];
			r->streams = streams > 1 ? streams : 0;
			r->secs = secs;
		}
	}
	fprintf(stderr, "\n== %s: %d stream%s, 16 KiB records, %zu KiB writes, %d x %d s per row\n",
		test, streams, streams > 1 ? "s at once (aggregate)" : "", g_write_size / 1024,
		g_rounds, secs);
	for (int round = 0; round < g_rounds; round++)
		for (int i = first; i < g_nrows; i++) {
			struct row *r = &g_rows[i];
			char label[64];
			label_of(label, sizeof(label), r);
			struct sample_result s =
				run_pair(r->impl, r->cipher == NO_CIPHER ? ARIA128 : r->cipher,
					 W_BULK, 0, strcmp(r->dir, "c2s") == 0, streams, secs,
					 label);
			if (!s.ok) {
				fprintf(stderr, "  [%s] failed\n", label);
				continue;
			}
			bool c2s = strcmp(r->dir, "c2s") == 0;
			r->snd_ns[r->n] = s.cpu_per_unit[c2s ? 0 : 1] * 1e9;
			r->rcv_ns[r->n] = s.cpu_per_unit[c2s ? 1 : 0] * 1e9;
			r->cv[r->n] = s.cpu_rate * 8e-9;
			r->v[r->n++] = s.rate[streams] * 8e-9;
		}
	const struct row *tcp[2] = {NULL, NULL};
	for (int i = first; i < g_nrows; i++) {
		finish_row(&g_rows[i]);
		if (g_rows[i].impl == IMPL_TCP)
			tcp[strcmp(g_rows[i].dir, "s2c") == 0] = &g_rows[i];
	}
	fprintf(stderr, "\n%-12s %-12s %-3s %8s %7s %7s %9s %8s | %10s %9s %8s\n", "impl",
		"cipher", "dir", "Gbit/s", "min", "max", "x openssl", "% of tcp", "Gb/s/cpu",
		"x openssl", "% of tcp");
	for (int i = first; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		const struct row *o = find_row(test, IMPL_OPENSSL, r->cipher, r->dir, 0, 0);
		const struct row *t = tcp[strcmp(r->dir, "s2c") == 0];
		char xo[16] = "-", pt[16] = "-", cxo[16] = "-", cpt[16] = "-";
		if (o && o->value > 0 && r->cipher != NO_CIPHER) {
			snprintf(xo, sizeof(xo), "%.2fx", r->value / o->value);
			snprintf(cxo, sizeof(cxo), "%.2fx", r->cpu_value / o->cpu_value);
		}
		if (t && t->value > 0) {
			snprintf(pt, sizeof(pt), "%.0f%%", 100 * r->value / t->value);
			snprintf(cpt, sizeof(cpt), "%.0f%%", 100 * r->cpu_value / t->cpu_value);
		}
		fprintf(stderr, "%-12s %-12s %-3s %8.3f %7.3f %7.3f %9s %8s | %10.3f %9s %8s%s\n",
			IMPL_NAMES[r->impl], r->cipher == NO_CIPHER ? "-" : CIPHER_NAMES[r->cipher],
			r->dir, r->value, minv(r), maxv(r), xo, pt, r->cpu_value, cxo, cpt,
			r->failed ? "  FAILED" : "");
	}
}

/* One stream and two streams at once, interleaved in the same rounds. */
static void test_streams(void)
{
	int first = g_nrows;
	for (int i = 0; i < N_IMPLS; i++)
		for (int n = 1; n <= 2; n++)
			if (impl_on((enum impl)i)) {
				struct row *r = add_row("streams", (enum impl)i,
							i == IMPL_TCP ? NO_CIPHER : ARIA128);
				r->dir = "c2s";
				r->streams = n;
				r->secs = g_seconds;
			}
	fprintf(stderr,
		"\n== streams: one stream vs two at once (aggregate), ARIA-128-GCM client->server, "
		"%d x %d s per row\n",
		g_rounds, g_seconds);
	for (int round = 0; round < g_rounds; round++)
		for (int i = first; i < g_nrows; i++) {
			struct row *r = &g_rows[i];
			char label[64];
			snprintf(label, sizeof(label), "%s x%d stream%s", IMPL_NAMES[r->impl], r->streams,
				 r->streams > 1 ? "s" : "");
			struct sample_result s = run_pair(r->impl, ARIA128, W_BULK, 0, true, r->streams,
							  g_seconds, label);
			if (!s.ok) {
				fprintf(stderr, "  [%s] failed\n", label);
				continue;
			}
			r->cv[r->n] = s.cpu_rate * 8e-9;
			r->v[r->n++] = s.rate[r->streams] * 8e-9;
		}
	for (int i = first; i < g_nrows; i++)
		finish_row(&g_rows[i]);
	fprintf(stderr, "\n%-12s %12s %12s %7s | %12s %12s %7s\n", "impl", "1 stream", "2 streams",
		"ratio", "1 per cpu", "2 per cpu", "ratio");
	for (int i = first; i + 1 < g_nrows; i += 2) {
		const struct row *a = &g_rows[i], *b = &g_rows[i + 1];
		fprintf(stderr, "%-12s %12.3f %12.3f %6.2fx | %12.3f %12.3f %6.2fx%s\n",
			IMPL_NAMES[a->impl], a->value, b->value, a->value > 0 ? b->value / a->value : 0,
			a->cpu_value, b->cpu_value, a->cpu_value > 0 ? b->cpu_value / a->cpu_value : 0,
			a->failed || b->failed ? "  FAILED" : "");
	}
}

static void test_small(void)
{
	static const size_t sizes[] = {64, 1500};
	int first = g_nrows;
	for (int z = 0; z < 2; z++)
		for (int i = 0; i < N_IMPLS; i++)
			if (impl_on((enum impl)i)) {
				struct row *r = add_row("small", (enum impl)i,
							i == IMPL_TCP ? NO_CIPHER : ARIA128);
				r->msg_size = sizes[z];
			}
	int secs = g_seconds > 1 ? g_seconds / 2 : 1;
	for (int i = first; i < g_nrows; i++)
		g_rows[i].secs = secs;
	fprintf(stderr,
		"\n== small: request/response echo over one connection, ARIA-128-GCM, %d x %d s per "
		"row\n",
		g_rounds, secs);
	for (int round = 0; round < g_rounds; round++)
		for (int i = first; i < g_nrows; i++) {
			struct row *r = &g_rows[i];
			char label[64];
			snprintf(label, sizeof(label), "%s %zu B echo", IMPL_NAMES[r->impl], r->msg_size);
			struct sample_result s =
				run_pair(r->impl, ARIA128, W_ECHO, r->msg_size, true, 1, secs, label);
			if (s.ok) {
				r->cv[r->n] = s.cpu_rate;
				r->v[r->n++] = s.rate[1];
			}
			else
				fprintf(stderr, "  [%s] failed\n", label);
		}
	fprintf(stderr, "\n%-12s %5s %9s %9s %9s %9s %8s | %10s %9s %8s\n", "impl", "bytes",
		"msgs/s", "min", "max", "x openssl", "% of tcp", "msgs/cpu-s", "x openssl",
		"% of tcp");
	for (int i = first; i < g_nrows; i++)
		finish_row(&g_rows[i]);
	for (int i = first; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		const struct row *o = find_row("small", IMPL_OPENSSL, ARIA128, "", r->msg_size, 0);
		const struct row *t = find_row("small", IMPL_TCP, NO_CIPHER, "", r->msg_size, 0);
		char xo[16] = "-", pt[16] = "-", cxo[16] = "-", cpt[16] = "-";
		if (o && o->value > 0 && r->impl != IMPL_TCP) {
			snprintf(xo, sizeof(xo), "%.2fx", r->value / o->value);
			snprintf(cxo, sizeof(cxo), "%.2fx", r->cpu_value / o->cpu_value);
		}
		if (t && t->value > 0) {
			snprintf(pt, sizeof(pt), "%.0f%%", 100 * r->value / t->value);
			snprintf(cpt, sizeof(cpt), "%.0f%%", 100 * r->cpu_value / t->cpu_value);
		}
		fprintf(stderr, "%-12s %5zu %9.0f %9.0f %9.0f %9s %8s | %10.0f %9s %8s%s\n",
			IMPL_NAMES[r->impl], r->msg_size, r->value, minv(r), maxv(r), xo, pt,
			r->cpu_value, cxo, cpt, r->failed ? "  FAILED" : "");
	}
}

/* Handshake loop: the server thread accepts and handshakes until its
 * listening socket is shut down, once the client thread has ended (with
 * stop or on a failure): then no connection of the client is left half way,
 * whereas a server ending at stop could leave the client's next handshake
 * waiting for it forever. */
struct hs_run {
	struct ctx *sctx, *cctx;
	enum resume resume;
	int ls, port;
	atomic_bool stop;
	/* Set once the client kept the session of its first, full handshake:
	 * every handshake after it must be resumed. */
	atomic_bool primed;
	_Atomic uint64_t done;
	atomic_bool failed;
	const char *label;
};

static void *hs_server(void *arg)
{
	struct hs_run *h = arg;
	pin(1);
	t_quiet = true;
	for (;;) {
		int fd = accept_one(h->ls);
		if (fd < 0)
			break;
		struct peer *p = peer_open(h->sctx, fd);
		if (p != NULL && atomic_load(&h->primed) && check_resumed(p, h->sctx, h->label) != 0)
			atomic_store(&h->failed, true);
		peer_free(p);
		close(fd);
	}
	return NULL;
}

/* One client connection. Done when the server is: it closes once its side
 * has finished (kTLS set-up included), so this waits for that EOF. The
 * first one of a resumed row keeps its session; the later ones must resume
 * it. 0 or -1. */
static int hs_once(struct hs_run *h)
{
	int fd = dial(h->port);
	if (fd < 0)
		return -1;
	struct peer *p = peer_open(h->cctx, fd);
	if (p == NULL) {
		close(fd);
		return -1;
	}
	int rc = h->resume == RESUME_FULL	 ? 0
		 : atomic_load(&h->primed) ? check_resumed(p, h->cctx, h->label)
					   : ctx_keep_session(h->cctx, p);
	peer_free(p);
	char b;
	while (recv(fd, &b, 1, 0) > 0)
		;
	close(fd);
	return rc;
}

static void *hs_client(void *arg)
{
	struct hs_run *h = arg;
	pin(0);
	while (!atomic_load(&h->stop) && !atomic_load(&h->failed)) {
		if (hs_once(h) != 0) {
			atomic_store(&h->failed, true);
			break;
		}
		atomic_fetch_add(&h->done, 1);
	}
	return NULL;
}

/* Handshakes per second of impl/ck/res, or -1; *cpu_rate gets the same count
 * per CPU-second of the busier thread (see sample_result.cpu_rate), 0 if the
 * clocks cannot be read. */
static double run_handshakes(enum impl impl, enum certkind ck, enum resume res, int seconds,
			     const char *label, double *cpu_rate)
{
	struct hs_run h = {.ls = -1, .resume = res, .label = label};
	h.sctx = ctx_new(impl, true, ck, ARIA128, res);
	h.cctx = ctx_new(impl, false, ck, ARIA128, res);
	if (h.sctx == NULL || h.cctx == NULL)
		exit(1);
	h.ls = listener(&h.port);
	pthread_t ts, tc;
	pthread_create(&ts, NULL, hs_server, &h);
	/* The session to resume, before the clock starts. */
	if (res != RESUME_FULL && hs_once(&h) != 0) {
		fprintf(stderr, "bench: %s: no session from the first, full handshake\n", label);
		atomic_store(&h.failed, true);
	}
	atomic_store(&h.primed, true);
	/* Both threads run until stop, so their clocks stay valid. The
	 * server's is read before the client starts, and the client's starts
	 * at 0 with its thread: both count from the first handshake. */
	clockid_t cid[2];
	bool have_cpu = pthread_getcpuclockid(ts, &cid[1]) == 0;
	double cpu0[2] = {0, 0}, cpu[2] = {0, 0};
	if (have_cpu)
		cpu0[1] = cpu[1] = cpu_seconds(cid[1]);
	double t0 = now(), tprev = t0;
	uint64_t prev = 0;
	pthread_create(&tc, NULL, hs_client, &h);
	have_cpu = have_cpu && pthread_getcpuclockid(tc, &cid[0]) == 0;
	for (int sec = 1; sec <= seconds && !atomic_load(&h.failed); sec++) {
		sleep_until(t0 + sec);
		double t = now();
		uint64_t c = atomic_load(&h.done);
		for (int i = 0; i < 2 && have_cpu; i++)
			cpu[i] = cpu_seconds(cid[i]);
		fprintf(stderr, "  [%-34s] %5.2f-%5.2f s  %8.0f handshakes/s\n", label, tprev - t0,
			t - t0, (double)(c - prev) / (t - tprev));
		prev = c;
		tprev = t;
	}
	double busier = cpu[0] - cpu0[0] > cpu[1] - cpu0[1] ? cpu[0] - cpu0[0] : cpu[1] - cpu0[1];
	*cpu_rate = busier > 0 ? (double)prev / busier : 0;
	atomic_store(&h.stop, true);
	pthread_join(tc, NULL);
	/* Linux: a blocked accept() on it returns (EINVAL). */
	shutdown(h.ls, SHUT_RDWR);
	pthread_join(ts, NULL);
	close(h.ls);
	ctx_free(h.sctx);
	ctx_free(h.cctx);
	if (atomic_load(&h.failed))
		return -1;
	return (double)prev / (tprev - t0);
}

static bool g_resume_want[N_RESUME];

/* "x" ratio of two rows' values (per CPU-second: cpu_value), "-" if either
 * is missing. */
static void ratio(char *out, size_t n, const struct row *a, const struct row *b, bool per_cpu)
{
	double x = a == NULL ? 0 : per_cpu ? a->cpu_value : a->value;
	double y = b == NULL ? 0 : per_cpu ? b->cpu_value : b->value;
	if (x > 0 && y > 0)
		snprintf(out, n, "%.2fx", x / y);
	else
		snprintf(out, n, "-");
}

static void test_handshake(void)
{
	static const char *const RESUME_NOTES[N_RESUME] = {
		NULL,
		"resumed by session ID (the server's session cache; tickets off)",
		"resumed by session ticket (RFC 5077)",
	};
	int first = g_nrows;
	for (int m = 0; m < N_RESUME; m++)
		for (int c = 0; c < 2 && g_resume_want[m]; c++)
			for (int i = 0; i < N_TLS_IMPLS; i++)
				if (impl_on(TLS_IMPLS[i])) {
					struct row *r = add_row("handshake", TLS_IMPLS[i], ARIA128);
					r->cert = (enum certkind)c;
					r->resume = (enum resume)m;
					if (m != RESUME_FULL)
						snprintf(r->note, sizeof(r->note), "%s",
							 RESUME_NOTES[m]);
					else if (TLS_IMPLS[i] == IMPL_SOTLS ||
						 TLS_IMPLS[i] == IMPL_SOTLS_KERNEL)
						snprintf(r->note, sizeof(r->note),
							 "ECDHE group: sotls default (P-256 first)");
					else
						snprintf(r->note, sizeof(r->note),
							 "ECDHE group: P-256");
				}
	bool resumed = g_resume_want[RESUME_ID] || g_resume_want[RESUME_TICKET];
	/* The same loop without TLS: what a handshake costs on top of the TCP
	 * connection and the two threads' wake-ups, which bound resumed rows. */
	if (resumed && impl_on(IMPL_TCP))
		snprintf(add_row("handshake", IMPL_TCP, NO_CIPHER)->note, sizeof(g_rows[0].note),
			 "TCP connection only (connect, accept, close): the loop's ceiling");
	int secs = g_seconds > 1 ? g_seconds / 2 : 1;
	for (int i = first; i < g_nrows; i++)
		g_rows[i].secs = secs;
	if (g_resume_want[RESUME_FULL])
		fprintf(stderr,
			"\n== handshake: full TLS 1.2 handshakes per second (new TCP connection each, "
			"no resumption), %d x %d s per row\n",
			g_rounds, secs);
	if (resumed)
		fprintf(stderr,
			"\n== handshake: resumed TLS 1.2 handshakes per second (new TCP connection "
			"each, abbreviated handshake resuming the session of one full handshake made "
			"first), %d x %d s per row, in the same rounds\n",
			g_rounds, secs);
	for (int round = 0; round < g_rounds; round++)
		for (int i = first; i < g_nrows; i++) {
			struct row *r = &g_rows[i];
			char label[64];
			if (r->impl == IMPL_TCP)
				snprintf(label, sizeof(label), "tcp connection only");
			else
				snprintf(label, sizeof(label), "%s %s%s%s", IMPL_NAMES[r->impl],
					 CERT_NAMES[r->cert], r->resume == RESUME_FULL ? "" : " ",
					 r->resume == RESUME_FULL ? "" : RESUME_NAMES[r->resume]);
			double cv = 0, v = run_handshakes(r->impl, r->cert, r->resume, secs, label, &cv);
			if (v >= 0) {
				r->cv[r->n] = cv;
				r->v[r->n++] = v;
			}
			else
				fprintf(stderr, "  [%s] failed\n", label);
		}
	for (int i = first; i < g_nrows; i++)
		finish_row(&g_rows[i]);
	if (g_resume_want[RESUME_FULL])
		fprintf(stderr, "\n%-14s %-18s %12s %10s %10s %9s\n", "impl", "kx/auth", "hs/s",
			"min", "max", "x openssl");
	for (int i = first; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		if (r->resume != RESUME_FULL || r->impl == IMPL_TCP)
			continue;
		char xo[16];
		ratio(xo, sizeof(xo), r, find_row("handshake", IMPL_OPENSSL, ARIA128, "", 0, r->cert),
		      false);
		fprintf(stderr, "%-14s %-18s %12.0f %10.0f %10.0f %9s  %s%s\n", IMPL_NAMES[r->impl],
			CERT_NAMES[r->cert], r->value, minv(r), maxv(r), xo, r->note,
			r->failed ? "  FAILED" : "");
	}
	if (resumed)
		fprintf(stderr, "\n%-14s %-18s %-7s %9s %8s %8s %8s %9s | %9s %8s %9s\n", "impl",
			"kx/auth", "resumed", "hs/s", "min", "max", "x full", "x openssl", "hs/cpu-s",
			"x full", "x openssl");
	for (int i = first; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		bool tcp = r->impl == IMPL_TCP;
		if (r->resume == RESUME_FULL && !tcp)
			continue;
		const struct row *full = tcp ? NULL : find_hs_row(r->impl, r->cert, RESUME_FULL);
		const struct row *o = tcp ? NULL : find_hs_row(IMPL_OPENSSL, r->cert, r->resume);
		char xf[16], xo[16], cxf[16], cxo[16];
		ratio(xf, sizeof(xf), r, full, false);
		ratio(xo, sizeof(xo), r, o, false);
		ratio(cxf, sizeof(cxf), r, full, true);
		ratio(cxo, sizeof(cxo), r, o, true);
		fprintf(stderr, "%-14s %-18s %-7s %9.0f %8.0f %8.0f %8s %9s | %9.0f %8s %9s%s%s%s\n",
			IMPL_NAMES[r->impl], tcp ? "-" : CERT_NAMES[r->cert],
			tcp ? "-" : RESUME_NAMES[r->resume], r->value, minv(r), maxv(r), xf, xo,
			r->cpu_value, cxf, cxo, tcp ? "  " : "", tcp ? r->note : "",
			r->failed ? "  FAILED" : "");
	}
}

static double heap_now(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (double)(mi.uordblks + mi.hblkhd);
}

static double rss_now(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (double)rss * (double)sysconf(_SC_PAGESIZE);
}

/* A child process: one side of the memory test. Writes 2 doubles to wfd,
 * then keeps its connections until hold reaches EOF (both sides are done).
 * Resumed (res not RESUME_FULL): the warm-up connection's full handshake
 * gives the session that every counted connection resumes. */
static void memory_side(enum impl impl, enum resume res, bool server, int ls, int port, int wfd,
			int hold)
{
	struct ctx *c = ctx_new(impl, server, CERT_ECDSA, ARIA128, res);
	struct peer **peers = calloc((size_t)g_conns, sizeof(*peers));
	int *fds = calloc((size_t)g_conns, sizeof(*fds));
	double out[2] = {-1, -1};
	if (c == NULL || peers == NULL || fds == NULL)
		goto done;
	for (int i = -1; i < g_conns; i++) {
		if (i == 0) {
			out[0] = heap_now();
			out[1] = rss_now();
		}
		int fd = server ? accept_one(ls) : dial(port);
		struct peer *p = fd >= 0 ? peer_open(c, fd) : NULL;
		const char *why = p == NULL ? "failed" : NULL;
		if (p != NULL && i < 0 && res != RESUME_FULL && !server && ctx_keep_session(c, p) != 0)
			why = "gave no session to resume";
		else if (p != NULL && i >= 0 && check_resumed(p, c, "memory") != 0)
			why = "was not what the row measures";
		if (why != NULL) {
			fprintf(stderr, "bench: memory %s %s %s: connection %d of %d %s%s%s\n",
				IMPL_NAMES[impl], RESUME_NAMES[res], server ? "server" : "client",
				i + 2, g_conns + 1, why, fd < 0 ? ": " : "",
				fd < 0 ? strerror(errno) : "");
			out[0] = out[1] = -1;
			/* So that the other side does not wait for us: its next
			 * connect is refused. */
			if (fd >= 0)
				close(fd);
			if (server)
				close(ls);
			goto done;
		}
		/* Warm-up: first-use allocations are not per connection. It stays
		 * open (and out of the count): closing it at once could end the
		 * peer's handshake before it is complete. */
		if (i < 0)
			continue;
		peers[i] = p;
		fds[i] = fd;
	}
	out[0] = (heap_now() - out[0]) / g_conns;
	out[1] = (rss_now() - out[1]) / g_conns;
done:
	if (write(wfd, out, sizeof(out)) != sizeof(out))
		_exit(1);
	char b;
	while (read(hold, &b, 1) > 0)
		;
	_exit(0);
}

/* One row of the memory test: impl's two sides in two child processes. */
static void memory_row(enum impl impl, enum resume res)
{
	int port, ls = listener(&port);
	int pc[2], ps[2], hold[2];
	if (pipe(pc) != 0 || pipe(ps) != 0 || pipe(hold) != 0)
		abort();
	fflush(NULL);
	pid_t server = fork();
	/* Each child keeps only its own write end: the parent's reads end
	 * when a child exits without writing. */
	if (server == 0) {
		close(pc[0]);
		close(pc[1]);
		close(ps[0]);
		close(hold[1]);
		memory_side(impl, res, true, ls, port, ps[1], hold[0]);
	}
	pid_t client = fork();
	if (client == 0) {
		close(pc[0]);
		close(ps[0]);
		close(ps[1]);
		close(ls);
		close(hold[1]);
		memory_side(impl, res, false, -1, port, pc[1], hold[0]);
	}
	close(pc[1]);
	close(ps[1]);
	close(ls);
	double cv[2] = {-1, -1}, sv[2] = {-1, -1};
	if (read(pc[0], cv, sizeof(cv)) != sizeof(cv))
		cv[0] = -1;
	/* If the client failed, the server may wait in accept: end it. */
	if (cv[0] < 0)
		kill(server, SIGTERM);
	if (read(ps[0], sv, sizeof(sv)) != sizeof(sv))
		sv[0] = -1;
	close(hold[0]);
	close(hold[1]); /* both sides may now close their connections and exit */
	waitpid(client, NULL, 0);
	waitpid(server, NULL, 0);
	close(pc[0]);
	close(ps[0]);
	struct row *r = add_row("memory", impl, ARIA128);
	r->resume = res;
	r->heap_client = cv[0];
	r->rss_client = cv[1];
	r->heap_server = sv[0];
	r->rss_server = sv[1];
	r->failed = cv[0] < 0 || sv[0] < 0;
	r->n = 1;
	r->v[0] = r->value = cv[0];
	fprintf(stderr, "%-14s %14.0f %14.0f %14.0f %14.0f%s\n", IMPL_NAMES[impl], cv[0], sv[0],
		cv[1], sv[1], r->failed ? "  FAILED" : "");
}

static void test_memory(void)
{
	static const char *const AFTER[N_RESUME] = {
		"", ", after a handshake resumed by session ID",
		", after a handshake resumed by session ticket"};
	for (int m = 0; m < N_RESUME; m++) {
		if (!g_resume_want[m])
			continue;
		fprintf(stderr,
			"\n== memory: heap (mallinfo2 uordblks+hblkhd) and RSS per idle established "
			"connection, %d connections, ECDHE-ECDSA ARIA-128-GCM%s\n",
			g_conns, AFTER[m]);
		fprintf(stderr, "%-14s %14s %14s %14s %14s\n", "impl", "client heap B",
			"server heap B", "client RSS B", "server RSS B");
		for (int i = 0; i < N_TLS_IMPLS; i++)
			if (impl_on(TLS_IMPLS[i]))
				memory_row(TLS_IMPLS[i], (enum resume)m);
	}
}

/* ------------------------------------------------------------------------ */
/* gnuplot tables                                                            */
/* ------------------------------------------------------------------------ */

/* Whether test has rows that did not fail, of full handshakes or resumed ones. */
static bool have_rows(const char *test, bool resumed)
{
	for (int i = 0; i < g_nrows; i++)
		if (strcmp(g_rows[i].test, test) == 0 && !g_rows[i].failed &&
		    (g_rows[i].resume != RESUME_FULL) == resumed)
			return true;
	return false;
}

/* dir/name for writing if any; otherwise removes a stale one. */
static FILE *open_dat(const char *dir, const char *name, bool any)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!any) {
		unlink(path);
		return NULL;
	}
	FILE *f = fopen(path, "w");
	if (f == NULL)
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
	return f;
}

static double val(const struct row *r)
{
	return r != NULL ? r->value : 0.0;
}

static void write_dats(const char *dir)
{
	FILE *f;
	if ((f = open_dat(dir, "bulk.dat", have_rows("bulk", false))) != NULL) {
		fprintf(f, "# impl  ARIA-128-GCM_c2s ARIA-128-GCM_s2c ARIA-256-GCM_c2s "
			   "ARIA-256-GCM_s2c AES-128-GCM_c2s AES-128-GCM_s2c AES-256-GCM_c2s "
			   "AES-256-GCM_s2c  (Gbit/s; tcp: no cipher, in both 128 columns)\n");
		for (int i = 0; i < N_IMPLS; i++) {
			bool any = false;
			for (int c = 0; c < N_CIPHERS; c++)
				any = any || find_row("bulk", (enum impl)i,
						      i == IMPL_TCP ? NO_CIPHER : (enum cipher)c,
						      "c2s", 0, 0) != NULL;
			if (!any)
				continue;
			fprintf(f, "%s", IMPL_NAMES[i]);
			for (int c = 0; c < N_CIPHERS; c++) {
				/* Plain TCP has no cipher: one pair of bars per figure. */
				if (i == IMPL_TCP && (c == ARIA256 || c == AES256)) {
					fprintf(f, " - -");
					continue;
				}
				enum cipher ci = i == IMPL_TCP ? NO_CIPHER : (enum cipher)c;
				const struct row *r1 = find_row("bulk", (enum impl)i, ci, "c2s", 0, 0);
				const struct row *r2 = find_row("bulk", (enum impl)i, ci, "s2c", 0, 0);
				if (r1 == NULL && r2 == NULL)
					fprintf(f, " - -");
				else
					fprintf(f, " %.3f %.3f", val(r1), val(r2));
			}
			fprintf(f, "\n");
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "small.dat", have_rows("small", false))) != NULL) {
		fprintf(f, "# impl  64B_msgs_per_s 1500B_msgs_per_s\n");
		for (int i = 0; i < N_IMPLS; i++) {
			enum cipher a = i == IMPL_TCP ? NO_CIPHER : ARIA128;
			const struct row *r1 = find_row("small", (enum impl)i, a, "", 64, 0);
			if (r1 != NULL)
				fprintf(f, "%s %.0f %.0f\n", IMPL_NAMES[i], val(r1),
					val(find_row("small", (enum impl)i, a, "", 1500, 0)));
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "handshake.dat", have_rows("handshake", false))) != NULL) {
		fprintf(f, "# impl  ECDHE-ECDSA-P256 ECDHE-RSA-2048  (handshakes/s)\n");
		for (int i = 0; i < N_IMPLS; i++) {
			const struct row *r1 =
				find_row("handshake", (enum impl)i, ARIA128, "", 0, CERT_ECDSA);
			if (r1 != NULL)
				fprintf(f, "%s %.0f %.0f\n", IMPL_NAMES[i], val(r1),
					val(find_row("handshake", (enum impl)i, ARIA128, "", 0,
						     CERT_RSA)));
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "handshake-resumed.dat", have_rows("handshake", true))) != NULL) {
		fprintf(f, "# impl  ECDSA_full ECDSA_id ECDSA_ticket RSA_full RSA_id RSA_ticket "
			   "(handshakes/s; - not run)\n");
		for (int i = 0; i < N_IMPLS; i++) {
			char line[256];
			int n = snprintf(line, sizeof(line), "%s", IMPL_NAMES[i]);
			bool any = false;
			for (int c = 0; c < 2; c++)
				for (int m = 0; m < N_RESUME; m++) {
					const struct row *r = find_hs_row((enum impl)i, (enum certkind)c,
									  (enum resume)m);
					any = any || (r != NULL && m != RESUME_FULL);
					if (r != NULL)
						n += snprintf(line + n, sizeof(line) - (size_t)n,
							      " %.0f", r->value);
					else
						n += snprintf(line + n, sizeof(line) - (size_t)n, " -");
				}
			if (any)
				fprintf(f, "%s\n", line);
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "memory.dat", have_rows("memory", false))) != NULL) {
		fprintf(f, "# impl  client_heap_KiB server_heap_KiB client_rss_KiB server_rss_KiB "
			   "(per connection)\n");
		for (int i = 0; i < g_nrows; i++) {
			const struct row *r = &g_rows[i];
			if (strcmp(r->test, "memory") == 0 && !r->failed && r->resume == RESUME_FULL)
				fprintf(f, "%s %.2f %.2f %.2f %.2f\n", IMPL_NAMES[r->impl],
					r->heap_client / 1024, r->heap_server / 1024,
					r->rss_client / 1024, r->rss_server / 1024);
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "memory-resumed.dat", have_rows("memory", true))) != NULL) {
		fprintf(f, "# impl resumption client_heap_KiB server_heap_KiB client_rss_KiB "
			   "server_rss_KiB (per connection, after a resumed handshake)\n");
		for (int i = 0; i < g_nrows; i++) {
			const struct row *r = &g_rows[i];
			if (strcmp(r->test, "memory") == 0 && !r->failed && r->resume != RESUME_FULL)
				fprintf(f, "%s %s %.2f %.2f %.2f %.2f\n", IMPL_NAMES[r->impl],
					RESUME_NAMES[r->resume], r->heap_client / 1024,
					r->heap_server / 1024, r->rss_client / 1024,
					r->rss_server / 1024);
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "streams.dat", have_rows("streams", false))) != NULL) {
		fprintf(f, "# impl  one_stream_Gbit/s two_streams_aggregate_Gbit/s (ARIA-128-GCM c2s)\n");
		for (int i = 0; i + 1 < g_nrows; i++) {
			const struct row *a = &g_rows[i], *b = &g_rows[i + 1];
			if (strcmp(a->test, "streams") == 0 && a->streams == 1 && b->streams == 2)
				fprintf(f, "%s %.3f %.3f\n", IMPL_NAMES[a->impl], a->value, b->value);
		}
		fclose(f);
	}
	if ((f = open_dat(dir, "results.json", true)) != NULL) {
		json_all(f, NULL);
		fclose(f);
	}
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sotls-bench-tls [options]\n"
		"  --tests LIST     bulk,small,handshake,memory,streams or all (default bulk)\n"
		"  --impl LIST      sotls-user,sotls-kernel,mbedtls,openssl,tcp (default all;\n"
		"                   sotls-kernel only runs where the kernel takes both directions)\n"
		"  --json           print the rows of the tests run as a JSON array on stdout\n"
		"  --out-dir DIR    write DIR/results.json and DIR/*.dat for the plots\n"
		"  --seconds N      measuring time per row and round (default 2, bulk rows 1;\n"
		"                   small and handshake rows take half of N)\n"
		"  --rounds N       rounds; each row reports the median (default 3)\n"
		"  --write-size N   bytes per application write in bulk (default 262144)\n"
		"  --conns N        connections in the memory test (default 200)\n"
		"  --resume LIST    handshake and memory rows: full,id,ticket (default all):\n"
		"                   full handshakes, resumed by session ID, by session ticket\n"
		"  --pin            pin sender to CPU 0 and receiver to CPU 1\n"
		"  --help           this text\n"
		"Tables and per-second lines go to stderr.\n");
}

static bool has_item(const char *list, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; (p = strstr(p, item)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* --resume: sets g_resume_want; 0, or -1 for a name it does not know. */
static int parse_resume(const char *list)
{
	size_t known = 0;
	for (int m = 0; m < N_RESUME; m++) {
		g_resume_want[m] = has_item(list, RESUME_NAMES[m]);
		known += g_resume_want[m] ? strlen(RESUME_NAMES[m]) + 1 : 0;
	}
	/* Every item named one: the list is exactly those names and commas. */
	return known > 0 && known == strlen(list) + 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"tests", required_argument, NULL, 't'},   {"impl", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'},	   {"out-dir", required_argument, NULL, 'o'},
		{"seconds", required_argument, NULL, 's'}, {"rounds", required_argument, NULL, 'r'},
		{"write-size", required_argument, NULL, 'w'},
		{"conns", required_argument, NULL, 'n'},   {"pin", no_argument, NULL, 'p'},
		{"resume", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},	   {NULL, 0, NULL, 0},
	};
	const char *tests = "bulk", *impls = NULL, *out_dir = NULL, *resume = "full,id,ticket";
	bool json = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 't': tests = optarg; break;
		case 'i': impls = optarg; break;
		case 'j': json = true; break;
		case 'o': out_dir = optarg; break;
		case 's': g_seconds = atoi(optarg); g_seconds_given = true; break;
		case 'r': g_rounds = atoi(optarg); break;
		case 'w': g_write_size = (size_t)atol(optarg); break;
		case 'n': g_conns = atoi(optarg); break;
		case 'p': g_pin = true; break;
		case 'R': resume = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || g_seconds < 1 || g_rounds < 1 || g_rounds > MAX_ROUNDS ||
	    g_write_size < 1 || g_conns < 1 || parse_resume(resume) != 0) {
		usage(stderr);
		return 2;
	}
	if (strcmp(tests, "all") == 0)
		tests = "bulk,small,handshake,memory,streams";
	for (int i = 0; i < N_IMPLS; i++)
		g_want[i] = impls == NULL || has_item(impls, IMPL_NAMES[i]);
	signal(SIGPIPE, SIG_IGN);

	if (ephemeral_cert("localhost", g_cert[CERT_ECDSA], sizeof(g_cert[0]), g_key[CERT_ECDSA],
			   sizeof(g_key[0])) != 0 ||
	    make_rsa_cert(g_cert[CERT_RSA], sizeof(g_cert[0]), g_key[CERT_RSA], sizeof(g_key[0])) !=
		    0) {
		fprintf(stderr, "bench: cannot make certificates\n");
		return 1;
	}

	/* What this machine gives sotls: the AEAD, and whether the kernel path works. */
	struct sample_result probe = run_pair(IMPL_SOTLS, ARIA128, W_NONE, 0, true, 1, 0, "probe");
	if (!probe.ok) {
		fprintf(stderr, "bench: a sotls connection over loopback failed\n");
		return 1;
	}
	bool any_kernel = false;
	for (int c = 0; c < N_CIPHERS && g_want[IMPL_SOTLS_KERNEL]; c++) {
		g_probing = true;
		struct sample_result k =
			run_pair(IMPL_SOTLS_KERNEL, (enum cipher)c, W_NONE, 0, true, 1, 0, "probe");
		g_probing = false;
		g_kernel_ok[c] = k.ok && k.info[0].tx_path == SOTLS_PATH_KERNEL &&
				 k.info[0].rx_path == SOTLS_PATH_KERNEL;
		any_kernel = any_kernel || g_kernel_ok[c];
	}
	g_have_kernel = g_kernel_ok[ARIA128];
	fprintf(stderr,
		"sotls-bench-tls: sotls %s, AEAD %s; OpenSSL %s; mbedTLS %s record layer; "
		"sotls-kernel %s\n",
		sotls_version(), probe.info[0].aead_impl, OpenSSL_version(OPENSSL_VERSION),
		MBEDTLS_VERSION_STRING,
		g_have_kernel ? "available"
		: any_kernel  ? "available for AES-GCM only (no gcm(aria) in this kernel)"
			      : "not available here (kTLS needs the VM harness / a kernel path)");

	if (has_item(tests, "bulk"))
		test_bulk("bulk", 1);
	if (has_item(tests, "small"))
		test_small();
	if (has_item(tests, "handshake"))
		test_handshake();
	if (has_item(tests, "memory"))
		test_memory();
	if (has_item(tests, "streams"))
		test_streams();

	if (json) {
		json_all(stdout, strcmp(tests, "bulk") == 0 ? "bulk" : NULL);
		fflush(stdout);
	}
	if (out_dir != NULL) {
		if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
			fprintf(stderr, "bench: %s: %s\n", out_dir, strerror(errno));
		write_dats(out_dir);
	}
	return 0;
}

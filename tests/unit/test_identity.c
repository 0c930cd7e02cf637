/*
 * The peer's identity modules: the copy of a chain (peer_identity.c: DER,
 * subject, SAN texts and their escaping, the trust anchor not copied), the
 * loaders (keys.c: CA directory, CRLs, encrypted keys with a password or a
 * callback) and the decision (verify.c: alerts for flags, the callback seen
 * from a real sotls <-> sotls handshake, and the modes' argument rules).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "handshake.h"
#include "hs_internal.h"
#include "peer_identity.h"
#include "sotls.h"
#include "test_certs.h"

static struct test_cert g_ca, g_other, g_leaf;

static const char NUL_NAME[] = "evil.test\0.good.test"; /* 20 bytes */
static const struct test_san LEAF_SANS[] = {
	{SOTLS_SAN_DNS, "leaf.test", 9},
	{SOTLS_SAN_DNS, NUL_NAME, sizeof(NUL_NAME) - 1},
	{SOTLS_SAN_URI, "urn:a\\b", 7},
	{SOTLS_SAN_IP, "\x7f\x00\x00\x01", 4},
	{SOTLS_SAN_EMAIL, "me@leaf.test", 12},
};

static int setup(void **state)
{
	(void)state;
	if (test_cert_make(&g_ca, "CN=unit CA", NULL, true, NULL, 0) != 0 ||
	    test_cert_make(&g_other, "CN=other CA", NULL, true, NULL, 0) != 0 ||
	    test_cert_make(&g_leaf, "CN=leaf.test,O=unit", &g_ca, false, LEAF_SANS, 5) != 0)
		return -1;
	return 0;
}

static size_t ca_count(const struct sotls_config *cfg)
{
	size_t n = 0;
	for (const mbedtls_x509_crt *c = &cfg->ca; c != NULL && c->raw.p != NULL; c = c->next)
		n++;
	return n;
}

/* ---- peer_identity.c ---- */

static void test_peer_copy(void **state)
{
	(void)state;
	mbedtls_x509_crt leaf, ca;
	mbedtls_x509_crt_init(&leaf);
	mbedtls_x509_crt_init(&ca);
	assert_int_equal(mbedtls_x509_crt_parse_der(&leaf, g_leaf.der, g_leaf.der_len), 0);
	assert_int_equal(mbedtls_x509_crt_parse_der(&ca, g_ca.der, g_ca.der_len), 0);
	mbedtls_x509_crt *chain[2] = {&leaf, &ca};
	uint32_t flags[2] = {SOTLS_CERT_EXPIRED, 0};
	struct sotls_peer *p = sotls_peer_new(chain, flags, 2, &ca);
	assert_non_null(p);
	/* Freed before reading: the copy must not point into the leaf. */
	mbedtls_x509_crt_free(&leaf);

	const uint8_t *der;
	size_t len;
	assert_int_equal(sotls_peer_cert(p, 0, &der, &len), 1);
	assert_int_equal(len, g_leaf.der_len);
	assert_memory_equal(der, g_leaf.der, len);
	assert_int_equal(p->certs[0].flags, SOTLS_CERT_EXPIRED);
	/* The anchor is the configuration's, not copied. */
	assert_int_equal(sotls_peer_cert(p, 1, &der, &len), 1);
	assert_ptr_equal(der, ca.raw.p);
	assert_int_equal(sotls_peer_cert(p, 2, &der, &len), 0);
	assert_int_equal(sotls_peer_cert(p, 0, NULL, &len), SOTLS_ERR_INVALID_ARGUMENT);

	assert_string_equal(sotls_peer_subject(p), "CN=leaf.test, O=unit");
	static const char *const want[] = {"leaf.test", "evil.test\\x00.good.test", "urn:a\\x5cb",
					   "127.0.0.1", "me@leaf.test"};
	enum sotls_san_type type;
	const char *value;
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(sotls_peer_san(p, i, &type, &value), 1);
		assert_int_equal(type, LEAF_SANS[i].type);
		assert_string_equal(value, want[i]);
	}
	assert_int_equal(sotls_peer_san(p, 5, &type, &value), 0);
	sotls_peer_free(p);
	mbedtls_x509_crt_free(&ca);

	/* No peer at all: empty answers. */
	assert_int_equal(sotls_peer_cert(NULL, 0, &der, &len), 0);
	assert_string_equal(sotls_peer_subject(NULL), "");
	assert_int_equal(sotls_peer_san(NULL, 0, &type, &value), 0);
}

/* ---- keys.c: CA directory, CRLs ---- */

static void write_file(const char *dir, const char *name, const char *a, const char *b)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(a, f);
	if (b != NULL)
		fputs(b, f);
	fclose(f);
}

static void test_ca_dir(void **state)
{
	(void)state;
	char dir[] = "/tmp/sotls-cadir-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char link_path[600], rm[700];
	snprintf(link_path, sizeof(link_path), "%s/0123abcd.0", dir);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);

	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	/* Empty: nothing would be trusted. */
	assert_int_equal(sotls_config_set_ca_dir(cfg, dir), SOTLS_ERR_CA_LOAD);
	/* ca.pem, its hash link, a bundle of both CAs, a file not taken. */
	write_file(dir, "ca.pem", g_ca.pem, NULL);
	assert_int_equal(symlink("ca.pem", link_path), 0);
	write_file(dir, "bundle.crt", g_ca.pem, g_other.pem);
	write_file(dir, "notes.txt", "not a certificate", NULL);
	write_file(dir, "0123abcd.r0", "a CRL by its hash name", NULL);
	assert_int_equal(sotls_config_set_ca_dir(cfg, dir), 0);
	assert_int_equal(ca_count(cfg), 2);
	assert_true(cfg->have_ca);
	/* Loading it again adds nothing twice. */
	assert_int_equal(sotls_config_set_ca_dir(cfg, dir), 0);
	assert_int_equal(ca_count(cfg), 2);
	/* A .pem that does not parse fails the whole call, nothing added. */
	write_file(dir, "bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		   NULL);
	struct sotls_config *cfg2 = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_ca_dir(cfg2, dir), SOTLS_ERR_CA_LOAD);
	assert_int_equal(ca_count(cfg2), 0);
	assert_int_equal(sotls_config_set_ca_dir(cfg2, "/nonexistent/sotls"), SOTLS_ERR_CA_LOAD);
	assert_int_equal(sotls_config_set_ca_dir(cfg2, NULL), SOTLS_ERR_INVALID_ARGUMENT);
	sotls_config_free(cfg2);
	sotls_config_free(cfg);
	assert_int_equal(system(rm), 0);
}

static void test_crl_rules(void **state)
{
	(void)state;
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_crl_mem(cfg, NULL, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_crl_mem(cfg, "garbage", 7), SOTLS_ERR_CRL_LOAD);
	/* A certificate is not a CRL. */
	assert_int_equal(sotls_config_set_crl_mem(cfg, g_ca.pem, strlen(g_ca.pem)),
			 SOTLS_ERR_CRL_LOAD);
	assert_false(cfg->have_crl);
	assert_int_equal(sotls_config_set_crl_file(cfg, "/nonexistent/crl.pem"), SOTLS_ERR_CRL_LOAD);
	sotls_config_free(cfg);
}

/* ---- keys.c: encrypted keys ---- */

/* g_leaf's key as PKCS#8 encrypted with PBES2 AES-256-CBC (OpenSSL). */
static char *encrypted_key(const char *password)
{
	BIO *in = BIO_new_mem_buf(g_leaf.key_pem, -1);
	EVP_PKEY *k = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
	BIO *out = BIO_new(BIO_s_mem());
	assert_non_null(k);
	assert_int_equal(PEM_write_bio_PKCS8PrivateKey(out, k, EVP_aes_256_cbc(), password,
						       (int)strlen(password), NULL, NULL),
			 1);
	char *data;
	long n = BIO_get_mem_data(out, &data);
	char *pem = malloc((size_t)n + 1); /* BIO memory has no NUL */
	assert_non_null(pem);
	memcpy(pem, data, (size_t)n);
	pem[n] = '\0';
	BIO_free(out);
	BIO_free(in);
	EVP_PKEY_free(k);
	assert_non_null(strstr(pem, "ENCRYPTED PRIVATE KEY"));
	return pem;
}

static int g_cb_calls;

static int password_cb(char *buf, size_t size, void *arg)
{
	g_cb_calls++;
	if (arg == NULL)
		return -1;
	if (strcmp(arg, "too long") == 0)
		return (int)size + 1;
	size_t n = strlen(arg);
	memcpy(buf, arg, n);
	return (int)n;
}

static int load_key(const char *password, const char *cb_password, int use_cb, const char *key)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (password != NULL)
		assert_int_equal(sotls_config_set_key_password(cfg, password), 0);
	if (use_cb)
		assert_int_equal(sotls_config_set_key_password_cb(cfg, password_cb,
								  (void *)cb_password),
				 0);
	int rc = sotls_config_set_cert_mem(cfg, g_leaf.pem, strlen(g_leaf.pem), key, strlen(key));
	sotls_config_free(cfg);
	return rc;
}

static void test_encrypted_key(void **state)
{
	(void)state;
	char *key = encrypted_key("pass phrase");
	assert_int_equal(load_key("pass phrase", NULL, 0, key), 0);
	assert_int_equal(load_key("wrong", NULL, 0, key), SOTLS_ERR_KEY_PASSWORD);
	assert_int_equal(load_key(NULL, NULL, 0, key), SOTLS_ERR_KEY_PASSWORD);
	g_cb_calls = 0;
	assert_int_equal(load_key(NULL, "pass phrase", 1, key), 0);
	assert_int_equal(load_key(NULL, "wrong", 1, key), SOTLS_ERR_KEY_PASSWORD);
	assert_int_equal(load_key(NULL, NULL, 1, key), SOTLS_ERR_KEY_PASSWORD);
	assert_int_equal(load_key(NULL, "too long", 1, key), SOTLS_ERR_KEY_PASSWORD);
	assert_int_equal(g_cb_calls, 4);
	/* The callback replaced the password (one source at a time). */
	assert_int_equal(load_key("pass phrase", "wrong", 1, key), SOTLS_ERR_KEY_PASSWORD);
	/* An unencrypted key never asks. */
	g_cb_calls = 0;
	assert_int_equal(load_key(NULL, "x", 1, g_leaf.key_pem), 0);
	assert_int_equal(g_cb_calls, 0);
	free(key);
}

/* ---- what a failed load says (sotls_config_error_detail) ---- */

/* detail holds every one of the NULL-terminated words. */
static void assert_detail(const struct sotls_config *cfg, ...)
{
	const char *d = sotls_config_error_detail(cfg);
	print_message("detail: %s\n", d);
	va_list ap;
	va_start(ap, cfg);
	for (const char *w; (w = va_arg(ap, const char *)) != NULL;)
		assert_non_null(strstr(d, w));
	va_end(ap);
}

/* Each bad input names itself and its fault: the cases an operator meets
 * (a key that is not the certificate's, a file that is not a key, one that
 * cannot be read, a wrong password) and each other loader. */
static void test_error_detail(void **state)
{
	(void)state;
	char dir[] = "/tmp/sotls-detail-XXXXXX", path[600], key[600], rm[700];
	assert_non_null(mkdtemp(dir));
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_string_equal(sotls_config_error_detail(cfg), "");
	assert_string_equal(sotls_config_error_detail(NULL), "");
	write_file(dir, "leaf.pem", g_leaf.pem, NULL);
	snprintf(path, sizeof(path), "%s/leaf.pem", dir);

	snprintf(key, sizeof(key), "%s/missing.key", dir);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, key), SOTLS_ERR_KEY_LOAD);
	assert_detail(cfg, key, strerror(ENOENT), NULL);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, dir), SOTLS_ERR_KEY_LOAD);
	assert_detail(cfg, dir, strerror(EISDIR), NULL);
	write_file(dir, "garbage.key", "not a key at all\n", NULL);
	snprintf(key, sizeof(key), "%s/garbage.key", dir);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, key), SOTLS_ERR_KEY_LOAD);
	assert_detail(cfg, key, "PK - ", NULL);
	write_file(dir, "other.key", g_other.key_pem, NULL);
	snprintf(key, sizeof(key), "%s/other.key", dir);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, key), SOTLS_ERR_KEY_LOAD);
	assert_detail(cfg, key, "does not match the public key of the leaf in", path, NULL);
	char *enc = encrypted_key("pass phrase");
	write_file(dir, "enc.key", enc, NULL);
	free(enc);
	snprintf(key, sizeof(key), "%s/enc.key", dir);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, key), SOTLS_ERR_KEY_PASSWORD);
	assert_detail(cfg, key, "encrypted and no password", NULL);
	assert_int_equal(sotls_config_set_key_password(cfg, "wrong"), 0);
	assert_int_equal(sotls_config_set_cert_file(cfg, path, key), SOTLS_ERR_KEY_PASSWORD);
	assert_detail(cfg, key, "password is wrong", NULL);
	assert_int_equal(sotls_config_set_cert_file(cfg, key, key), SOTLS_ERR_CERT_LOAD);
	assert_detail(cfg, key, "X509 - ", NULL);
	assert_int_equal(sotls_config_set_cert_mem(cfg, "junk", 4, g_leaf.key_pem,
						   strlen(g_leaf.key_pem)),
			 SOTLS_ERR_CERT_LOAD);
	assert_detail(cfg, "the certificate chain: ", NULL);

	assert_int_equal(sotls_config_set_ca_file(cfg, key), SOTLS_ERR_CA_LOAD);
	assert_detail(cfg, key, ": CA certificates: ", NULL);
	char empty[] = "/tmp/sotls-detail-empty-XXXXXX";
	assert_non_null(mkdtemp(empty));
	assert_int_equal(sotls_config_set_ca_dir(cfg, empty), SOTLS_ERR_CA_LOAD);
	assert_detail(cfg, empty, "no certificate file", NULL);
	rmdir(empty);
	write_file(dir, "bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		   NULL);
	assert_int_equal(sotls_config_set_ca_dir(cfg, dir), SOTLS_ERR_CA_LOAD);
	assert_detail(cfg, "/bad.pem: X509 - ", NULL);
	assert_int_equal(sotls_config_set_crl_file(cfg, path), SOTLS_ERR_CRL_LOAD);
	assert_detail(cfg, path, ": CRL: ", NULL);

	/* The ticket key file: the refusal in words, errno as documented. */
	write_file(dir, "ticket.keys", "# nothing\n", NULL);
	snprintf(key, sizeof(key), "%s/ticket.keys", dir);
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(sotls_config_set_ticket_key_file(cfg, key), SOTLS_ERR_TICKET_KEYS);
	assert_int_equal(errno, EPERM);
	assert_detail(cfg, key, "group or others may read or write it", NULL);
	assert_int_equal(chmod(key, 0600), 0);
	assert_int_equal(sotls_config_set_ticket_key_file(cfg, key), SOTLS_ERR_TICKET_KEYS);
	assert_int_equal(errno, ENODATA);
	assert_detail(cfg, key, "no key in it", NULL);
	sotls_config_free(cfg);
	assert_int_equal(system(rm), 0);
}

/* ---- verify.c ---- */

static void test_alerts_for_flags(void **state)
{
	(void)state;
	/* RFC 5246 §7.2.2. */
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_NOT_TRUSTED), 48);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_REVOKED), 44);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_EXPIRED), 45);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_FUTURE), 45);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_KEY_USAGE), 43);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_NAME_MISMATCH | SOTLS_CERT_NOT_TRUSTED), 42);
	assert_int_equal(sotls_verify_alert(SOTLS_CERT_CRL_EXPIRED), 46);
	assert_int_equal(sotls_verify_alert(0), 46);
	char reason[256];
	sotls_verify_reason(SOTLS_CERT_EXPIRED | SOTLS_CERT_NOT_TRUSTED, reason, sizeof(reason));
	assert_non_null(strstr(reason, "expired"));
	assert_non_null(strchr(reason, ';'));
	assert_null(strchr(reason, '\n'));
	sotls_verify_reason(0, reason, sizeof(reason));
	assert_string_equal(reason, "");
}

static void test_mode_rules(void **state)
{
	(void)state;
	struct sotls_config *cc = sotls_config_new(SOTLS_ROLE_CLIENT);
	struct sotls_config *sc = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_verify(cc, SOTLS_VERIFY_OPTIONAL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_verify(sc, SOTLS_VERIFY_OPTIONAL), 0);
	assert_int_equal(sotls_config_set_verify_callback(NULL, NULL, NULL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	/* Frozen by a connection: every new setter refuses. */
	assert_int_equal(sotls_config_set_cert_mem(sc, g_leaf.pem, strlen(g_leaf.pem),
						   g_leaf.key_pem, strlen(g_leaf.key_pem)),
			 0);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(sc, fd[0], &c), 0);
	assert_int_equal(sotls_config_set_verify_callback(sc, NULL, NULL), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_ca_dir(sc, "/tmp"), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_crl_mem(sc, "x", 1), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_key_password(sc, "x"), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_key_password_cb(sc, NULL, NULL), SOTLS_ERR_BAD_STATE);
	/* Before the handshake there is no peer. */
	const uint8_t *der;
	size_t len;
	enum sotls_san_type type;
	const char *value;
	assert_int_equal(sotls_conn_peer_cert(c, 0, &der, &len), 0);
	assert_int_equal(sotls_conn_peer_san(c, 0, &type, &value), 0);
	assert_string_equal(sotls_conn_peer_subject(c), "");
	assert_int_equal(sotls_conn_peer_cert(NULL, 0, &der, &len), SOTLS_ERR_INVALID_ARGUMENT);
	sotls_conn_free(c);
	close(fd[0]);
	close(fd[1]);
	sotls_config_free(sc);
	sotls_config_free(cc);
}

/* A server that asks for a client certificate through its callback. */
struct cb_record {
	int calls;
	uint32_t flags;
	size_t chain_len, accessor_len;
	char subject[128];
	int verdict;
};

static int record_cb(struct sotls_conn *c, const struct sotls_verify_info *vi, void *arg)
{
	struct cb_record *r = arg;
	const uint8_t *der;
	r->calls++;
	r->flags = vi->flags;
	r->chain_len = vi->chain_len;
	if (sotls_conn_peer_cert(c, 0, &der, &r->accessor_len) != 1 ||
	    r->accessor_len != vi->chain[0].der_len)
		r->accessor_len = 0;
	snprintf(r->subject, sizeof(r->subject), "%s", sotls_conn_peer_subject(c));
	return r->verdict;
}

struct srv {
	struct sotls_config *cfg;
	int fd, rc;
	struct sotls_info info;
};

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	struct sotls_conn *c;
	s->rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->rc == 0) {
		s->rc = sotls_handshake(c);
		s->info = (struct sotls_info)SOTLS_INFO_INIT;
		sotls_get_info(c, &s->info);
		sotls_conn_free(c);
	}
	/* The fd stays open until the client is done: closing it with the
	 * client's last flight unread would reset the client's socket before
	 * it reads the alert. */
	return NULL;
}

/* One handshake: a server in mode with record_cb (verdict), a client with
 * g_leaf (or no certificate). Returns the client's handshake result. */
static int mtls_handshake(enum sotls_verify mode, int verdict, int client_cert,
			  struct cb_record *r, struct srv *s)
{
	struct sotls_config *sc = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_cert_mem(sc, g_leaf.pem, strlen(g_leaf.pem),
						   g_leaf.key_pem, strlen(g_leaf.key_pem)),
			 0);
	assert_int_equal(sotls_config_set_ca_mem(sc, g_other.pem, strlen(g_other.pem)), 0);
	assert_int_equal(sotls_config_set_verify(sc, mode), 0);
	r->verdict = verdict;
	assert_int_equal(sotls_config_set_verify_callback(sc, record_cb, r), 0);
	struct sotls_config *cc = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_ca_mem(cc, g_ca.pem, strlen(g_ca.pem)), 0);
	assert_int_equal(sotls_config_set_server_name(cc, "leaf.test"), 0);
	if (client_cert)
		assert_int_equal(sotls_config_set_cert_mem(cc, g_leaf.pem, strlen(g_leaf.pem),
							   g_leaf.key_pem, strlen(g_leaf.key_pem)),
				 0);
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	*s = (struct srv){.cfg = sc, .fd = fd[1]};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, srv_main, s), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd[0], &c), 0);
	int rc = sotls_handshake(c);
	sotls_conn_free(c);
	close(fd[0]);
	pthread_join(t, NULL);
	close(fd[1]);
	sotls_config_free(sc);
	sotls_config_free(cc);
	return rc;
}

static void test_callback_over_handshake(void **state)
{
	(void)state;
	struct cb_record r = {0};
	struct srv s;
	/* The server trusts only g_other: the library says not trusted, the
	 * callback accepts, and saw the chain and the accessors. */
	assert_int_equal(mtls_handshake(SOTLS_VERIFY_REQUIRED, SOTLS_VERDICT_ACCEPT, 1, &r, &s), 0);
	assert_int_equal(s.rc, 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.flags, SOTLS_CERT_NOT_TRUSTED);
	assert_int_equal(r.chain_len, 1);
	assert_int_equal(r.accessor_len, g_leaf.der_len);
	assert_string_equal(r.subject, "CN=leaf.test, O=unit");
	assert_int_equal(s.info.peer_verified, 1);
	assert_int_equal(s.info.peer_chain_len, 1);
	/* The callback's alert reaches the client. */
	r = (struct cb_record){0};
	assert_int_equal(mtls_handshake(SOTLS_VERIFY_REQUIRED, SOTLS_VERDICT_REJECT_ACCESS_DENIED, 1,
					&r, &s),
			 SOTLS_ERR_PEER_ALERT);
	assert_int_equal(s.rc, SOTLS_ERR_CERT_VERIFY);
	/* Optional without a certificate: no call, no peer. */
	r = (struct cb_record){0};
	assert_int_equal(mtls_handshake(SOTLS_VERIFY_OPTIONAL, SOTLS_VERDICT_REJECT, 0, &r, &s), 0);
	assert_int_equal(r.calls, 0);
	assert_int_equal(s.info.peer_chain_len, 0);
	assert_int_equal(s.info.peer_verified, 0);
	/* Required without a certificate: handshake_failure, no call. */
	assert_int_equal(mtls_handshake(SOTLS_VERIFY_REQUIRED, SOTLS_VERDICT_ACCEPT, 0, &r, &s),
			 SOTLS_ERR_PEER_ALERT);
	assert_int_equal(s.rc, SOTLS_ERR_CERT_VERIFY);
	assert_int_equal(r.calls, 0);
	/* None: no certificate is asked for, the callback is not called. */
	assert_int_equal(mtls_handshake(SOTLS_VERIFY_NONE, SOTLS_VERDICT_REJECT, 1, &r, &s), 0);
	assert_int_equal(r.calls, 0);
	assert_int_equal(s.info.peer_chain_len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_copy),
		cmocka_unit_test(test_ca_dir),
		cmocka_unit_test(test_crl_rules),
		cmocka_unit_test(test_encrypted_key),
		cmocka_unit_test(test_error_detail),
		cmocka_unit_test(test_alerts_for_flags),
		cmocka_unit_test(test_mode_rules),
		cmocka_unit_test(test_callback_over_handshake),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

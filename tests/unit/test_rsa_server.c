/*
 * The server's RSA key on sotls's RSA code (lib/handshake/rsa_key.c):
 *  - every Wycheproof rsa_pkcs1_2048_sig_gen case whose hash this mbedTLS
 *    has, signed through the pk context the server signs with (sotls's RSA
 *    for balanced keys, mbedTLS's for the three with unbalanced primes);
 *  - which keys a configuration hands to sotls's RSA (2048/3072/4096) and
 *    which stay with mbedTLS (1024-bit RSA, ECDSA);
 *  - full handshakes over a socketpair with RSA-2048/3072/4096 certificates,
 *    the sotls server against a sotls client and against OpenSSL's libssl
 *    (each verifies the ServerKeyExchange signature and the chain);
 *  - a faulted CRT half in the server's key: the handshake fails with
 *    SOTLS_ERR_PRIVATE_KEY_CHECK and an internal_error alert, the
 *    signature never goes out.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <mbedtls/pk.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "crypto_testutil.h"
#include "ephemeral_cert.h"
#include "handshake.h"
#include "rsa_testutil.h"
#include "sotls.h"

static mbedtls_md_type_t md_type(enum sotls_rsa_hash h)
{
	switch (h) {
	case SOTLS_RSA_SHA256:
		return MBEDTLS_MD_SHA256;
	case SOTLS_RSA_SHA384:
		return MBEDTLS_MD_SHA384;
	case SOTLS_RSA_SHA512:
		return MBEDTLS_MD_SHA512;
	default:
		return MBEDTLS_MD_NONE; /* SHA-1, SHA-224: not in sotls's mbedTLS */
	}
}

static void test_wycheproof_server_path(void **state)
{
	(void)state;
	const char *file = "rsa_pkcs1_2048_sig_gen_test.json";
	json_t *root = wp_load(file);
	size_t ours = 0, mbed = 0, no_hash = 0, index;
	json_t *group;

	json_array_foreach(json_object_get(root, "testGroups"), index, group)
	{
		const enum sotls_rsa_hash h = wp_group_hash(group);
		json_t *tests = json_object_get(group, "tests");
		if (md_type(h) == MBEDTLS_MD_NONE) {
			/* TLS cannot ask for them here; test_rsa signs them with
			 * sotls's RSA directly. */
			no_hash += json_array_size(tests);
			continue;
		}
		const char *pem = json_string_value(json_object_get(group, "privateKeyPem"));
		mbedtls_pk_context pk;
		struct sotls_rsa_key *own;
		mbedtls_pk_init(&pk);
		if (pem == NULL ||
		    mbedtls_pk_parse_key(&pk, (const unsigned char *)pem, strlen(pem) + 1, NULL, 0,
					 sotls_os_random, NULL) != 0)
			fail_msg("group %zu: mbedTLS cannot parse the key", index);
		assert_int_equal(sotls_pk_own_rsa(&pk, &own), 0);
		/* The primes of three keys are 1364 and 684 bits. */
		struct rsa_testkey tk;
		rsa_testkey_from_pem(&tk, pem, strlen(pem));
		const bool balanced = tk.part_len[2] == tk.part_len[3];
		rsa_testkey_free(&tk);
		assert_int_equal(own != NULL, balanced);
		assert_int_equal(mbedtls_pk_get_type(&pk),
				 balanced ? MBEDTLS_PK_RSA_ALT : MBEDTLS_PK_RSA);

		size_t ti;
		json_t *t;
		json_array_foreach(tests, ti, t)
		{
			struct wp_case c;
			uint8_t sig[MBEDTLS_PK_SIGNATURE_MAX_SIZE];
			size_t sig_len = 0;
			wp_case_read(t, h, &c);
			int rc = mbedtls_pk_sign(&pk, md_type(h), c.digest, c.digest_len, sig,
						 sizeof(sig), &sig_len, sotls_os_random, NULL);
			if (rc != 0 || sig_len != c.sig_len || memcmp(sig, c.sig, sig_len) != 0)
				fail_msg("tcId %ld (%s): wrong signature (rc -0x%04x)", c.id,
					 c.result, (unsigned)-rc);
			wp_case_free(&c);
			*(balanced ? &ours : &mbed) += 1;
		}
		mbedtls_pk_free(&pk);
		sotls_rsa_key_free(own);
	}
	wp_check_count(root, ours + mbed + no_hash, file);
	printf("%s: %zu cases signed by sotls's RSA, %zu by mbedTLS's (unbalanced primes), "
	       "%zu SHA-1/SHA-224 left to test_rsa\n",
	       file, ours, mbed, no_hash);
	assert_int_equal(mbed, 3);
	json_decref(root);
}

/* ------------------------------------------------- configurations */

static struct rsa_testkey keys[3]; /* 2048, 3072, 4096 */
static char certs[3][8192], key_pems[3][8192];

static int make_keys(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		rsa_testkey_generate(&keys[i], 2048 + 1024 * i);
		rsa_testkey_self_signed(&keys[i], certs[i], sizeof(certs[i]), key_pems[i],
					sizeof(key_pems[i]));
	}
	return 0;
}

static int free_keys(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		rsa_testkey_free(&keys[i]);
	return 0;
}

static struct sotls_config *server_config(const char *cert, const char *key)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_non_null(cfg);
	assert_int_equal(
		sotls_config_set_cert_mem(cfg, cert, strlen(cert) + 1, key, strlen(key) + 1), 0);
	return cfg;
}

static void test_config_keys(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		struct sotls_config *cfg = server_config(certs[i], key_pems[i]);
		assert_non_null(cfg->certs[0].cert->rsa);
		assert_int_equal(sotls_rsa_key_bytes(cfg->certs[0].cert->rsa), 256 + 128 * i);
		assert_int_equal(mbedtls_pk_get_type(&cfg->certs[0].cert->key), MBEDTLS_PK_RSA_ALT);
		/* A second key replaces the first, and frees it. */
		assert_int_equal(sotls_config_set_cert_mem(cfg, certs[0], strlen(certs[0]) + 1,
							   key_pems[0], strlen(key_pems[0]) + 1),
				 0);
		assert_int_equal(sotls_rsa_key_bytes(cfg->certs[0].cert->rsa), 256);
		sotls_config_free(cfg);
	}

	struct rsa_testkey small;
	static char cert[8192], key[8192];
	rsa_testkey_generate(&small, 1024);
	rsa_testkey_self_signed(&small, cert, sizeof(cert), key, sizeof(key));
	struct sotls_config *cfg = server_config(cert, key);
	assert_null(cfg->certs[0].cert->rsa);
	assert_int_equal(mbedtls_pk_get_type(&cfg->certs[0].cert->key), MBEDTLS_PK_RSA);
	sotls_config_free(cfg);
	rsa_testkey_free(&small);

	assert_int_equal(ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)), 0);
	cfg = server_config(cert, key);
	assert_null(cfg->certs[0].cert->rsa);
	assert_int_equal(mbedtls_pk_get_type(&cfg->certs[0].cert->key), MBEDTLS_PK_ECKEY);
	sotls_config_free(cfg);
}

/* ------------------------------------------------------ handshakes */

struct server {
	struct sotls_config *cfg;
	int fd, rc;
	char detail[256];
};

/* The handshake, then close_notify. No cmocka asserts off the main thread. */
static void *server_main(void *arg)
{
	struct server *s = arg;
	struct sotls_conn *c;
	s->rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->rc != 0)
		return NULL;
	s->rc = sotls_handshake(c);
	snprintf(s->detail, sizeof(s->detail), "%s", sotls_conn_error_detail(c));
	if (s->rc == 0)
		s->rc = sotls_shutdown(c);
	sotls_conn_free(c);
	return NULL;
}

/* The server on one end of a socketpair, in a thread; returns the other end. */
static int start_server(struct server *s, pthread_t *t)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	s->fd = fd[1];
	assert_int_equal(pthread_create(t, NULL, server_main, s), 0);
	return fd[0];
}

static void stop_server(struct server *s, pthread_t t, int client_fd)
{
	close(client_fd);
	pthread_join(t, NULL);
	close(s->fd);
}

/* One handshake of a verifying sotls client against server config sc;
 * returns the client's result, the server's in *server_rc. */
static int handshake(struct sotls_config *sc, const char *ca, int *server_rc, char *detail,
		     size_t detail_len)
{
	pthread_t t;
	struct server s = {.cfg = sc};
	const int fd = start_server(&s, &t);

	struct sotls_config *cc = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_non_null(cc);
	assert_int_equal(sotls_config_set_ca_mem(cc, ca, strlen(ca) + 1), 0);
	assert_int_equal(sotls_config_set_server_name(cc, "localhost"), 0);
	assert_int_equal(sotls_config_set_suites(cc, "ECDHE-RSA-AES128-GCM-SHA256"), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	int rc = sotls_handshake(c);
	snprintf(detail, detail_len, "%s", sotls_conn_error_detail(c));
	if (rc == 0) {
		uint8_t b[1];
		rc = (int)sotls_recv(c, b, sizeof(b)); /* the server's close_notify: 0 */
	}
	sotls_conn_free(c);
	sotls_config_free(cc);
	stop_server(&s, t, fd);
	*server_rc = s.rc;
	if (s.rc != 0)
		snprintf(detail, detail_len, "%s", s.detail);
	return rc;
}

static void test_handshakes(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		struct sotls_config *sc = server_config(certs[i], key_pems[i]);
		char detail[256];
		int server_rc;
		for (int n = 0; n < 3; n++) {
			int rc = handshake(sc, certs[i], &server_rc, detail, sizeof(detail));
			if (rc != 0 || server_rc != 0)
				fail_msg("RSA-%d: client %d, server %d: %s", keys[i].bits, rc,
					 server_rc, detail);
		}
		sotls_config_free(sc);
	}
}

/* The same with OpenSSL as the client, trusting the certificate; returns
 * SSL_connect's result (1 = done). */
static int openssl_handshake(struct sotls_config *sc, const char *ca, int *server_rc)
{
	pthread_t t;
	struct server s = {.cfg = sc};
	const int fd = start_server(&s, &t);

	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	BIO *b = BIO_new_mem_buf(ca, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	assert_non_null(ctx);
	assert_non_null(x);
	assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x), 1);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	assert_int_equal(SSL_CTX_set_cipher_list(ctx, "ECDHE-RSA-AES128-GCM-SHA256"), 1);
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set1_host(ssl, "localhost");
	int rc = SSL_connect(ssl);
	if (rc == 1) {
		char buf[1];
		/* The server's close_notify. */
		if (SSL_read(ssl, buf, sizeof(buf)) != 0 ||
		    SSL_get_error(ssl, 0) != SSL_ERROR_ZERO_RETURN)
			rc = -2;
	} else {
		ERR_print_errors_fp(stderr);
	}
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	X509_free(x);
	BIO_free(b);
	stop_server(&s, t, fd);
	*server_rc = s.rc;
	return rc;
}

static void test_openssl_client(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		struct sotls_config *sc = server_config(certs[i], key_pems[i]);
		int server_rc;
		int rc = openssl_handshake(sc, certs[i], &server_rc);
		if (rc != 1 || server_rc != 0)
			fail_msg("RSA-%d: OpenSSL client %d, sotls server %d", keys[i].bits, rc,
				 server_rc);
		sotls_config_free(sc);
	}
}

static void test_fault_alert(void **state)
{
	(void)state;
	struct sotls_config *sc = server_config(certs[0], key_pems[0]);
	char detail[256];
	int server_rc;
	sotls_rsa_key_test_fault(sc->certs[0].cert->rsa, 2);
	int rc = handshake(sc, certs[0], &server_rc, detail, sizeof(detail));
	assert_int_equal(server_rc, SOTLS_ERR_PRIVATE_KEY_CHECK);
	assert_non_null(strstr(detail, "check with the public key"));
	assert_non_null(strstr(detail, "internal_error"));
	assert_int_equal(rc, SOTLS_ERR_PEER_ALERT);
	/* The key works again once the fault is gone. */
	sotls_rsa_key_test_fault(sc->certs[0].cert->rsa, 0);
	assert_int_equal(handshake(sc, certs[0], &server_rc, detail, sizeof(detail)), 0);
	assert_int_equal(server_rc, 0);
	sotls_config_free(sc);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wycheproof_server_path),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_handshakes),
		cmocka_unit_test(test_openssl_client),
		cmocka_unit_test(test_fault_alert),
	};
	return cmocka_run_group_tests(tests, make_keys, free_keys);
}

/*
 * Certificates whose key sotls does not hold (sotls_cert_new_external,
 * lib/handshake/private_key.c), sotls server <-> verifying sotls client over
 * a socketpair. The "key holder" is an mbedTLS pk context the test signs
 * with inside the method's callbacks; the client checks the
 * ServerKeyExchange signature with the certificate it trusts:
 *  - synchronous signing (ECDSA P-256 and RSA-2048), what the method is
 *    asked (the signature algorithm, the digest length);
 *  - asynchronous signing: SOTLS_WANT_PRIVATE_KEY from sotls_handshake, then
 *    complete (pending more than once);
 *  - a failing method (in sign and in complete): SOTLS_ERR_PRIVATE_KEY_OPERATION
 *    and an internal_error alert the client receives;
 *  - a method signing with another key: SOTLS_ERR_PRIVATE_KEY_CHECK, nothing
 *    sent;
 *  - a certificate whose key sotls holds, beside an external one: signs as
 *    before, the method is not asked;
 *  - an external certificate from the SNI callback;
 *  - cancel when a connection with a pending signature is freed;
 *  - the argument rules.
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

#include "ephemeral_cert.h"
#include "key_holder.h"
#include "rsa_testutil.h"
#include "sotls.h"

static char ec_cert[4096], ec_key[1024], ec_cert2[4096], ec_key2[1024];
static char rsa_cert[8192], rsa_key[8192];

/* A server configuration with the external certificate for cert_pem. */
static struct sotls_config *external_server(const char *cert_pem, struct holder *h)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	struct sotls_cert *cert;
	assert_non_null(cfg);
	assert_int_equal(
		sotls_cert_new_external(cert_pem, strlen(cert_pem) + 1, &key_holder_method, h, &cert), 0);
	assert_int_equal(sotls_config_add_cert(cfg, cert, NULL, 0), 0);
	sotls_cert_free(cert);
	return cfg;
}

struct server {
	struct sotls_config *cfg;
	int fd, rc;
	int want_pk;	    /* SOTLS_WANT_PRIVATE_KEY returns */
	bool free_pending; /* free the connection at the first one */
	char detail[256];
};

/* No cmocka asserts off the main thread. */
static void *server_main(void *arg)
{
	struct server *s = arg;
	struct sotls_conn *c;
	s->rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->rc != 0)
		return NULL;
	while ((s->rc = sotls_handshake(c)) == SOTLS_WANT_PRIVATE_KEY) {
		/* An application would poll its key server here. */
		s->want_pk++;
		if (s->free_pending)
			break;
	}
	snprintf(s->detail, sizeof(s->detail), "%s", sotls_conn_error_detail(c));
	if (s->rc == 0)
		s->rc = sotls_shutdown(c);
	sotls_conn_free(c);
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

struct client {
	int rc;
	char detail[256];
};

/* One handshake of a sotls client that trusts ca and offers suites, against
 * server s; the server's results are in s afterwards. */
static void run(struct server *s, const char *ca, const char *suites, struct client *cl)
{
	int fd[2];
	pthread_t t;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	s->fd = fd[1];
	assert_int_equal(pthread_create(&t, NULL, server_main, s), 0);

	struct sotls_config *cc = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_non_null(cc);
	assert_int_equal(sotls_config_set_ca_mem(cc, ca, strlen(ca) + 1), 0);
	assert_int_equal(sotls_config_set_server_name(cc, "localhost"), 0);
	assert_int_equal(sotls_config_set_suites(cc, suites), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd[0], &c), 0);
	cl->rc = sotls_handshake(c);
	if (cl->rc == 0) {
		uint8_t b[1];
		cl->rc = (int)sotls_recv(c, b, sizeof(b)); /* the server's close_notify: 0 */
	}
	snprintf(cl->detail, sizeof(cl->detail), "%s", sotls_conn_error_detail(c));
	sotls_conn_free(c);
	sotls_config_free(cc);
	pthread_join(t, NULL);
	close(fd[0]);
	close(fd[1]);
	printf("server %d (%d x WANT_PRIVATE_KEY) %s | client %d %s\n", s->rc, s->want_pk,
	       s->detail, cl->rc, cl->detail);
}

#define ECDSA_SUITE "ECDHE-ECDSA-AES128-GCM-SHA256"
#define RSA_SUITE "ECDHE-RSA-AES128-GCM-SHA256"

static void expect_done(const struct server *s, const struct client *cl)
{
	if (s->rc != 0 || cl->rc != 0)
		fail_msg("server %d (%s), client %d (%s)", s->rc, s->detail, cl->rc, cl->detail);
}

static void test_sync(void **state)
{
	(void)state;
	const char *certs[2] = {ec_cert, rsa_cert}, *keys[2] = {ec_key, rsa_key};
	const char *suites[2] = {ECDSA_SUITE, RSA_SUITE};
	for (int i = 0; i < 2; i++) {
		struct holder h;
		assert_int_equal(key_holder_init(&h, keys[i], SYNC, 0), 0);
		struct server s = {.cfg = external_server(certs[i], &h)};
		struct client cl;
		run(&s, certs[i], suites[i], &cl);
		expect_done(&s, &cl);
		assert_int_equal(s.want_pk, 0);
		assert_int_equal(h.sign_calls, 1);
		assert_int_equal(h.complete_calls, 0);
		assert_int_equal(h.cancel_calls, 0);
		/* RFC 5246 §7.4.1.4.1: signature rsa(1) or ecdsa(3), and a hash
		 * whose digest is what was given. */
		assert_int_equal(h.sigalg & 0xff, i == 0 ? 3 : 1);
		assert_int_equal(h.digest_len, mbedtls_md_get_size(mbedtls_md_info_from_type(
						       key_holder_md(h.sigalg))));
		sotls_config_free(s.cfg);
		mbedtls_pk_free(&h.key);
	}
}

static void test_async(void **state)
{
	(void)state;
	const char *certs[2] = {ec_cert, rsa_cert}, *keys[2] = {ec_key, rsa_key};
	const char *suites[2] = {ECDSA_SUITE, RSA_SUITE};
	for (int i = 0; i < 2; i++) {
		for (int rounds = 0; rounds < 3; rounds += 2) {
			struct holder h;
			assert_int_equal(key_holder_init(&h, keys[i], ASYNC, rounds), 0);
			struct server s = {.cfg = external_server(certs[i], &h)};
			struct client cl;
			run(&s, certs[i], suites[i], &cl);
			expect_done(&s, &cl);
			assert_int_equal(s.want_pk, 1 + rounds);
			assert_int_equal(h.sign_calls, 1);
			assert_int_equal(h.complete_calls, 1 + rounds);
			assert_int_equal(h.cancel_calls, 0);
			sotls_config_free(s.cfg);
			mbedtls_pk_free(&h.key);
		}
	}
}

static void expect_failure(enum mode mode, const char *key, int server_err, const char *why)
{
	struct holder h;
	assert_int_equal(key_holder_init(&h, key, mode, 0), 0);
	struct server s = {.cfg = external_server(ec_cert, &h)};
	struct client cl;
	run(&s, ec_cert, ECDSA_SUITE, &cl);
	assert_int_equal(s.rc, server_err);
	assert_non_null(strstr(s.detail, why));
	assert_non_null(strstr(s.detail, "(sent internal_error)"));
	/* RFC 5246 §7.2.2: the client received internal_error(80). */
	assert_int_equal(cl.rc, SOTLS_ERR_PEER_ALERT);
	assert_non_null(strstr(cl.detail, "internal_error"));
	assert_int_equal(h.cancel_calls, 0);
	sotls_config_free(s.cfg);
	mbedtls_pk_free(&h.key);
}

static void test_failures(void **state)
{
	(void)state;
	expect_failure(FAIL_SIGN, ec_key, SOTLS_ERR_PRIVATE_KEY_OPERATION, "sign failed");
	expect_failure(FAIL_COMPLETE, ec_key, SOTLS_ERR_PRIVATE_KEY_OPERATION, "complete failed");
	/* Another key than the certificate's: caught before it goes out. */
	expect_failure(SYNC, ec_key2, SOTLS_ERR_PRIVATE_KEY_CHECK, "does not verify");
	expect_failure(ASYNC, ec_key2, SOTLS_ERR_PRIVATE_KEY_CHECK, "does not verify");
}

/* A method without complete that says PENDING has broken its promise. */
static int sign_pending(struct sotls_conn *c, void *arg, uint16_t sigalg, const uint8_t *digest,
			size_t digest_len, uint8_t *out, size_t *out_len, size_t max_out)
{
	(void)c, (void)arg, (void)sigalg, (void)digest, (void)digest_len, (void)out,
		(void)out_len, (void)max_out;
	return SOTLS_PRIVATE_KEY_PENDING;
}

static void test_pending_without_complete(void **state)
{
	(void)state;
	static const struct sotls_private_key_method sign_only = {.sign = sign_pending};
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	struct sotls_cert *cert;
	assert_int_equal(
		sotls_cert_new_external(ec_cert, strlen(ec_cert) + 1, &sign_only, NULL, &cert), 0);
	assert_int_equal(sotls_config_add_cert(cfg, cert, NULL, 0), 0);
	sotls_cert_free(cert);
	struct server s = {.cfg = cfg};
	struct client cl;
	run(&s, ec_cert, ECDSA_SUITE, &cl);
	assert_int_equal(s.rc, SOTLS_ERR_PRIVATE_KEY_OPERATION);
	assert_non_null(strstr(s.detail, "no complete"));
	assert_int_equal(cl.rc, SOTLS_ERR_PEER_ALERT);
	sotls_config_free(cfg);
}

static void test_held_key_unchanged(void **state)
{
	(void)state;
	/* The held ECDSA key is the default, the RSA one external. */
	struct holder h;
	assert_int_equal(key_holder_init(&h, rsa_key, SYNC, 0), 0);
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_cert_mem(cfg, ec_cert, strlen(ec_cert) + 1, ec_key,
						   strlen(ec_key) + 1),
			 0);
	struct sotls_cert *cert;
	assert_int_equal(
		sotls_cert_new_external(rsa_cert, strlen(rsa_cert) + 1, &key_holder_method, &h, &cert), 0);
	assert_int_equal(sotls_config_add_cert(cfg, cert, NULL, 0), 1);
	sotls_cert_free(cert);

	struct server s = {.cfg = cfg};
	struct client cl;
	run(&s, ec_cert, ECDSA_SUITE, &cl);
	expect_done(&s, &cl);
	assert_int_equal(h.sign_calls, 0);
	assert_int_equal(s.want_pk, 0);

	s = (struct server){.cfg = cfg};
	run(&s, rsa_cert, RSA_SUITE, &cl);
	expect_done(&s, &cl);
	assert_int_equal(h.sign_calls, 1);
	sotls_config_free(cfg);
	mbedtls_pk_free(&h.key);
}

static int sni_external(void *arg, const char *server_name, struct sotls_cert **cert)
{
	(void)server_name;
	*cert = arg;
	return 0;
}

/* An external certificate handed out by the SNI callback signs the same way. */
static void test_sni_callback(void **state)
{
	(void)state;
	struct holder h;
	assert_int_equal(key_holder_init(&h, ec_key, ASYNC, 1), 0);
	struct sotls_cert *cert;
	assert_int_equal(sotls_cert_new_external(ec_cert, strlen(ec_cert) + 1, &key_holder_method, &h, &cert),
			 0);
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_sni_callback(cfg, sni_external, cert), 0);
	struct server s = {.cfg = cfg};
	struct client cl;
	run(&s, ec_cert, ECDSA_SUITE, &cl);
	expect_done(&s, &cl);
	assert_int_equal(s.want_pk, 2);
	assert_int_equal(h.sign_calls, 1);
	assert_int_equal(h.complete_calls, 2);
	sotls_config_free(cfg);
	sotls_cert_free(cert);
	mbedtls_pk_free(&h.key);
}

static void test_cancel(void **state)
{
	(void)state;
	struct holder h;
	assert_int_equal(key_holder_init(&h, ec_key, ASYNC, 0), 0);
	struct server s = {.cfg = external_server(ec_cert, &h), .free_pending = true};
	struct client cl;
	run(&s, ec_cert, ECDSA_SUITE, &cl);
	assert_int_equal(s.rc, SOTLS_WANT_PRIVATE_KEY);
	assert_int_equal(h.sign_calls, 1);
	assert_int_equal(h.complete_calls, 0);
	assert_int_equal(h.cancel_calls, 1);
	assert_int_not_equal(cl.rc, 0); /* the server went away */
	sotls_config_free(s.cfg);
	mbedtls_pk_free(&h.key);
}

static void test_rules(void **state)
{
	(void)state;
	struct sotls_cert *cert = (struct sotls_cert *)&cert;
	const struct sotls_private_key_method no_sign = {.complete = key_holder_method.complete};
	const size_t n = strlen(ec_cert) + 1;
	assert_int_equal(sotls_cert_new_external(ec_cert, n, &key_holder_method, NULL, NULL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_cert_new_external(NULL, n, &key_holder_method, NULL, &cert),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_null(cert);
	assert_int_equal(sotls_cert_new_external(ec_cert, 0, &key_holder_method, NULL, &cert),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_cert_new_external(ec_cert, n, NULL, NULL, &cert),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_cert_new_external(ec_cert, n, &no_sign, NULL, &cert),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_cert_new_external("not a certificate", 18, &key_holder_method, NULL, &cert),
			 SOTLS_ERR_CERT_LOAD);
	assert_null(cert);
	assert_string_not_equal(sotls_strerror(SOTLS_WANT_PRIVATE_KEY), "unknown error code");
	assert_string_not_equal(sotls_strerror(SOTLS_ERR_PRIVATE_KEY_OPERATION),
				"unknown error code");
}

static int setup(void **state)
{
	(void)state;
	struct rsa_testkey k;
	if (ephemeral_cert("localhost", ec_cert, sizeof(ec_cert), ec_key, sizeof(ec_key)) != 0 ||
	    ephemeral_cert("localhost", ec_cert2, sizeof(ec_cert2), ec_key2, sizeof(ec_key2)) != 0)
		return -1;
	rsa_testkey_generate(&k, 2048);
	rsa_testkey_self_signed(&k, rsa_cert, sizeof(rsa_cert), rsa_key, sizeof(rsa_key));
	rsa_testkey_free(&k);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync),
		cmocka_unit_test(test_async),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_pending_without_complete),
		cmocka_unit_test(test_held_key_unchanged),
		cmocka_unit_test(test_sni_callback),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_rules),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

/*
 * The public API end to end, sotls <-> sotls over a socketpair: every suite,
 * data both ways, close_notify, data right behind the Finished, a wrong CA, a
 * wrong name, no shared suite, kTLS "require", the read-only config, info,
 * and many connections on several threads sharing one config.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
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

#include "ephemeral_cert.h"
#include "sotls.h"

static char g_cert[4096], g_key[1024];	 /* CN=localhost */
static char g_cert2[4096], g_key2[1024]; /* CN=other, an unrelated CA */

static struct sotls_config *server_cfg(const char *suites)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_non_null(cfg);
	assert_int_equal(sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key,
						   strlen(g_key) + 1),
			 0);
	if (suites)
		assert_int_equal(sotls_config_set_suites(cfg, suites), 0);
	return cfg;
}

static struct sotls_config *client_cfg(const char *suites, const char *ca, const char *name)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_non_null(cfg);
	if (ca != NULL)
		assert_int_equal(sotls_config_set_ca_mem(cfg, ca, strlen(ca) + 1), 0);
	else
		assert_int_equal(sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE), 0);
	if (name)
		assert_int_equal(sotls_config_set_server_name(cfg, name), 0);
	if (suites)
		assert_int_equal(sotls_config_set_suites(cfg, suites), 0);
	return cfg;
}

struct side {
	struct sotls_config *cfg;
	int fd;
	int hs_rc;
	int send_after_hs; /* send a greeting right after the handshake */
	size_t echo_bytes; /* server: echo this many bytes, then close */
	sem_t *gate;	   /* if set, the server waits on it before its handshake */
	struct sotls_info info;
	char detail[256];
};

static void *server_main(void *arg)
{
	struct side *s = arg;
	struct sotls_conn *c;
	/* No cmocka asserts off the main thread: failures go into s. */
	if (s->gate != NULL)
		sem_wait(s->gate);
	s->hs_rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->hs_rc != 0)
		return NULL;
	s->hs_rc = sotls_handshake(c);
	snprintf(s->detail, sizeof(s->detail), "%s", sotls_conn_error_detail(c));
	if (s->hs_rc == 0) {
		s->info = (struct sotls_info)SOTLS_INFO_INIT;
		sotls_get_info(c, &s->info);
		if (s->send_after_hs && sotls_send(c, "greetings", 9) != 9)
			s->hs_rc = -1000;
		uint8_t *buf = malloc(100000);
		size_t done = 0;
		for (;;) {
			ssize_t n = sotls_recv(c, buf, 100000);
			if (n <= 0) {
				if (n == 0)
					n = sotls_shutdown(c);
				if (n != 0)
					s->hs_rc = (int)n;
				break;
			}
			ssize_t w = sotls_send(c, buf, (size_t)n);
			if (w != n) {
				s->hs_rc = (int)w;
				snprintf(s->detail, sizeof(s->detail), "%s", sotls_conn_error_detail(c));
				break;
			}
			done += (size_t)n;
		}
		s->echo_bytes = done;
		free(buf);
	}
	sotls_conn_free(c);
	return NULL;
}

/* Runs a server thread on one end of a socketpair; returns the client fd. */
static int start_server(struct side *s, pthread_t *t)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	s->fd = fd[1];
	assert_int_equal(pthread_create(t, NULL, server_main, s), 0);
	return fd[0];
}

static void finish_server(struct side *s, pthread_t t, int cfd)
{
	close(cfd);
	pthread_join(t, NULL);
	close(s->fd);
}

/* Echo of len bytes through a connection, blocking. */
static void echo(struct sotls_conn *c, size_t len)
{
	uint8_t *d = malloc(len), *got = malloc(len);
	for (size_t i = 0; i < len; i++)
		d[i] = (uint8_t)(i * 31 + (i >> 9));
	size_t sent = 0, recvd = 0;
	while (recvd < len) {
		if (sent < len) {
			size_t n = len - sent > 50000 ? 50000 : len - sent;
			assert_int_equal(sotls_send(c, d + sent, n), n);
			sent += n;
		}
		while (recvd < sent) {
			ssize_t n = sotls_recv(c, got + recvd, len - recvd);
			assert_true(n > 0);
			recvd += (size_t)n;
		}
	}
	assert_memory_equal(d, got, len);
	free(d);
	free(got);
}

/* Echoes len bytes, closes with close_notify both ways, frees the client
 * and its configuration, waits for the server: it must have ended cleanly. */
static void echo_and_close(struct sotls_conn *c, struct sotls_config *cc, struct side *s,
			   pthread_t t, int fd, size_t len)
{
	echo(c, len);
	assert_int_equal(sotls_shutdown(c), 0);
	uint8_t b[16];
	assert_int_equal(sotls_recv(c, b, sizeof(b)), 0); /* server's close_notify */
	sotls_conn_free(c);
	sotls_config_free(cc);
	finish_server(s, t, fd);
	assert_int_equal(s->hs_rc, 0);
}

static void test_all_suites(void **state)
{
	(void)state;
	const char *const *names = sotls_supported_suites();
	/* ECDSA certificates: the two ECDHE-ECDSA suites */
	for (int i = 0; names[i] != NULL; i++) {
		if (strstr(names[i], "ECDSA") == NULL)
			continue;
		struct side s = {.cfg = server_cfg(NULL)};
		pthread_t t;
		int fd = start_server(&s, &t);
		struct sotls_config *cc = client_cfg(names[i], g_cert, "localhost");
		struct sotls_conn *c;
		assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
		assert_int_equal(sotls_handshake(c), 0);
		struct sotls_info info = SOTLS_INFO_INIT;
		assert_int_equal(sotls_get_info(c, &info), 0);
		assert_string_equal(info.suite, names[i]);
		assert_string_equal(info.version, "TLSv1.2");
		assert_int_equal(info.tx_path, SOTLS_PATH_USERSPACE);
		assert_int_equal(info.rx_path, SOTLS_PATH_USERSPACE);
		/* A socketpair is no TCP socket: kTLS cannot take it. */
		assert_non_null(strstr(info.tx_reason, "not a TCP socket"));
		assert_non_null(strstr(info.rx_reason, "not a TCP socket"));
		assert_true(strlen(info.aead_impl) > 0);
		echo_and_close(c, cc, &s, t, fd, 1000000);
		assert_int_equal(s.echo_bytes, 1000000);
		assert_string_equal(s.info.suite, names[i]);
		sotls_config_free(s.cfg);
	}
}

/* What a key log callback saw. */
struct keylog_seen {
	int calls;
	const struct sotls_conn *conn;
	char line[256];
};

static void keylog_cb(const struct sotls_conn *c, const char *line, void *arg)
{
	struct keylog_seen *k = arg;
	k->calls++;
	k->conn = c;
	snprintf(k->line, sizeof(k->line), "%s", line);
}

/* NSS key log format: "CLIENT_RANDOM " 64 hex digits, a space, 96. */
static void assert_nss_line(const char *line)
{
	assert_int_equal(strlen(line), 14 + 64 + 1 + 96);
	assert_memory_equal(line, "CLIENT_RANDOM ", 14);
	for (size_t i = 14; i < strlen(line); i++)
		assert_true(i == 14 + 64 ? line[i] == ' ' : strchr("0123456789abcdef", line[i]) != NULL);
}

/* Both sides log the same line, once, naming their connection; a callback
 * set and then cleared, or never set, logs nothing. */
static void test_keylog(void **state)
{
	(void)state;
	struct keylog_seen srv = {0}, cli = {0}, cleared = {0};
	for (int round = 0; round < 2; round++) {
		struct side s = {.cfg = server_cfg(NULL)};
		struct sotls_config *cc = client_cfg(NULL, NULL, NULL);
		if (round == 0) {
			assert_int_equal(sotls_config_set_keylog(s.cfg, keylog_cb, &srv), 0);
			assert_int_equal(sotls_config_set_keylog(cc, keylog_cb, &cli), 0);
		} else {
			assert_int_equal(sotls_config_set_keylog(cc, keylog_cb, &cleared), 0);
			assert_int_equal(sotls_config_set_keylog(cc, NULL, &cleared), 0);
		}
		pthread_t t;
		int fd = start_server(&s, &t);
		struct sotls_conn *c;
		assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
		assert_int_equal(sotls_config_set_keylog(cc, NULL, NULL), SOTLS_ERR_BAD_STATE);
		assert_int_equal(sotls_handshake(c), 0);
		if (round == 0)
			assert_ptr_equal(cli.conn, c);
		echo_and_close(c, cc, &s, t, fd, 1000);
		sotls_config_free(s.cfg);
	}
	assert_int_equal(srv.calls, 1);
	assert_int_equal(cli.calls, 1);
	assert_int_equal(cleared.calls, 0);
	assert_nss_line(cli.line);
	assert_string_equal(srv.line, cli.line);
	assert_non_null(srv.conn);
}

static void test_data_right_behind_finished(void **state)
{
	(void)state;
	struct side s = {.cfg = server_cfg(NULL), .send_after_hs = 1};
	pthread_t t;
	int fd = start_server(&s, &t);
	struct sotls_config *cc = client_cfg(NULL, NULL, NULL);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	/* The server has written its greeting by the time we read it, but
	 * the handshake read no byte of it. */
	assert_int_equal(sotls_handshake(c), 0);
	char buf[32];
	assert_int_equal(sotls_recv(c, buf, sizeof(buf)), 9);
	assert_memory_equal(buf, "greetings", 9);
	assert_int_equal(sotls_shutdown(c), 0);
	assert_int_equal(sotls_recv(c, buf, sizeof(buf)), 0);
	sotls_conn_free(c);
	sotls_config_free(cc);
	finish_server(&s, t, fd);
	sotls_config_free(s.cfg);
}

/* The client fails the handshake with err; the server fails too. */
static void expect_client_failure(struct sotls_config *sc, struct sotls_config *cc, int err,
				  const char *detail_part)
{
	struct side s = {.cfg = sc};
	pthread_t t;
	int fd = start_server(&s, &t);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	int rc = sotls_handshake(c);
	if (rc != err)
		fail_msg("handshake: %d (%s), wanted %d; %s", rc, sotls_strerror(rc), err,
			 sotls_conn_error_detail(c));
	if (detail_part != NULL && strstr(sotls_conn_error_detail(c), detail_part) == NULL)
		fail_msg("detail '%s' lacks '%s'", sotls_conn_error_detail(c), detail_part);
	/* failed for good */
	char b[4];
	assert_int_equal(sotls_send(c, "x", 1), err);
	assert_int_equal(sotls_recv(c, b, 4), err);
	sotls_conn_free(c);
	finish_server(&s, t, fd);
	assert_true(s.hs_rc < 0);
}

static void test_wrong_ca(void **state)
{
	(void)state;
	struct sotls_config *sc = server_cfg(NULL);
	struct sotls_config *cc = client_cfg(NULL, g_cert2, "localhost");
	expect_client_failure(sc, cc, SOTLS_ERR_CERT_VERIFY, "certificate verification failed");
	sotls_config_free(cc);
	sotls_config_free(sc);
}

static void test_wrong_name(void **state)
{
	(void)state;
	struct sotls_config *sc = server_cfg(NULL);
	struct sotls_config *cc = client_cfg(NULL, g_cert, "not-localhost.example");
	expect_client_failure(sc, cc, SOTLS_ERR_CERT_VERIFY, NULL);
	sotls_config_free(cc);
	sotls_config_free(sc);
}

/* The client only learns of the mismatch from the server's alert; the
 * server knows the cause. */
static void expect_no_shared_suite(const char *server_suites, const char *client_suites)
{
	struct sotls_config *sc = server_cfg(server_suites);
	struct sotls_config *cc = client_cfg(client_suites, NULL, NULL);
	struct side s = {.cfg = sc};
	pthread_t t;
	int fd = start_server(&s, &t);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	assert_int_equal(sotls_handshake(c), SOTLS_ERR_PEER_ALERT);
	assert_non_null(strstr(sotls_conn_error_detail(c), "handshake_failure"));
	sotls_conn_free(c);
	finish_server(&s, t, fd);
	assert_int_equal(s.hs_rc, SOTLS_ERR_NO_SHARED_SUITE);
	sotls_config_free(cc);
	sotls_config_free(sc);
}

static void test_no_shared_suite(void **state)
{
	(void)state;
	expect_no_shared_suite("TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384",
			       "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256");
}

static void test_ktls_require(void **state)
{
	(void)state;
	struct sotls_config *sc = server_cfg(NULL);
	struct sotls_config *cc = client_cfg(NULL, NULL, NULL);
	assert_int_equal(sotls_config_set_ktls(cc, SOTLS_KTLS_REQUIRE), 0);
	struct side s = {.cfg = sc};
	pthread_t t;
	int fd = start_server(&s, &t);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	assert_int_equal(sotls_handshake(c), SOTLS_ERR_KTLS_REQUIRED);
	sotls_conn_free(c);
	finish_server(&s, t, fd);
	/* the server saw the internal_error alert */
	assert_int_equal(s.hs_rc, SOTLS_ERR_PEER_ALERT);
	sotls_config_free(cc);
	sotls_config_free(sc);
}

static void test_config_rules(void **state)
{
	(void)state;
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int fd[2];
	struct sotls_conn *c;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	/* a server needs a certificate */
	assert_int_equal(sotls_conn_new(cfg, fd[0], &c), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_suites(cfg, "RC4-MD5"), SOTLS_ERR_UNKNOWN_SUITE);
	/* max_fragment_length is a client's request, of four lengths only. */
	assert_int_equal(sotls_config_set_max_fragment_length(cfg, 512), SOTLS_ERR_INVALID_ARGUMENT);
	struct sotls_config *ccfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_max_fragment_length(ccfg, 1000), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_max_fragment_length(ccfg, 8192), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_max_fragment_length(ccfg, 4096), 0);
	assert_int_equal(sotls_config_set_max_fragment_length(ccfg, 0), 0);
	sotls_config_free(ccfg);
	assert_int_equal(sotls_config_set_cert_mem(cfg, "junk", 4, "junk", 4), SOTLS_ERR_CERT_LOAD);
	/* a key that does not belong to the certificate */
	assert_int_equal(sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key2,
						   strlen(g_key2) + 1),
			 SOTLS_ERR_KEY_LOAD);
	assert_int_equal(sotls_config_set_cert_file(cfg, "/nonexistent", "/nonexistent"),
			 SOTLS_ERR_CERT_LOAD);
	assert_int_equal(sotls_config_set_ca_file(cfg, "/nonexistent"), SOTLS_ERR_CA_LOAD);
	assert_int_equal(sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert), g_key,
						   strlen(g_key)),
			 0);
	assert_int_equal(sotls_conn_new(cfg, fd[0], &c), 0);
	/* read-only once used */
	assert_int_equal(sotls_config_set_suites(cfg, "ARIA-128-GCM"), SOTLS_ERR_BAD_STATE);
	assert_int_equal(sotls_config_set_ktls(cfg, SOTLS_KTLS_OFF), SOTLS_ERR_BAD_STATE);
	/* the config outlives its creator's reference */
	sotls_config_free(cfg);
	struct sotls_info info = SOTLS_INFO_INIT;
	assert_int_equal(sotls_get_info(c, &info), 0);
	assert_int_equal(info.tx_path, SOTLS_PATH_NONE);
	assert_string_equal(info.suite, "");
	assert_int_equal(info.size, sizeof(info));
	/* A caller built against an older, shorter struct: only its fields
	 * are written, its size is kept; shorter than the first part, or no
	 * size at all, is refused. */
	struct sotls_info old = SOTLS_INFO_INIT;
	size_t first_part = offsetof(struct sotls_info, sendfile_buffer_bytes) + sizeof(size_t);
	old.size = first_part;
	old.max_fragment_len = 0x5a5a;
	assert_int_equal(sotls_get_info(c, &old), 0);
	assert_int_equal(old.size, first_part);
	assert_int_equal(old.max_fragment_len, 0x5a5a);
	assert_int_equal(old.peer_alert, -1);
	old.size = first_part - 1;
	assert_int_equal(sotls_get_info(c, &old), SOTLS_ERR_INVALID_ARGUMENT);
	struct sotls_info unsized;
	memset(&unsized, 0, sizeof(unsized));
	assert_int_equal(sotls_get_info(c, &unsized), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_shutdown(c), SOTLS_ERR_BAD_STATE);
	sotls_conn_free(c);
	close(fd[0]);
	close(fd[1]);
	assert_null(sotls_config_new((enum sotls_role)7));
}

static void test_nonblocking_handshake_and_truncation(void **state)
{
	(void)state;
	sem_t gate;
	assert_int_equal(sem_init(&gate, 0, 0), 0);
	struct side s = {.cfg = server_cfg(NULL), .gate = &gate};
	pthread_t t;
	int fd = start_server(&s, &t);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct sotls_config *cc = client_cfg(NULL, NULL, NULL);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	/* The server only starts once the client has sent its hello and found
	 * nothing to read, so the non-blocking path is exercised every run. */
	assert_int_equal(sotls_handshake(c), SOTLS_WANT_READ);
	sem_post(&gate);
	int rc;
	while ((rc = sotls_handshake(c)) == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
		usleep(200);
	assert_int_equal(rc, 0);
	char b[8];
	assert_int_equal(sotls_recv(c, b, sizeof(b)), SOTLS_WANT_READ);
	/* The client goes away without close_notify: the server sees truncation. */
	sotls_conn_free(c);
	sotls_config_free(cc);
	finish_server(&s, t, fd);
	assert_int_equal(s.hs_rc, SOTLS_ERR_TRUNCATED);
	sotls_config_free(s.cfg);
	sem_destroy(&gate);
}

/* Many connections on several threads sharing one client and one server config. */
struct mt_arg {
	struct sotls_config *sc, *cc;
	int failures;
};

static void *mt_client(void *arg)
{
	struct mt_arg *a = arg;
	for (int i = 0; i < 6; i++) {
		struct side s = {.cfg = a->sc};
		pthread_t t;
		int fd = start_server(&s, &t);
		struct sotls_conn *c;
		if (sotls_conn_new(a->cc, fd, &c) != 0 || sotls_handshake(c) != 0) {
			a->failures++;
		} else {
			echo(c, 200000);
			char b[8];
			if (sotls_shutdown(c) != 0 || sotls_recv(c, b, sizeof(b)) != 0)
				a->failures++;
		}
		sotls_conn_free(c);
		finish_server(&s, t, fd);
		if (s.hs_rc != 0 || s.echo_bytes != 200000) {
			fprintf(stderr, "server: rc %d (%s) %s, %zu bytes\n", s.hs_rc,
				sotls_strerror(s.hs_rc), s.detail, s.echo_bytes);
			a->failures++;
		}
	}
	return NULL;
}

static void test_threads_share_config(void **state)
{
	(void)state;
	struct sotls_config *sc = server_cfg(NULL);
	struct sotls_config *cc = client_cfg(NULL, g_cert, "localhost");
	struct mt_arg args[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (struct mt_arg){sc, cc, 0};
		assert_int_equal(pthread_create(&th[i], NULL, mt_client, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].failures, 0);
	}
	sotls_config_free(sc);
	sotls_config_free(cc);
}

/* ---- AES-GCM suites (issue 8): sotls <-> sotls with each, and the default
 * order (ARIA first, then AES-GCM) ---- */

#include <stdbool.h>

#include "test_rsa_cert.h"

static char g_rsa_cert[4096], g_rsa_key[4096]; /* RSA 2048, CN=localhost, made once */

static void make_rsa_cert(void)
{
	if (g_rsa_cert[0] == '\0')
		assert_int_equal(test_rsa_cert(g_rsa_cert, sizeof(g_rsa_cert), g_rsa_key,
					       sizeof(g_rsa_key)),
				 0);
}

/*
 * One sotls <-> sotls connection: the server (ECDSA or RSA certificate) with
 * server_suites, the client verifying it with client_suites; both must
 * negotiate want (IANA name), echo data and close with close_notify.
 */
static void aes_pair(bool rsa, const char *server_suites, const char *client_suites,
		     const char *want)
{
	const char *cert = g_cert, *key = g_key;
	if (rsa) {
		make_rsa_cert();
		cert = g_rsa_cert;
		key = g_rsa_key;
	}
	struct sotls_config *sc = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_non_null(sc);
	assert_int_equal(
		sotls_config_set_cert_mem(sc, cert, strlen(cert) + 1, key, strlen(key) + 1), 0);
	if (server_suites)
		assert_int_equal(sotls_config_set_suites(sc, server_suites), 0);
	struct side s = {.cfg = sc};
	pthread_t t;
	int fd = start_server(&s, &t);
	struct sotls_config *cc = client_cfg(client_suites, cert, "localhost");
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd, &c), 0);
	int rc = sotls_handshake(c);
	if (rc != 0)
		fail_msg("handshake for %s: %s; %s", want, sotls_strerror(rc),
			 sotls_conn_error_detail(c));
	struct sotls_info info = SOTLS_INFO_INIT;
	assert_int_equal(sotls_get_info(c, &info), 0);
	assert_string_equal(info.suite, want);
	assert_string_equal(info.version, "TLSv1.2");
	assert_int_equal(info.tx_path, SOTLS_PATH_USERSPACE);
	assert_int_equal(info.rx_path, SOTLS_PATH_USERSPACE);
	assert_true(strlen(info.aead_impl) > 0);
	echo(c, 300000);
	assert_int_equal(sotls_shutdown(c), 0);
	uint8_t b[16];
	assert_int_equal(sotls_recv(c, b, sizeof(b)), 0);
	sotls_conn_free(c);
	sotls_config_free(cc);
	finish_server(&s, t, fd);
	if (s.hs_rc != 0)
		fail_msg("server for %s: %d; %s", want, s.hs_rc, s.detail);
	assert_int_equal(s.echo_bytes, 300000);
	assert_string_equal(s.info.suite, want);
	sotls_config_free(sc);
}

/* Each AES-GCM suite, by each kind of name, with both certificate types. */
static void test_aes_suites_each(void **state)
{
	(void)state;
	static const struct {
		bool rsa;
		const char *client, *want;
	} cases[] = {
		{false, "ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{false, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
		 "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{true, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		{true, "ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
		{true, "AES-256-GCM", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
		/* ARIA with RSA too, as test_all_suites has only ECDSA. */
		{true, "ARIA-128-GCM", "TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256"},
		{true, "ECDHE-ARIA256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		aes_pair(cases[i].rsa, NULL, cases[i].client, cases[i].want);
}

/*
 * The default order. Both sides default: ARIA-128. A client without ARIA:
 * the default server picks AES-GCM by its own order (128 before 256), even
 * when the client prefers 256. A server restricted to AES serves a default
 * client.
 */
static void test_default_suites_order(void **state)
{
	(void)state;
	aes_pair(false, NULL, NULL, "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256");
	aes_pair(true, NULL, NULL, "TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256");
	aes_pair(false, NULL, "AES-256-GCM:AES-128-GCM", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
	aes_pair(true, NULL, "AES-256-GCM:AES-128-GCM", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
	aes_pair(false, "AES-256-GCM", NULL, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384");
}

/* AES on one side, ARIA only on the other: no suite in common. */
static void test_aes_no_shared_suite(void **state)
{
	(void)state;
	expect_no_shared_suite("ARIA-128-GCM:ARIA-256-GCM", "AES-128-GCM:AES-256-GCM");
}

static int setup(void **state)
{
	(void)state;
	if (ephemeral_cert("localhost", g_cert, sizeof(g_cert), g_key, sizeof(g_key)) != 0 ||
	    ephemeral_cert("other", g_cert2, sizeof(g_cert2), g_key2, sizeof(g_key2)) != 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_suites),
		cmocka_unit_test(test_data_right_behind_finished),
		cmocka_unit_test(test_keylog),
		cmocka_unit_test(test_wrong_ca),
		cmocka_unit_test(test_wrong_name),
		cmocka_unit_test(test_no_shared_suite),
		cmocka_unit_test(test_ktls_require),
		cmocka_unit_test(test_config_rules),
		cmocka_unit_test(test_nonblocking_handshake_and_truncation),
		cmocka_unit_test(test_threads_share_config),
		cmocka_unit_test(test_aes_suites_each),
		cmocka_unit_test(test_default_suites_order),
		cmocka_unit_test(test_aes_no_shared_suite),
	};
	return cmocka_run_group_tests_name("conn", tests, setup, NULL);
}

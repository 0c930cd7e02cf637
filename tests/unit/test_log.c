/*
 * The log callback (sotls_config_set_log): each event forced once, through
 * the public API, and checked for its code, its connection and its line.
 * Two engines back to back carry the handshakes; the peer's bad records are
 * forged with the client's traffic keys (record_forge.h); kTLS is tried on a
 * loopback TCP pair the engines attach to; the ticket key file is broken
 * under a clock in the test's hand.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemeral_cert.h"
#include "record_forge.h"
#include "resume.h"
#include "sotls.h"

#define EVENTS 8 /* enum sotls_log_event's values, 1 ... 7 */
#define CT_CHANGE_CIPHER_SPEC 20
#define CT_APPLICATION_DATA 23

static int64_t g_now = 1800000000;

static int64_t test_clock(void)
{
	return g_now;
}

/* What the callback was told, per event. */
struct seen {
	int count[EVENTS];
	const struct sotls_conn *conn[EVENTS];
	char line[EVENTS][512];
};

static void log_cb(const struct sotls_conn *c, enum sotls_log_event event, const char *line,
		   void *arg)
{
	struct seen *s = arg;
	assert_true(event > 0 && event < EVENTS);
	printf("log %d %p: %s\n", (int)event, (const void *)c, line);
	s->count[event]++;
	s->conn[event] = c;
	snprintf(s->line[event], sizeof(s->line[event]), "%s", line);
}

/* Only event happened, n times. */
static void only(const struct seen *s, enum sotls_log_event event, int n)
{
	for (int e = 1; e < EVENTS; e++)
		assert_int_equal(s->count[e], e == (int)event ? n : 0);
}

static struct sotls_config *server_cfg(struct seen *log)
{
	struct sotls_config *cfg = ephemeral_server_config("localhost");
	assert_non_null(cfg);
	/* The suite record_forge seals for the client. */
	assert_int_equal(sotls_config_set_suites(cfg, "AES-128-GCM"), 0);
	if (log != NULL)
		assert_int_equal(sotls_config_set_log(cfg, log_cb, log), 0);
	return cfg;
}

static struct sotls_config *client_cfg(struct seen *log)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE), 0);
	if (log != NULL)
		assert_int_equal(sotls_config_set_log(cfg, log_cb, log), 0);
	return cfg;
}

/* Ciphertext from one engine straight into the other, as much as it takes
 * now; the rest waits in from's buffer. */
static void pass(struct sotls_conn *from, struct sotls_conn *to)
{
	size_t len, took;
	const void *out;
	while ((out = sotls_engine_send_buf(from, &len)) != NULL &&
	       (took = sotls_engine_feed(to, out, len)) > 0)
		assert_int_equal(sotls_engine_send_done(from, took), 0);
}

static void handshake(struct sotls_conn *c, struct sotls_conn *s)
{
	int crc = SOTLS_WANT_READ, src = SOTLS_WANT_READ;
	for (int round = 0; round < 50 && (crc != 0 || src != 0); round++) {
		if (crc != 0)
			crc = sotls_handshake(c);
		if (src != 0)
			src = sotls_handshake(s);
		pass(c, s);
		pass(s, c);
	}
	assert_int_equal(crc, 0);
	assert_int_equal(src, 0);
}

struct pair {
	struct sotls_config *ccfg, *scfg;
	struct sotls_conn *c, *s;
};

static void pair_open(struct pair *p, struct sotls_config *ccfg, struct sotls_config *scfg)
{
	p->ccfg = ccfg;
	p->scfg = scfg;
	assert_int_equal(sotls_conn_new_engine(ccfg, &p->c), 0);
	assert_int_equal(sotls_conn_new_engine(scfg, &p->s), 0);
	handshake(p->c, p->s);
}

static void pair_close(struct pair *p)
{
	sotls_conn_free(p->c);
	sotls_conn_free(p->s);
	sotls_config_free(p->ccfg);
	sotls_config_free(p->scfg);
}

/* The server reads until it fails; returns the error. */
static int server_reads(struct pair *p)
{
	uint8_t buf[256];
	for (int i = 0; i < 100; i++) {
		ssize_t n = sotls_recv(p->s, buf, sizeof(buf));
		if (n < 0 && n != SOTLS_WANT_READ)
			return (int)n;
		if (n == SOTLS_WANT_READ)
			pass(p->c, p->s);
	}
	fail_msg("the server did not fail");
	return 0;
}

/* The client's sending keys taken over by the test, which then speaks for
 * the client: n records of type and len zero bytes each, into the server. */
static void forge_into_server(struct pair *p, uint8_t type, size_t n)
{
	struct sotls_traffic_keys tx, rx;
	assert_int_equal(sotls_engine_traffic_keys(p->c, &tx, &rx), 0);
	struct forge_keys k;
	assert_int_equal(forge_init(&k, SOTLS_AEAD_AES_128_GCM, tx.key, tx.salt), 0);
	uint8_t rec[FORGE_OVERHEAD + 1], zero[1] = {0};
	for (size_t i = 0; i < n; i++) {
		size_t len = forge_seal(&k, tx.seq + i, type, zero, type == CT_CHANGE_CIPHER_SPEC,
					rec);
		assert_int_equal(sotls_engine_feed(p->s, rec, len), len);
	}
	forge_clear(&k);
}

static void test_record_flood(void **state)
{
	(void)state;
	struct seen log = {0};
	struct pair p;
	pair_open(&p, client_cfg(NULL), server_cfg(&log));
	only(&log, 0, 0);
	/* sotls.h: 32 empty records in a row are tolerated, not 33. */
	forge_into_server(&p, CT_APPLICATION_DATA, 33);
	assert_int_equal(server_reads(&p), SOTLS_ERR_RECORD_FLOOD);
	only(&log, SOTLS_LOG_RECORD_FLOOD, 1);
	assert_ptr_equal(log.conn[SOTLS_LOG_RECORD_FLOOD], p.s);
	assert_non_null(strstr(log.line[SOTLS_LOG_RECORD_FLOOD], "empty application-data"));
	assert_non_null(strstr(log.line[SOTLS_LOG_RECORD_FLOOD], "32"));
	/* Told once: later calls return the error without deciding again. */
	assert_int_equal(server_reads(&p), SOTLS_ERR_RECORD_FLOOD);
	only(&log, SOTLS_LOG_RECORD_FLOOD, 1);
	pair_close(&p);
}

static void test_peer_fault(void **state)
{
	(void)state;
	struct seen log = {0};
	struct pair p;
	pair_open(&p, client_cfg(NULL), server_cfg(&log));
	/* RFC 5246 7.1: no ChangeCipherSpec after the handshake. */
	forge_into_server(&p, CT_CHANGE_CIPHER_SPEC, 1);
	assert_int_equal(server_reads(&p), SOTLS_ERR_UNEXPECTED_MESSAGE);
	only(&log, SOTLS_LOG_PEER_FAULT, 1);
	assert_ptr_equal(log.conn[SOTLS_LOG_PEER_FAULT], p.s);
	assert_non_null(strstr(log.line[SOTLS_LOG_PEER_FAULT], "alert 10"));
	pair_close(&p);
}

/* The client sends data as one record, which reaches the server with its
 * last byte (the tag's) flipped if tamper. */
static void client_sends(struct pair *p, const char *data, size_t n, bool tamper)
{
	ssize_t rc = sotls_send(p->c, data, n);
	size_t len;
	const uint8_t *out = sotls_engine_send_buf(p->c, &len);
	assert_non_null(out);
	uint8_t rec[64];
	assert_true(len <= sizeof(rec));
	memcpy(rec, out, len);
	rec[len - 1] ^= tamper;
	assert_int_equal(sotls_engine_feed(p->s, rec, len), len);
	assert_int_equal(sotls_engine_send_done(p->c, len), 0);
	/* An engine's send waits for its record to be taken (sotls.h). */
	if (rc == SOTLS_WANT_WRITE)
		rc = sotls_send(p->c, data, n);
	assert_int_equal(rc, n);
}

static void test_bad_record_mac(void **state)
{
	(void)state;
	struct seen log = {0};
	struct pair p;
	pair_open(&p, client_cfg(NULL), server_cfg(&log));
	client_sends(&p, "hello", 5, true);
	assert_int_equal(server_reads(&p), SOTLS_ERR_BAD_RECORD_MAC);
	only(&log, SOTLS_LOG_BAD_RECORD_MAC, 1);
	assert_ptr_equal(log.conn[SOTLS_LOG_BAD_RECORD_MAC], p.s);
	assert_non_null(strstr(log.line[SOTLS_LOG_BAD_RECORD_MAC], "alert 20"));
	pair_close(&p);
}

static void test_key_usage_limit(void **state)
{
	(void)state;
	struct seen log = {0};
	struct pair p;
	struct sotls_config *scfg = server_cfg(&log);
	/* The server holds the client to 4 records per key; the client, at its
	 * default limit, sends more. */
	assert_int_equal(sotls_config_set_key_usage_limit(scfg, 4), 0);
	pair_open(&p, client_cfg(NULL), scfg);
	for (int i = 0; i < 5; i++)
		client_sends(&p, "x", 1, false);
	assert_int_equal(server_reads(&p), SOTLS_ERR_KEY_USAGE_LIMIT);
	only(&log, SOTLS_LOG_KEY_USAGE_LIMIT, 1);
	assert_ptr_equal(log.conn[SOTLS_LOG_KEY_USAGE_LIMIT], p.s);
	assert_non_null(strstr(log.line[SOTLS_LOG_KEY_USAGE_LIMIT], "key usage limit: 4"));
	pair_close(&p);
}

/* An established loopback TCP pair. */
static void tcp_pair(int fd[2])
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(ls >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd[0], (struct sockaddr *)&sa, sizeof(sa)), 0);
	fd[1] = accept(ls, NULL, NULL);
	assert_true(fd[1] >= 0);
	close(ls);
}

/* Both engines of a handshake under the kTLS policy (and the client's
 * max_fragment_length) go on over a TCP pair; each side's log is checked
 * against what sotls_get_info says of that side. */
static void attach_and_check(enum sotls_ktls_policy policy, unsigned mfl)
{
	struct seen clog = {0}, slog = {0};
	struct sotls_config *ccfg = client_cfg(&clog), *scfg = server_cfg(&slog);
	assert_int_equal(sotls_config_set_ktls(ccfg, policy), 0);
	assert_int_equal(sotls_config_set_ktls(scfg, policy), 0);
	if (mfl != 0)
		assert_int_equal(sotls_config_set_max_fragment_length(ccfg, mfl), 0);
	struct pair p;
	pair_open(&p, ccfg, scfg);
	/* An engine has no socket yet: nothing fell back. */
	only(&clog, 0, 0);
	only(&slog, 0, 0);
	int fd[2];
	tcp_pair(fd);
	assert_int_equal(sotls_engine_attach_fd(p.c, fd[0]), 0);
	assert_int_equal(sotls_engine_attach_fd(p.s, fd[1]), 0);
	struct {
		struct seen *log;
		struct sotls_conn *c;
	} side[] = {{&clog, p.c}, {&slog, p.s}};
	for (size_t i = 0; i < 2; i++) {
		struct sotls_info info = SOTLS_INFO_INIT;
		assert_int_equal(sotls_get_info(side[i].c, &info), 0);
		bool tx_user = info.tx_path == SOTLS_PATH_USERSPACE;
		bool rx_user = info.rx_path == SOTLS_PATH_USERSPACE;
		printf("%s: tx %s (%s), rx %s (%s)\n", i ? "server" : "client",
		       tx_user ? "userspace" : "kernel", info.tx_reason,
		       rx_user ? "userspace" : "kernel", info.rx_reason);
		const char *line = side[i].log->line[SOTLS_LOG_KTLS_FALLBACK];
		if (policy == SOTLS_KTLS_OFF || (!tx_user && !rx_user)) {
			only(side[i].log, 0, 0);
			continue;
		}
		only(side[i].log, SOTLS_LOG_KTLS_FALLBACK, 1);
		assert_ptr_equal(side[i].log->conn[SOTLS_LOG_KTLS_FALLBACK], side[i].c);
		assert_true(!tx_user || strstr(line, info.tx_reason) != NULL);
		assert_true(!rx_user || strstr(line, info.rx_reason) != NULL);
		if (mfl != 0)
			assert_non_null(strstr(line, "max_fragment_length"));
	}
	pair_close(&p);
	close(fd[0]);
	close(fd[1]);
}

static void test_ktls_fallback(void **state)
{
	(void)state;
	/* Wherever the kernel has kTLS or not: max_fragment_length keeps both
	 * directions out of it, a fallback from AUTO. */
	attach_and_check(SOTLS_KTLS_AUTO, 1024);
	/* What the kernel says here (without CONFIG_TLS: TCP_ULP's ENOENT). */
	attach_and_check(SOTLS_KTLS_AUTO, 0);
	/* Kept in userspace by the configuration: not a fallback. */
	attach_and_check(SOTLS_KTLS_OFF, 1024);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A handshake a second later than the last, so the key file is looked at. */
static void handshake_later(struct sotls_config *scfg)
{
	g_now++;
	struct sotls_config *ccfg = client_cfg(NULL);
	struct sotls_conn *c, *s;
	assert_int_equal(sotls_conn_new_engine(ccfg, &c), 0);
	assert_int_equal(sotls_conn_new_engine(scfg, &s), 0);
	handshake(c, s);
	sotls_conn_free(c);
	sotls_conn_free(s);
	sotls_config_free(ccfg);
}

static void test_ticket_key_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/sotls-test-log-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keys", dir);
	struct sotls_ticket_key key = {.intro = g_now - 10};
	memset(key.name, 1, sizeof(key.name));
	memset(key.secret, 2, sizeof(key.secret));
	assert_int_equal(sotls_ticket_key_file_write(path, &key, 1), 0);

	struct seen log = {0};
	struct sotls_config *scfg = server_cfg(&log);
	assert_int_equal(sotls_config_set_ticket_key_file(scfg, path), 0);
	handshake_later(scfg);
	only(&log, 0, 0);

	write_file(path, "not a key\n");
	handshake_later(scfg);
	only(&log, SOTLS_LOG_TICKET_KEY_FILE, 1);
	assert_null(log.conn[SOTLS_LOG_TICKET_KEY_FILE]);
	assert_non_null(strstr(log.line[SOTLS_LOG_TICKET_KEY_FILE], path));
	assert_non_null(strstr(log.line[SOTLS_LOG_TICKET_KEY_FILE], "keys read before"));
	/* Still broken the same way: not told again. */
	handshake_later(scfg);
	only(&log, SOTLS_LOG_TICKET_KEY_FILE, 1);
	/* Broken another way: told. */
	assert_int_equal(chmod(path, 0644), 0);
	handshake_later(scfg);
	only(&log, SOTLS_LOG_TICKET_KEY_FILE, 2);
	/* Repaired, then broken as the first time: told again. */
	assert_int_equal(sotls_ticket_key_file_write(path, &key, 1), 0);
	handshake_later(scfg);
	only(&log, SOTLS_LOG_TICKET_KEY_FILE, 2);
	write_file(path, "not a key either\n");
	handshake_later(scfg);
	only(&log, SOTLS_LOG_TICKET_KEY_FILE, 3);

	sotls_config_free(scfg);
	unlink(path);
	rmdir(dir);
}

static void test_session_context(void **state)
{
	(void)state;
	struct seen log = {0};
	struct sotls_config *ccfg = client_cfg(NULL);
	assert_int_equal(sotls_config_set_session_context(ccfg, "a", 1), 0);
	struct pair p;
	pair_open(&p, ccfg, server_cfg(NULL));
	uint8_t session[16384];
	size_t len;
	assert_int_equal(sotls_conn_get_session(p.c, session, sizeof(session), &len), 0);
	pair_close(&p);

	/* The same session offered by a client of another context. */
	ccfg = client_cfg(&log);
	assert_int_equal(sotls_config_set_session_context(ccfg, "b", 1), 0);
	struct sotls_config *scfg = server_cfg(NULL);
	assert_int_equal(sotls_conn_new_engine(ccfg, &p.c), 0);
	assert_int_equal(sotls_conn_new_engine(scfg, &p.s), 0);
	p.ccfg = ccfg;
	p.scfg = scfg;
	assert_int_equal(sotls_conn_set_session(p.c, session, len), 0);
	handshake(p.c, p.s);
	only(&log, SOTLS_LOG_SESSION_CONTEXT, 1);
	assert_ptr_equal(log.conn[SOTLS_LOG_SESSION_CONTEXT], p.c);
	struct sotls_info info = SOTLS_INFO_INIT;
	assert_int_equal(sotls_get_info(p.c, &info), 0);
	assert_int_equal(info.resumed, SOTLS_RESUMED_NONE);
	pair_close(&p);
}

static void test_args(void **state)
{
	(void)state;
	struct seen log = {0};
	assert_int_equal(sotls_config_set_log(NULL, log_cb, &log), SOTLS_ERR_INVALID_ARGUMENT);
	struct pair p;
	struct sotls_config *scfg = server_cfg(&log);
	/* NULL removes it: the flood below is not told. */
	assert_int_equal(sotls_config_set_log(scfg, NULL, &log), 0);
	pair_open(&p, client_cfg(NULL), scfg);
	assert_int_equal(sotls_config_set_log(scfg, log_cb, &log), SOTLS_ERR_BAD_STATE);
	forge_into_server(&p, CT_APPLICATION_DATA, 33);
	assert_int_equal(server_reads(&p), SOTLS_ERR_RECORD_FLOOD);
	only(&log, 0, 0);
	pair_close(&p);
}

static int setup(void **state)
{
	(void)state;
	sotls_resume_set_test_clock(test_clock);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_flood),	cmocka_unit_test(test_peer_fault),
		cmocka_unit_test(test_bad_record_mac),	cmocka_unit_test(test_key_usage_limit),
		cmocka_unit_test(test_ktls_fallback),	cmocka_unit_test(test_ticket_key_file),
		cmocka_unit_test(test_session_context), cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests_name("log", tests, setup, NULL);
}

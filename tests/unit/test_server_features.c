/*
 * ALPN, certificates by name and the SNI callback through the public API,
 * sotls <-> sotls over a socketpair: what the interop tests cannot reach
 * from the command line (the selection callbacks, explicit and wildcard
 * names, the argument rules).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ephemeral_cert.h"
#include "sotls.h"

static char g_cert[4096], g_key[1024];	 /* CN=localhost, no subjectAltName */
static char g_cert2[4096], g_key2[1024]; /* CN=other */

struct result {
	int rc;
	char alpn[64], name[64];
	int cert_index;
	char detail[256];
};

struct server {
	struct sotls_config *cfg;
	int fd;
	struct sotls_conn *conn; /* while the handshake runs */
	struct result r;
};

static void record(struct sotls_conn *c, int rc, struct result *r)
{
	r->rc = rc;
	snprintf(r->detail, sizeof(r->detail), "%s", sotls_conn_error_detail(c));
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	snprintf(r->alpn, sizeof(r->alpn), "%s", info.alpn);
	snprintf(r->name, sizeof(r->name), "%s", info.server_name);
	r->cert_index = info.cert_index;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct sotls_conn *c;
	s->r.rc = sotls_conn_new(s->cfg, s->fd, &c);
	if (s->r.rc != 0)
		return NULL;
	s->conn = c;
	sotls_conn_set_user(c, s);
	record(c, sotls_handshake(c), &s->r);
	sotls_conn_free(c);
	close(s->fd);
	return NULL;
}

/* One handshake: a client offering alpn (NULL: none) with SNI name. */
static void run(struct sotls_config *scfg, const char *name, const char *const *alpn,
		size_t n_alpn, struct result *server, struct result *client)
{
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	struct server s = {.cfg = scfg, .fd = fd[1]};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, server_main, &s), 0);

	struct sotls_config *cc = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_verify(cc, SOTLS_VERIFY_NONE), 0);
	if (name != NULL)
		assert_int_equal(sotls_config_set_server_name(cc, name), 0);
	if (alpn != NULL)
		assert_int_equal(sotls_config_set_alpn(cc, alpn, n_alpn), 0);
	struct sotls_conn *c;
	assert_int_equal(sotls_conn_new(cc, fd[0], &c), 0);
	record(c, sotls_handshake(c), client);
	sotls_conn_free(c);
	sotls_config_free(cc);
	close(fd[0]);
	pthread_join(t, NULL);
	*server = s.r;
	printf("server %d %s alpn=%s name=%s cert=%d | client %d %s alpn=%s\n", server->rc,
	       server->detail, server->alpn, server->name, server->cert_index, client->rc,
	       client->detail, client->alpn);
}

static struct sotls_config *two_cert_server(void)
{
	static const char *const names[] = {"*.w.test", "exact.test"};
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key,
						   strlen(g_key) + 1),
			 0);
	assert_int_equal(sotls_config_add_cert_mem(cfg, g_cert2, strlen(g_cert2), g_key2,
						   strlen(g_key2), names, 2),
			 1);
	return cfg;
}

/* The callback takes the client's second protocol, and sees the name. */
static char g_cb_name[64];
static int pick_second(void *arg, const char *server_name, const char *const *offered, size_t n)
{
	(void)arg;
	snprintf(g_cb_name, sizeof(g_cb_name), "%s", server_name);
	return n >= 2 && strcmp(offered[0], "x-first") == 0 ? 1 : SOTLS_ALPN_NONE;
}

static void test_alpn_callback(void **state)
{
	(void)state;
	static const char *const offer[] = {"x-first", "y-second"};
	struct sotls_config *cfg = two_cert_server();
	assert_int_equal(sotls_config_set_alpn_select(cfg, pick_second, NULL), 0);
	struct result s, c;
	run(cfg, "Exact.Test", offer, 2, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_int_equal(c.rc, 0);
	assert_string_equal(s.alpn, "y-second");
	assert_string_equal(c.alpn, "y-second");
	assert_string_equal(g_cb_name, "exact.test");
	/* RFC 4343: names compare without regard to case. */
	assert_string_equal(s.name, "exact.test");
	assert_string_equal(c.name, "Exact.Test");
	assert_int_equal(s.cert_index, 1);
	assert_int_equal(c.cert_index, -1);
	/* The callback chooses none: STRICT sends no_application_protocol. */
	static const char *const other[] = {"only"};
	run(cfg, NULL, other, 1, &s, &c);
	assert_int_equal(s.rc, SOTLS_ERR_NO_APPLICATION_PROTOCOL);
	assert_int_equal(c.rc, SOTLS_ERR_PEER_ALERT);
	assert_non_null(strstr(c.detail, "no_application_protocol (120)"));
	sotls_config_free(cfg);
}

/* The callback with the connection: it finds the server's own struct
 * through the connection's user pointer (which it records, as the struct
 * lives only during run), and picks what arg names. */
static struct sotls_conn *g_seen_conn;
static const struct sotls_config *g_seen_cfg;
static bool g_user_has_conn;
static int pick_by_user(struct sotls_conn *c, void *arg, const char *server_name,
			const char *const *offered, size_t n)
{
	const struct server *s = sotls_conn_user(c);
	g_seen_conn = c;
	g_seen_cfg = s != NULL ? s->cfg : NULL;
	g_user_has_conn = s != NULL && s->conn == c;
	snprintf(g_cb_name, sizeof(g_cb_name), "%s", server_name);
	const char *want = arg;
	for (size_t i = 0; g_user_has_conn && i < n; i++)
		if (strcmp(offered[i], want) == 0)
			return (int)i;
	return SOTLS_ALPN_NONE;
}

static void test_alpn_callback_conn(void **state)
{
	(void)state;
	static const char *const offer[] = {"x-first", "y-second", "z-third"};
	struct sotls_config *cfg = two_cert_server();
	assert_int_equal(sotls_config_set_alpn_select_conn(cfg, pick_by_user, "z-third"), 0);
	g_seen_conn = NULL;
	g_seen_cfg = NULL;
	g_user_has_conn = false;
	struct result s, c;
	run(cfg, "exact.test", offer, 3, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_int_equal(c.rc, 0);
	assert_non_null(g_seen_conn);
	assert_true(g_user_has_conn);
	assert_ptr_equal(g_seen_cfg, cfg);
	assert_string_equal(g_cb_name, "exact.test");
	assert_string_equal(s.alpn, "z-third");
	assert_string_equal(c.alpn, "z-third");
	/* Its SOTLS_ALPN_NONE goes to the policy as the other callback's does. */
	static const char *const other[] = {"only"};
	run(cfg, NULL, other, 1, &s, &c);
	assert_int_equal(s.rc, SOTLS_ERR_NO_APPLICATION_PROTOCOL);
	assert_string_equal(g_cb_name, "");
	/* Either setter replaces the other's callback: the old form answers
	 * now, and the connection callback is not called. */
	sotls_config_free(cfg);
	cfg = two_cert_server();
	assert_int_equal(sotls_config_set_alpn_select_conn(cfg, pick_by_user, "z-third"), 0);
	assert_int_equal(sotls_config_set_alpn_select(cfg, pick_second, NULL), 0);
	g_seen_conn = NULL;
	run(cfg, NULL, offer, 3, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_string_equal(s.alpn, "y-second");
	assert_null(g_seen_conn);
	/* A configuration in use, or a client's, refuses it. */
	assert_int_equal(sotls_config_set_alpn_select_conn(cfg, NULL, NULL), SOTLS_ERR_BAD_STATE);
	struct sotls_config *cli = sotls_config_new(SOTLS_ROLE_CLIENT);
	assert_int_equal(sotls_config_set_alpn_select_conn(cli, pick_by_user, NULL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	sotls_config_free(cli);
	sotls_config_free(cfg);
}

static void test_alpn_lenient(void **state)
{
	(void)state;
	static const char *const mine[] = {"h2", "http/1.1"}, *const theirs[] = {"spdy/3"};
	struct sotls_config *cfg = two_cert_server();
	assert_int_equal(sotls_config_set_alpn(cfg, mine, 2), 0);
	assert_int_equal(sotls_config_set_alpn_policy(cfg, SOTLS_ALPN_LENIENT), 0);
	struct result s, c;
	run(cfg, NULL, theirs, 1, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_int_equal(c.rc, 0);
	assert_string_equal(s.alpn, "");
	assert_string_equal(c.alpn, "");
	/* The server's order wins (RFC 7301 §3.2). */
	static const char *const both[] = {"http/1.1", "h2"};
	run(cfg, NULL, both, 2, &s, &c);
	assert_string_equal(c.alpn, "h2");
	sotls_config_free(cfg);
}

static void test_names(void **state)
{
	(void)state;
	struct sotls_config *cfg = two_cert_server();
	struct result s, c;
	/* RFC 6125 §6.4.3: the wildcard stands for one label. */
	run(cfg, "q.w.test", NULL, 0, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.cert_index, 1);
	run(cfg, "a.q.w.test", NULL, 0, &s, &c);
	assert_int_equal(s.cert_index, 0);
	run(cfg, "w.test", NULL, 0, &s, &c);
	assert_int_equal(s.cert_index, 0);
	run(cfg, NULL, NULL, 0, &s, &c);
	assert_int_equal(s.cert_index, 0);
	assert_string_equal(s.name, "");
	sotls_config_free(cfg);
}

/* Lazily "loaded": lazy.test gets a certificate made on demand, refuse.test
 * is refused, anything else goes on to the configured ones. */
static struct sotls_cert *g_lazy;
static int sni_cb(void *arg, const char *server_name, struct sotls_cert **cert)
{
	(void)arg;
	if (strcmp(server_name, "refuse.test") == 0)
		return -1;
	*cert = strcmp(server_name, "lazy.test") == 0 ? g_lazy : NULL;
	return 0;
}

static void test_sni_callback(void **state)
{
	(void)state;
	assert_int_equal(sotls_cert_new_mem(g_cert2, strlen(g_cert2), g_key2, strlen(g_key2),
					    &g_lazy),
			 0);
	/* No certificate of its own: the callback is enough to start. */
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	assert_int_equal(sotls_config_set_sni_callback(cfg, sni_cb, NULL), 0);
	struct result s, c;
	run(cfg, "lazy.test", NULL, 0, &s, &c);
	assert_int_equal(s.rc, 0);
	assert_int_equal(c.rc, 0);
	assert_int_equal(s.cert_index, SOTLS_CERT_INDEX_CALLBACK);
	/* RFC 6066 §3: unrecognized_name, fatal. */
	run(cfg, "refuse.test", NULL, 0, &s, &c);
	assert_int_equal(s.rc, SOTLS_ERR_UNRECOGNIZED_NAME);
	assert_int_equal(c.rc, SOTLS_ERR_PEER_ALERT);
	assert_non_null(strstr(c.detail, "unrecognized_name (112)"));
	/* Nothing for this name and no certificate at all. */
	run(cfg, "other.test", NULL, 0, &s, &c);
	assert_int_equal(s.rc, SOTLS_ERR_HANDSHAKE);
	assert_int_equal(c.rc, SOTLS_ERR_PEER_ALERT);
	assert_non_null(strstr(s.detail, "configuration has none"));
	sotls_config_free(cfg);
	/* The handshakes' references are gone: ours is the last. */
	sotls_cert_free(g_lazy);
}

static void test_rules(void **state)
{
	(void)state;
	struct sotls_config *cli = sotls_config_new(SOTLS_ROLE_CLIENT);
	struct sotls_config *srv = sotls_config_new(SOTLS_ROLE_SERVER);
	char long_name[300];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	const char *bad[][2] = {{"", NULL}, {"h2", "h2"}, {long_name, NULL}};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(sotls_config_set_alpn(srv, bad[i], bad[i][1] ? 2 : 1),
				 SOTLS_ERR_INVALID_ARGUMENT);
	const char *many[SOTLS_ALPN_MAX + 1];
	char names[SOTLS_ALPN_MAX + 1][8];
	for (int i = 0; i <= SOTLS_ALPN_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		many[i] = names[i];
	}
	assert_int_equal(sotls_config_set_alpn(srv, many, SOTLS_ALPN_MAX + 1),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_alpn(srv, many, SOTLS_ALPN_MAX), 0);
	assert_int_equal(sotls_config_set_alpn(srv, NULL, 0), 0);
	/* Server-only settings. */
	assert_int_equal(sotls_config_set_alpn_policy(cli, SOTLS_ALPN_REQUIRED),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_alpn_policy(srv, (enum sotls_alpn_policy)7),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_set_sni_policy(cli, SOTLS_SNI_REFUSE_UNKNOWN),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_add_cert_mem(cli, g_cert, strlen(g_cert), g_key,
						   strlen(g_key), NULL, 0),
			 SOTLS_ERR_INVALID_ARGUMENT);
	/* RFC 6125 §6.4.3: only a whole leftmost label may be a wildcard. */
	const char *wild[] = {"a.*.test", "*", "*x.test", "x*.test", ""};
	for (size_t i = 0; i < sizeof(wild) / sizeof(wild[0]); i++)
		assert_int_equal(sotls_config_add_cert_mem(srv, g_cert, strlen(g_cert), g_key,
							   strlen(g_key), &wild[i], 1),
				 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_config_add_cert_mem(srv, g_cert, strlen(g_cert), g_key2,
						   strlen(g_key2), NULL, 0),
			 SOTLS_ERR_KEY_LOAD);
	struct sotls_cert *cert;
	assert_int_equal(sotls_cert_new_file("/nonexistent", "/nonexistent", &cert),
			 SOTLS_ERR_CERT_LOAD);
	assert_null(cert);
	/* Index 0 is the default; set_cert_mem replaces it. */
	assert_int_equal(sotls_config_add_cert_mem(srv, g_cert, strlen(g_cert), g_key,
						   strlen(g_key), NULL, 0),
			 0);
	assert_int_equal(sotls_config_add_cert_mem(srv, g_cert2, strlen(g_cert2), g_key2,
						   strlen(g_key2), NULL, 0),
			 1);
	assert_int_equal(sotls_config_set_cert_mem(srv, g_cert2, strlen(g_cert2), g_key2,
						   strlen(g_key2)),
			 0);
	sotls_config_free(cli);
	sotls_config_free(srv);
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
		cmocka_unit_test(test_alpn_callback), cmocka_unit_test(test_alpn_callback_conn),
		cmocka_unit_test(test_alpn_lenient),
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_sni_callback),
		cmocka_unit_test(test_rules),
	};
	return cmocka_run_group_tests_name("server-features", tests, setup, NULL);
}

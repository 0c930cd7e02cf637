/*
 * Writes the seeds of fuzz-session (tests/fuzz/corpus/session/): the bytes
 * of real sessions from real handshakes between a sotls client and a sotls
 * server over a socketpair, with the resumption clock fixed at
 * FUZZ_SESSION_NOW (fuzz_session.h) so the seeds are fresh for the fuzzer
 * whatever the date:
 *   client-ticket  sotls_conn_get_session after a handshake with a ticket
 *   client-id      the same with tickets off (the server's session ID)
 *   server-cache   what the server put in its session store for client-id
 * Each client session carries the server's certificate as its peer, and
 * the trust context (resume.h) of a client configured as fuzz-session's is
 * (VERIFY_NONE, no CA): another configuration would make seeds that
 * fuzz-session never offers.
 *
 *   make-session-seeds OUT_DIR      (built in the fuzz build; run by hand
 *                                    when the session layout changes)
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "fuzz_session.h"
#include "resume.h"
#include "sotls.h"

static uint8_t g_server_state[SOTLS_SESSION_MAX];
static size_t g_server_len;

static int64_t fixed_clock(void)
{
	return FUZZ_SESSION_NOW;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "make-session-seeds: %s: %s\n", what, sotls_strerror(rc));
	exit(1);
}

/* The server's store: keeps the last session it is given. */
static void put(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data, size_t len,
		unsigned lifetime)
{
	(void)arg, (void)id, (void)id_len, (void)lifetime;
	if (len <= sizeof(g_server_state)) {
		memcpy(g_server_state, data, len);
		g_server_len = len;
	}
}

static ssize_t get(void *arg, const uint8_t *id, size_t id_len, uint8_t *buf, size_t cap)
{
	(void)arg, (void)id, (void)id_len, (void)buf, (void)cap;
	return 0;
}

static void del(void *arg, const uint8_t *id, size_t id_len)
{
	(void)arg, (void)id, (void)id_len;
}

struct server {
	struct sotls_config *cfg;
	int fd;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	struct sotls_conn *c;
	if (sotls_conn_new(s->cfg, s->fd, &c) == 0) {
		(void)sotls_handshake(c);
		sotls_conn_free(c);
	}
	close(s->fd);
	return NULL;
}

/* One full handshake; the client's session into path. */
static void handshake(struct sotls_config *scfg, struct sotls_config *ccfg, const char *path)
{
	int fd[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0)
		die("socketpair", SOTLS_ERR_SYSCALL);
	struct server s = {scfg, fd[1]};
	pthread_t t;
	if (pthread_create(&t, NULL, serve, &s) != 0)
		die("pthread_create", SOTLS_ERR_SYSCALL);
	struct sotls_conn *c;
	int rc = sotls_conn_new(ccfg, fd[0], &c);
	if (rc != 0 || (rc = sotls_handshake(c)) != 0)
		die("client handshake", rc);
	static uint8_t sess[SOTLS_SESSION_MAX];
	size_t len;
	if ((rc = sotls_conn_get_session(c, sess, sizeof(sess), &len)) != 0)
		die("sotls_conn_get_session", rc);
	sotls_conn_free(c);
	close(fd[0]);
	pthread_join(t, NULL);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(sess, 1, len, f) != len || fclose(f) != 0)
		die(path, SOTLS_ERR_SYSCALL);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
		return 2;
	}
	sotls_resume_set_test_clock(fixed_clock);
	static char cert[4096], key[4096];
	if (ephemeral_cert(FUZZ_SESSION_NAME, cert, sizeof(cert), key, sizeof(key)) != 0)
		die("ephemeral_cert", SOTLS_ERR_INTERNAL);
	struct sotls_config *scfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = scfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY
			      : sotls_config_set_cert_mem(scfg, cert, strlen(cert) + 1, key,
							  strlen(key) + 1);
	if (rc == 0)
		rc = sotls_config_set_session_store(scfg, put, get, del, NULL);
	if (rc != 0)
		die("server configuration", rc);
	char path[4096];
	for (int tickets = 1; tickets >= 0; tickets--) {
		struct sotls_config *ccfg = sotls_config_new(SOTLS_ROLE_CLIENT);
		rc = ccfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY
				  : sotls_config_set_verify(ccfg, SOTLS_VERIFY_NONE);
		if (rc == 0)
			rc = sotls_config_set_server_name(ccfg, FUZZ_SESSION_NAME);
		if (rc == 0 && !tickets)
			rc = sotls_config_set_session_tickets(ccfg, 0, 0);
		if (rc != 0)
			die("client configuration", rc);
		const char *name = tickets ? "client-ticket" : "client-id";
		snprintf(path, sizeof(path), "%s/%s", argv[1], name);
		handshake(scfg, ccfg, path);
		sotls_config_free(ccfg);
	}
	if (g_server_len == 0)
		die("the server stored no session", SOTLS_ERR_INTERNAL);
	snprintf(path, sizeof(path), "%s/server-cache", argv[1]);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(g_server_state, 1, g_server_len, f) != g_server_len ||
	    fclose(f) != 0)
		die(path, SOTLS_ERR_SYSCALL);
	sotls_config_free(scfg);
	return 0;
}

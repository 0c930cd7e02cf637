/*
 * identity-peer: the sotls end of the identity interop tests (identity.py).
 * One connection as client or server, with the trust, revocation, key
 * password, client-certificate and verify-callback settings under test;
 * after the handshake it prints what sotls reports of the peer, then sends
 * one line, closes with close_notify and waits for the peer's close:
 *   LOAD-FAILED <what> <code> <text>            a setter failed (exit 3)
 *   CALLBACK flags=0x<hex> chain=<n> reason=<text>   the verify callback ran
 *   CALLBACK-CERT <depth> flags=0x<hex> <DER hex>    ... with this chain
 *   CALLBACK-SUBJECT <subject>                  sotls_conn_peer_subject in it
 *   HANDSHAKE-FAILED <code> <text>: <detail>    (exit 1)
 *   HANDSHAKE <suite>
 *   RESUMED <none|session-id|ticket>
 *   VERIFIED <0|1> CHAIN <n>
 *   CERT <index> <DER hex>
 *   SUBJECT <subject>
 *   SAN <DNS|IP|EMAIL|URI> <value>
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sotls.h"

static const char *g_verdict = "default";
static struct sotls_config *g_cfg;

static void hex_line(const char *tag, size_t index, const char *extra, const uint8_t *p,
		     size_t n)
{
	printf("%s %zu %s", tag, index, extra);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int verify_cb(struct sotls_conn *c, const struct sotls_verify_info *vi, void *arg)
{
	(void)arg;
	printf("CALLBACK flags=0x%x chain=%zu reason=%s\n", (unsigned)vi->flags, vi->chain_len,
	       vi->reason);
	for (size_t i = 0; i < vi->chain_len; i++) {
		char extra[32];
		snprintf(extra, sizeof(extra), "flags=0x%x ", (unsigned)vi->chain[i].flags);
		hex_line("CALLBACK-CERT", i, extra, vi->chain[i].der, vi->chain[i].der_len);
	}
	printf("CALLBACK-SUBJECT %s\n", sotls_conn_peer_subject(c));
	if (strcmp(g_verdict, "accept") == 0)
		return SOTLS_VERDICT_ACCEPT;
	if (strcmp(g_verdict, "reject") == 0)
		return SOTLS_VERDICT_REJECT;
	if (strcmp(g_verdict, "access-denied") == 0)
		return SOTLS_VERDICT_REJECT_ACCESS_DENIED;
	return SOTLS_VERDICT_DEFAULT;
}

static int password_cb(char *buf, size_t size, void *arg)
{
	size_t n = strlen(arg);
	if (n > size)
		return -1;
	memcpy(buf, arg, n);
	return (int)n;
}

static const char *san_name(enum sotls_san_type t)
{
	switch (t) {
	case SOTLS_SAN_DNS: return "DNS";
	case SOTLS_SAN_IP: return "IP";
	case SOTLS_SAN_EMAIL: return "EMAIL";
	case SOTLS_SAN_URI: return "URI";
	}
	return "?";
}

static void print_identity(struct sotls_conn *c)
{
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	printf("HANDSHAKE %s\n", info.suite);
	printf("RESUMED %s\n", info.resumed == SOTLS_RESUMED_TICKET	   ? "ticket"
				: info.resumed == SOTLS_RESUMED_SESSION_ID ? "session-id"
									   : "none");
	printf("VERIFIED %d CHAIN %zu\n", info.peer_verified, info.peer_chain_len);
	const uint8_t *der;
	size_t len;
	for (size_t i = 0; sotls_conn_peer_cert(c, i, &der, &len) == 1; i++)
		hex_line("CERT", i, "", der, len);
	printf("SUBJECT %s\n", sotls_conn_peer_subject(c));
	enum sotls_san_type type;
	const char *value;
	for (size_t i = 0; sotls_conn_peer_san(c, i, &type, &value) == 1; i++)
		printf("SAN %s %s\n", san_name(type), value);
}

/* A setter's result: 0, or a LOAD-FAILED line and exit 3. */
static void must(const char *what, int rc)
{
	if (rc != 0) {
		printf("LOAD-FAILED %s %d %s\n", what, rc, sotls_strerror(rc));
		sotls_config_free(g_cfg); /* nothing left for a leak checker */
		exit(3);
	}
}

/* --sess-in: the session bytes of an earlier run, offered as they are
 * (the test wants sotls's own verdict on them, so a refusal is fatal). */
static int offer_session(struct sotls_conn *c, const char *path)
{
	static uint8_t buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n = f != NULL ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f != NULL)
		fclose(f);
	return n == 0 ? SOTLS_ERR_SESSION : sotls_conn_set_session(c, buf, n);
}

/* --sess-out: the session after the handshake, for a later --sess-in. */
static int save_session(struct sotls_conn *c, const char *path)
{
	static uint8_t buf[65536];
	size_t n;
	int rc = sotls_conn_get_session(c, buf, sizeof(buf), &n);
	if (rc != 0)
		return rc;
	FILE *f = fopen(path, "wb");
	bool ok = f != NULL && fwrite(buf, 1, n, f) == n;
	if (f != NULL)
		ok = fclose(f) == 0 && ok;
	return ok ? 0 : SOTLS_ERR_SYSCALL;
}

/* A session file's failure: a LOAD-FAILED line and exit 3, like must(). */
static void must_session(struct sotls_conn *c, int fd, const char *what, int rc)
{
	if (rc == 0)
		return;
	printf("LOAD-FAILED %s %d %s\n", what, rc, sotls_strerror(rc));
	sotls_conn_free(c);
	close(fd);
	exit(3);
}

static int connect_or_accept(int server, int port, const char *port_file)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!server)
		return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? fd : -1;
	socklen_t sl = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
		return -1;
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
	FILE *f = fopen(tmp, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	rename(tmp, port_file);
	int c = accept(fd, NULL, NULL);
	close(fd);
	return c;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, 'f'},
		{"cert", required_argument, NULL, 'c'},
		{"key", required_argument, NULL, 'k'},
		{"key-password", required_argument, NULL, 'P'},
		{"key-password-cb", required_argument, NULL, 'C'},
		{"ca", required_argument, NULL, 'a'},
		{"ca-dir", required_argument, NULL, 'd'},
		{"crl", required_argument, NULL, 'r'},
		{"mtls", required_argument, NULL, 'm'},
		{"verify", required_argument, NULL, 'v'},
		{"verify-cb", required_argument, NULL, 'V'},
		{"servername", required_argument, NULL, 'n'},
		{"ticket-key-file", required_argument, NULL, 't'},
		{"session-context", required_argument, NULL, 'x'},
		{"sess-in", required_argument, NULL, 'i'},
		{"sess-out", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	if (argc < 2 || (strcmp(argv[1], "client") != 0 && strcmp(argv[1], "server") != 0)) {
		fprintf(stderr, "usage: identity-peer client|server [options]\n");
		return 2;
	}
	int server = strcmp(argv[1], "server") == 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	struct sotls_config *cfg = sotls_config_new(server ? SOTLS_ROLE_SERVER : SOTLS_ROLE_CLIENT);
	g_cfg = cfg;
	const char *cert = NULL, *port_file = "port", *sess_in = NULL, *sess_out = NULL;
	int port = 0, opt;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'f': port_file = optarg; break;
		case 'c': cert = optarg; break;
		case 'k': must("cert", sotls_config_set_cert_file(cfg, cert, optarg)); break;
		case 'P': must("key-password", sotls_config_set_key_password(cfg, optarg)); break;
		case 'C':
			must("key-password-cb", sotls_config_set_key_password_cb(cfg, password_cb, optarg));
			break;
		case 'a': must("ca", sotls_config_set_ca_file(cfg, optarg)); break;
		case 'd': must("ca-dir", sotls_config_set_ca_dir(cfg, optarg)); break;
		case 'r': must("crl", sotls_config_set_crl_file(cfg, optarg)); break;
		case 'm':
		case 'v': {
			enum sotls_verify m = strcmp(optarg, "required") == 0 ? SOTLS_VERIFY_REQUIRED
					      : strcmp(optarg, "optional") == 0 ? SOTLS_VERIFY_OPTIONAL
					      : strcmp(optarg, "chain") == 0	  ? SOTLS_VERIFY_CHAIN_ONLY
										  : SOTLS_VERIFY_NONE;
			must("verify", sotls_config_set_verify(cfg, m));
			break;
		}
		case 'V':
			g_verdict = optarg;
			must("verify-cb", sotls_config_set_verify_callback(cfg, verify_cb, NULL));
			break;
		case 'n': must("servername", sotls_config_set_server_name(cfg, optarg)); break;
		case 't':
			must("ticket-key-file", sotls_config_set_ticket_key_file(cfg, optarg));
			break;
		case 'x':
			must("session-context",
			     sotls_config_set_session_context(cfg, optarg, strlen(optarg)));
			break;
		case 'i': sess_in = optarg; break;
		case 'o': sess_out = optarg; break;
		default: return 2;
		}
	}
	int fd = connect_or_accept(server, port, port_file);
	struct sotls_conn *c = NULL;
	if (fd < 0 || sotls_conn_new(cfg, fd, &c) != 0) {
		perror("connection");
		return 2;
	}
	sotls_config_free(cfg);
	if (sess_in != NULL)
		must_session(c, fd, "sess-in", offer_session(c, sess_in));
	int rc = sotls_handshake(c);
	if (rc == 0 && sess_out != NULL)
		must_session(c, fd, "sess-out", save_session(c, sess_out));
	if (rc != 0) {
		printf("HANDSHAKE-FAILED %d %s: %s\n", rc, sotls_strerror(rc),
		       sotls_conn_error_detail(c));
		sotls_conn_free(c);
		close(fd);
		return 1;
	}
	print_identity(c);
	static const char line[] = "hello from sotls\n";
	int ok = sotls_send(c, line, sizeof(line) - 1) == (ssize_t)(sizeof(line) - 1) &&
		 sotls_shutdown(c) == 0;
	/* Until the peer closes: its data is not checked, only that the
	 * connection stays sound. */
	char buf[4096];
	for (;;) {
		if (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 20000) <= 0) {
			ok = 0;
			break;
		}
		ssize_t n = sotls_recv(c, buf, sizeof(buf));
		if (n <= 0) {
			ok = ok && (n == 0 || n == SOTLS_ERR_TRUNCATED);
			break;
		}
	}
	printf("END %s\n", ok ? "ok" : sotls_conn_error_detail(c));
	sotls_conn_free(c);
	close(fd);
	return ok ? 0 : 1;
}

/*
 * sotls-keyless-server: a TLS server that holds its certificate but not the
 * private key. sotls_cert_new_external gives sotls a private-key method
 * that sends each ServerKeyExchange digest to sotls-key-server over a UNIX
 * socket (keyless_wire.h) and returns SOTLS_PRIVATE_KEY_PENDING; the
 * handshake then returns SOTLS_WANT_PRIVATE_KEY, the server polls the key
 * server's socket, and calls sotls_handshake again, which fetches the
 * answer through the method's complete. Everything is non-blocking. Each
 * client is served on its own thread (greeted with one line, then closed),
 * bounded like the other example servers' (server_limits.h): at most
 * --max-conns at once, the whole handshake, the key server's answer
 * included, within --handshake-timeout however slowly the client trickles
 * its bytes, and a greeting it does not take fails after --send-timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "keyless_wire.h"
#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "server_limits.h"
#include "server_setup.h"
#include "sotls.h"

#define GREETING "hello from a server that does not hold its key\n"
#define KEYLESS_LIMITS (LIMIT_MAX_CONNS | LIMIT_HANDSHAKE | LIMIT_SEND)

static const char *g_key_socket;
static struct sotls_config *g_cfg;
static struct server_limits g_limits = SERVER_LIMITS_DEFAULT;
static struct conn_slots g_slots;

/* A connection's end of its own socket to the key server, so that its
 * answers never queue behind another's. The method's callbacks run on the
 * thread that drives the connection (sotls_handshake, and sotls_conn_free
 * for cancel), and each connection has a thread of its own: the thread's
 * key_client is the connection's. One request at most is pending. */
struct key_client {
	int fd; /* -1 until the first signature */
	uint32_t next_id;
	uint32_t pending_id; /* 0: none */
};
static __thread struct key_client t_kc = {.fd = -1};

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int connect_key_server(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sotls-keyless-server: --key-socket path too long\n");
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Non-blocking: a key server whose backlog is full fails this
	 * handshake rather than stalling its thread past any deadline. */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "sotls-keyless-server: key server %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int ks_sign(struct sotls_conn *c, void *arg, uint16_t sigalg, const uint8_t *digest,
		   size_t digest_len, uint8_t *out, size_t *out_len, size_t max_out)
{
	(void)c, (void)arg, (void)out, (void)out_len, (void)max_out;
	struct key_client *kc = &t_kc;
	unsigned char req[KEYLESS_REQ_HEAD + KEYLESS_MAX_DIGEST];
	if (digest_len > KEYLESS_MAX_DIGEST)
		return SOTLS_PRIVATE_KEY_FAILURE;
	if (kc->fd < 0 && (kc->fd = connect_key_server(g_key_socket)) < 0)
		return SOTLS_PRIVATE_KEY_FAILURE;
	kc->pending_id = ++kc->next_id != 0 ? kc->next_id : ++kc->next_id;
	put_be32(req, kc->pending_id);
	req[4] = (unsigned char)(sigalg >> 8);
	req[5] = (unsigned char)sigalg;
	req[6] = (unsigned char)digest_len;
	memcpy(req + KEYLESS_REQ_HEAD, digest, digest_len);
	/* The request is sent now; the answer is picked up in ks_complete. */
	if (send(kc->fd, req, KEYLESS_REQ_HEAD + digest_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		perror("sotls-keyless-server: key server");
		return SOTLS_PRIVATE_KEY_FAILURE;
	}
	return SOTLS_PRIVATE_KEY_PENDING;
}

static int ks_complete(struct sotls_conn *c, void *arg, uint8_t *out, size_t *out_len,
		       size_t max_out)
{
	(void)c, (void)arg;
	struct key_client *kc = &t_kc;
	unsigned char resp[KEYLESS_RESP_HEAD + KEYLESS_MAX_SIG];
	for (;;) {
		ssize_t n = recv(kc->fd, resp, sizeof(resp), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return SOTLS_PRIVATE_KEY_PENDING;
		if (n < KEYLESS_RESP_HEAD) {
			fprintf(stderr, "sotls-keyless-server: key server %s\n",
				n < 0 ? strerror(errno) : "closed or sent a short answer");
			return SOTLS_PRIVATE_KEY_FAILURE;
		}
		uint32_t id = (uint32_t)resp[0] << 24 | (uint32_t)resp[1] << 16 |
			      (uint32_t)resp[2] << 8 | resp[3];
		if (id != kc->pending_id)
			continue; /* the answer to a request given up on */
		kc->pending_id = 0;
		size_t sig_len = (size_t)n - KEYLESS_RESP_HEAD;
		if (resp[4] != KEYLESS_STATUS_OK || sig_len > max_out) {
			fprintf(stderr, "sotls-keyless-server: the key server refused to sign: %.*s\n",
				resp[4] != KEYLESS_STATUS_OK ? (int)sig_len : 0,
				(const char *)resp + KEYLESS_RESP_HEAD);
			return SOTLS_PRIVATE_KEY_FAILURE;
		}
		memcpy(out, resp + KEYLESS_RESP_HEAD, sig_len);
		*out_len = sig_len;
		return SOTLS_PRIVATE_KEY_SUCCESS;
	}
}

static void ks_cancel(struct sotls_conn *c, void *arg)
{
	(void)c, (void)arg;
	t_kc.pending_id = 0;
}

static const struct sotls_private_key_method key_server_method = {
	.sign = ks_sign,
	.complete = ks_complete,
	.cancel = ks_cancel,
};

static int load_cert(const char *path, struct sotls_cert **cert)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	static char chain[65536];
	size_t n = fread(chain, 1, sizeof(chain), f);
	fclose(f);
	int rc = sotls_cert_new_external(chain, n, &key_server_method, NULL, cert);
	if (rc != 0)
		fprintf(stderr, "sotls-keyless-server: %s: %s\n", path, sotls_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* The handshake, the key server's answers included, all within deadline:
 * 0, a sotls error or LIMIT_EXPIRED. *waits counts SOTLS_WANT_PRIVATE_KEY. */
static int handshake(struct sotls_conn *c, int fd, int64_t deadline, int *waits)
{
	int rc;
	while ((rc = limits_handshake(c, fd, deadline)) == SOTLS_WANT_PRIVATE_KEY) {
		++*waits;
		if ((rc = limits_wait(t_kc.fd, SOTLS_WANT_READ, deadline)) != 0)
			break;
	}
	return rc;
}

/* One client on fd: handshake, greeting, close_notify. 0 if all went. */
static int serve_client(int fd)
{
	struct sotls_conn *c = NULL;
	int64_t deadline = limits_now_ms() + g_limits.handshake_ms;
	int waits = 0, rc;

	if (limits_prepare_socket(fd, g_limits.send_ms) != 0) {
		perror("sotls-keyless-server: client socket");
		close(fd);
		return -1;
	}
	if ((rc = sotls_conn_new(g_cfg, fd, &c)) != 0) {
		fprintf(stderr, "sotls-keyless-server: %s\n", sotls_strerror(rc));
		close(fd);
		return -1;
	}
	rc = handshake(c, fd, deadline, &waits);
	if (rc == 0) {
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(c, &info);
		printf("handshake done: %s, signed by the key server (%d x SOTLS_WANT_PRIVATE_KEY)\n",
		       info.suite, waits);
		rc = limits_send_all(c, fd, GREETING, sizeof(GREETING) - 1, g_limits.send_ms);
		if (rc == 0)
			rc = limits_shutdown(c, fd, g_limits.send_ms);
	}
	if (rc != 0)
		printf("handshake or send failed: %s%s%s\n", limits_strerror(rc),
		       rc == LIMIT_EXPIRED ? " (--handshake-timeout / --send-timeout)"
		       : sotls_conn_error_detail(c)[0] ? ": " : "",
		       rc == LIMIT_EXPIRED ? "" : sotls_conn_error_detail(c));
	sotls_conn_free(c); /* may cancel a pending request: before the close */
	if (t_kc.fd >= 0)
		close(t_kc.fd);
	t_kc = (struct key_client){.fd = -1};
	close(fd);
	return rc == 0 ? 0 : -1;
}

static void client_thread(void *arg)
{
	serve_client((int)(intptr_t)arg);
}

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-keyless-server - a TLS 1.2 echo server without its private key, "
		     "which sotls-key-server holds");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-keyless-server",
		      "--cert CHAIN.pem --key-socket PATH [--port N] "
		      "[--port-file FILE] [--once] [limits]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Echoes over TLS on 127.0.0.1, one thread per client, with the certificate "
		     "chain CHAIN.pem and no private key: each handshake's one signature is asked "
		     "of sotls-key-server over the UNIX socket PATH (sotls's private-key method, "
		     "asynchronous), and checked with the leaf's public key before it is sent.\n\n"
		     SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--cert CHAIN.pem", "the certificate chain, leaf first (required)");
	help_option(f, "--key-socket PATH", "sotls-key-server's socket (required)");
	help_option(f, "--port N", "TCP port (default 4433; 0 picks one)");
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--once", "serve one client, then exit");
	help_option(f, "--help", "this text");
	server_limits_usage(f, KEYLESS_LIMITS);
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: with --once, its client ended cleanly; 1: a failure (the chain, the "
		     "key socket, the listening socket, or the --once client's connection); 2: a "
		     "bad flag or value. Without --once it runs until killed.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-key-server --key leaf.key --socket /run/sotls/key.sock &\n"
		      "sotls-keyless-server --cert chain.pem --key-socket /run/sotls/key.sock");
}

int main(int argc, char **argv)
{
	const char *cert_path = NULL, *port_file = NULL, *bind_addr = "127.0.0.1";
	long long port = 4433;
	int once = 0;
	static const struct option opts[] = {
		{"cert", required_argument, NULL, 'c'},
		{"key-socket", required_argument, NULL, 'k'},
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, 'f'},
		{"once", no_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		SERVER_LIMITS_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_limits, KEYLESS_LIMITS, opt, optarg);
		if (lim < 0)
			return 2;
		if (lim > 0)
			continue;
		switch (opt) {
		case 'c': cert_path = optarg; break;
		case 'k': g_key_socket = optarg; break;
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, &port))
				return 2;
			break;
		case 'f': port_file = optarg; break;
		case 'o': once = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || cert_path == NULL || g_key_socket == NULL) {
		fprintf(stderr, "sotls-keyless-server: --cert and --key-socket are required\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines from several threads, as they happen */
	/* The key server is there (and lets us in) now, or the start fails;
	 * each connection opens its own socket to it later. */
	int probe = connect_key_server(g_key_socket);
	if (probe < 0)
		return 1;
	close(probe);
	struct sotls_cert *cert;
	if (load_cert(cert_path, &cert) != 0)
		return 1;
	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = g_cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY : sotls_config_add_cert(g_cfg, cert, NULL, 0);
	sotls_cert_free(cert);
	if (rc < 0) {
		fprintf(stderr, "sotls-keyless-server: %s\n", sotls_strerror(rc));
		return 1;
	}
	if (keylog_from_env(g_cfg) != 0 || server_log_setup(g_cfg) != 0)
		return 1;
	int bound;
	int ls = listen_tcp4(bind_addr, (int)port, 0, 64, &bound);
	if (ls < 0 || (port_file != NULL && write_port_file(port_file, bound) != 0)) {
		perror("sotls-keyless-server: listen");
		return 1;
	}
	printf("listening on %s:%d\n", bind_addr, bound);
	if (once) {
		int fd = accept_client(ls, NULL, NULL);
		if (fd < 0) {
			perror("sotls-keyless-server: accept");
			return 1;
		}
		rc = serve_client(fd);
		sotls_config_free(g_cfg);
		close(ls);
		return rc == 0 ? 0 : 1;
	}
	conn_slots_init(&g_slots, g_limits.max_conns);
	conn_slots_serve_fds(&g_slots, ls, client_thread, "sotls-keyless-server");
	return 1;
}

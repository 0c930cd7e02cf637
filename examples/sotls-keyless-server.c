/*
 * sotls-keyless-server: a TLS server that holds its certificate but not the
 * private key. sotls_cert_new_external gives sotls a private-key method
 * that sends each ServerKeyExchange digest to sotls-key-server over a UNIX
 * socket (keyless_wire.h) and returns SOTLS_PRIVATE_KEY_PENDING; the
 * handshake then returns SOTLS_WANT_PRIVATE_KEY, the server polls the key
 * server's socket, and calls sotls_handshake again, which fetches the
 * answer through the method's complete. Everything is non-blocking. It
 * serves one client at a time: greets it with one line, then closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "keyless_wire.h"
#include "keylog_env.h"
#include "server_setup.h"
#include "sotls.h"

#define HANDSHAKE_TIMEOUT_MS 10000
#define GREETING "hello from a server that does not hold its key\n"

/* The TLS server's end of the key server's socket. One client at a time,
 * so one request at most is pending; a server with many would key its
 * requests by connection (the method's c). */
struct key_client {
	int fd;
	uint32_t next_id;
	uint32_t pending_id; /* 0: none */
};

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int ks_sign(struct sotls_conn *c, void *arg, uint16_t sigalg, const uint8_t *digest,
		   size_t digest_len, uint8_t *out, size_t *out_len, size_t max_out)
{
	(void)c, (void)out, (void)out_len, (void)max_out;
	struct key_client *kc = arg;
	unsigned char req[KEYLESS_REQ_HEAD + KEYLESS_MAX_DIGEST];
	if (digest_len > KEYLESS_MAX_DIGEST)
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
	(void)c;
	struct key_client *kc = arg;
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
			fprintf(stderr, "sotls-keyless-server: the key server refused to sign\n");
			return SOTLS_PRIVATE_KEY_FAILURE;
		}
		memcpy(out, resp + KEYLESS_RESP_HEAD, sig_len);
		*out_len = sig_len;
		return SOTLS_PRIVATE_KEY_SUCCESS;
	}
}

static void ks_cancel(struct sotls_conn *c, void *arg)
{
	(void)c;
	((struct key_client *)arg)->pending_id = 0;
}

static const struct sotls_private_key_method key_server_method = {
	.sign = ks_sign,
	.complete = ks_complete,
	.cancel = ks_cancel,
};

static int connect_key_server(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sotls-keyless-server: --key-socket path too long\n");
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "sotls-keyless-server: key server %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int load_cert(const char *path, struct key_client *kc, struct sotls_cert **cert)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	static char chain[65536];
	size_t n = fread(chain, 1, sizeof(chain), f);
	fclose(f);
	int rc = sotls_cert_new_external(chain, n, &key_server_method, kc, cert);
	if (rc != 0)
		fprintf(stderr, "sotls-keyless-server: %s: %s\n", path, sotls_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* Waits for what rc asks (the socket, or the key server's answer). */
static int wait_for(int rc, int fd, const struct key_client *kc)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (rc == SOTLS_WANT_WRITE)
		p.events = POLLOUT;
	else if (rc == SOTLS_WANT_PRIVATE_KEY)
		p.fd = kc->fd;
	int n = poll(&p, 1, HANDSHAKE_TIMEOUT_MS);
	if (n == 0)
		fprintf(stderr, "sotls-keyless-server: timed out waiting for %s\n",
			rc == SOTLS_WANT_PRIVATE_KEY ? "the key server" : "the client");
	return n > 0 ? 0 : -1;
}

/* One client on the non-blocking socket fd. Returns 0 if it ended cleanly. */
static int serve(struct sotls_config *cfg, int fd, const struct key_client *kc)
{
	struct sotls_conn *c;
	int rc = sotls_conn_new(cfg, fd, &c);
	if (rc != 0) {
		fprintf(stderr, "sotls-keyless-server: %s\n", sotls_strerror(rc));
		return -1;
	}
	int waits = 0;
	while ((rc = sotls_handshake(c)) == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE ||
	       rc == SOTLS_WANT_PRIVATE_KEY) {
		waits += rc == SOTLS_WANT_PRIVATE_KEY;
		if (wait_for(rc, fd, kc) != 0)
			break;
	}
	if (rc == 0) {
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(c, &info);
		printf("handshake done: %s, signed by the key server (%d x SOTLS_WANT_PRIVATE_KEY)\n",
		       info.suite, waits);
		size_t sent = 0;
		while (rc >= 0 && sent < sizeof(GREETING) - 1) {
			ssize_t n = sotls_send(c, GREETING + sent, sizeof(GREETING) - 1 - sent);
			rc = n == SOTLS_WANT_WRITE ? wait_for((int)n, fd, kc) : n < 0 ? (int)n : 0;
			sent += n > 0 ? (size_t)n : 0;
		}
		while (rc >= 0 && (rc = sotls_shutdown(c)) == SOTLS_WANT_WRITE)
			rc = wait_for(rc, fd, kc);
	}
	if (rc != 0)
		printf("handshake or send failed: %s%s%s\n", sotls_strerror(rc),
		       sotls_conn_error_detail(c)[0] ? ": " : "", sotls_conn_error_detail(c));
	fflush(stdout);
	sotls_conn_free(c);
	return rc == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *cert_path = NULL, *key_socket = NULL, *port_file = NULL, *bind_addr = "127.0.0.1";
	int port = 4433, once = 0;
	static const struct option opts[] = {
		{"cert", required_argument, NULL, 'c'},
		{"key-socket", required_argument, NULL, 'k'},
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, 'f'},
		{"once", no_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': cert_path = optarg; break;
		case 'k': key_socket = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'f': port_file = optarg; break;
		case 'o': once = 1; break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: sotls-keyless-server --cert CHAIN.pem --key-socket PATH "
				"[--port N] [--port-file FILE] [--once]\n"
				"  the key is with sotls-key-server --key KEY.pem --socket PATH\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (cert_path == NULL || key_socket == NULL) {
		fprintf(stderr, "sotls-keyless-server: --cert and --key-socket are required\n");
		return 2;
	}
	struct key_client kc = {.fd = connect_key_server(key_socket)};
	struct sotls_cert *cert;
	if (kc.fd < 0 || load_cert(cert_path, &kc, &cert) != 0)
		return 1;
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY : sotls_config_add_cert(cfg, cert, NULL, 0);
	sotls_cert_free(cert);
	if (rc < 0) {
		fprintf(stderr, "sotls-keyless-server: %s\n", sotls_strerror(rc));
		return 1;
	}
	if (keylog_from_env(cfg) != 0)
		return 1;
	int ls = listen_tcp4(bind_addr, port, 0, 16, &port);
	if (ls < 0 || (port_file != NULL && write_port_file(port_file, port) != 0)) {
		perror("sotls-keyless-server: listen");
		return 1;
	}
	printf("listening on %s:%d\n", bind_addr, port);
	fflush(stdout);
	do {
		int fd = accept_client(ls, NULL, NULL);
		if (fd < 0) {
			perror("sotls-keyless-server: accept");
			return 1;
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		rc = serve(cfg, fd, &kc);
		close(fd);
	} while (!once);
	sotls_config_free(cfg);
	close(ls);
	return rc == 0 ? 0 : 1;
}

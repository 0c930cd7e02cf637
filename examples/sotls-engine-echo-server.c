/*
 * sotls-engine-echo-server: an echo server that owns its sockets and drives
 * sotls's engine (sotls_conn_new_engine): one epoll loop, edge-triggered,
 * non-blocking sockets; sotls makes no syscall, this file moves every byte
 * of ciphertext. The shape of a server with its own event loop or ring.
 * With --ktls other than off, each connection is handed to its socket right
 * after the handshake (sotls_engine_attach_fd: kTLS where the kernel takes
 * the cipher), and the same loop goes on with the socket's sotls calls.
 * With --select-cert CHAIN KEY, the certificate is chosen per connection
 * and answered a loop turn later, as a remote store would
 * (sotls_config_set_cert_select).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "help_text.h"
#include "parse_number.h"
#include "server_setup.h"
#include "sotls.h"

static bool g_attach;		  /* --ktls other than off */
static struct sotls_cert *g_select; /* --select-cert */

struct client {
	int fd;
	bool open;	/* the handshake is done */
	bool awaiting;	/* its certificate selection is pending */
	struct client *next_waiting;
	struct sotls_conn *c;
	uint8_t buf[16384]; /* plaintext received, echoed from off to len */
	size_t len, off;
};

/* Engine output to the socket. false: the socket failed. */
static bool flush_out(struct client *cl)
{
	size_t n;
	const void *out;
	while ((out = sotls_engine_send_buf(cl->c, &n)) != NULL) {
		ssize_t w = send(cl->fd, out, n, MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR; /* EPOLLOUT calls again */
		sotls_engine_send_done(cl->c, (size_t)w);
	}
	return true;
}

/* Socket input to the engine, at most what it takes now. 1: bytes came,
 * 0: none now, -1: the socket failed. */
static int fill_in(struct client *cl)
{
	size_t cap;
	void *in = sotls_engine_recv_buf(cl->c, &cap);
	if (in == NULL)
		return 0;
	ssize_t got = recv(cl->fd, in, cap, 0);
	if (got > 0)
		return sotls_engine_recv_done(cl->c, (size_t)got) == 0 ? 1 : -1;
	if (got == 0)
		return sotls_engine_recv_eof(cl->c) == 0 ? 1 : -1;
	/* Nothing came: the engine takes its empty buffer back (an idle
	 * client then holds none). */
	sotls_engine_recv_done(cl->c, 0);
	return errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* The selection callback: pending, answered on the next loop turn. */
static struct client *g_waiting;

static int select_later(struct sotls_conn *c, void *arg, const char *name, struct sotls_cert **cert)
{
	(void)arg;
	(void)name;
	(void)cert;
	struct client *cl = sotls_conn_user(c);
	cl->awaiting = true;
	cl->next_waiting = g_waiting;
	g_waiting = cl;
	return SOTLS_CERT_PENDING;
}

/* Runs a client until it waits for its socket. false: close it. */
static bool pump(struct client *cl)
{
	for (;;) {
		ssize_t r;
		if (!cl->open) {
			r = sotls_handshake(cl->c);
			if (r == 0) {
				cl->open = true;
				r = g_attach ? sotls_engine_attach_fd(cl->c, cl->fd) : 0;
				if (r == 0 && flush_out(cl))
					continue;
			}
		} else if (cl->off < cl->len) {
			r = sotls_send(cl->c, cl->buf + cl->off, cl->len - cl->off);
			if (r > 0 && (cl->off += (size_t)r) == cl->len)
				cl->off = cl->len = 0;
		} else {
			r = sotls_recv(cl->c, cl->buf, sizeof(cl->buf)); /* the handshake first */
			if (r > 0)
				cl->len = (size_t)r;
			else if (r == 0)
				sotls_shutdown(cl->c); /* the peer's close_notify: ours back */
		}
		if (!flush_out(cl))
			return false;
		if (r == SOTLS_WANT_CERTIFICATE)
			return true; /* answered after this turn's events */
		size_t left;
		sotls_engine_send_buf(cl->c, &left);
		if (r == 0 || (r < 0 && r != SOTLS_WANT_READ && r != SOTLS_WANT_WRITE)) {
			if (r < 0)
				fprintf(stderr, "client: %s: %s\n", sotls_strerror((int)r),
					sotls_conn_error_detail(cl->c));
			return left > 0; /* the last words (close_notify, an alert) go first */
		}
		/* EPOLLOUT: the socket is full (attached, sotls's own send). */
		if (r == SOTLS_WANT_WRITE && (left > 0 || (g_attach && cl->open)))
			return true;
		if (r == SOTLS_WANT_READ) {
			int got = fill_in(cl);
			if (got < 0)
				return false;
			if (got == 0)
				return true; /* EPOLLIN */
		}
	}
}

static void drop(struct client *cl)
{
	for (struct client **p = &g_waiting; cl->awaiting && *p != NULL; p = &(*p)->next_waiting)
		if (*p == cl) {
			*p = cl->next_waiting;
			break;
		}
	close(cl->fd); /* also leaves the epoll set */
	sotls_conn_free(cl->c);
	free(cl);
}

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-engine-echo-server - an epoll TLS 1.2 echo server that owns its "
		     "sockets and drives the sotls engine");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-engine-echo-server",
		      "[--port N] [--port-file FILE] [--cert FILE --key FILE] "
		      "[--cipher LIST] [--ktls MODE] [--select-cert CHAIN KEY]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Echoes over TLS on 127.0.0.1 until killed, on one thread: it reads and "
		     "writes the sockets itself and hands sotls the ciphertext (the engine, "
		     "sotls_conn_new_engine), as a server with its own event loop or io_uring "
		     "would. With --ktls other than off it hands each connection to its socket "
		     "after the handshake (sotls_engine_attach_fd), kernel TLS where the kernel "
		     "takes the cipher.\n\n" SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--port N", "TCP port (default 4433; 0 picks one)");
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--cert FILE", "certificate chain, PEM (with --key)");
	help_option(f, "--key FILE",
		    "private key, PEM; without --cert/--key an ephemeral self-signed ECDSA P-256 "
		    "certificate for CN=localhost is made in memory");
	help_option(f, "--cipher LIST", "allowed suites (default: all sotls supports, ARIA first)");
	help_option(f, "--ktls MODE", KTLS_FLAG_HELP " (default off: the engine to the end)");
	help_option(f, "--select-cert CHAIN KEY",
		    "each connection's certificate is chosen later, on the next loop turn, as "
		    "from a remote store (sotls_config_set_cert_select): that chain and key");
	help_option(f, "--help", "this text");
	help_section(f, "EXIT STATUS");
	help_text(f, "It runs until killed. 1: it could not start (the certificate, the "
		     "socket); 2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-engine-echo-server --port 4433 --ktls auto\n"
		      "sotls-echo-client --port 4433 --insecure --bytes 100M\n"
		      "sotls-engine-echo-server --select-cert chain.pem key.pem");
}

int main(int argc, char **argv)
{
	const char *cert = NULL, *key = NULL, *port_file = NULL, *cipher = NULL;
	const char *select_chain = NULL, *select_key = NULL;
	enum sotls_ktls_policy ktls = SOTLS_KTLS_OFF;
	long long port_arg = 4433;
	int port, opt;
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'}, {"port-file", required_argument, NULL, 'f'},
		{"cert", required_argument, NULL, 'c'}, {"key", required_argument, NULL, 'k'},
		{"cipher", required_argument, NULL, 's'}, {"ktls", required_argument, NULL, 't'},
		{"select-cert", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},	{NULL, 0, NULL, 0}};
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, &port_arg))
				return 2;
			break;
		case 'f': port_file = optarg; break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 's': cipher = optarg; break;
		case 'S':
			if (optind >= argc) {
				fputs("--select-cert CHAIN KEY\n", stderr);
				return 2;
			}
			select_chain = optarg;
			select_key = argv[optind++];
			break;
		case 't':
			if (parse_ktls_policy(optarg, &ktls) != 0) {
				fputs(KTLS_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY : server_log_setup(cfg);
	if (rc == 0)
		rc = server_cert_setup(cfg, cert, key, false, "");
	if (rc == 0 && cipher != NULL)
		rc = sotls_config_set_suites(cfg, cipher);
	if (rc == 0)
		rc = sotls_config_set_ktls(cfg, ktls);
	g_attach = ktls != SOTLS_KTLS_OFF;
	if (rc == 0 && select_chain != NULL &&
	    (rc = sotls_cert_new_file(select_chain, select_key, &g_select)) == 0)
		rc = sotls_config_set_cert_select(cfg, select_later, NULL);
	if (rc != 0) {
		print_config_error("configuration", cfg, rc);
		return 1;
	}
	int ls = listen_tcp4("127.0.0.1", (int)port_arg, SOCK_NONBLOCK, 512, &port);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ls < 0 || ep < 0 || (port_file != NULL && write_port_file(port_file, port) != 0)) {
		perror("listen");
		return 1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			struct client *cl = evs[i].data.ptr;
			if (cl == NULL) { /* the listening socket */
				int fd;
				while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					cl = calloc(1, sizeof(*cl));
					if (cl == NULL || sotls_conn_new_engine(cfg, &cl->c) != 0) {
						free(cl);
						close(fd);
						continue;
					}
					cl->fd = fd;
					sotls_conn_set_user(cl->c, cl);
					ev = (struct epoll_event){.events = EPOLLIN | EPOLLOUT | EPOLLET,
								  .data.ptr = cl};
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			if (!pump(cl))
				drop(cl);
		}
		/* The remote store answers: this turn's pending selections. */
		while (g_waiting != NULL) {
			struct client *cl = g_waiting;
			g_waiting = cl->next_waiting;
			cl->awaiting = false;
			if (sotls_conn_set_cert(cl->c, g_select) != 0 || !pump(cl))
				drop(cl);
		}
	}
}

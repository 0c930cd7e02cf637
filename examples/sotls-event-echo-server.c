/*
 * sotls-event-echo-server: a single-threaded epoll echo server on sotls's
 * non-blocking API. Every connection is a small state machine (handshake,
 * echo, close); a connection that would block waits for the readiness epoll
 * reports, and no connection can hold up another.
 *
 * On SIGINT/SIGTERM it frees every connection and prints its statistics
 * (connections served, peak held at once, failures, bytes, peak RSS); the
 * exit status is 0 if no connection failed after its handshake and none was
 * still open (--allow-errors: always). Peers that never complete a handshake
 * are counted apart: they cannot hold up anyone else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "proc_status.h"
#include "server_setup.h"
#include "sotls.h"

#define BUF_SIZE 16384

enum state { ST_HANDSHAKE, ST_ECHO, ST_CLOSING };

struct conn {
	int fd;
	enum state st;
	struct sotls_conn *tls;
	uint32_t events; /* what epoll waits for now */
	size_t out_len, out_off; /* echo pending in buf */
	struct conn *prev, *next; /* all open connections */
	uint8_t buf[BUF_SIZE];
};

static struct conn *g_conns;

static volatile sig_atomic_t g_stop;
static struct sotls_config *g_cfg;
static int g_ep;
static bool g_verbose;
static unsigned long long g_accepted, g_done_clean, g_failed, g_hs_failed, g_bytes, g_held,
	g_peak_held;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void conn_close(struct conn *c, bool failed, int rc)
{
	if (failed) {
		if (c->st == ST_HANDSHAKE)
			g_hs_failed++; /* a peer that never became a TLS client */
		else
			g_failed++;
		if (g_verbose)
			fprintf(stderr, "connection %d: %s: %s\n", c->fd, sotls_strerror(rc),
				sotls_conn_error_detail(c->tls));
	} else {
		g_done_clean++;
	}
	epoll_ctl(g_ep, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g_conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	sotls_conn_free(c->tls);
	close(c->fd);
	free(c);
	g_held--;
}

/* Waits for what rc asks for (WANT_READ / WANT_WRITE). */
static void wait_for(struct conn *c, int rc)
{
	uint32_t ev = rc == SOTLS_WANT_WRITE ? EPOLLOUT : EPOLLIN;
	if (ev != c->events) {
		struct epoll_event e = {.events = ev, .data.ptr = c};
		epoll_ctl(g_ep, EPOLL_CTL_MOD, c->fd, &e);
		c->events = ev;
	}
}

/* Runs the connection until it would block or ends. */
static void drive(struct conn *c)
{
	for (;;) {
		int rc;
		if (c->st == ST_HANDSHAKE) {
			rc = sotls_handshake(c->tls);
			if (rc == 0) {
				c->st = ST_ECHO;
				continue;
			}
		} else if (c->st == ST_ECHO && c->out_off < c->out_len) {
			ssize_t n = sotls_send(c->tls, c->buf + c->out_off, c->out_len - c->out_off);
			if (n > 0) {
				c->out_off += (size_t)n;
				continue;
			}
			rc = (int)n;
		} else if (c->st == ST_ECHO) {
			ssize_t n = sotls_recv(c->tls, c->buf, sizeof(c->buf));
			if (n > 0) {
				g_bytes += (unsigned long long)n;
				c->out_len = (size_t)n;
				c->out_off = 0;
				continue;
			}
			if (n == 0) { /* the peer's close_notify: ours, then done */
				c->st = ST_CLOSING;
				continue;
			}
			rc = (int)n;
		} else { /* ST_CLOSING */
			rc = sotls_shutdown(c->tls);
			if (rc == 0) {
				conn_close(c, false, 0);
				return;
			}
		}
		if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE) {
			wait_for(c, rc);
			return;
		}
		conn_close(c, true, rc);
		return;
	}
}

static void accept_all(int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or out of descriptors: try again later */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct conn *c = calloc(1, sizeof(*c));
		if (c == NULL || sotls_conn_new(g_cfg, fd, &c->tls) != 0) {
			free(c);
			close(fd);
			g_failed++;
			continue;
		}
		c->fd = fd;
		c->st = ST_HANDSHAKE;
		c->next = g_conns;
		if (g_conns != NULL)
			g_conns->prev = c;
		g_conns = c;
		c->events = EPOLLIN;
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
		epoll_ctl(g_ep, EPOLL_CTL_ADD, fd, &e);
		g_accepted++;
		if (++g_held > g_peak_held)
			g_peak_held = g_held;
		drive(c);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sotls-event-echo-server [--port N] [--port-file FILE] [--cipher LIST]\n"
		   "                               [--allow-errors] [--verbose]\n"
		   "  Echoes over TLS until SIGINT/SIGTERM, then prints statistics.\n");
}

int main(int argc, char **argv)
{
	int port = 4433;
	const char *port_file = NULL, *cipher = NULL;
	bool allow_errors = false;
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},	   {"port-file", required_argument, NULL, 'f'},
		{"cipher", required_argument, NULL, 'c'},  {"allow-errors", no_argument, NULL, 'e'},
		{"verbose", no_argument, NULL, 'v'},	   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'f': port_file = optarg; break;
		case 'c': cipher = optarg; break;
		case 'e': allow_errors = true; break;
		case 'v': g_verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}

	/* One descriptor per connection: take all the process may have. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static char cert[4096], key[4096];
	if (ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)) != 0)
		return 1;
	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = g_cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY
			       : sotls_config_set_cert_mem(g_cfg, cert, strlen(cert) + 1, key,
							   strlen(key) + 1);
	if (rc == 0 && cipher != NULL)
		rc = sotls_config_set_suites(g_cfg, cipher);
	if (rc != 0) {
		fprintf(stderr, "configuration: %s\n", sotls_strerror(rc));
		return 1;
	}

	int lfd = listen_tcp4("127.0.0.1", port, SOCK_NONBLOCK, 4096, &port);
	if (lfd < 0) {
		perror("listen");
		return 1;
	}
	g_ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(g_ep, EPOLL_CTL_ADD, lfd, &le);
	if (port_file != NULL && write_port_file(port_file, port) != 0) {
		perror("port file");
		return 1;
	}
	printf("listening on 127.0.0.1:%d\n", port);
	fflush(stdout);

	struct epoll_event evs[256];
	while (!g_stop) {
		int n = epoll_wait(g_ep, evs, 256, 500);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				accept_all(lfd);
			else
				drive(evs[i].data.ptr);
		}
	}

	/* Whatever is still open is dropped, and counted as failed. */
	unsigned long long dropped = g_held;
	long rss_kb = proc_status_kb("/proc/self/status", "VmRSS");
	while (g_conns != NULL) {
		/* conn_close counts it as failed; it is reported as dropped. */
		if (g_conns->st == ST_HANDSHAKE)
			g_hs_failed--;
		else
			g_failed--;
		conn_close(g_conns, true, SOTLS_ERR_CLOSED);
	}
	printf("served %llu connections (peak %llu at once): %llu closed cleanly, %llu failed "
	       "after the handshake, %llu failed in it, %llu still open at exit; %llu bytes echoed; "
	       "RSS %ld KiB, peak RSS %ld KiB\n",
	       g_accepted, g_peak_held, g_done_clean, g_failed, g_hs_failed, dropped, g_bytes,
	       rss_kb, proc_status_kb("/proc/self/status", "VmHWM"));
	close(g_ep);
	close(lfd);
	sotls_config_free(g_cfg);
	return (g_failed == 0 && dropped == 0) || allow_errors ? 0 : 1;
}

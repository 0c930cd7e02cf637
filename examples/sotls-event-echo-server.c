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
 *
 * Its resources are bounded (server_limits.h, each a flag): at most
 * --max-conns connections (the listening socket leaves epoll at the cap, so
 * accept waits), and the descriptor limit is raised only as far as that cap
 * needs; a handshake must end within --handshake-timeout, and a connection
 * that moves no byte for --idle-timeout (reading) or --send-timeout (its
 * peer not reading) is dropped; and one connection echoes at most
 * --event-budget bytes before the others get their turn, so a flood from
 * one peer cannot starve the rest.
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
#include <sys/socket.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "proc_status.h"
#include "server_limits.h"
#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "server_resume.h"
#include "server_setup.h"
#include "server_stats.h"
#include "sotls.h"

#define BUF_SIZE 16384
#define EVENT_LIMITS (LIMIT_MAX_CONNS | LIMIT_HANDSHAKE | LIMIT_IDLE | LIMIT_SEND | LIMIT_BUDGET)
/* Descriptors besides the connections: stdio, epoll, the listening socket,
 * and what sotls and libc may open on the way (the port file). */
#define FD_RESERVE 32
/* How often deadlines are checked: their precision. */
#define SWEEP_MS 100

enum state { ST_HANDSHAKE, ST_ECHO, ST_CLOSING };

struct conn {
	int fd;
	enum state st;
	struct sotls_conn *tls;
	uint32_t events; /* what epoll waits for now */
	size_t out_len, out_off; /* echo pending in buf */
	int64_t deadline; /* limits_now_ms time it is dropped at, unless it moves a byte */
	struct conn *prev, *next; /* all open connections */
	struct conn *rprev, *rnext; /* the ready queue: out of budget, more to do */
	bool ready;
	uint8_t buf[BUF_SIZE];
};

static struct conn *g_conns;
static struct conn *g_ready_head, *g_ready_tail;
static size_t g_ready_len;
static struct server_limits g_limits = SERVER_LIMITS_DEFAULT;
static int g_listen_fd;
static bool g_accept_paused;

static volatile sig_atomic_t g_stop;
static struct sotls_config *g_cfg;
static int g_ep;
static bool g_verbose;
static unsigned long long g_accepted, g_done_clean, g_failed, g_hs_failed, g_bytes, g_held,
	g_peak_held, g_hs_expired, g_idle_expired, g_yields, g_pauses;
/* Handshakes by how they went, indexed by enum sotls_resumption. */
static unsigned long long g_resumed[SOTLS_RESUMED_TICKET + 1];
static struct server_resume g_resume = SERVER_RESUME_DEFAULT;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void ready_remove(struct conn *c)
{
	if (!c->ready)
		return;
	if (c->rprev != NULL)
		c->rprev->rnext = c->rnext;
	else
		g_ready_head = c->rnext;
	if (c->rnext != NULL)
		c->rnext->rprev = c->rprev;
	else
		g_ready_tail = c->rprev;
	c->rprev = c->rnext = NULL;
	c->ready = false;
	g_ready_len--;
}

/* Out of budget with more to do: its turn comes again after the others'
 * (sotls may hold its bytes already, so epoll would not say). */
static void ready_append(struct conn *c)
{
	c->rprev = g_ready_tail;
	c->rnext = NULL;
	if (g_ready_tail != NULL)
		g_ready_tail->rnext = c;
	else
		g_ready_head = c;
	g_ready_tail = c;
	c->ready = true;
	g_ready_len++;
	g_yields++;
}

/* The listening socket in epoll or out of it: at the cap accept waits, and
 * new clients wait in the backlog. */
static void set_accepting(bool on)
{
	if (on == !g_accept_paused)
		return;
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(g_ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, g_listen_fd, &le);
	g_accept_paused = !on;
	if (!on)
		g_pauses++;
}

/* How a connection ended, for the statistics. */
enum end {
	END_CLEAN,   /* close_notify both ways */
	END_FAILED,  /* an error */
	END_EXPIRED, /* past its deadline */
	END_AT_EXIT, /* still open at exit: reported as such */
};

static void conn_close(struct conn *c, enum end how, int rc)
{
	bool hs = c->st == ST_HANDSHAKE;
	switch (how) {
	case END_CLEAN: g_done_clean++; break;
	case END_FAILED:
		/* In the handshake: a peer that never became a TLS client. */
		(*(hs ? &g_hs_failed : &g_failed))++;
		if (g_verbose)
			fprintf(stderr, "connection %d: %s: %s\n", c->fd, sotls_strerror(rc),
				sotls_conn_error_detail(c->tls));
		break;
	case END_EXPIRED:
		(*(hs ? &g_hs_expired : &g_idle_expired))++;
		if (g_verbose)
			fprintf(stderr, "connection %d: %s: dropped\n", c->fd,
				hs ? "no handshake within --handshake-timeout"
				   : "no byte moved within --idle-timeout / --send-timeout");
		break;
	case END_AT_EXIT: break;
	}
	epoll_ctl(g_ep, EPOLL_CTL_DEL, c->fd, NULL);
	ready_remove(c);
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
	set_accepting(true);
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

/* Runs the connection until it would block, ends, or has echoed its
 * budget for this turn. */
static void drive(struct conn *c)
{
	size_t turn = 0;
	bool moved = false;

	ready_remove(c);
	for (;;) {
		int rc;
		if (c->st == ST_HANDSHAKE) {
			rc = sotls_handshake(c->tls);
			if (rc == 0) {
				struct sotls_info info = SOTLS_INFO_INIT;
				if (sotls_get_info(c->tls, &info) == 0 &&
				    (size_t)info.resumed < sizeof(g_resumed) / sizeof(g_resumed[0]))
					g_resumed[info.resumed]++;
				c->st = ST_ECHO;
				moved = true;
				continue;
			}
		} else if (c->st == ST_ECHO && c->out_off < c->out_len) {
			ssize_t n = sotls_send(c->tls, c->buf + c->out_off, c->out_len - c->out_off);
			if (n > 0) {
				c->out_off += (size_t)n;
				moved = true;
				continue;
			}
			rc = (int)n;
		} else if (c->st == ST_ECHO && turn >= g_limits.budget) {
			ready_append(c);
			break;
		} else if (c->st == ST_ECHO) {
			ssize_t n = sotls_recv(c->tls, c->buf, sizeof(c->buf));
			if (n > 0) {
				g_bytes += (unsigned long long)n;
				turn += (size_t)n;
				c->out_len = (size_t)n;
				c->out_off = 0;
				moved = true;
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
				conn_close(c, END_CLEAN, 0);
				return;
			}
		}
		if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE) {
			wait_for(c, rc);
			break;
		}
		conn_close(c, END_FAILED, rc);
		return;
	}
	/* The handshake's deadline is for all of it; after it, a connection
	 * lives as long as bytes move. */
	if (moved && c->st != ST_HANDSHAKE)
		c->deadline = limits_now_ms() +
			      (c->events == EPOLLOUT ? g_limits.send_ms : g_limits.idle_ms);
}

/* Drops every connection past its deadline. */
static void sweep(void)
{
	int64_t now = limits_now_ms();
	struct conn *next;
	for (struct conn *c = g_conns; c != NULL; c = next) {
		next = c->next;
		if (!c->ready && now >= c->deadline)
			conn_close(c, END_EXPIRED, 0);
	}
}

static void accept_all(int lfd)
{
	while (g_held < (unsigned long long)g_limits.max_conns) {
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
		c->deadline = limits_now_ms() + g_limits.handshake_ms;
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
	set_accepting(false); /* at the cap */
}

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-event-echo-server - a single-threaded epoll TLS 1.2 echo server "
		     "(sotls's non-blocking API)");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-event-echo-server",
		      "[--port N] [--port-file FILE] [--cipher LIST] [--allow-errors] "
		      "[--verbose] [limits] [session resumption]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Echoes over TLS on 127.0.0.1 until SIGINT or SIGTERM, every connection on "
		     "one thread (epoll, non-blocking sockets), with an ephemeral self-signed "
		     "ECDSA P-256 certificate for CN=localhost; then prints statistics: "
		     "connections, how they ended, handshakes resumed by session ID or ticket, what "
		     "the limits did. --idle-timeout and --send-timeout count from the last byte "
		     "moved. Used by make load with sotls-loadgen.\n\n" SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--port N", "TCP port (default 4433; 0 picks one)");
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--cipher LIST", "allowed suites (default: all sotls supports, ARIA first)");
	help_option(f, "--allow-errors",
		    "exit 0 even if connections failed after their handshake");
	help_option(f, "--verbose", "a line on stderr for each connection that fails or expires");
	help_option(f, "--help", "this text");
	server_limits_usage(f, EVENT_LIMITS);
	server_resume_usage(f);
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: stopped by a signal with no connection failed after its handshake and "
		     "none open after it (or --allow-errors); 1: otherwise, or it could not start; "
		     "2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-event-echo-server --port 4433 --max-conns 2000 &\n"
		      "sotls-loadgen --port 4433 --conns 1000 --seconds 60\n"
		      "kill -INT %1   # statistics on stdout");
}

int main(int argc, char **argv)
{
	long long port = 4433;
	const char *port_file = NULL, *cipher = NULL;
	bool allow_errors = false;
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},	   {"port-file", required_argument, NULL, 'f'},
		{"cipher", required_argument, NULL, 'c'},  {"allow-errors", no_argument, NULL, 'e'},
		{"verbose", no_argument, NULL, 'v'},	   {"help", no_argument, NULL, 'h'},
		SERVER_LIMITS_OPTIONS,			   SERVER_RESUME_OPTIONS,
		{NULL, 0, NULL, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_limits, EVENT_LIMITS, opt, optarg);
		if (lim == 0)
			lim = server_resume_option(&g_resume, opt, optarg);
		if (lim != 0) {
			if (lim < 0)
				return 2;
			continue;
		}
		switch (opt) {
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, &port))
				return 2;
			break;
		case 'f': port_file = optarg; break;
		case 'c': cipher = optarg; break;
		case 'e': allow_errors = true; break;
		case 'v': g_verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (server_resume_setup(&g_resume) != 0)
		return 2;

	if (limits_fit_fd(&g_limits, FD_RESERVE) != 0) {
		fprintf(stderr, "RLIMIT_NOFILE: not enough descriptors for a connection\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static char cert[4096], key[4096];
	if (ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)) != 0)
		return 1;
	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (g_cfg == NULL || keylog_from_env(g_cfg) != 0 || server_log_setup(g_cfg) != 0)
		return 1;
	int rc = sotls_config_set_cert_mem(g_cfg, cert, strlen(cert) + 1, key, strlen(key) + 1);
	if (rc == 0 && cipher != NULL)
		rc = sotls_config_set_suites(g_cfg, cipher);
	if (rc != 0) {
		print_config_error("configuration", g_cfg, rc);
		return 1;
	}
	if (server_resume_apply(g_cfg, &g_resume) != 0)
		return 1;

	int bound;
	int lfd = listen_tcp4("127.0.0.1", (int)port, SOCK_NONBLOCK, 4096, &bound);
	if (lfd < 0) {
		perror("listen");
		return 1;
	}
	g_ep = epoll_create1(EPOLL_CLOEXEC);
	g_listen_fd = lfd;
	g_accept_paused = true;
	set_accepting(true);
	if (port_file != NULL && write_port_file(port_file, bound) != 0) {
		perror("port file");
		return 1;
	}
	printf("listening on 127.0.0.1:%d\n", bound);
	fflush(stdout);

	struct epoll_event evs[256];
	int64_t last_sweep = limits_now_ms();
	while (!g_stop) {
		/* Connections out of budget go on at once, after new events. */
		int n = epoll_wait(g_ep, evs, 256, g_ready_head != NULL ? 0 : SWEEP_MS);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				accept_all(lfd);
			else
				drive(evs[i].data.ptr);
		}
		/* One more turn for each that was waiting; who runs out of
		 * budget again goes to the back. */
		for (size_t k = g_ready_len; k > 0 && g_ready_head != NULL; k--)
			drive(g_ready_head);
		if (limits_now_ms() - last_sweep >= SWEEP_MS) {
			sweep();
			last_sweep = limits_now_ms();
		}
	}

	/* Whatever is still open is dropped, and counted apart; a peer still
	 * in its handshake (one that stalls, or whose close was not read yet)
	 * never became a TLS client, so it fails nothing. */
	struct server_stats st = {
		.accepted = g_accepted, .peak_held = g_peak_held, .done_clean = g_done_clean,
		.failed = g_failed, .hs_failed = g_hs_failed, .dropped = g_held, .bytes = g_bytes,
		.hs_expired = g_hs_expired, .idle_expired = g_idle_expired, .pauses = g_pauses,
		.yields = g_yields, .rss_kb = proc_status_kb("/proc/self/status", "VmRSS"),
	};
	memcpy(st.resumed, g_resumed, sizeof(st.resumed));
	while (g_conns != NULL) {
		st.dropped_in_hs += g_conns->st == ST_HANDSHAKE;
		conn_close(g_conns, END_AT_EXIT, 0);
	}
	server_stats_print(&st, &g_limits);
	close(g_ep);
	close(lfd);
	sotls_config_free(g_cfg);
	return server_stats_status(&st, allow_errors);
}

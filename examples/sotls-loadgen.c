/*
 * sotls-loadgen: holds N concurrent TLS connections to an echo server for T
 * seconds, each one sending messages of random sizes and checking every echo
 * byte. Single-threaded, epoll, sotls's non-blocking API.
 *
 * Reports connections established and held at once, messages and bytes per
 * second, failures, its own peak RSS and (with --server-pid) the server's
 * RSS while every connection is held. Exit status 0 only if every connection
 * completed its handshake, every echo was intact, and every connection
 * closed cleanly with close_notify both ways.
 *
 * --slowloris N runs another scenario instead (loadgen_slowloris.h): N peers
 * trickle a ClientHello a byte at a time, --honest clients must be served
 * meanwhile, and every peer must be dropped at the server's deadline.
 *
 * For benchmarks (bench/bench_servers.py): --msg fixes the message size,
 * --http makes the connections HTTPS keep-alive clients of a file server,
 * --idle holds them idle after the handshake, and --marks prints the measured
 * interval's bounds with the counts reached, flushed at once, so that a
 * driver can read the server's CPU time and RSS at exactly those moments and
 * leave the handshakes and the closing out.
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
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "help_text.h"
#include "keylog_env.h"
#include "loadgen_slowloris.h"
#include "parse_number.h"
#include "proc_status.h"
#include "sotls.h"

enum state {
	ST_CONNECT,
	ST_HANDSHAKE,
	ST_SEND,
	ST_RECV,
	ST_IDLE,
	ST_SHUTDOWN,
	ST_WAIT_CLOSE,
	ST_DONE
};

struct lconn {
	int fd;
	enum state st;
	struct sotls_conn *tls;
	uint32_t events;
	uint64_t rng;
	uint64_t stream_off; /* offset of the current message in this connection's stream */
	size_t msg_len, sent, got;
	bool failed;
	bool served; /* has completed a message */
	/* --http: the response head until its blank line, then the body still due */
	bool in_head;
	size_t head_len;
	unsigned long long body_left;
	char head[1024];
};

static int g_ep;
/* Bounds of the count and seconds flags: far past any run on one machine. */
#define MAX_COUNT 1000000
#define DAY 86400.0
#define RAMP 64
#define SERVE_WAIT 5.0

static size_t g_max_msg = 16384;
static size_t g_fixed_msg; /* --msg; 0: random sizes up to g_max_msg */
static bool g_idle;
/* --marks: no connection sends before every one is up, or the first ones'
 * traffic would starve the handshakes of the rest on this one thread. */
static bool g_go = true;
static const char *g_http_path;
static char g_request[600];
static size_t g_request_len;
static bool g_stopping;
static unsigned long long g_msgs, g_bytes, g_failed, g_open, g_peak_open, g_clean, g_served;
static uint8_t g_out[65536], g_in[65536];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t stream_byte(const struct lconn *c, uint64_t i)
{
	uint64_t x = (i + (uint64_t)c->fd * 0x100000001ull) * 0x9E3779B97F4A7C15ull;
	return (uint8_t)(x >> 56);
}

static uint64_t next_rng(struct lconn *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static void set_events(struct lconn *c, uint32_t ev)
{
	if (ev != c->events) {
		struct epoll_event e = {.events = ev, .data.ptr = c};
		epoll_ctl(g_ep, EPOLL_CTL_MOD, c->fd, &e);
		c->events = ev;
	}
}

static void finish(struct lconn *c, bool failed, int rc)
{
	if (failed) {
		g_failed++;
		fprintf(stderr, "connection %d: %s %s\n", c->fd, sotls_strerror(rc),
			sotls_conn_error_detail(c->tls));
	} else {
		g_clean++;
	}
	if (c->st > ST_CONNECT)
		g_open--;
	epoll_ctl(g_ep, EPOLL_CTL_DEL, c->fd, NULL);
	sotls_conn_free(c->tls);
	c->tls = NULL;
	close(c->fd);
	c->st = ST_DONE;
}

static void new_message(struct lconn *c)
{
	if (g_idle || !g_go) {
		c->st = ST_IDLE;
		return;
	}
	if (g_http_path != NULL) {
		c->msg_len = g_request_len;
		c->in_head = true;
		c->head_len = 0;
		c->body_left = 0;
	} else {
		c->msg_len = g_fixed_msg ? g_fixed_msg : 1 + (size_t)(next_rng(c) % g_max_msg);
	}
	c->sent = c->got = 0;
	c->st = ST_SEND;
}

/* Only what the file servers send is taken: a 200 with a Content-Length. */
static bool parse_head(struct lconn *c)
{
	if (strncmp(c->head, "HTTP/1.1 200 ", 13) != 0) {
		fprintf(stderr, "connection %d: %.*s\n", c->fd, (int)strcspn(c->head, "\r"), c->head);
		return false;
	}
	for (const char *l = strstr(c->head, "\r\n"); l != NULL; l = strstr(l + 2, "\r\n"))
		if (strncasecmp(l + 2, "content-length:", 15) == 0) {
			char *end;
			errno = 0;
			c->body_left = strtoull(l + 17, &end, 10);
			return errno == 0 && end != l + 17;
		}
	fprintf(stderr, "connection %d: a response without Content-Length\n", c->fd);
	return false;
}

/* --http: takes n received bytes of a response. Returns 1 when it is
 * complete, 0 when more is due, -1 on a bad response or bytes past its end
 * (requests are not pipelined, so none may come). Body bytes are counted
 * as they arrive, so that an interval's count includes responses it cut. */
static int http_take(struct lconn *c, const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (c->in_head && i < n) {
		if (c->head_len + 1 >= sizeof(c->head)) {
			fprintf(stderr, "connection %d: response head too long\n", c->fd);
			return -1;
		}
		c->head[c->head_len++] = (char)p[i++];
		if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
			c->head[c->head_len] = '\0';
			c->in_head = false;
			if (!parse_head(c))
				return -1;
		}
	}
	if (c->in_head)
		return 0;
	if (n - i > c->body_left) {
		fprintf(stderr, "connection %d: bytes past the response\n", c->fd);
		return -1;
	}
	c->body_left -= n - i;
	g_bytes += n - i;
	return c->body_left == 0;
}

static void drive(struct lconn *c)
{
	for (;;) {
		int rc = 0;
		switch (c->st) {
		case ST_CONNECT: {
			int err = 0;
			socklen_t l = sizeof(err);
			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
			if (err != 0) {
				errno = err;
				finish(c, true, SOTLS_ERR_SYSCALL);
				return;
			}
			c->st = ST_HANDSHAKE;
			if (++g_open > g_peak_open)
				g_peak_open = g_open;
			continue;
		}
		case ST_HANDSHAKE:
			rc = sotls_handshake(c->tls);
			if (rc == 0) {
				new_message(c);
				continue;
			}
			break;
		case ST_SEND: {
			const uint8_t *out = (const uint8_t *)g_request;
			if (g_http_path == NULL) {
				for (size_t i = c->sent; i < c->msg_len; i++)
					g_out[i] = stream_byte(c, c->stream_off + i);
				out = g_out;
			}
			ssize_t n = sotls_send(c->tls, out + c->sent, c->msg_len - c->sent);
			if (n > 0) {
				c->sent += (size_t)n;
				if (c->sent == c->msg_len)
					c->st = ST_RECV;
				continue;
			}
			rc = (int)n;
			break;
		}
		case ST_RECV: {
			ssize_t n = sotls_recv(c->tls, g_in, sizeof(g_in));
			if (n > 0 && g_http_path != NULL) {
				int done = http_take(c, g_in, (size_t)n);
				if (done < 0) {
					finish(c, true, SOTLS_ERR_INTERNAL);
					return;
				}
				if (done) {
					g_msgs++;
					g_served += !c->served;
					c->served = true;
					if (g_stopping)
						c->st = ST_SHUTDOWN;
					else
						new_message(c);
				}
				continue;
			}
			if (n > 0) {
				if (c->got + (size_t)n > c->msg_len) {
					finish(c, true, SOTLS_ERR_INTERNAL);
					return;
				}
				for (ssize_t i = 0; i < n; i++)
					if (g_in[i] != stream_byte(c, c->stream_off + c->got + (size_t)i)) {
						fprintf(stderr, "connection %d: corrupt echo\n", c->fd);
						finish(c, true, SOTLS_ERR_INTERNAL);
						return;
					}
				c->got += (size_t)n;
				if (c->got == c->msg_len) {
					g_msgs++;
					g_served += !c->served;
					c->served = true;
					g_bytes += c->msg_len;
					c->stream_off += c->msg_len;
					if (g_stopping)
						c->st = ST_SHUTDOWN;
					else
						new_message(c);
				}
				continue;
			}
			rc = n == 0 ? SOTLS_ERR_CLOSED : (int)n;
			break;
		}
		case ST_IDLE: {
			if (g_stopping) {
				c->st = ST_SHUTDOWN;
				continue;
			}
			if (g_go && !g_idle) {
				new_message(c);
				continue;
			}
			/* The server has nothing to say to a client that asked nothing. */
			ssize_t n = sotls_recv(c->tls, g_in, sizeof(g_in));
			rc = n > 0 ? SOTLS_ERR_INTERNAL : n == 0 ? SOTLS_ERR_CLOSED : (int)n;
			break;
		}
		case ST_SHUTDOWN:
			rc = sotls_shutdown(c->tls);
			if (rc == 0) {
				c->st = ST_WAIT_CLOSE;
				continue;
			}
			break;
		case ST_WAIT_CLOSE: {
			ssize_t n = sotls_recv(c->tls, g_in, sizeof(g_in));
			/* nginx answers our close_notify by closing the socket, which
			 * RFC 5246 7.2.1 allows; the echo servers must answer it. */
			if (n == 0 || (n == SOTLS_ERR_TRUNCATED && (g_http_path != NULL || g_idle))) {
				finish(c, false, 0);
				return;
			}
			rc = n > 0 ? SOTLS_ERR_INTERNAL : (int)n;
			break;
		}
		case ST_DONE:
			return;
		}
		if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE) {
			set_events(c, rc == SOTLS_WANT_WRITE ? EPOLLOUT : EPOLLIN);
			return;
		}
		finish(c, true, rc);
		return;
	}
}

/* Connects c, the i-th connection (its message sizes depend on i).
 * Returns 1, or 0 if it could not start (counted as failed). */
static int start_conn(struct lconn *c, long i, const struct sockaddr_in *a,
		      struct sotls_config *cfg)
{
	c->st = ST_DONE;
	c->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		perror("socket");
		g_failed++;
		return 0;
	}
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)a, sizeof(*a)) != 0 && errno != EINPROGRESS) {
		perror("connect");
		close(c->fd);
		g_failed++;
		return 0;
	}
	if (sotls_conn_new(cfg, c->fd, &c->tls) != 0) {
		close(c->fd);
		g_failed++;
		return 0;
	}
	c->st = ST_CONNECT;
	c->events = EPOLLOUT;
	struct epoll_event e = {.events = EPOLLOUT, .data.ptr = c};
	epoll_ctl(g_ep, EPOLL_CTL_ADD, c->fd, &e);
	return 1;
}

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-loadgen - many concurrent TLS 1.2 clients of an echo server, or a "
		     "slowloris scenario against its deadlines");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-loadgen",
		      "[--host A] [--port N] [--conns N] [--seconds T] "
		      "[--max-msg BYTES | --msg BYTES | --http PATH | --idle] [--marks] "
		      "[--warmup S] [--server-pid PID] [--cipher LIST] [--stalled M]");
	help_synopsis(f, "sotls-loadgen",
		      "--slowloris N [--interval S] [--honest N] [--honest-max S] "
		      "--expect-drop S [--drop-slack S] [--host A] [--port N]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Holds N connections to an echo server (sotls-event-echo-server) for T "
		     "seconds, each sending messages of random sizes and checking every byte of "
		     "the echo, on one thread (epoll, sotls's non-blocking API); then reports the "
		     "connections held at once, messages and bytes per second, failures, its own "
		     "peak RSS and, with --server-pid, the server's RSS while every connection was "
		     "held. The last line, \"result messages=N bytes=N measured_messages=N "
		     "measured_bytes=N measured_seconds=S failed=N clean=N\", says the same for "
		     "programs; measured counts are those of the interval from every connection up "
		     "(and --warmup past) to the end of --seconds.\n\n"
		     "With --http PATH the server is an HTTPS file server: each connection sends "
		     "GET PATH with keep-alive, one request at a time, and a message is a 200 "
		     "response read to the end of its Content-Length (bytes count body bytes as "
		     "they arrive); at the end the connections are closed at once, the responses "
		     "in progress cut. With --idle each connection completes its handshake and then "
		     "sends nothing until the end, for measuring a server's memory per connection. "
		     "With --marks, at most 64 handshakes are under way at once, no connection "
		     "sends before all are up, the interval starts --warmup later once every "
		     "connection has had a message (at most 5 s more), --seconds counts from "
		     "there, and "
		     "the interval's bounds are lines \"mark start\" and \"mark end\" on stdout, "
		     "each followed by messages=N bytes=N seconds=S (the counts so far, seconds "
		     "since start; the start also served=N, the connections that had a message) "
		     "and flushed at once: a benchmark reads the server's CPU time "
		     "or RSS at each.\n\n"
		     "With --slowloris N, N peers send a ClientHello a byte every S seconds; "
		     "meanwhile the honest clients, one after the other, must each be served within "
		     "--honest-max, and every peer must be dropped by the server between "
		     "--expect-drop and --drop-slack seconds later.");
	help_section(f, "OPTIONS");
	help_option(f, "--host A", "the server's IPv4 address (default 127.0.0.1)");
	help_option(f, "--port N", "the server's port (default 4433)");
	help_option(f, "--conns N", "connections held at once (default 100)");
	help_option(f, "--seconds T", "how long they are held (default 10)");
	help_option(f, "--max-msg BYTES", "messages of 1 to BYTES random bytes (default 16384)");
	help_option(f, "--msg BYTES", "every message exactly BYTES bytes (1 to 65536)");
	help_option(f, "--http PATH",
		    "HTTPS keep-alive clients: GET PATH (starting with /) over and over");
	help_option(f, "--idle", "connections send nothing after their handshake");
	help_option(f, "--marks", "print the measured interval's bounds as it runs (above)");
	help_option(f, "--warmup S",
		    "seconds from every connection up to the measured interval (default 0)");
	help_option(f, "--server-pid PID", "report this process's RSS (the server's)");
	help_option(f, "--cipher LIST", "allowed suites (default: all sotls supports, ARIA first)");
	help_option(f, "--stalled M",
		    "M more connections send 3 bytes of a record header and then nothing for the "
		    "whole run: they must not slow anyone else down (default 0)");
	help_option(f, "--slowloris N", "run the slowloris scenario with N peers");
	help_option(f, "--interval S", "slowloris: seconds between a peer's bytes (default 20)");
	help_option(f, "--honest N", "slowloris: honest clients, one after the other (default 10)");
	help_option(f, "--honest-max S",
		    "slowloris: seconds an honest client may take to be served (default 1)");
	help_option(f, "--expect-drop S",
		    "slowloris: the server's handshake deadline, after which every peer must be "
		    "dropped (required)");
	help_option(f, "--drop-slack S",
		    "slowloris: how much later than --expect-drop a drop may come (default 2)");
	help_option(f, "--help", "this text");
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: every connection completed its handshake, every echo (or response) was "
		     "intact and every connection closed cleanly with close_notify both ways (with "
		     "--http or --idle the server may close without its own) (slowloris: every "
		     "honest client served in time, every peer dropped in its window); 1: "
		     "otherwise; 2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-event-echo-server --port 4433 --max-conns 2000 &\n"
		      "sotls-loadgen --conns 1000 --seconds 60 --server-pid $!\n"
		      "sotls-loadgen --port 8443 --conns 100 --http /index.html --marks\n"
		      "sotls-event-echo-server --port 4433 --handshake-timeout 10 &\n"
		      "sotls-loadgen --slowloris 1000 --expect-drop 10");
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *cipher = NULL;
	long long port_n = 4433, pid_n = 0, max_msg = 16384, stalled_n = 0, conns_n = 100, peers = 0,
		  honest = 10;
	long long msg_n = 0;
	double seconds = 10, warmup = 0;
	bool marks = false;
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'H'},	   {"port", required_argument, NULL, 'p'},
		{"conns", required_argument, NULL, 'n'},   {"seconds", required_argument, NULL, 't'},
		{"max-msg", required_argument, NULL, 'm'}, {"server-pid", required_argument, NULL, 's'},
		{"cipher", required_argument, NULL, 'c'},  {"stalled", required_argument, NULL, 'S'},
		{"slowloris", required_argument, NULL, 'L'}, {"interval", required_argument, NULL, 'i'},
		{"honest", required_argument, NULL, 'o'},  {"honest-max", required_argument, NULL, 'x'},
		{"expect-drop", required_argument, NULL, 'd'},
		{"drop-slack", required_argument, NULL, 'k'},
		{"msg", required_argument, NULL, 'M'},	   {"http", required_argument, NULL, 'P'},
		{"idle", no_argument, NULL, 'I'},	   {"marks", no_argument, NULL, 'K'},
		{"warmup", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct slowloris_plan sl = {
		.interval = 20, .honest = 10, .honest_max = 1, .drop_slack = 2};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (opt) {
		case 'H': host = optarg; break;
		case 'p': ok = parse_number_flag("port", optarg, 1, 65535, &port_n); break;
		case 'n': ok = parse_number_flag("conns", optarg, 1, MAX_COUNT, &conns_n); break;
		case 't': ok = parse_decimal_flag("seconds", optarg, 0.001, DAY, &seconds); break;
		case 'm':
			ok = parse_number_flag("max-msg", optarg, 1, (long long)sizeof(g_out), &max_msg);
			break;
		case 's': ok = parse_number_flag("server-pid", optarg, 1, INT32_MAX, &pid_n); break;
		case 'c': cipher = optarg; break;
		case 'S': ok = parse_number_flag("stalled", optarg, 0, MAX_COUNT, &stalled_n); break;
		case 'L': ok = parse_number_flag("slowloris", optarg, 0, MAX_COUNT, &peers); break;
		case 'i': ok = parse_decimal_flag("interval", optarg, 0.001, DAY, &sl.interval); break;
		case 'o': ok = parse_number_flag("honest", optarg, 0, MAX_COUNT, &honest); break;
		case 'x':
			ok = parse_decimal_flag("honest-max", optarg, 0.001, DAY, &sl.honest_max);
			break;
		case 'd':
			ok = parse_decimal_flag("expect-drop", optarg, 0.001, DAY, &sl.expect_drop);
			break;
		case 'k': ok = parse_decimal_flag("drop-slack", optarg, 0, DAY, &sl.drop_slack); break;
		case 'M':
			ok = parse_number_flag("msg", optarg, 1, (long long)sizeof(g_out), &msg_n);
			break;
		case 'P': g_http_path = optarg; break;
		case 'I': g_idle = true; break;
		case 'K': marks = true; break;
		case 'w': ok = parse_decimal_flag("warmup", optarg, 0, DAY, &warmup); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (!ok)
			return 2;
	}
	const int port = (int)port_n, server_pid = (int)pid_n;
	const long nconns = (long)conns_n, nstalled = (long)stalled_n;
	sl.peers = (long)peers;
	sl.honest = (long)honest;
	g_max_msg = (size_t)max_msg;
	g_fixed_msg = (size_t)msg_n;
	g_go = !marks;
	if (g_idle && g_http_path != NULL) {
		fprintf(stderr, "--idle and --http: one or the other\n");
		return 2;
	}
	if (g_http_path != NULL) {
		int len = snprintf(g_request, sizeof(g_request),
				   "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", g_http_path);
		if (g_http_path[0] != '/' || len < 0 || (size_t)len >= sizeof(g_request)) {
			fprintf(stderr, "--http: a path starting with /, at most 500 bytes\n");
			return 2;
		}
		g_request_len = (size_t)len;
	}
	if (sl.peers > 0 && sl.expect_drop == 0) {
		fprintf(stderr, "--slowloris: with --expect-drop\n");
		return 2;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);

	/* A load test: the server's certificate is not what is being tested. */
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	if (cfg == NULL || keylog_from_env(cfg) != 0)
		return 1;
	int rc = sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE);
	if (rc == 0 && cipher != NULL)
		rc = sotls_config_set_suites(cfg, cipher);
	if (rc != 0) {
		fprintf(stderr, "configuration: %s\n", sotls_strerror(rc));
		return 1;
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "--host: an IPv4 address\n");
		return 2;
	}

	if (sl.peers > 0) {
		rc = slowloris_run(&sl, &a, cfg);
		sotls_config_free(cfg);
		return rc;
	}

	/* The stalled peers first: the real clients must get through anyway. */
	int *stalled = calloc((size_t)nstalled + 1, sizeof(int));
	if (stalled == NULL)
		return 1;
	for (long i = 0; i < nstalled; i++) {
		stalled[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (stalled[i] < 0 || connect(stalled[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
		    send(stalled[i], "\x16\x03\x01", 3, MSG_NOSIGNAL) != 3) {
			perror("stalled peer");
			return 1;
		}
	}

	g_ep = epoll_create1(EPOLL_CLOEXEC);
	struct lconn *conns = calloc((size_t)nconns, sizeof(*conns));
	if (conns == NULL)
		return 1;
	double t0 = now_s();
	long started = 0, next_conn = 0;
	for (long i = 0; i < nconns; i++)
		conns[i].st = ST_DONE;
	/* With --marks at most RAMP handshakes are under way at once: a server
	 * with a short listen backlog (sotls-https-server's is 64) would drop a
	 * thousand SYNs at once and take half a minute of SYN retries to get
	 * them all, which is not what the benchmark measures. */
	long ramp = marks ? RAMP : nconns;
	for (; next_conn < nconns && next_conn < ramp; next_conn++)
		started += start_conn(&conns[next_conn], next_conn, &a, cfg);

	struct epoll_event evs[512];
	/* Without --marks the clock runs from the first connect, as it always did. */
	double t_end = marks ? DAY * 365 : t0 + seconds, t_all_up = 0;
	long server_rss = -1, server_hwm = -1;
	unsigned long long msgs_at_start = 0, bytes_at_start = 0, msgs_at_end = 0, bytes_at_end = 0;
	double t_msgs_start = 0, t_msgs_end = 0;
	bool started_interval = false;
	long live = started;
	while (live > 0 || (next_conn < nconns && !g_stopping)) {
		double now = now_s();
		/* --marks: a connection that failed (and is counted so) does not
		 * hold up the measurement for ever. */
		if (t_all_up == 0 && next_conn == nconns &&
		    (marks || g_open == (unsigned long long)started)) {
			bool all_hs = true;
			for (long i = 0; i < nconns && all_hs; i++)
				all_hs = conns[i].st != ST_CONNECT && conns[i].st != ST_HANDSHAKE;
			if (all_hs) {
				t_all_up = now;
				g_go = true;
				for (long i = 0; i < nconns; i++)
					if (conns[i].st == ST_IDLE)
						drive(&conns[i]);
				now = now_s();
			}
		}
		/* --marks: a steady state, in which every connection has had its first
		 * message (a server's per-connection set-up, a thousand first 1 MiB
		 * responses, is not it), or up to SERVE_WAIT seconds more. */
		bool steady = !marks || g_idle || g_served >= g_open ||
			      now >= t_all_up + warmup + SERVE_WAIT;
		if (!started_interval && t_all_up > 0 && now >= t_all_up + warmup && steady) {
			/* Every connection is up: the measured phase starts here. */
			started_interval = true;
			msgs_at_start = g_msgs;
			bytes_at_start = g_bytes;
			t_msgs_start = now;
			if (marks) {
				t_end = now + seconds;
				printf("mark start messages=%llu bytes=%llu seconds=%.6f served=%llu\n",
				       g_msgs, g_bytes, now - t0, g_served);
				fflush(stdout);
			}
		} else if (!g_stopping && now >= t_end) {
			msgs_at_end = g_msgs;
			bytes_at_end = g_bytes;
			t_msgs_end = now;
			if (marks) {
				printf("mark end messages=%llu bytes=%llu seconds=%.6f\n", g_msgs, g_bytes,
				       now - t0);
				fflush(stdout);
			}
			if (server_pid > 0) {
				char path[64];
				snprintf(path, sizeof(path), "/proc/%d/status", server_pid);
				server_rss = proc_status_kb(path, "VmRSS");
				server_hwm = proc_status_kb(path, "VmHWM");
			}
			g_stopping = true; /* each connection closes after its current echo */
			for (long i = 0; i < nconns; i++) {
				/* Idle ones would wait for an event that never comes. */
				if (conns[i].st == ST_IDLE)
					drive(&conns[i]);
				/* A slow server could take minutes to finish a thousand
				 * 1 MiB responses nobody counts any more: they are cut. */
				else if (g_http_path != NULL && conns[i].st != ST_DONE)
					finish(&conns[i], false, 0);
			}
		}
		if (now > t_end + 30) {
			fprintf(stderr, "connections did not close within 30 s\n");
			break;
		}
		/* Wake for the interval's bounds on time: an idle run has no events. */
		double next = t_end;
		if (!started_interval) /* past the warm-up, the first messages wake it */
			next = t_all_up > 0 && now < t_all_up + warmup ? t_all_up + warmup : 0;
		int wait_ms = 200;
		if (!g_stopping && next > 0 && next - now < 0.2)
			wait_ms = next <= now ? 0 : (int)((next - now) * 1e3) + 1;
		int n = epoll_wait(g_ep, evs, 512, wait_ms);
		for (int i = 0; i < n; i++) {
			struct lconn *c = evs[i].data.ptr;
			drive(c);
		}
		live = 0;
		long pending = 0;
		for (long i = 0; i < nconns; i++) {
			live += conns[i].st != ST_DONE;
			pending += conns[i].st == ST_CONNECT || conns[i].st == ST_HANDSHAKE;
		}
		for (; next_conn < nconns && pending < ramp && !g_stopping; next_conn++, pending++)
			started += start_conn(&conns[next_conn], next_conn, &a, cfg);
	}
	double t_stop = now_s();
	if (!g_stopping) { /* every connection ended before the time was up */
		msgs_at_end = g_msgs;
		bytes_at_end = g_bytes;
		t_msgs_end = t_stop;
	}
	unsigned long long measured = started_interval ? msgs_at_end - msgs_at_start : 0;
	unsigned long long measured_bytes = started_interval ? bytes_at_end - bytes_at_start : 0;
	double span = started_interval && t_msgs_end > t_msgs_start ? t_msgs_end - t_msgs_start : 0;
	for (long i = 0; i < nconns; i++)
		if (conns[i].st != ST_DONE)
			finish(&conns[i], true, SOTLS_ERR_INTERNAL);

	for (long i = 0; i < nstalled; i++)
		close(stalled[i]);
	free(stalled);
	printf("loadgen: %ld connections requested, %llu held at once (peak), all up after %.2f s; "
	       "%ld stalled peers opened first\n",
	       nconns, g_peak_open, t_all_up > 0 ? t_all_up - t0 : -1.0, nstalled);
	printf("loadgen: %llu messages (%.1f MB) echoed and verified in %.1f s (%.1f MB/s each "
	       "way); %.0f messages/s while all connections were held\n",
	       g_msgs, (double)g_bytes / 1e6, t_stop - t0, (double)g_bytes / 1e6 / (t_stop - t0),
	       span > 0 ? (double)measured / span : 0.0);
	printf("loadgen: %llu closed cleanly, %llu failed; loadgen peak RSS %ld KiB", g_clean,
	       g_failed, proc_status_kb("/proc/self/status", "VmHWM"));
	if (server_pid > 0)
		printf("; server RSS %ld KiB with all connections held (peak %ld KiB)", server_rss,
		       server_hwm);
	printf("\n");
	printf("result messages=%llu bytes=%llu measured_messages=%llu measured_bytes=%llu "
	       "measured_seconds=%.6f failed=%llu clean=%llu\n",
	       g_msgs, g_bytes, measured, measured_bytes, span, g_failed, g_clean);
	free(conns);
	close(g_ep);
	sotls_config_free(cfg);
	return g_failed == 0 && g_clean == (unsigned long long)nconns ? 0 : 1;
}

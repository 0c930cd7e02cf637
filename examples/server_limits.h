/* The resource limits of the example servers, in one place: their flags and
 * defaults, deadlines on non-blocking connections for the threaded servers
 * (a thread must never wait for a peer longer than a limit allows, however
 * the peer trickles its bytes), and the cap on clients served at once. */
#ifndef SOTLS_EXAMPLES_SERVER_LIMITS_H
#define SOTLS_EXAMPLES_SERVER_LIMITS_H

#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sotls.h"

struct server_limits {
	int max_conns;	  /* clients served at once; accept waits at the cap */
	int handshake_ms; /* from accept to the end of the handshake, in all */
	int idle_ms;	  /* waiting for the first byte of the next request/message */
	int header_ms;	  /* from a request's first byte to the end of its head, in all */
	int send_ms;	  /* a send that makes no progress for this long fails */
	size_t budget;	  /* event server: bytes one connection may echo per turn */
};

/* The defaults: generous for honest clients on a slow link, short enough
 * that a peer that stalls or trickles ties nothing up for long. */
#define SERVER_LIMITS_DEFAULT                                                                      \
	{                                                                                          \
		.max_conns = 1024, .handshake_ms = 10000, .idle_ms = 30000, .header_ms = 20000,    \
		.send_ms = 30000, .budget = 65536,                                                 \
	}

/* Which flags a server takes (server_limits_usage, server_limits_option). */
enum {
	LIMIT_MAX_CONNS = 1 << 0,
	LIMIT_HANDSHAKE = 1 << 1,
	LIMIT_IDLE = 1 << 2,
	LIMIT_HEADER = 1 << 3,
	LIMIT_SEND = 1 << 4,
	LIMIT_BUDGET = 1 << 5,
};

/* getopt_long values of the limit flags: above any character. */
enum {
	LIMIT_OPT_MAX_CONNS = 0x1000,
	LIMIT_OPT_HANDSHAKE,
	LIMIT_OPT_IDLE,
	LIMIT_OPT_HEADER,
	LIMIT_OPT_SEND,
	LIMIT_OPT_BUDGET,
};

/* The entries for a server's struct option table (all of them; a server
 * refuses the ones it does not take through server_limits_option). */
#define SERVER_LIMITS_OPTIONS                                                                      \
	{"max-conns", required_argument, NULL, LIMIT_OPT_MAX_CONNS},                              \
		{"handshake-timeout", required_argument, NULL, LIMIT_OPT_HANDSHAKE},              \
		{"idle-timeout", required_argument, NULL, LIMIT_OPT_IDLE},                        \
		{"header-timeout", required_argument, NULL, LIMIT_OPT_HEADER},                    \
		{"send-timeout", required_argument, NULL, LIMIT_OPT_SEND},                        \
		{"event-budget", required_argument, NULL, LIMIT_OPT_BUDGET}

/* Handles getopt's opt (with its arg) if it is one of the flags in which.
 * Returns 1 if it was (l updated), 0 if opt is not a limit flag of which, -1
 * (message on stderr) for a bad value. Timeouts are seconds, fractions
 * allowed (0.25), from 1 ms to a day. */
int server_limits_option(struct server_limits *l, unsigned which, int opt, const char *arg);

/* The --help lines of the flags in which, with their defaults. */
void server_limits_usage(FILE *f, unsigned which);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t limits_now_ms(void);

/* Enough descriptors for l->max_conns connections plus reserve (stdio,
 * listening sockets, rings, what libc and sotls open), and no more: the
 * soft limit is raised only that far (within the hard limit); a hard limit
 * below it lowers the cap, saying so. Returns 0, or -1 if not even one
 * connection fits. */
int limits_fit_fd(struct server_limits *l, int reserve);

/* ---- threaded servers: one blocking-looking connection per thread ---- */

/* A limit ran out (not a sotls code: the connection itself is fine). */
#define LIMIT_EXPIRED (-1000)

/* Makes fd non-blocking, so that no sotls call waits inside the library
 * and each wait is ours, bounded by a deadline; and bounds with
 * TCP_USER_TIMEOUT how long the kernel keeps data a peer does not take
 * (send_ms), so that nothing, zero-copy buffers included, waits for it
 * forever. Returns 0, or -1 with errno. */
int limits_prepare_socket(int fd, int send_ms);

/* Waits until fd is ready for what rc (SOTLS_WANT_READ / _WRITE) asks, or
 * deadline (limits_now_ms time) passes: 0, LIMIT_EXPIRED or
 * SOTLS_ERR_SYSCALL. A socket error counts as ready: the next call on fd
 * reports it. For any descriptor, not only a sotls connection's (the
 * keyless server waits on its key server with it). */
int limits_wait(int fd, int rc, int64_t deadline);

/* sotls_handshake until done, a failure, or deadline (limits_now_ms time):
 * 0, a sotls error, or LIMIT_EXPIRED. */
int limits_handshake(struct sotls_conn *c, int fd, int64_t deadline);

/* sotls_recv that waits until deadline at most: a count, 0 (close_notify),
 * a sotls error, or LIMIT_EXPIRED. */
ssize_t limits_recv(struct sotls_conn *c, int fd, void *buf, size_t len, int64_t deadline);

/* Sends all n bytes; fails with LIMIT_EXPIRED when send_ms pass without
 * the peer taking a byte. Returns 0 or a negative code. */
int limits_send_all(struct sotls_conn *c, int fd, const void *p, size_t n, int send_ms);

/* sotls_sendfile of count bytes from *off, with the same progress rule:
 * the bytes sent (short only at end of file), or a negative code. */
ssize_t limits_sendfile(struct sotls_conn *c, int fd, int file_fd, off_t *off, size_t count,
			int send_ms);

/* sotls_shutdown, waiting at most send_ms for the socket. */
int limits_shutdown(struct sotls_conn *c, int fd, int send_ms);

/* The text for a code of the functions above. */
const char *limits_strerror(int rc);

/* The clients a threaded server serves at once, at most max. */
struct conn_slots {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	int used, max;
};

void conn_slots_init(struct conn_slots *s, int max);

/* Waits for a free slot and takes it: called before accept, so that at
 * the cap new clients wait in the listen backlog rather than being
 * accepted and then dropped. */
void conn_slots_take(struct conn_slots *s);

void conn_slots_give(struct conn_slots *s);

/* Runs serve(arg) on a detached thread, which gives the
 * slot back when serve returns. Returns 0, or -1 (no thread; the slot is
 * given back, arg is the caller's to free). */
int conn_slots_spawn(struct conn_slots *s, void (*serve)(void *), void *arg);

/* Accepts the clients of the blocking listening socket ls for ever (at
 * most s->max at once), each on a detached thread as serve((void
 * *)(intptr_t)fd), which closes fd. Returns -1 (with errno, the message on
 * stderr after who) only when accept fails for good. */
int conn_slots_serve_fds(struct conn_slots *s, int ls, void (*serve)(void *), const char *who);

#endif

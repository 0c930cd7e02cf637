/*
 * sotls-uring-server's parts: the threads and their rings
 * (sotls-uring-server.c) and a connection's life on a ring (uring_conn.c,
 * its HTTP in uring_http.c):
 * the engine fed from multishot recv, its ciphertext sent with SEND or
 * SEND_ZC, or after a kTLS handoff the socket's own sotls calls woken by
 * poll requests; the echo and HTTP protocols on top.
 */
#ifndef SOTLS_EXAMPLES_URING_SERVER_H
#define SOTLS_EXAMPLES_URING_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "http_files.h"
#include "http_request.h"
#include "server_limits.h"
#include "server_stats.h"
#include "sotls.h"
#include "uring_loop.h"

/* Operations, in a completion's tag (uring_loop.h). 0 is "ignore" (the
 * cancel requests' own completions). */
enum uring_op {
	OP_IGNORE = 0,
	OP_ACCEPT,	/* worker: multishot accept */
	OP_SIGNAL,	/* worker: a read of the signalfd */
	OP_RECV,	/* conn: recv (multishot after the handshake) */
	OP_SEND,	/* conn: SEND or SEND_ZC of the engine's ciphertext */
	OP_POLL,	/* conn: readiness of an attached socket */
	OP_FILE_READ,	/* conn: a file body's chunk into a file buffer */
	OP_SPLICE_IN,	/* conn: file -> pipe (kernel TX) */
	OP_SPLICE_OUT,	/* conn: pipe -> socket (kernel TX) */
};

/* What the flags say, read-only once the threads run. */
struct uring_options {
	struct server_limits limits;
	bool http;		/* --root given: files, else echo */
	struct http_root root;
	size_t zc_min;		/* --zc-min */
	int drain_ms;		/* --drain-timeout */
	bool attach;		/* --ktls other than off: hand the socket over after the handshake */
	bool verbose, quiet, allow_errors;
};
extern struct uring_options g_opt;

/* Connections held by all threads, against --max-conns. */
extern atomic_int g_held;
/* Client ids for the HTTP log lines, across threads. */
extern atomic_int g_next_id;

struct conn;

/* Spare plaintext buffers a worker keeps for its next connections. */
#define URING_SPARE_BUFS 16

struct worker {
	_Alignas(16) int index; /* its address is a completion tag (uring_loop.h) */
	int lfd;			/* its SO_REUSEPORT listening socket, -1 once draining */
	struct uring_loop loop;
	struct conn *conns;		/* open ones (closed ones wait for their operations) */
	struct conn *ready_head, *ready_tail; /* out of budget, more to do */
	size_t n_ready;
	unsigned long turn_no;		/* loop turns, for the budget */
	unsigned zombies;		/* released, waiting for their operations' end */
	struct conn *dead;		/* released with nothing in flight: freed after the turn */
	struct conn *buf_waiters, *buf_waiters_tail;	/* waiting for a file buffer */
	bool accept_armed, accept_paused;
	int64_t accept_retry;		/* no accept before (after a failure) */
	int *parked;			/* accepted at the cap: wait for a slot */
	size_t n_parked, parked_cap;
	bool draining;
	int64_t drain_end;
	int sigfd;			/* thread 0 only, else -1 */
	struct signalfd_siginfo si;
	struct server_stats st;
	unsigned long long held;
	/* Plaintext buffers of connections that hold none now (uring_conn.c). */
	void *spare[URING_SPARE_BUFS];
	int n_spare;
};

/* A new client on w (its slot taken). */
void conn_start(struct worker *w, int fd);
/* A completion of one of a connection's operations. */
void conn_complete(struct worker *w, const struct io_uring_cqe *cqe);
/* Frees the worker's spare plaintext buffers, at its end. */
void conn_spares_free(struct worker *w);
/* Frees the connections released during the turn. */
void conn_reap(struct worker *w);
/* Runs the next in the ready queue. */
void conn_run_ready(struct worker *w);
/* Drops every connection past its deadline. */
void conn_sweep(struct worker *w, int64_t now);
/* SIGTERM: every connection told to finish (idle ones close now). */
void conn_drain_all(struct worker *w);
/* At exit: the ones still open, counted and freed. */
void conn_drop_all(struct worker *w);

/* An engine connection on the configuration of the moment (SIGHUP
 * replaces it; the connection holds its own reference). */
int uring_new_engine(struct sotls_conn **out);

#endif

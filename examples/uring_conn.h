/*
 * A connection of sotls-uring-server, shared by its two files: the
 * connection on the ring and its echo (uring_conn.c), and HTTP with its
 * file bodies (uring_http.c).
 */
#ifndef SOTLS_EXAMPLES_URING_CONN_H
#define SOTLS_EXAMPLES_URING_CONN_H

#include "uring_server.h"

#define BUF_SIZE 16384
/* Ciphertext held beyond what the engine takes before recv is stopped. */
#define IN_HIGH 65536

/* What a step of a connection asks (besides sotls's WANT_READ/_WRITE and
 * errors): go on, or wait for a completion. */
enum { STEP_AGAIN = 1, STEP_WAIT = 2 };

enum cstate {
	CS_HANDSHAKE,
	CS_OPEN,
	CS_CLOSING,	/* our close_notify */
	CS_LAST_WORDS,	/* counted as ended: its last ciphertext goes, then it is freed */
};

enum end { END_CLEAN, END_FAILED, END_EXPIRED };

struct conn {
	struct worker *w;
	int fd, id;
	struct sotls_conn *tls;
	enum cstate st;
	bool need_attach, attached, ktls_tx;
	bool released;	    /* off the lists, its slot given back; freed once inflight is 0 */
	bool socket_failed; /* nothing more can be sent */
	unsigned inflight;  /* operations whose last completion has not come */
	/* Engine I/O. */
	bool recv_armed, recv_cancelled, send_busy, send_zc, eof_seen, eof_given;
	int zc_res;
	uint8_t *in;	    /* ciphertext the engine did not take yet: [in_off, in_len) */
	size_t in_off, in_len, in_cap;
	/* Attached: a poll request is out. */
	bool poll_armed;
	short poll_events;
	/* Lists: the worker's connections, its ready queue, file buffer waiters. */
	struct conn *prev, *next, *rprev, *rnext, *wnext;
	bool ready, waiting_buf;
	bool moved;	       /* bytes moved since the deadline was set */
	bool deadline_writing; /* the deadline is --send-timeout's */
	int64_t deadline, head_deadline;
	size_t turn; /* bytes this turn, against --event-budget */
	unsigned long turn_no; /* the worker's turn they were counted in */
	/* Plaintext to sotls_send: [out, out + out_len). */
	const uint8_t *out;
	size_t out_len;
	/* HTTP. */
	size_t have; /* request head bytes in buf */
	bool keep_alive, close_after, flush_after;
	int file_fd, fbuf;
	off_t file_off, file_left, body_size;
	bool file_busy;
	int pipe[2];
	size_t pipe_len;
	const char *body_path; /* how the body went, for the log */
	char req_path[HTTP_MAX_PATH + 1];
	char hbuf[600];
	/* Plaintext: the request head, or a message to echo. Held only while
	 * bytes are in it (buf_get / buf_put): an idle connection holds no
	 * buffer, neither this nor sotls's record buffers. */
	uint8_t *buf;
};

_Static_assert(_Alignof(max_align_t) >= 16, "tags need 16-byte aligned objects");

/* Runs the connection until it waits for a completion, ends, or has used
 * its budget for this turn. */
void drive(struct conn *c);
/* More to do after the others' turn: out of budget (counted), or a file
 * buffer came free for it. */
void ready_append(struct conn *c, bool budget_cut);
/* A file buffer went back: the first connection waiting for one goes on. */
void give_file_buf(struct worker *w, int idx);
/* Waits for a file buffer behind those that asked first (first come, first
 * served: under load none waits forever). */
void waiter_append(struct conn *c);
/* c->buf, from the worker's spares or malloc. false: out of memory. */
bool buf_get(struct conn *c);
/* Counts how the connection ended and says so; it is freed once its last
 * ciphertext (close_notify, an alert) is out. */
void finish(struct conn *c, enum end how, int rc);
/* Bytes moved: the deadline is set once the connection waits again. */
void touch(struct conn *c);
/* The deadline from now, by what the connection waits for. */
void set_deadline(struct conn *c);
/* An SQE for one of c's operations (counted in flight), or NULL. */
struct io_uring_sqe *conn_sqe(struct conn *c, unsigned op);
/* Attached: a poll request for events (one at a time). */
void arm_poll(struct conn *c, short events);

/* uring_http.c: the next step of a file client (STEP_*, or sotls's
 * WANT_READ / WANT_WRITE / error), a completion of a body's operation, a
 * deadline's log line. */
int http_step(struct conn *c);
void http_file_complete(struct conn *c, unsigned op, int res);
void http_log_expired(const struct conn *c, bool hs);

#endif

/*
 * A connection of sotls-uring-server on its thread's ring (uring_conn.h).
 *
 * Until the handshake ends, ciphertext moves one operation at a time: a
 * recv of exactly what the engine takes (sotls_engine_recv_buf never
 * reaches past the record being read, so nothing past the client's
 * Finished is read and the socket can still go to the kernel), or a send
 * of its flight. Then, on the engine (--ktls off): multishot recv into the
 * provided-buffer ring, each buffer fed to the engine (sotls_engine_feed)
 * and given back at once, what the engine cannot take yet kept in the
 * connection's own queue (recv stops above IN_HIGH bytes of it, so a peer
 * that floods a connection which does not read cannot grow it); the
 * engine's ciphertext goes out one send at a time, SEND_ZC from --zc-min
 * bytes, and is released (sotls_engine_send_done) only at the zero-copy
 * notification, when the kernel has let go of its pages. Or, after
 * sotls_engine_attach_fd, sotls reads and writes the socket itself (kernel
 * TLS, or its userspace records where the kernel refused: the reason is in
 * the ktls-fallback log line) and the ring only says when it is ready
 * (poll requests).
 *
 * HTTP and its file bodies are uring_http.c; the echo is here.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "resumed_name.h"
#include "uring_conn.h"

/* ---- plaintext buffers ---------------------------------------------------- */

/* c->buf, from the worker's spares or malloc. false: out of memory. */
bool buf_get(struct conn *c)
{
	struct worker *w = c->w;
	if (c->buf == NULL)
		c->buf = w->n_spare > 0 ? w->spare[--w->n_spare] : malloc(BUF_SIZE);
	return c->buf != NULL;
}

/* Gives c->buf back once nothing in it is wanted: the next borrow of a
 * connection on this thread is a pointer swap, not malloc and fresh pages. */
static void buf_put(struct conn *c)
{
	struct worker *w = c->w;
	if (c->buf == NULL || c->have > 0 || (c->out_len > 0 && c->out == c->buf))
		return;
	if (w->n_spare < URING_SPARE_BUFS)
		w->spare[w->n_spare++] = c->buf;
	else
		free(c->buf);
	c->buf = NULL;
}

void conn_spares_free(struct worker *w)
{
	while (w->n_spare > 0)
		free(w->spare[--w->n_spare]);
}

/* ---- lists ---------------------------------------------------------------- */

static void ready_remove(struct conn *c)
{
	struct worker *w = c->w;
	if (!c->ready)
		return;
	if (c->rprev != NULL)
		c->rprev->rnext = c->rnext;
	else
		w->ready_head = c->rnext;
	if (c->rnext != NULL)
		c->rnext->rprev = c->rprev;
	else
		w->ready_tail = c->rprev;
	c->rprev = c->rnext = NULL;
	c->ready = false;
	w->n_ready--;
}

/* More to do after the others' turn: out of budget (counted), or a file
 * buffer came free for it. */
void ready_append(struct conn *c, bool budget_cut)
{
	struct worker *w = c->w;
	if (c->ready) /* queued already: once is enough, twice would corrupt the queue */
		return;
	c->rprev = w->ready_tail;
	c->rnext = NULL;
	if (w->ready_tail != NULL)
		w->ready_tail->rnext = c;
	else
		w->ready_head = c;
	w->ready_tail = c;
	c->ready = true;
	w->n_ready++;
	w->st.yields += budget_cut;
}

static void waiter_remove(struct conn *c)
{
	struct worker *w = c->w;
	struct conn *prev = NULL;
	for (struct conn **p = &w->buf_waiters; c->waiting_buf && *p != NULL;
	     prev = *p, p = &(*p)->wnext)
		if (*p == c) {
			*p = c->wnext;
			if (w->buf_waiters_tail == c)
				w->buf_waiters_tail = prev;
			break;
		}
	c->waiting_buf = false;
}

/* Waits for a file buffer behind those that asked first (first come, first
 * served: under load none waits forever). */
void waiter_append(struct conn *c)
{
	struct worker *w = c->w;
	c->wnext = NULL;
	if (w->buf_waiters_tail != NULL)
		w->buf_waiters_tail->wnext = c;
	else
		w->buf_waiters = c;
	w->buf_waiters_tail = c;
	c->waiting_buf = true;
}

/* A file buffer went back: the first connection waiting for one goes on. */
void give_file_buf(struct worker *w, int idx)
{
	uring_file_buf_give(&w->loop, idx);
	struct conn *next = w->buf_waiters;
	if (next != NULL) {
		w->buf_waiters = next->wnext;
		if (w->buf_waiters == NULL)
			w->buf_waiters_tail = NULL;
		next->waiting_buf = false;
		ready_append(next, false);
	}
}

/* ---- life and death ----------------------------------------------------------- */

static void conn_free(struct conn *c)
{
	sotls_conn_free(c->tls);
	close(c->fd);
	if (c->file_fd >= 0)
		close(c->file_fd);
	if (c->pipe[0] >= 0) {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	if (c->fbuf >= 0)
		give_file_buf(c->w, c->fbuf);
	c->have = c->out_len = 0;
	buf_put(c);
	free(c->in);
	free(c);
}

/* Off the lists, its slot free; the memory goes once the ring has
 * nothing of it left (shutdown ends its recv, send and poll requests), at
 * its last completion or at the end of the turn. */
static void release(struct conn *c)
{
	struct worker *w = c->w;
	if (c->released)
		return;
	ready_remove(c);
	waiter_remove(c);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->released = true;
	w->held--;
	atomic_fetch_sub(&g_held, 1);
	if (c->inflight == 0) {
		/* Freed after the turn: the caller may be inside drive(c). */
		c->next = w->dead;
		w->dead = c;
		return;
	}
	w->zombies++;
	shutdown(c->fd, SHUT_RDWR);
	struct io_uring_sqe *sqe = uring_sqe(&w->loop);
	if (sqe != NULL) { /* what shutdown does not end: a file read, a splice */
		io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
		io_uring_sqe_set_data64(sqe, OP_IGNORE);
	}
}

static bool engine_has_output(struct conn *c)
{
	size_t n = 0;
	return !c->attached && sotls_engine_send_buf(c->tls, &n) != NULL && n > 0;
}

/* Counts how the connection ended and says so; it is freed once its last
 * ciphertext (close_notify, an alert) is out. */
void finish(struct conn *c, enum end how, int rc)
{
	struct server_stats *st = &c->w->st;
	bool hs = c->st == CS_HANDSHAKE;
	switch (how) {
	case END_CLEAN: st->done_clean++; break;
	case END_FAILED:
		/* In the handshake: a peer that never became a TLS client. */
		(*(hs ? &st->hs_failed : &st->failed))++;
		if (g_opt.http && hs)
			fprintf(stderr, "client %d: handshake failed: %s %s\n", c->id,
				sotls_strerror(rc), sotls_conn_error_detail(c->tls));
		else if (g_opt.http && !g_opt.quiet)
			printf("client %d: %s %s\n", c->id, sotls_strerror(rc),
			       sotls_conn_error_detail(c->tls));
		else if (g_opt.verbose)
			fprintf(stderr, "connection %d: %s: %s\n", c->id, sotls_strerror(rc),
				sotls_conn_error_detail(c->tls));
		break;
	case END_EXPIRED:
		(*(hs ? &st->hs_expired : &st->idle_expired))++;
		if (g_opt.http)
			http_log_expired(c, hs);
		else if (g_opt.verbose)
			fprintf(stderr, "connection %d: %s: dropped\n", c->id,
				hs ? "no handshake within --handshake-timeout"
				   : "no byte moved within --idle-timeout / --send-timeout");
		break;
	}
	if (how != END_EXPIRED && !c->socket_failed && (engine_has_output(c) || c->send_busy)) {
		c->st = CS_LAST_WORDS;
		return;
	}
	release(c);
}

/* A socket operation failed: the connection with it. */
static void socket_failed(struct conn *c, int neg_errno)
{
	c->socket_failed = true;
	errno = -neg_errno;
	if (c->st == CS_LAST_WORDS)
		release(c);
	else
		finish(c, END_FAILED, SOTLS_ERR_SYSCALL);
}

/* Whether the connection waits for its peer to take bytes (else to send). */
static bool waits_to_write(struct conn *c)
{
	return c->out_len > 0 || c->send_busy || engine_has_output(c) ||
	       (c->poll_armed && (c->poll_events & POLLOUT)) || c->file_busy;
}

/* The deadline starts again, for reading or for the peer to take what is
 * sent, by what the connection waits for now; a request head keeps the
 * deadline of its first byte. */
void set_deadline(struct conn *c)
{
	c->moved = false;
	if (c->st == CS_HANDSHAKE)
		return;
	c->deadline_writing = waits_to_write(c);
	int64_t d = limits_now_ms() +
		    (c->deadline_writing ? g_opt.limits.send_ms : g_opt.limits.idle_ms);
	if (g_opt.http && c->have > 0 && c->file_fd < 0 && c->out_len == 0 &&
	    c->head_deadline < d)
		d = c->head_deadline;
	c->deadline = d;
}

/* Bytes moved: the deadline is set once the connection waits again (at
 * the end of drive). */
void touch(struct conn *c)
{
	c->moved = true;
}

/* ---- the ring -------------------------------------------------------------- */

struct io_uring_sqe *conn_sqe(struct conn *c, unsigned op)
{
	struct io_uring_sqe *sqe = uring_sqe(&c->w->loop);
	if (sqe != NULL) {
		io_uring_sqe_set_data64(sqe, uring_tag(c, op));
		c->inflight++;
	}
	return sqe;
}

/* The engine's ciphertext, one send at a time, batched with the turn's
 * other submissions. */
static void flush(struct conn *c)
{
	size_t len;
	const void *p;
	if (c->send_busy || c->socket_failed || c->attached ||
	    (p = sotls_engine_send_buf(c->tls, &len)) == NULL)
		return;
	struct io_uring_sqe *sqe = conn_sqe(c, OP_SEND);
	if (sqe == NULL)
		return; /* the ring failed: the deadline ends it */
	c->send_zc = len >= g_opt.zc_min;
	if (c->send_zc)
		io_uring_prep_send_zc(sqe, c->fd, p, len, MSG_NOSIGNAL, 0);
	else
		io_uring_prep_send(sqe, c->fd, p, len, MSG_NOSIGNAL);
	c->send_busy = true;
}

void arm_poll(struct conn *c, short events)
{
	if (c->poll_armed)
		return;
	struct io_uring_sqe *sqe = conn_sqe(c, OP_POLL);
	if (sqe == NULL)
		return;
	io_uring_prep_poll_add(sqe, c->fd, (unsigned)events);
	c->poll_armed = true;
	c->poll_events = events;
}

/* The engine wants ciphertext: exactly what it takes during the handshake,
 * the buffer ring's after it. */
static void arm_recv(struct conn *c)
{
	if (c->recv_armed || c->eof_seen || c->socket_failed)
		return;
	if (c->st == CS_HANDSHAKE) {
		size_t cap;
		void *p = sotls_engine_recv_buf(c->tls, &cap);
		struct io_uring_sqe *sqe;
		if (p == NULL || (sqe = conn_sqe(c, OP_RECV)) == NULL)
			return;
		io_uring_prep_recv(sqe, c->fd, p, cap, 0);
	} else {
		struct io_uring_sqe *sqe = conn_sqe(c, OP_RECV);
		if (sqe == NULL)
			return;
		io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = URING_RECV_GROUP;
	}
	c->recv_armed = true;
	c->recv_cancelled = false;
}

/* Queued ciphertext into the engine, and the end of the stream after the
 * last of it. true if the engine took something. */
static bool feed_more(struct conn *c)
{
	if (c->in_off < c->in_len) {
		size_t n = sotls_engine_feed(c->tls, c->in + c->in_off, c->in_len - c->in_off);
		c->in_off += n;
		if (c->in_off == c->in_len) { /* an idle connection holds no queue */
			free(c->in);
			c->in = NULL;
			c->in_off = c->in_len = c->in_cap = 0;
		}
		return n > 0;
	}
	if (c->eof_seen && !c->eof_given) {
		c->eof_given = true;
		return sotls_engine_recv_eof(c->tls) == 0;
	}
	return false;
}

/* Received ciphertext: to the engine as far as it takes it, the rest
 * queued behind what is queued already. false: out of memory. */
static bool take_input(struct conn *c, const uint8_t *p, size_t n)
{
	if (c->in_len == c->in_off) {
		size_t k = sotls_engine_feed(c->tls, p, n);
		p += k;
		n -= k;
	}
	if (n == 0)
		return true;
	if (c->in_off > 0 && c->in_len + n > c->in_cap) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len + n > c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap : BUF_SIZE;
		while (cap < c->in_len + n)
			cap *= 2;
		uint8_t *in = realloc(c->in, cap);
		if (in == NULL)
			return false;
		c->in = in;
		c->in_cap = cap;
	}
	memcpy(c->in + c->in_len, p, n);
	c->in_len += n;
	if (c->in_len - c->in_off > IN_HIGH && c->recv_armed && !c->recv_cancelled) {
		struct io_uring_sqe *sqe = uring_sqe(&c->w->loop);
		if (sqe != NULL) {
			io_uring_prep_cancel64(sqe, uring_tag(c, OP_RECV), 0);
			io_uring_sqe_set_data64(sqe, OP_IGNORE);
			c->recv_cancelled = true;
		}
	}
	return true;
}

/* ---- echo ------------------------------------------------------------------ */

static int echo_step(struct conn *c)
{
	/* Draining: what was received is echoed, then close_notify. */
	if (c->w->draining && sotls_pending(c->tls) == 0 && c->in_len == c->in_off) {
		c->st = CS_CLOSING;
		return STEP_AGAIN;
	}
	if (c->turn >= g_opt.limits.budget) {
		ready_append(c, true);
		return STEP_WAIT;
	}
	if (!buf_get(c))
		return SOTLS_ERR_OUT_OF_MEMORY;
	ssize_t n = sotls_recv(c->tls, c->buf, BUF_SIZE);
	if (n > 0) {
		c->w->st.bytes += (unsigned long long)n;
		c->turn += (size_t)n;
		c->out = c->buf;
		c->out_len = (size_t)n;
		touch(c);
		return STEP_AGAIN;
	}
	if (n == 0) { /* the peer's close_notify: ours, then done */
		c->st = CS_CLOSING;
		return STEP_AGAIN;
	}
	return (int)n;
}

/* ---- the state machine -------------------------------------------------------- */

static void handshake_done(struct conn *c)
{
	struct sotls_info info = SOTLS_INFO_INIT;
	struct server_stats *st = &c->w->st;
	if (sotls_get_info(c->tls, &info) == 0 &&
	    (size_t)info.resumed < sizeof(st->resumed) / sizeof(st->resumed[0]))
		st->resumed[info.resumed]++;
	if (g_opt.http && !g_opt.quiet)
		printf("client %d: %s alpn=%s server_name=%s cert=%d resumed: %s\n", c->id,
		       info.suite, info.alpn[0] ? info.alpn : "-",
		       info.server_name[0] ? info.server_name : "-", info.cert_index,
		       resumed_name(info.resumed));
	c->st = CS_OPEN;
	c->need_attach = g_opt.attach;
	touch(c);
}

/* The kTLS handoff, once the engine's last handshake bytes are out (it
 * must have moved no record yet). */
static int attach(struct conn *c)
{
	if (c->send_busy || engine_has_output(c))
		return STEP_WAIT;
	c->need_attach = false;
	int rc = sotls_engine_attach_fd(c->tls, c->fd);
	if (rc != 0) {
		/* --ktls require refused: a handshake that failed, as on a socket
		 * connection, where the handshake itself returns it. */
		c->st = CS_HANDSHAKE;
		return rc;
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c->tls, &info);
	c->attached = true;
	c->ktls_tx = info.tx_path == SOTLS_PATH_KERNEL;
	return STEP_AGAIN;
}

static int step(struct conn *c)
{
	switch (c->st) {
	case CS_HANDSHAKE: {
		/* One operation at a time until the handshake is done (see the
		 * top of this file). */
		if (c->send_busy || c->recv_armed)
			return STEP_WAIT;
		int rc = sotls_handshake(c->tls);
		if (rc == 0)
			handshake_done(c);
		return rc == 0 ? STEP_AGAIN : rc;
	}
	case CS_OPEN:
		if (c->need_attach)
			return attach(c);
		if (c->out_len > 0) {
			ssize_t n = sotls_send(c->tls, c->out, c->out_len);
			if (n <= 0)
				return (int)n;
			c->out += n;
			c->out_len -= (size_t)n;
			if (g_opt.http && c->file_fd >= 0 && c->fbuf >= 0)
				c->turn += (size_t)n;
			return STEP_AGAIN;
		}
		return g_opt.http ? http_step(c) : echo_step(c);
	case CS_CLOSING: {
		int rc = sotls_shutdown(c->tls);
		if (rc == 0)
			finish(c, END_CLEAN, 0);
		return rc == 0 ? STEP_WAIT : rc;
	}
	case CS_LAST_WORDS:
		if (!c->send_busy && !engine_has_output(c))
			release(c);
		return STEP_WAIT;
	}
	return STEP_WAIT;
}

/* Runs the connection until it waits for a completion, ends, or has used
 * its budget for this turn. */
void drive(struct conn *c)
{
	if (c->released)
		return;
	ready_remove(c);
	/* The budget is per loop turn, however many completions wake it. */
	if (c->turn_no != c->w->turn_no) {
		c->turn_no = c->w->turn_no;
		c->turn = 0;
	}
	for (;;) {
		int rc = step(c);
		if (c->released)
			return;
		if (rc == STEP_AGAIN)
			continue;
		if (rc == STEP_WAIT)
			break;
		if (rc == SOTLS_WANT_READ && !c->attached) {
			if (feed_more(c))
				continue;
			arm_recv(c);
			break;
		}
		if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE) {
			if (c->attached)
				arm_poll(c, rc == SOTLS_WANT_READ ? POLLIN : POLLOUT);
			break; /* engine WANT_WRITE: its output goes below */
		}
		finish(c, END_FAILED, rc);
		if (c->released)
			return;
		break;
	}
	buf_put(c);
	flush(c);
	/* Bytes moved, or it went from reading to waiting for its peer to
	 * take bytes (a turn cut by the budget): --idle-timeout and
	 * --send-timeout count from here. */
	if (c->moved || waits_to_write(c) != c->deadline_writing)
		set_deadline(c);
}

/* ---- the worker's calls --------------------------------------------------------- */

void conn_start(struct worker *w, int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct conn *c = calloc(1, sizeof(*c));
	int rc = c == NULL ? SOTLS_ERR_OUT_OF_MEMORY : uring_new_engine(&c->tls);
	/* Zero-copy pages, ours or sotls_sendfile's, wait for the peer's ACK:
	 * TCP_USER_TIMEOUT has the kernel give up on a peer that takes nothing
	 * for --send-timeout, as the threaded servers do. */
	if (rc == 0 && limits_prepare_socket(fd, g_opt.limits.send_ms) != 0) {
		sotls_conn_free(c->tls);
		rc = SOTLS_ERR_SYSCALL;
	}
	if (rc != 0) {
		free(c);
		close(fd);
		w->st.failed++;
		w->held--;
		atomic_fetch_sub(&g_held, 1);
		return;
	}
	c->w = w;
	c->fd = fd;
	c->id = atomic_fetch_add(&g_next_id, 1);
	c->file_fd = c->fbuf = c->pipe[0] = c->pipe[1] = -1;
	c->deadline = limits_now_ms() + g_opt.limits.handshake_ms;
	sotls_conn_set_user(c->tls, c);
	c->next = w->conns;
	if (w->conns != NULL)
		w->conns->prev = c;
	w->conns = c;
	w->st.accepted++;
	drive(c);
}

static void recv_complete(struct conn *c, const struct io_uring_cqe *cqe)
{
	struct uring_loop *l = &c->w->loop;
	bool more = cqe->flags & IORING_CQE_F_MORE;
	if (!more)
		c->recv_armed = false;
	if (cqe->flags & IORING_CQE_F_BUFFER) {
		unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		bool ok = c->released || take_input(c, uring_recv_buf(l, bid), (size_t)cqe->res);
		uring_recv_buf_return(l, bid);
		if (!ok) {
			socket_failed(c, -ENOMEM);
			return;
		}
	} else if (cqe->res > 0 && !c->released) { /* the handshake's recv */
		int rc = sotls_engine_recv_done(c->tls, (size_t)cqe->res);
		if (rc != 0) {
			finish(c, END_FAILED, rc);
			return;
		}
	}
	if (c->released)
		return;
	if (cqe->res == 0)
		c->eof_seen = true;
	else if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -ECANCELED) {
		socket_failed(c, cqe->res);
		return;
	}
	if (cqe->res > 0)
		touch(c);
	drive(c); /* the engine may have waited for exactly these bytes */
}

static void send_complete(struct conn *c, const struct io_uring_cqe *cqe)
{
	int res = cqe->res;
	if (c->send_zc && !(cqe->flags & IORING_CQE_F_NOTIF) && (cqe->flags & IORING_CQE_F_MORE)) {
		c->zc_res = res; /* the pages are the kernel's until the notification */
		return;
	}
	if (cqe->flags & IORING_CQE_F_NOTIF)
		res = c->zc_res;
	c->send_busy = false;
	if (c->released)
		return;
	if (res < 0) {
		socket_failed(c, res);
		return;
	}
	int rc = sotls_engine_send_done(c->tls, (size_t)res);
	if (rc != 0) {
		finish(c, END_FAILED, rc);
		return;
	}
	touch(c);
	drive(c);
}

void conn_complete(struct worker *w, const struct io_uring_cqe *cqe)
{
	struct conn *c = uring_tag_obj(cqe->user_data);
	unsigned op = uring_tag_op(cqe->user_data);
	/* Its last completion: the ring holds nothing of it any more (a
	 * zero-copy send's is the notification). */
	bool last = !(cqe->flags & IORING_CQE_F_MORE);
	switch (op) {
	case OP_RECV: recv_complete(c, cqe); break;
	case OP_SEND: send_complete(c, cqe); break;
	case OP_POLL:
		c->poll_armed = false;
		drive(c);
		break;
	default: http_file_complete(c, op, cqe->res); break;
	}
	if (last && --c->inflight == 0 && c->released) {
		w->zombies--;
		conn_free(c);
	}
}

void conn_reap(struct worker *w)
{
	while (w->dead != NULL) {
		struct conn *c = w->dead;
		w->dead = c->next;
		conn_free(c);
	}
}

void conn_run_ready(struct worker *w)
{
	w->ready_head->turn = 0; /* its next turn, after the others' events */
	drive(w->ready_head);
}

void conn_sweep(struct worker *w, int64_t now)
{
	struct conn *next;
	for (struct conn *c = w->conns; c != NULL; c = next) {
		next = c->next;
		if (c->ready || c->waiting_buf || now < c->deadline)
			continue;
		if (c->st == CS_LAST_WORDS)
			release(c);
		else
			finish(c, END_EXPIRED, 0);
	}
}

void conn_drain_all(struct worker *w)
{
	struct conn *next;
	for (struct conn *c = w->conns; c != NULL; c = next) {
		next = c->next;
		if (c->st == CS_HANDSHAKE) { /* never a client yet: nothing to finish */
			w->st.dropped++;
			w->st.dropped_in_hs++;
			release(c);
		} else if (c->st == CS_OPEN && !c->send_busy && !c->file_busy && !c->poll_armed) {
			drive(c);
		} else if (c->st == CS_OPEN && c->poll_armed && (c->poll_events & POLLIN) &&
			   c->out_len == 0 && c->file_fd < 0) {
			/* Attached and waiting to read: close_notify now. */
			c->st = CS_CLOSING;
			drive(c);
		}
		/* Engine connections waiting for bytes have a multishot recv out and
		 * no send: the drive above already closed them if idle. */
	}
}

void conn_drop_all(struct worker *w)
{
	while (w->conns != NULL) {
		struct conn *c = w->conns;
		if (c->st != CS_LAST_WORDS) {
			w->st.dropped++;
			w->st.dropped_in_hs += c->st == CS_HANDSHAKE;
		}
		release(c);
	}
}

/*
 * HTTP/1.1 on a sotls-uring-server connection (uring_conn.h): requests
 * parsed from sotls_recv, answered as sotls-https-server answers
 * (http_files.h), and file bodies by the connection's path:
 *  - the engine (--ktls off): read into the thread's file buffers
 *    (READ_FIXED) and given to sotls_send. They cannot be sealed in place:
 *    the engine seals only into its own send buffer (sotls.h: the userspace
 *    sotls_sendfile path has no hook for a foreign ring), so that is one
 *    copy per byte;
 *  - attached, kernel TX: SPLICE file -> pipe -> socket on this ring, the
 *    kernel seals (no sotls call meanwhile, as sotls.h requires);
 *  - attached, userspace TX (the kernel refused it): sotls_sendfile, which
 *    reads into registered buffers, seals in place and sends with SEND_ZC
 *    on its own ring, woken by our poll requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uring_conn.h"

/* Bytes moved per splice: a pipe's default capacity. */
#define SPLICE_CHUNK 65536

/* A deadline in file mode, in sotls-https-server's words. */
void http_log_expired(const struct conn *c, bool hs)
{
	const char *why = limits_strerror(LIMIT_EXPIRED);
	if (hs)
		fprintf(stderr, "client %d: handshake failed: %s (--handshake-timeout)\n", c->id, why);
	else if (c->file_fd >= 0)
		fprintf(stderr, "client %d: %s: sendfile after %lld bytes: %s\n", c->id, c->req_path,
			(long long)(c->body_size - c->file_left), why);
	else if (!g_opt.quiet && c->out_len > 0)
		printf("client %d: response not taken within --send-timeout: dropped\n", c->id);
	else if (!g_opt.quiet)
		printf("client %d: %s: dropped\n", c->id,
		       c->have > 0 ? "request head not complete within --header-timeout"
				   : "idle past --idle-timeout");
}

static void http_status(struct conn *c, int code, const char *reason, bool head, bool keep)
{
	int n = http_status_response(c->hbuf, sizeof(c->hbuf), code, reason, head, keep,
				     code == 405 ? "Allow: GET, HEAD\r\n" : NULL);
	c->out = (const uint8_t *)c->hbuf;
	c->out_len = (size_t)n;
	c->close_after = !keep;
}

static void respond(struct conn *c, const struct http_request *req)
{
	bool head = req->method == HTTP_HEAD, verbose = !g_opt.quiet;
	const char *method = head ? "HEAD" : "GET";
	char rel[HTTP_MAX_PATH + 1], name[HTTP_MAX_PATH + 16];
	if (req->method == HTTP_OTHER) {
		http_status(c, 405, "Method Not Allowed", false, req->keep_alive);
		return;
	}
	if (http_relative_path(req->path, rel, sizeof(rel)) != 0) {
		if (verbose)
			printf("client %d: %s refused (outside the root)\n", c->id, req->path);
		http_status(c, 400, "Bad Request", head, false);
		return;
	}
	struct stat st;
	bool not_regular;
	int fd = http_open_file(&g_opt.root, rel, &st, name, sizeof(name), &not_regular);
	if (fd < 0) {
		if (verbose)
			printf("client %d: %s %s -> 404%s\n", c->id, method, req->path,
			       not_regular ? " (not a regular file)" : "");
		http_status(c, 404, "Not Found", head, req->keep_alive);
		return;
	}
	int n = http_ok_head(c->hbuf, sizeof(c->hbuf), http_content_type(name),
			     (long long)st.st_size, req->keep_alive);
	c->out = (const uint8_t *)c->hbuf;
	c->out_len = (size_t)n;
	c->close_after = !req->keep_alive;
	if (head) {
		close(fd);
		if (verbose)
			printf("client %d: HEAD %s -> 200, %lld bytes (no body)\n", c->id, req->path,
			       (long long)st.st_size);
		return;
	}
	c->file_fd = fd;
	c->file_off = 0;
	c->file_left = c->body_size = st.st_size;
	snprintf(c->req_path, sizeof(c->req_path), "%s", req->path);
	c->body_path = !c->attached ? "io_uring-read-fixed+sotls_send"
		       : c->ktls_tx ? "io_uring-splice"
				    : NULL; /* sotls_sendfile says */
}

static void body_done(struct conn *c)
{
	close(c->file_fd);
	c->file_fd = -1;
	if (c->fbuf >= 0) {
		give_file_buf(c->w, c->fbuf);
		c->fbuf = -1;
	}
	/* Records sotls_sendfile sealed but did not send yet go now, not with
	 * the next response. */
	c->flush_after = c->attached && !c->ktls_tx;
	if (!g_opt.quiet) {
		const char *how = c->body_path;
		struct sotls_info info = SOTLS_INFO_INIT;
		if (how == NULL && sotls_get_info(c->tls, &info) == 0)
			how = info.sendfile_path;
		printf("client %d: GET %s -> 200, %lld bytes (%s)\n", c->id, c->req_path,
		       (long long)c->body_size, how);
	}
}

static void body_failed(struct conn *c, const char *why)
{
	fprintf(stderr, "client %d: %s: body after %lld bytes: %s\n", c->id, c->req_path,
		(long long)(c->body_size - c->file_left), why);
	finish(c, END_FAILED, SOTLS_ERR_SYSCALL);
}

static void splice_in(struct conn *c)
{
	size_t n = c->file_left < SPLICE_CHUNK ? (size_t)c->file_left : SPLICE_CHUNK;
	struct io_uring_sqe *sqe = conn_sqe(c, OP_SPLICE_IN);
	if (sqe == NULL)
		return;
	io_uring_prep_splice(sqe, c->file_fd, (int64_t)c->file_off, c->pipe[1], -1, (unsigned)n, 0);
	c->file_busy = true;
}

static void splice_out(struct conn *c)
{
	struct io_uring_sqe *sqe = conn_sqe(c, OP_SPLICE_OUT);
	if (sqe == NULL)
		return;
	io_uring_prep_splice(sqe, c->pipe[0], -1, c->fd, -1, (unsigned)c->pipe_len, 0);
	c->file_busy = true;
}

/* The next piece of a body. */
static int body_step(struct conn *c)
{
	if (c->file_left == 0) {
		body_done(c);
		return STEP_AGAIN;
	}
	if (c->file_busy)
		return STEP_WAIT;
	if (c->turn >= g_opt.limits.budget) {
		ready_append(c, true);
		return STEP_WAIT;
	}
	if (c->attached && !c->ktls_tx) {
		ssize_t k = sotls_sendfile(c->tls, c->file_fd, &c->file_off, (size_t)c->file_left);
		if (k == 0) {
			body_failed(c, "file shrank");
			return STEP_WAIT;
		}
		if (k < 0)
			return (int)k;
		c->file_left -= k;
		c->turn += (size_t)k;
		c->w->st.bytes += (unsigned long long)k;
		touch(c);
		return STEP_AGAIN;
	}
	if (c->attached) {
		if (c->pipe[0] < 0 && pipe2(c->pipe, O_CLOEXEC) != 0) {
			c->pipe[0] = c->pipe[1] = -1;
			body_failed(c, strerror(errno));
			return STEP_WAIT;
		}
		if (c->pipe_len > 0)
			splice_out(c); /* the socket was full (EAGAIN): the rest */
		else
			splice_in(c);
		return STEP_WAIT;
	}
	if (c->waiting_buf) /* queued for a file buffer: give_file_buf wakes it */
		return STEP_WAIT;
	if (c->fbuf < 0 && (c->fbuf = uring_file_buf_take(&c->w->loop)) < 0) {
		waiter_append(c);
		return STEP_WAIT;
	}
	struct uring_loop *l = &c->w->loop;
	size_t n = c->file_left < (off_t)l->file_size ? (size_t)c->file_left : l->file_size;
	struct io_uring_sqe *sqe = conn_sqe(c, OP_FILE_READ);
	if (sqe == NULL)
		return STEP_WAIT;
	uring_prep_file_read(l, sqe, c->file_fd, c->fbuf, n, (uint64_t)c->file_off);
	c->file_busy = true;
	return STEP_WAIT;
}

int http_step(struct conn *c)
{
	if (c->file_fd >= 0)
		return body_step(c);
	if (c->flush_after) {
		ssize_t k = sotls_send(c->tls, NULL, 0);
		if (k < 0)
			return (int)k;
		c->flush_after = false;
	}
	if (c->close_after || (c->w->draining && c->have == 0)) {
		c->st = CS_CLOSING;
		return STEP_AGAIN;
	}
	if (!buf_get(c))
		return SOTLS_ERR_OUT_OF_MEMORY;
	struct http_request req;
	enum http_parse_result pr = http_parse_request((const char *)c->buf, c->have, &req);
	if (pr == HTTP_PARSE_INCOMPLETE) {
		ssize_t n = sotls_recv(c->tls, c->buf + c->have, HTTP_MAX_HEAD - c->have);
		if (n == 0)
			c->st = CS_CLOSING;
		if (n <= 0)
			return n == 0 ? STEP_AGAIN : (int)n;
		/* The head's deadline runs from its first byte, however slowly
		 * the rest trickles in. */
		if (c->have == 0)
			c->head_deadline = limits_now_ms() + g_opt.limits.header_ms;
		c->have += (size_t)n;
		touch(c);
		return STEP_AGAIN;
	}
	if (pr != HTTP_PARSE_OK) {
		if (!g_opt.quiet)
			printf("client %d: malformed request -> 400\n", c->id);
		http_status(c, 400, "Bad Request", false, false);
		c->have = 0;
		return STEP_AGAIN;
	}
	respond(c, &req);
	/* Pipelined bytes of the next request move to the front. */
	memmove(c->buf, c->buf + req.head_len, c->have - req.head_len);
	c->have -= req.head_len;
	c->head_deadline = limits_now_ms() + g_opt.limits.header_ms;
	return STEP_AGAIN;
}

void http_file_complete(struct conn *c, unsigned op, int res)
{
	c->file_busy = false;
	if (c->released)
		return;
	if (res == -EAGAIN && op == OP_SPLICE_OUT) {
		/* A splice honours the socket's O_NONBLOCK: wait until it takes
		 * bytes, then body_step sends the rest of the pipe. */
		arm_poll(c, POLLOUT);
		return;
	}
	if (res < 0) {
		body_failed(c, strerror(-res));
		return;
	}
	if (res == 0 && op != OP_SPLICE_OUT) {
		body_failed(c, "file shrank");
		return;
	}
	switch (op) {
	case OP_FILE_READ:
		c->out = uring_file_buf(&c->w->loop, c->fbuf);
		c->out_len = (size_t)res;
		c->file_off += res;
		c->file_left -= res;
		c->w->st.bytes += (unsigned long long)res;
		break;
	case OP_SPLICE_IN:
		c->pipe_len = (size_t)res;
		c->file_off += res;
		splice_out(c);
		return;
	default: /* OP_SPLICE_OUT */
		c->pipe_len -= (size_t)res;
		c->file_left -= res;
		c->turn += (size_t)res;
		c->w->st.bytes += (unsigned long long)res;
		if (c->pipe_len > 0) {
			splice_out(c);
			set_deadline(c);
			return;
		}
		touch(c);
		break;
	}
	drive(c);
}

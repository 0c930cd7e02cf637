#include "resume_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_check.h"

/* A peer that stops answering fails the step instead of hanging the VM. */
#define STEP_TIMEOUT_MS 30000 /* "no progress in 30 s" below */

uint8_t resume_pattern(uint64_t off, unsigned seed)
{
	if (off % 64 == 63)
		return '\n';
	uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32);
	x ^= x >> 31;
	return (uint8_t)('a' + x % 26);
}

static const char *path_name(enum sotls_path p)
{
	return p == SOTLS_PATH_KERNEL ? "kernel" : p == SOTLS_PATH_USERSPACE ? "userspace" : "none";
}

static const char *resumed_name(enum sotls_resumption r)
{
	return r == SOTLS_RESUMED_TICKET	? "ticket"
	       : r == SOTLS_RESUMED_SESSION_ID ? "session ID"
					       : "none (full handshake)";
}

/* What poll must wait for before calling again after rc (SOTLS_WANT_*). */
static short events_for(ssize_t rc)
{
	return rc == SOTLS_WANT_WRITE ? POLLOUT : rc == SOTLS_WANT_READ ? POLLIN : 0;
}

/* Waits until fd is ready for events; 0, or -1 on a timeout or a poll
 * failure. */
static int wait_for(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};
	return poll(&p, 1, STEP_TIMEOUT_MS) == 1 ? 0 : -1;
}

static int set_cork(int fd, int on)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
}

/* Prints why the data step failed; returns -1. */
static int pump_failed(struct sotls_conn *c, const struct resume_side *s, const char *what,
		       const char *why, size_t sent, size_t got)
{
	printf("  %s %s: %s at %zu sent, %zu received: %s (%s)\n", s->name,
	       s->server ? "server" : "client", what, sent, got, why, sotls_conn_error_detail(c));
	return -1;
}

/* Why a send or receive that gave no bytes and no SOTLS_WANT_* failed. */
static const char *failure(ssize_t rc)
{
	return rc == 0 ? "0: the end of the stream, too early" : sotls_strerror((int)rc);
}

/* Checks received bytes against the pattern from offset got; -1 with the
 * offset printed if one differs. */
static int verify(const uint8_t *in, size_t n, size_t got, const struct resume_side *s)
{
	for (size_t i = 0; i < n; i++)
		if (in[i] != resume_pattern(got + i, s->rx_seed)) {
			printf("  %s %s: received byte %zu differs\n", s->name,
			       s->server ? "server" : "client", got + i);
			return -1;
		}
	return 0;
}

/* s->tx bytes out and s->rx bytes in, interleaved: a send that would block
 * lets the receive run, and the reverse. Returns 0, or -1 with the reason
 * printed. */
static int pump(struct sotls_conn *c, int fd, const struct resume_side *s)
{
	static uint8_t in[65536];
	uint8_t *out = malloc(s->tx ? s->tx : 1);
	size_t sent = 0, got = 0;
	int rc = out == NULL ? -1 : 0;
	for (size_t i = 0; rc == 0 && i < s->tx; i++)
		out[i] = resume_pattern(i, s->tx_seed);
	while (rc == 0 && (sent < s->tx || got < s->rx)) {
		short events = 0;
		int progress = 0;
		if (sent < s->tx) {
			/* The rest of the same data, as a non-blocking sotls_send wants. */
			ssize_t k = sotls_send(c, out + sent, s->tx - sent);
			/* The first records are queued behind the Finished: out. */
			if (k > 0 && s->cork && sent == 0 && set_cork(fd, 0) != 0)
				rc = pump_failed(c, s, "uncork", strerror(errno), 0, got);
			if (k > 0)
				sent += (size_t)k, progress = 1;
			else if ((events = events_for(k)) == 0)
				rc = pump_failed(c, s, "send", failure(k), sent, got);
		}
		if (rc == 0 && got < s->rx) {
			size_t room = s->rx - got < sizeof(in) ? s->rx - got : sizeof(in);
			ssize_t k = sotls_recv(c, in, room);
			if (k > 0) {
				rc = verify(in, (size_t)k, got, s);
				got += (size_t)k, progress = 1;
			} else if (events_for(k) != 0) {
				events |= events_for(k);
			} else {
				rc = pump_failed(c, s, "recv", failure(k), sent, got);
			}
		}
		if (rc == 0 && !progress && wait_for(fd, events) != 0)
			rc = pump_failed(c, s, "stalled", "no progress in 30 s", sent, got);
	}
	free(out);
	return rc;
}

/* The info checks: suite, resumption, paths and reasons, identity. */
static void check_info(struct sotls_conn *c, const struct resume_side *s, const char *who)
{
	struct sotls_info in = SOTLS_INFO_INIT;
	sotls_get_info(c, &in);
	char token[32];
	snprintf(token, sizeof(token), "_%s", s->suite);
	for (char *p = token; *p; p++)
		*p = *p == '-' ? '_' : *p;
	check(strstr(in.suite, token) != NULL, "%s %s: suite %s", s->name, who, in.suite);
	check(in.resumed == s->resumed, "%s %s: resumed: %s (want %s)", s->name, who,
	      resumed_name(in.resumed), resumed_name(s->resumed));
	enum sotls_path want = s->kernel ? SOTLS_PATH_KERNEL : SOTLS_PATH_USERSPACE;
	check(in.tx_path == want && in.rx_path == want, "%s %s: TX %s (%s), RX %s (%s)", s->name,
	      who, path_name(in.tx_path), in.tx_reason, path_name(in.rx_path), in.rx_reason);
	if (!s->kernel)
		check(strstr(in.tx_reason, s->reason) != NULL &&
			      strstr(in.rx_reason, s->reason) != NULL,
		      "%s %s: both userspace reasons say \"%s\"", s->name, who, s->reason);
	check(in.peer_verified == s->peer_verified, "%s %s: peer_verified %d", s->name, who,
	      in.peer_verified);
}

/* The client's session, malloc()ed; NULL on failure (a check says why). */
static uint8_t *export_session(struct sotls_conn *c, const struct resume_side *s, size_t *len)
{
	int rc = sotls_conn_get_session(c, NULL, 0, len);
	uint8_t *buf = rc == SOTLS_ERR_BUFFER_TOO_SMALL && *len > 0 ? malloc(*len) : NULL;
	if (buf != NULL)
		rc = sotls_conn_get_session(c, buf, *len, len);
	check(buf != NULL && rc == 0, "%s client: session exported (%zu bytes): %s", s->name, *len,
	      sotls_strerror(rc));
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* close_notify sent, then the peer's received; and the end stays. */
static void close_both_ways(struct sotls_conn *c, int fd, const struct resume_side *s,
			    const char *who)
{
	int rc;
	while (events_for(rc = sotls_shutdown(c)) != 0 && wait_for(fd, events_for(rc)) == 0)
		;
	check(rc == 0, "%s %s: close_notify sent: %s", s->name, who, sotls_strerror(rc));
	uint8_t b[16];
	ssize_t n;
	while (events_for(n = sotls_recv(c, b, sizeof(b))) != 0 && wait_for(fd, events_for(n)) == 0)
		;
	check(n == 0, "%s %s: close_notify received: %s", s->name, who,
	      n > 0 ? "more data" : sotls_strerror((int)n));
	check(sotls_recv(c, b, sizeof(b)) == 0, "%s %s: end of stream stays", s->name, who);
}

int resume_converse(struct sotls_conn *c, int fd, const struct resume_side *s, uint8_t **session,
		    size_t *session_len)
{
	const char *who = s->server ? "server" : "client";
	int failed = check_failed;
	int rc, hello_out = 0;
	if (s->cork && set_cork(fd, 1) != 0)
		check(0, "%s %s: TCP_CORK", s->name, who);
	while (events_for(rc = sotls_handshake(c)) != 0) {
		/* The cork held the ClientHello back, so the server cannot have
		 * answered: it goes out now, and the cork is back on for the
		 * Finished, the next thing a resuming client sends. */
		if (s->cork && !hello_out) {
			hello_out = set_cork(fd, 0) == 0 && set_cork(fd, 1) == 0;
			check(hello_out && rc == SOTLS_WANT_READ,
			      "%s %s: ClientHello out, TCP_CORK on for the Finished", s->name, who);
		}
		if (wait_for(fd, events_for(rc)) != 0)
			break;
	}
	if (rc != 0) {
		check(0, "%s %s: handshake: %s (%s)", s->name, who, sotls_strerror(rc),
		      sotls_conn_error_detail(c));
		return -1;
	}
	/* Nothing between the handshake and the first send: these bytes go
	 * right behind this side's last handshake record. */
	int moved = pump(c, fd, s);
	check(moved == 0, "%s %s: handshake done; %zu bytes sent and %zu received at once, all in "
			  "order",
	      s->name, who, s->tx, s->rx);
	check_info(c, s, who);
	if (session != NULL)
		*session = export_session(c, s, session_len);
	if (moved == 0)
		close_both_ways(c, fd, s, who);
	return check_failed == failed ? 0 : -1;
}

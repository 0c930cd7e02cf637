/*
 * Fault injection on the socket: every send() and recv() sotls makes (the
 * handshake BIO and the record layer) goes through the shim below, linked in
 * with -Wl,--wrap=send,--wrap=recv. The shim
 *   - caps each call at a given size (short reads and writes of every size),
 *   - fails calls with EINTR,
 *   - on non-blocking sockets, answers EAGAIN for long runs of calls
 *     (the socket is ready, but the caller must cope with being told to wait).
 * Client and server are sotls connections in two threads over a socketpair;
 * they run the handshake, move a stream of messages of random sizes both
 * ways and close with close_notify. The test checks every byte arrives,
 * intact and in order, and both ends see a clean close.
 *
 *   fault blocking     every cap from 1 to 64 bytes and a few larger, with EINTR
 *   fault nonblocking  random caps, EINTR and EAGAIN runs, poll()-driven
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "sotls.h"

/* ---- the shim ------------------------------------------------------------- */

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __real_recv(int fd, void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags);

static struct {
	atomic_bool on;
	atomic_size_t cap;	 /* 0: random 1..len */
	atomic_uint eintr_pct;	 /* chance of EINTR per call */
	atomic_uint eagain_pct;	 /* chance that a run of EAGAIN starts (non-blocking only) */
	atomic_uint eagain_max;	 /* longest run */
} g_shim;

static atomic_ulong g_calls, g_short, g_eintr, g_eagain;

static __thread uint64_t t_rng;
static __thread unsigned t_eagain_left;

static uint32_t rnd(void)
{
	if (t_rng == 0)
		t_rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)&t_rng;
	t_rng ^= t_rng << 13;
	t_rng ^= t_rng >> 7;
	t_rng ^= t_rng << 17;
	return (uint32_t)(t_rng >> 11);
}

/* -1 with errno set if the call is to fail, else the length to pass on. */
static ssize_t inject(int fd, size_t len, int flags)
{
	if (!atomic_load(&g_shim.on) || len == 0)
		return (ssize_t)len;
	atomic_fetch_add(&g_calls, 1);
	bool nonblock = (flags & MSG_DONTWAIT) || (fcntl(fd, F_GETFL) & O_NONBLOCK);
	if (nonblock && t_eagain_left > 0) {
		t_eagain_left--;
		atomic_fetch_add(&g_eagain, 1);
		errno = EAGAIN;
		return -1;
	}
	if (rnd() % 100 < atomic_load(&g_shim.eintr_pct)) {
		atomic_fetch_add(&g_eintr, 1);
		errno = EINTR;
		return -1;
	}
	if (nonblock && rnd() % 100 < atomic_load(&g_shim.eagain_pct)) {
		t_eagain_left = rnd() % (atomic_load(&g_shim.eagain_max) + 1);
		atomic_fetch_add(&g_eagain, 1);
		errno = EAGAIN;
		return -1;
	}
	size_t cap = atomic_load(&g_shim.cap);
	size_t n = cap != 0 ? cap : 1 + rnd() % len;
	if (n < len) {
		atomic_fetch_add(&g_short, 1);
		return (ssize_t)n;
	}
	return (ssize_t)len;
}

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	ssize_t n = inject(fd, len, flags);
	return n < 0 ? -1 : __real_send(fd, buf, (size_t)n, flags);
}

ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n = inject(fd, len, flags);
	return n < 0 ? -1 : __real_recv(fd, buf, (size_t)n, flags);
}

/* ---- the two ends ---------------------------------------------------------- */

static struct sotls_config *g_srv_cfg, *g_cli_cfg;

static uint8_t stream_byte(uint64_t i)
{
	uint64_t x = (i + 7) * 0xD6E8FEB86659FD93ull;
	x ^= x >> 32;
	return (uint8_t)(x ^ (x >> 17));
}

struct end {
	int fd;
	bool server, nonblock;
	size_t total;	/* bytes to send (client) */
	size_t max_msg; /* longest message (client) */
	uint64_t seed;
	/* results */
	int err;
	size_t received;
	bool corrupt, clean_close;
	char what[200];
};

static int wait_fd(int fd, int rc)
{
	struct pollfd p = {fd, rc == SOTLS_WANT_WRITE ? POLLOUT : POLLIN, 0};
	return poll(&p, 1, 5000) == 1 ? 0 : -1;
}

/* Sends len bytes, retrying WANT_* (non-blocking) with the same data. */
static int send_all(struct end *e, struct sotls_conn *c, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = sotls_send(c, p, len);
		if (n == SOTLS_WANT_READ || n == SOTLS_WANT_WRITE) {
			if (wait_fd(e->fd, (int)n) != 0)
				return SOTLS_ERR_INTERNAL;
			continue;
		}
		if (n <= 0)
			return n == 0 ? SOTLS_ERR_INTERNAL : (int)n;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Receives into buf; WANT_* is waited for. */
static ssize_t recv_some(struct end *e, struct sotls_conn *c, uint8_t *buf, size_t len)
{
	for (;;) {
		ssize_t n = sotls_recv(c, buf, len);
		if (n == SOTLS_WANT_READ || n == SOTLS_WANT_WRITE) {
			if (wait_fd(e->fd, (int)n) != 0)
				return SOTLS_ERR_INTERNAL;
			continue;
		}
		return n;
	}
}

static void check(struct end *e, const uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != stream_byte(e->received + i))
			e->corrupt = true;
	e->received += n;
}

/* The server echoes until close_notify; the client sends messages of random
 * sizes, reads each echo back, then closes. */
static void *run_end(void *arg)
{
	struct end *e = arg;
	struct sotls_conn *c = NULL;
	uint8_t *buf = malloc(70000), *out = malloc(70000);
	uint64_t rng = e->seed | 1;

	if (buf == NULL || out == NULL ||
	    sotls_conn_new(e->server ? g_srv_cfg : g_cli_cfg, e->fd, &c) != 0) {
		e->err = SOTLS_ERR_OUT_OF_MEMORY;
		goto out;
	}
	int rc;
	while ((rc = sotls_handshake(c)) == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
		if (wait_fd(e->fd, rc) != 0)
			break;
	if (rc != 0) {
		e->err = rc;
		snprintf(e->what, sizeof(e->what), "handshake: %s", sotls_conn_error_detail(c));
		goto out;
	}
	if (e->server) {
		for (;;) {
			ssize_t n = recv_some(e, c, buf, 70000);
			if (n == 0) {
				e->clean_close = true;
				break;
			}
			if (n < 0) {
				e->err = (int)n;
				break;
			}
			check(e, buf, (size_t)n);
			if ((rc = send_all(e, c, buf, (size_t)n)) != 0) {
				e->err = rc;
				break;
			}
		}
	} else {
		size_t sent = 0;
		while (sent < e->total && e->err == 0) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			size_t len = 1 + (size_t)(rng % e->max_msg);
			if (len > e->total - sent)
				len = e->total - sent;
			for (size_t i = 0; i < len; i++)
				out[i] = stream_byte(sent + i);
			if ((rc = send_all(e, c, out, len)) != 0) {
				e->err = rc;
				break;
			}
			sent += len;
			while (e->received < sent) {
				ssize_t n = recv_some(e, c, buf, 70000);
				if (n <= 0) {
					e->err = n == 0 ? SOTLS_ERR_CLOSED : (int)n;
					break;
				}
				check(e, buf, (size_t)n);
			}
		}
	}
	/* Close: both send close_notify and see the other's. */
	if (e->err == 0) {
		while ((rc = sotls_shutdown(c)) == SOTLS_WANT_WRITE)
			if (wait_fd(e->fd, rc) != 0)
				break;
		if (rc != 0)
			e->err = rc;
		else if (!e->server)
			e->clean_close = recv_some(e, c, buf, 70000) == 0;
	}
	if (e->err != 0 && e->what[0] == '\0')
		snprintf(e->what, sizeof(e->what), "%s", sotls_conn_error_detail(c));
out:
	sotls_conn_free(c);
	free(buf);
	free(out);
	return NULL;
}

static bool run_pair(const char *label, bool nonblock, size_t total, size_t max_msg,
		     uint64_t seed)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return false;
	if (nonblock)
		for (int i = 0; i < 2; i++)
			fcntl(sp[i], F_SETFL, fcntl(sp[i], F_GETFL) | O_NONBLOCK);
	struct end cl = {.fd = sp[0], .nonblock = nonblock, .total = total,
		      .max_msg = max_msg, .seed = seed};
	struct end sv = {.fd = sp[1], .server = true, .nonblock = nonblock, .seed = seed * 3};
	pthread_t t1, t2;
	pthread_create(&t1, NULL, run_end, &sv);
	pthread_create(&t2, NULL, run_end, &cl);
	pthread_join(t2, NULL);
	if (cl.err != 0) /* unblock the server if the client gave up */
		shutdown(sp[0], SHUT_RDWR);
	pthread_join(t1, NULL);
	close(sp[0]);
	close(sp[1]);
	bool ok = cl.err == 0 && sv.err == 0 && !cl.corrupt && !sv.corrupt && cl.clean_close &&
		  sv.clean_close && cl.received == total && sv.received == total;
	if (!ok)
		printf("FAIL %s: client %s (%s) echo %zu/%zu%s%s; server %s (%s) rx %zu%s%s\n", label,
		       sotls_strerror(cl.err), cl.what, cl.received, total,
		       cl.corrupt ? " CORRUPT" : "", cl.clean_close ? "" : " no-close_notify",
		       sotls_strerror(sv.err), sv.what, sv.received, sv.corrupt ? " CORRUPT" : "",
		       sv.clean_close ? "" : " no-close_notify");
	return ok;
}

static void stats(const char *what)
{
	printf("%s: %lu socket calls, %lu shortened, %lu EINTR, %lu EAGAIN\n", what,
	       atomic_load(&g_calls), atomic_load(&g_short), atomic_load(&g_eintr),
	       atomic_load(&g_eagain));
	atomic_store(&g_calls, 0);
	atomic_store(&g_short, 0);
	atomic_store(&g_eintr, 0);
	atomic_store(&g_eagain, 0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "blocking";
	static char cert[4096], key[4096];
	if (ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)) != 0)
		return 1;
	g_srv_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	g_cli_cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	if (sotls_config_set_cert_mem(g_srv_cfg, cert, strlen(cert) + 1, key, strlen(key) + 1) ||
	    sotls_config_set_ca_mem(g_cli_cfg, cert, strlen(cert) + 1) ||
	    sotls_config_set_server_name(g_cli_cfg, "localhost"))
		return 1;

	int failed = 0, runs = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	atomic_store(&g_shim.on, true);
	if (strcmp(mode, "blocking") == 0) {
		/* Every cap from 1 to 64 bytes, then sizes around the record
		 * boundaries; 1 call in 5 is EINTR. */
		static const size_t big[] = {100, 1000, 4095, 16384 + 29, 16384 + 30, 65536};
		atomic_store(&g_shim.eintr_pct, 20);
		for (size_t cap = 1; cap <= 64 + sizeof(big) / sizeof(big[0]); cap++) {
			size_t c = cap <= 64 ? cap : big[cap - 65];
			char label[64];
			snprintf(label, sizeof(label), "blocking cap=%zu", c);
			atomic_store(&g_shim.cap, c);
			runs++;
			/* Blocking ends send a whole message before reading the
			 * echo: message and echo must fit the socket buffers, which
			 * count every tiny write as a whole buffer. */
			size_t max_msg = 150 * c < 40000 ? 150 * c : 40000;
			failed += !run_pair(label, false, c < 16 ? 20000 : 100000, max_msg, c);
		}
		stats("blocking, caps 1..64 and 6 larger, 20% EINTR");
	} else if (strcmp(mode, "nonblocking") == 0) {
		atomic_store(&g_shim.cap, 0); /* random 1..len */
		atomic_store(&g_shim.eintr_pct, 10);
		atomic_store(&g_shim.eagain_pct, 30);
		atomic_store(&g_shim.eagain_max, 200);
		for (uint64_t seed = 1; seed <= 8; seed++) {
			char label[64];
			snprintf(label, sizeof(label), "nonblocking seed=%llu", (unsigned long long)seed);
			runs++;
			failed += !run_pair(label, true, 1 << 20, 40000, seed);
		}
		stats("non-blocking, random short calls, 10% EINTR, EAGAIN runs up to 200");
	} else {
		fprintf(stderr, "usage: fault blocking|nonblocking\n");
		return 2;
	}
	atomic_store(&g_shim.on, false);
	sotls_config_free(g_srv_cfg);
	sotls_config_free(g_cli_cfg);
	printf("%d of %d transfers intact and in order\n", runs - failed, runs);
	return failed == 0 ? 0 : 1;
}

/*
 * libFuzzer target: a real handshake between a sotls client and a sotls
 * server in one thread, through a relay that applies the fuzzer's mutations
 * to the records going each way, then application data both ways and
 * close_notify. Unlike fuzz-handshake-server/-client (where the input is the
 * whole peer stream and the handshake can never complete), every input
 * starts from a handshake that completes, so the paths behind it run under
 * the fuzzer too: key export, the sequence numbers handed to the record
 * layer, the kTLS attempt, records sealed with the real keys.
 *
 * Both sides draw their randomness from one deterministic generator reset
 * per input (sotls_hs_set_test_rng), so an input replays the same flights;
 * only the 4 time bytes of each hello random vary between runs.
 *
 * The input is a mutation program, 6 bytes per mutation:
 *   [0] bit 7: direction (0 client->server), bits 0-6: record index
 *   [1] operation (see mutate()), [2..3] position, [4] value, [5] length
 * Sanitizers, leaks and hangs are what is checked, and that a connection that
 * reports success carried exactly the bytes that were sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "handshake.h"
#include "sotls.h"

#define MAX_MUTATIONS 16
#define MAX_RECORD (5 + 16384 + 2048)
#define STEPS 200

struct mutation {
	uint8_t dir, index, op, value, len;
	uint16_t pos;
};

static struct mutation g_mut[MAX_MUTATIONS];
static size_t g_nmut;

/* ---- a deterministic generator (splitmix64) ---- */

static uint64_t g_rng_state;

static int test_rng(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	while (len > 0) {
		uint64_t z = (g_rng_state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		size_t n = len < 8 ? len : 8;
		memcpy(out, &z, n);
		out += n;
		len -= n;
	}
	return 0;
}

/* ---- the relay ---- */

struct pipe_dir {
	int from, to;
	uint8_t buf[2 * MAX_RECORD];
	size_t len;
	unsigned records;
	uint8_t dir;
	int eof;
};

static void put(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the peer is gone or its buffer is full: drop */
		p += w;
		n -= (size_t)w;
	}
}

/* One record out, after the mutations aimed at it. */
static void forward(struct pipe_dir *d, uint8_t *rec, size_t n)
{
	uint8_t out[MAX_RECORD + 256];
	memcpy(out, rec, n);
	size_t len = n;
	bool dropped = false, twice = false;
	for (size_t i = 0; i < g_nmut; i++) {
		const struct mutation *m = &g_mut[i];
		if (m->dir != d->dir || m->index != d->records || len < 5)
			continue;
		size_t at = len > 5 ? 5 + m->pos % (len - 5) : 5;
		switch (m->op % 8) {
		case 0: /* flip bits in the body */
			if (len > 5)
				out[at] ^= m->value | 1;
			break;
		case 1: /* change a header byte */
			out[m->pos % 5] ^= m->value | 1;
			break;
		case 2: /* cut the body, header fixed up */
			len = at;
			out[3] = (uint8_t)((len - 5) >> 8);
			out[4] = (uint8_t)(len - 5);
			break;
		case 3:
			dropped = true;
			break;
		case 4:
			twice = true;
			break;
		case 5: /* split into two records at the position */
			if (len > 6) {
				uint8_t first[5];
				memcpy(first, out, 5);
				first[3] = (uint8_t)((at - 5) >> 8);
				first[4] = (uint8_t)(at - 5);
				put(d->to, first, 5);
				put(d->to, out + 5, at - 5);
				memmove(out + 5, out + at, len - at);
				len = 5 + (len - at);
				out[3] = (uint8_t)((len - 5) >> 8);
				out[4] = (uint8_t)(len - 5);
			}
			break;
		case 6: { /* a record of the fuzzer's type and size before it */
			uint8_t inj[5 + 255] = {m->value, 3, 3, 0, m->len};
			memset(inj + 5, m->value, m->len);
			put(d->to, inj, 5 + (size_t)m->len);
			break;
		}
		default: /* insert bytes, header not fixed up */
			if (len + m->len <= sizeof(out)) {
				memmove(out + at + m->len, out + at, len - at);
				memset(out + at, m->value, m->len);
				len += m->len;
			}
			break;
		}
	}
	d->records++;
	if (!dropped)
		put(d->to, out, len);
	if (twice)
		put(d->to, out, len);
}

/* Moves what has arrived; whole records go out one at a time. */
static void pump(struct pipe_dir *d)
{
	for (;;) {
		if (d->len == sizeof(d->buf)) {
			put(d->to, d->buf, d->len); /* not records any more */
			d->len = 0;
		}
		ssize_t n = recv(d->from, d->buf + d->len, sizeof(d->buf) - d->len, MSG_DONTWAIT);
		if (n == 0 && !d->eof) {
			d->eof = 1;
			shutdown(d->to, SHUT_WR);
		}
		if (n <= 0)
			break;
		d->len += (size_t)n;
	}
	size_t off = 0;
	while (d->len - off >= 5) {
		size_t n = 5 + ((size_t)d->buf[off + 3] << 8 | d->buf[off + 4]);
		if (d->len - off < n)
			break;
		forward(d, d->buf + off, n);
		off += n;
	}
	memmove(d->buf, d->buf + off, d->len - off);
	d->len -= off;
	if (d->eof && d->len > 0) {
		put(d->to, d->buf, d->len); /* a torn last record */
		d->len = 0;
	}
}

/* ---- one side ---- */

struct side {
	struct sotls_conn *c;
	int fd;
	bool done, failed, closing;
	size_t sent, got;
	uint8_t in[4096];
};

static const uint8_t MSG[1000] = {1};

static bool busy(int rc)
{
	return rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE;
}

/* Handshake, then send MSG, read the peer's MSG, close_notify. */
static void step(struct side *s)
{
	if (s->done || s->failed)
		return;
	int rc = sotls_handshake(s->c);
	if (busy(rc))
		return;
	if (rc != 0) {
		s->failed = true;
		(void)sotls_conn_error_detail(s->c);
		return;
	}
	while (s->sent < sizeof(MSG)) {
		ssize_t n = sotls_send(s->c, MSG + s->sent, sizeof(MSG) - s->sent);
		if (busy((int)n))
			return;
		if (n <= 0) {
			s->failed = true;
			return;
		}
		s->sent += (size_t)n;
	}
	for (;;) {
		if (s->got == sizeof(MSG) && !s->closing) {
			int r = sotls_shutdown(s->c);
			if (busy(r))
				return;
			if (r != 0) {
				s->failed = true;
				return;
			}
			s->closing = true;
		}
		ssize_t n = sotls_recv(s->c, s->in, sizeof(s->in));
		if (busy((int)n))
			return;
		if (n < 0) {
			s->failed = true;
			return;
		}
		if (n == 0) {
			/* A clean end must have carried MSG unchanged. */
			if (s->got != sizeof(MSG))
				abort();
			s->done = true;
			return;
		}
		if (s->got + (size_t)n > sizeof(MSG) || memcmp(s->in, MSG + s->got, (size_t)n) != 0)
			abort(); /* bytes that were never sent reached the caller */
		s->got += (size_t)n;
	}
}

static struct sotls_config *g_server, *g_client;

static void setup(void)
{
	g_server = ephemeral_server_config("localhost");
	g_client = sotls_config_new(SOTLS_ROLE_CLIENT);
	if (g_server == NULL || g_client == NULL ||
	    sotls_config_set_verify(g_client, SOTLS_VERIFY_NONE) != 0)
		abort();
	sotls_hs_set_test_rng(test_rng, NULL);
}

static void nonblocking_pair(int sp[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	for (int i = 0; i < 2; i++) {
		int big = 256 * 1024;
		setsockopt(sp[i], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
		setsockopt(sp[i], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		fcntl(sp[i], F_SETFL, O_NONBLOCK);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_server == NULL)
		setup();
	g_rng_state = 0x736f746c73ull;
	g_nmut = 0;
	for (size_t i = 0; i + 6 <= size && g_nmut < MAX_MUTATIONS; i += 6) {
		struct mutation *m = &g_mut[g_nmut++];
		m->dir = data[i] >> 7;
		m->index = data[i] & 0x7f;
		m->op = data[i + 1];
		m->pos = (uint16_t)(data[i + 2] << 8 | data[i + 3]);
		m->value = data[i + 4];
		m->len = data[i + 5];
	}

	int cs[2], ss[2];
	nonblocking_pair(cs);
	nonblocking_pair(ss);
	struct side cli = {.fd = cs[0]}, srv = {.fd = ss[0]};
	static struct pipe_dir c2s, s2c;
	c2s = (struct pipe_dir){.from = cs[1], .to = ss[1], .dir = 0};
	s2c = (struct pipe_dir){.from = ss[1], .to = cs[1], .dir = 1};
	if (sotls_conn_new(g_client, cli.fd, &cli.c) != 0 ||
	    sotls_conn_new(g_server, srv.fd, &srv.c) != 0)
		abort();
	for (int i = 0; i < STEPS && !((cli.done || cli.failed) && (srv.done || srv.failed)); i++) {
		step(&cli);
		pump(&c2s);
		step(&srv);
		pump(&s2c);
		if ((cli.failed || cli.done) && !(srv.done || srv.failed))
			shutdown(cs[0], SHUT_RDWR); /* so the server sees the end */
		if ((srv.failed || srv.done) && !(cli.done || cli.failed))
			shutdown(ss[0], SHUT_RDWR);
	}
	/* With no mutation the exchange must complete, cleanly, both ways. */
	if (g_nmut == 0 && !(cli.done && srv.done))
		abort();
	sotls_conn_free(cli.c);
	sotls_conn_free(srv.c);
	close(cs[0]);
	close(cs[1]);
	close(ss[0]);
	close(ss[1]);
	return 0;
}

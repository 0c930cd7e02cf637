/*
 * libFuzzer target: the userspace record layer (lib/record) after a valid key
 * set-up, receiving a stream the input describes, or sending the caller's
 * data in chunks the input chooses and reading it back.
 *
 * byte 0: bit 0 the key size (128/256), q = byte 0 >> 1: q % 10 the read
 * size. q < 10 is the original format: ARIA, sequence number 0, blocking
 * reads, the receive side; the ops start at byte 1 (the committed seeds
 * before issue 15 are all of this kind). q >= 10 adds a flags byte:
 *   bit 0  AES-GCM instead of ARIA-GCM
 *   bit 1  8 bytes follow: the first sequence number, big-endian
 *   bit 2  non-blocking reads: a count byte k then k piece sizes follow; the
 *          stream reaches the socket in those k pieces, then the rest, and
 *          the record layer meets EAGAIN (SOTLS_WANT_READ) after each piece
 *   bit 3  the send side (see send_side below) instead of the receive side;
 *          one more byte picks the sender's socket buffer
 *
 * Receive side: the ops build the byte stream the record layer reads, so the
 * fuzzer reaches past the AEAD check; each is one byte op and its operands:
 *     op % 4 == 0  raw bytes: n = next byte, then n bytes copied as they are
 *     op % 4 == 1  a record sealed correctly: type from op >> 2, length from the
 *                  next two bytes, the plaintext from the input
 *     op % 4 == 2  the same sealed with a wrong sequence number
 *     op % 4 == 3  a correctly sealed record whose header byte (op >> 2) % 5
 *                  is then changed by the next byte
 * then EOF. Oracle (beyond the sanitizers): every byte sotls_record_recv
 * hands out is a prefix of the application data of the correctly sealed
 * records that came before the first op that damaged the stream, and none of
 * a record sealed at sequence number 2^64 - 1 (it may not be used); a stream
 * that is not damaged delivers all of it and then SOTLS_ERR_TRUNCATED, while
 * the sequence numbers stay below the default AEAD usage limit; after an error
 * every later call returns the same error; WANT_READ never comes once the
 * whole stream and EOF are in the socket.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aead.h"
#include "record.h"
#include "record_forge.h"
#include "sotls.h"
#include "util.h"

#define MAX_STREAM (150 * 1024)
/* The send side seals at most this much per input (time per execution):
 * four batches of four full records. */
#define MAX_SENT (256 * 1024)
/* Sequence numbers from here on may meet the AEAD usage limit (2^24 records
 * per key by default, shared-interface.md), where the layer closes instead. */
#define LIVENESS_SEQ_BOUND ((uint64_t)1 << 24)
#define MAX_PIECES 64

#define FLAG_AES 1
#define FLAG_SEQ 2
#define FLAG_NONBLOCK 4
#define FLAG_SEND 8

static const uint8_t KEY[32] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3,
				4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				17, 18, 19, 20, 21, 22, 23, 24};
static const uint8_t TX_KEY[32] = {0xee};
static const uint8_t SALT[4] = {0xca, 0xfe, 0xba, 0xbe};
static const size_t READ_SIZES[] = {1, 2, 5, 13, 100, 1000, 4096, 16384, 16385, 65536};
#define N_READ_SIZES (sizeof(READ_SIZES) / sizeof(READ_SIZES[0]))

/* What the input's header chose. */
struct setup {
	enum sotls_aead_alg alg;
	size_t rsize;
	unsigned flags;
	uint64_t seq0;
	size_t pieces[MAX_PIECES], npieces;
	int sndbuf;
};

struct gen {
	uint8_t *stream;
	size_t len;
	uint8_t *expect; /* application data of the good records */
	size_t expect_len;
	bool damaged;	/* an op that ends the stream came */
	bool control;	/* a valid alert or handshake record came */
	uint64_t seq, nrec;
	bool at_max;	/* a good record was sealed at sequence number 2^64 - 1 */
	size_t expect_at_max; /* expect_len then */
	struct forge_keys keys;
};

static void put(struct gen *g, const uint8_t *p, size_t n)
{
	memcpy(g->stream + g->len, p, n);
	g->len += n;
}

/* Seals one record at the end of the stream; returns its start. */
static uint8_t *seal(struct gen *g, uint8_t type, uint64_t seq, const uint8_t *pt, size_t n)
{
	uint8_t *p = g->stream + g->len;
	g->len += forge_seal(&g->keys, seq, type, pt, n, p);
	return p;
}

/* The next good record's sequence number. */
static uint64_t next_seq(struct gen *g)
{
	if (g->seq == UINT64_MAX && !g->at_max && !g->damaged && !g->control) {
		g->at_max = true;
		g->expect_at_max = g->expect_len;
	}
	g->nrec++;
	return g->seq++;
}

static const uint8_t TYPES[] = {23, 21, 22, 20, 24, 0};

static void build(struct gen *g, const uint8_t *data, size_t size, size_t i)
{
	while (i < size) {
		uint8_t op = data[i++];
		if (op % 4 == 0) {
			size_t n = i < size ? data[i++] : 0;
			if (n > size - i)
				n = size - i;
			if (g->len + n > MAX_STREAM)
				return;
			put(g, data + i, n);
			i += n;
			if (n > 0)
				g->damaged = true;
			continue;
		}
		uint8_t type = TYPES[(op >> 2) % sizeof(TYPES)];
		size_t n = 0;
		if (i + 2 <= size) {
			n = ((size_t)data[i] << 8 | data[i + 1]) % (SOTLS_REC_MAX_PLAINTEXT + 2);
			i += 2;
		}
		if (n > size - i)
			n = size - i; /* short input: use what is there */
		if (g->len + n + SOTLS_REC_OVERHEAD > MAX_STREAM)
			return;
		const uint8_t *pt = data + i;
		i += n;
		if (op % 4 == 1) {
			seal(g, type, next_seq(g), pt, n);
			if (n > SOTLS_REC_MAX_PLAINTEXT || (type != 23 && type != 21 && type != 22))
				g->damaged = true; /* refused: the stream ends here */
			else if (type != 23)
				g->control = true; /* an alert or a renegotiation may end it */
			else if (!g->damaged) {
				memcpy(g->expect + g->expect_len, pt, n);
				g->expect_len += n;
			}
		} else if (op % 4 == 2) {
			seal(g, type, g->seq + 1 + (op >> 4), pt, n);
			g->damaged = true;
		} else {
			uint8_t *p = seal(g, type, next_seq(g), pt, n);
			uint8_t delta = i < size ? data[i++] : 1;
			p[(op >> 2) % 5] ^= delta ? delta : 1;
			g->damaged = true;
		}
	}
}

/* Reads the header; returns where the ops start. */
static size_t parse_setup(const uint8_t *data, size_t size, struct setup *s)
{
	size_t i = 1;
	unsigned q = data[0] >> 1;
	bool big = data[0] & 1;

	memset(s, 0, sizeof(*s));
	s->rsize = READ_SIZES[q % N_READ_SIZES];
	if (q >= 10 && i < size)
		s->flags = data[i++];
	s->alg = (s->flags & FLAG_AES) ? (big ? SOTLS_AEAD_AES_256_GCM : SOTLS_AEAD_AES_128_GCM)
				       : (big ? SOTLS_AEAD_ARIA_256_GCM : SOTLS_AEAD_ARIA_128_GCM);
	if ((s->flags & FLAG_SEQ) && i + 8 <= size) {
		s->seq0 = sotls_load_be64(data + i);
		i += 8;
	}
	if ((s->flags & FLAG_NONBLOCK) && i < size) {
		size_t k = data[i++] % MAX_PIECES + 1;
		for (; s->npieces < k && i < size; i++) {
			/* Small pieces split headers and tags; large ones span records. */
			uint8_t v = data[i];
			s->pieces[s->npieces++] = v < 200 ? (size_t)v + 1 : (size_t)(v - 199) * 1024;
		}
	}
	if (s->flags & FLAG_SEND) {
		static const int SNDBUFS[] = {0, 4096, 20000, 200000};
		s->sndbuf = SNDBUFS[(i < size ? data[i++] : 0) % 4];
	}
	return i;
}

static void set_nonblock(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		abort();
}

static void send_raw(int fd, const uint8_t *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, p + off, n - off, MSG_DONTWAIT);
		if (w <= 0)
			abort(); /* the buffer must hold the whole stream */
		off += (size_t)w;
	}
}

/* Reads until the layer wants more bytes than the socket has (or fails, or
 * closes); returns the last result. */
static ssize_t drain(struct sotls_record *r, uint8_t *buf, size_t rsize, uint8_t *out,
		     size_t *got, size_t cap)
{
	for (;;) {
		ssize_t rc = sotls_record_recv(r, buf, rsize);
		if (rc <= 0)
			return rc;
		if ((size_t)rc > rsize || *got + (size_t)rc > cap)
			abort();
		memcpy(out + *got, buf, (size_t)rc);
		*got += (size_t)rc;
	}
}

/* Errors are sticky: the next recv says the same, and a send fails. */
static void check_sticky(struct sotls_record *r, ssize_t rc, uint8_t *buf, size_t rsize)
{
	if (rc < 0 && rc != SOTLS_WANT_READ && sotls_record_recv(r, buf, rsize) != rc)
		abort();
	if (rc < 0 && rc != SOTLS_WANT_READ && rc != SOTLS_ERR_TRUNCATED &&
	    sotls_record_send(r, buf, 1) >= 0)
		abort();
}

static bool below_limit(uint64_t seq0, uint64_t nrec)
{
	return seq0 <= LIVENESS_SEQ_BOUND && nrec <= LIVENESS_SEQ_BOUND - seq0;
}

static void receive_side(const struct setup *s, const uint8_t *data, size_t size, size_t ops)
{
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.seq = s->seq0;
	g.stream = malloc(MAX_STREAM);
	g.expect = malloc(MAX_STREAM);
	uint8_t *out = malloc(MAX_STREAM + 65536);
	uint8_t *buf = malloc(s->rsize);
	if (!g.stream || !g.expect || !out || !buf ||
	    forge_init(&g.keys, s->alg, KEY, SALT) != 0)
		abort();
	build(&g, data, size, ops);

	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	int big = 4 * MAX_STREAM;
	setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));

	struct sotls_record r;
	struct sotls_wire w = {.fd = sp[0]};
	struct sotls_dir_keys tx = {TX_KEY, SALT, s->seq0}, rx = {KEY, SALT, s->seq0};
	if (sotls_record_init(&r, &w, s->alg, &tx, &rx, NULL, 0) != 0)
		abort();
	size_t got = 0, off = 0;
	ssize_t rc = SOTLS_WANT_READ;
	if (s->flags & FLAG_NONBLOCK) {
		set_nonblock(sp[0]);
		for (size_t p = 0; p < s->npieces && off < g.len && rc == SOTLS_WANT_READ; p++) {
			size_t n = s->pieces[p];
			if (n > g.len - off)
				n = g.len - off;
			send_raw(sp[1], g.stream + off, n);
			off += n;
			rc = drain(&r, buf, s->rsize, out, &got, MAX_STREAM + 65536);
		}
	}
	if (rc == SOTLS_WANT_READ) {
		send_raw(sp[1], g.stream + off, g.len - off);
		shutdown(sp[1], SHUT_WR);
		rc = drain(&r, buf, s->rsize, out, &got, MAX_STREAM + 65536);
		/* Everything and EOF are there: no reason left to wait. */
		if (rc == SOTLS_WANT_READ)
			abort();
	}
	/* Never a byte that was not sealed by the peer, never out of order,
	 * never one after a record that failed, none at sequence 2^64 - 1. */
	if (got > g.expect_len || memcmp(out, g.expect, got) != 0)
		abort();
	if (g.at_max && got > g.expect_at_max)
		abort();
	/* An undamaged stream delivers everything, then TRUNCATED at EOF. */
	if (!g.damaged && !g.control && below_limit(s->seq0, g.nrec) &&
	    (got != g.expect_len || rc != SOTLS_ERR_TRUNCATED))
		abort();
	check_sticky(&r, rc, buf, s->rsize);

	sotls_record_free(&r);
	close(sp[0]);
	close(sp[1]);
	forge_clear(&g.keys);
	free(g.stream);
	free(g.expect);
	free(out);
	free(buf);
}

/* ---- the send side ------------------------------------------------------- */

/*
 * A sending record layer and a receiving one on a non-blocking socketpair,
 * with the same keys and first sequence number. Ops:
 *     op % 4 == 0  send a chunk: two bytes of length (0..65535)
 *     op % 4 == 1  the receiver reads what is there, read size from op >> 2
 *     op % 4 == 2  send a short chunk of op >> 2 bytes (0..63)
 *     op % 4 == 3  close_notify now, and no more ops
 * then close_notify, and the receiver reads to the end. A send that meets a
 * full socket (WANT_WRITE or a short count) lets the receiver read, then
 * goes on with the rest, passing again the bytes not yet reported, as
 * sotls_send's contract asks. Oracle: the receiver gets exactly the bytes
 * sent, then 0 (the close_notify); unless the sequence numbers reach 2^64 - 1,
 * where the sender must fail with SOTLS_ERR_SEQUENCE_OVERFLOW, the receiver
 * having had a prefix.
 */
struct pair {
	struct sotls_record tx, rx;
	uint8_t *sent, *got, *buf;
	size_t sent_len, got_len;
	ssize_t rx_rc;
};

static uint8_t sent_byte(size_t i)
{
	return (uint8_t)((i * 0x9E3779B1u) >> 13);
}

static void pair_read(struct pair *p, size_t rsize)
{
	size_t before = p->got_len;
	p->rx_rc = drain(&p->rx, p->buf, rsize, p->got, &p->got_len, MAX_SENT);
	if (p->got_len > p->sent_len ||
	    memcmp(p->got + before, p->sent + before, p->got_len - before) != 0)
		abort();
}

/* Sends len more bytes; returns 0 or the sender's error. */
static ssize_t pair_send(struct pair *p, size_t len)
{
	size_t start = p->sent_len, done = 0;
	for (size_t i = 0; i < len; i++)
		p->sent[start + i] = sent_byte(start + i);
	p->sent_len += len;
	unsigned stuck = 0;
	do {
		ssize_t rc = sotls_record_send(&p->tx, p->sent + start + done, len - done);
		if (rc > 0) {
			if ((size_t)rc > len - done)
				abort();
			done += (size_t)rc;
			stuck = 0;
		} else if (rc == SOTLS_WANT_WRITE || (rc == 0 && len > 0)) {
			/* Reading makes room; a socketpair that stays full is a bug. */
			pair_read(p, 65536);
			if (++stuck > 1000)
				abort();
		} else if (rc < 0) {
			/* Records sealed before the failure may have gone out
			 * unreported: all of the chunk counts as sent. */
			return rc;
		}
	} while (done < len);
	return 0;
}

static int pair_shutdown(struct pair *p)
{
	for (unsigned tries = 0; tries < 1000; tries++) {
		int rc = sotls_record_shutdown(&p->tx);
		if (rc != SOTLS_WANT_WRITE)
			return rc;
		pair_read(p, 65536);
	}
	abort();
}

static void send_side(const struct setup *s, const uint8_t *data, size_t size, size_t i)
{
	struct pair p;
	memset(&p, 0, sizeof(p));
	p.sent = malloc(MAX_SENT);
	p.got = malloc(MAX_SENT);
	p.buf = malloc(65536);
	int sp[2];
	if (!p.sent || !p.got || !p.buf || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	if (s->sndbuf > 0)
		setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &s->sndbuf, sizeof(s->sndbuf));
	set_nonblock(sp[0]);
	set_nonblock(sp[1]);
	struct sotls_dir_keys a = {KEY, SALT, s->seq0}, b = {TX_KEY, SALT, s->seq0};
	struct sotls_wire wtx = {.fd = sp[1]}, wrx = {.fd = sp[0]};
	if (sotls_record_init(&p.tx, &wtx, s->alg, &a, &b, NULL, 0) != 0 ||
	    sotls_record_init(&p.rx, &wrx, s->alg, &b, &a, NULL, 0) != 0)
		abort();

	ssize_t err = 0;
	bool closed = false;
	while (i < size && err == 0 && !closed) {
		uint8_t op = data[i++];
		size_t len = 0;
		switch (op % 4) {
		case 0:
			if (i + 2 <= size)
				len = (size_t)data[i] << 8 | data[i + 1];
			i += 2;
			break;
		case 1:
			pair_read(&p, READ_SIZES[(op >> 2) % N_READ_SIZES]);
			continue;
		case 2:
			len = op >> 2;
			break;
		default:
			closed = true;
			continue;
		}
		if (p.sent_len + len > MAX_SENT)
			break;
		err = pair_send(&p, len);
	}
	/* A sender that met the usage limit has close_notify (and records it
	 * reported as sent) to flush on a non-blocking socket: sotls_shutdown
	 * does that, as an application must call it. The limit's last sequence
	 * number is kept for close_notify (record.c, seal_at), so a sender that
	 * starts there refuses data but still closes cleanly; only one that
	 * starts at the limit or beyond can seal nothing at all. */
	bool started_past = s->seq0 >= LIVENESS_SEQ_BOUND;
	if (err == 0)
		err = pair_shutdown(&p);
	else if (err == SOTLS_ERR_KEY_USAGE_LIMIT && !started_past)
		(void)pair_shutdown(&p);
	/* The receiver reads to the end: the close_notify, or what the
	 * sender's failure left (nothing more arrives: EOF). */
	shutdown(sp[1], SHUT_WR);
	pair_read(&p, s->rsize);
	if (err == 0) {
		if (p.rx_rc != 0 || p.got_len != p.sent_len)
			abort();
	} else if (err == SOTLS_ERR_KEY_USAGE_LIMIT) {
		/* The sender reached the usage limit: it closed with
		 * close_notify (the last sequence number below the limit is
		 * kept for it), so the receiver ends cleanly after what was
		 * sealed before; a sender that started past the limit can send
		 * nothing at all, so the receiver sees the stream end. */
		if (below_limit(s->seq0, p.tx.tx_records + 2) ||
		    p.rx_rc != (started_past ? SOTLS_ERR_TRUNCATED : 0) || p.got_len > p.sent_len ||
		    sotls_record_send(&p.tx, p.buf, 1) != err)
			abort();
	} else {
		/* Only running out of sequence numbers fails a sender whose
		 * peer reads everything. */
		if (err != SOTLS_ERR_SEQUENCE_OVERFLOW || below_limit(s->seq0, p.tx.tx_records))
			abort();
		if (p.rx_rc >= 0 || sotls_record_send(&p.tx, p.buf, 1) != err)
			abort();
	}
	check_sticky(&p.rx, p.rx_rc, p.buf, s->rsize);
	sotls_record_free(&p.tx);
	sotls_record_free(&p.rx);
	close(sp[0]);
	close(sp[1]);
	free(p.sent);
	free(p.got);
	free(p.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct setup s;
	size_t ops = parse_setup(data, size, &s);
	if (s.flags & FLAG_SEND)
		send_side(&s, data, size, ops);
	else
		receive_side(&s, data, size, ops);
	return 0;
}

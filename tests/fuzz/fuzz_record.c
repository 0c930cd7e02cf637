/*
 * libFuzzer target: the record layer's stream parser (sotls_record_recv) on
 * arbitrary bytes after a valid key set-up.
 *
 * The input is a small program that builds the byte stream the record layer
 * reads, so the fuzzer reaches past the AEAD check:
 *   byte 0: bit 0 the AEAD (ARIA-128/256-GCM), bits 1..7 the read size
 *   then ops, each one byte op followed by its operands:
 *     op % 4 == 0  raw bytes: n = next byte, then n bytes copied as they are
 *     op % 4 == 1  a record sealed correctly: type from op >> 2, length from the
 *                  next two bytes, the plaintext from the input
 *     op % 4 == 2  the same sealed with a wrong sequence number
 *     op % 4 == 3  a correctly sealed record whose header byte (op >> 2) % 5
 *                  is then changed by the next byte
 * The stream goes through a socketpair, then EOF.
 *
 * Oracle (beyond the sanitizers): every byte sotls_record_recv hands out is a
 * prefix of the application data of the correctly sealed records that came
 * before the first op that damaged the stream; after an error every later
 * call returns the same error.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aead.h"
#include "record.h"
#include "sotls.h"
#include "util.h"

#define MAX_STREAM (150 * 1024)

static const uint8_t KEY[32] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3,
				4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				17, 18, 19, 20, 21, 22, 23, 24};
static const uint8_t TX_KEY[32] = {0xee};
static const uint8_t SALT[4] = {0xca, 0xfe, 0xba, 0xbe};

struct gen {
	uint8_t *stream;
	size_t len;
	uint8_t *expect; /* application data of the good records */
	size_t expect_len;
	bool damaged;	/* an op that ends the stream came */
	bool control;	/* a valid alert or handshake record came */
	uint64_t seq;
	struct sotls_aead aead;
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
	size_t frag = 8 + n + 16;
	p[0] = type;
	p[1] = 3;
	p[2] = 3;
	p[3] = (uint8_t)(frag >> 8);
	p[4] = (uint8_t)frag;
	sotls_store_be64(p + 5, seq);
	uint8_t nonce[12], aad[13];
	memcpy(nonce, SALT, 4);
	memcpy(nonce + 4, p + 5, 8);
	sotls_store_be64(aad, seq);
	aad[8] = type;
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(n >> 8);
	aad[12] = (uint8_t)n;
	if (sotls_aead_seal(&g->aead, nonce, aad, sizeof(aad), pt, n, p + 13, p + 13 + n) != 0)
		abort();
	g->len += 5 + frag;
	return p;
}

static const uint8_t TYPES[] = {23, 21, 22, 20, 24, 0};

static void build(struct gen *g, const uint8_t *data, size_t size)
{
	size_t i = 1;
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
			seal(g, type, g->seq++, pt, n);
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
			uint8_t *p = seal(g, type, g->seq++, pt, n);
			uint8_t delta = i < size ? data[i++] : 1;
			p[(op >> 2) % 5] ^= delta ? delta : 1;
			g->damaged = true;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum sotls_aead_alg alg = (data[0] & 1) ? SOTLS_AEAD_ARIA_256_GCM : SOTLS_AEAD_ARIA_128_GCM;
	static const size_t READ_SIZES[] = {1, 2, 5, 13, 100, 1000, 4096, 16384, 16385, 65536};
	size_t rsize = READ_SIZES[(data[0] >> 1) % (sizeof(READ_SIZES) / sizeof(READ_SIZES[0]))];

	struct gen g;
	memset(&g, 0, sizeof(g));
	g.stream = malloc(MAX_STREAM);
	g.expect = malloc(MAX_STREAM);
	uint8_t *out = malloc(MAX_STREAM + 65536);
	uint8_t *buf = malloc(rsize);
	if (!g.stream || !g.expect || !out || !buf ||
	    sotls_aead_init(&g.aead, alg, KEY, sotls_aead_key_len(alg)) != 0)
		abort();
	build(&g, data, size);

	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	int big = 4 * MAX_STREAM;
	setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	for (size_t off = 0; off < g.len;) {
		ssize_t w = send(sp[1], g.stream + off, g.len - off, MSG_DONTWAIT);
		if (w <= 0)
			abort(); /* the buffer must hold the whole stream */
		off += (size_t)w;
	}
	shutdown(sp[1], SHUT_WR);

	struct sotls_record r;
	struct sotls_rec_keys tx = {TX_KEY, SALT, 0}, rx = {KEY, SALT, 0};
	if (sotls_record_init(&r, sp[0], alg, &tx, &rx, NULL, 0) != 0)
		abort();
	size_t got = 0;
	ssize_t rc;
	for (;;) {
		rc = sotls_record_recv(&r, buf, rsize);
		if (rc <= 0)
			break;
		if ((size_t)rc > rsize)
			abort();
		memcpy(out + got, buf, (size_t)rc);
		got += (size_t)rc;
	}
	/* Never a byte that was not sealed by the peer, never out of order,
	 * never one after a record that failed. */
	if (got > g.expect_len || memcmp(out, g.expect, got) != 0)
		abort();
	/* An undamaged stream delivers everything, then TRUNCATED at EOF. */
	if (!g.damaged && !g.control && (got != g.expect_len || rc != SOTLS_ERR_TRUNCATED))
		abort();
	/* Errors are sticky. */
	if (rc < 0 && sotls_record_recv(&r, buf, rsize) != rc)
		abort();
	if (rc < 0 && rc != SOTLS_ERR_TRUNCATED && sotls_record_send(&r, buf, 1) >= 0)
		abort();

	sotls_record_free(&r);
	close(sp[0]);
	close(sp[1]);
	sotls_aead_clear(&g.aead);
	free(g.stream);
	free(g.expect);
	free(out);
	free(buf);
	return 0;
}

/*
 * The userspace record layer (lib/record): framing across every split point,
 * each malformed or hostile input with its alert and error and no plaintext
 * released, sequence numbers, close_notify, the caps on records that deliver
 * nothing, alert levels, post-handshake handshake messages, the key usage
 * limit, partial writes, buffers lent only while in use. Two record layers talk over a non-blocking socketpair; "raw"
 * records are sealed by hand with the AEAD to make hostile input.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "record.h"
#include "sotls.h"
#include "util.h"

static const uint8_t K_AB[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t K_BA[32] = {0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18,
				 0x29, 0x3a, 0x4b, 0x5c, 0x6d, 0x7e, 0x8f, 0x90,
				 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
				 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01};
static const uint8_t S_AB[4] = {0xde, 0xad, 0xbe, 0xef};
static const uint8_t S_BA[4] = {0x01, 0x23, 0x45, 0x67};


/* The AEAD every record test runs over (main: ARIA-128-GCM, or AES-128-GCM
 * with "aes"): the record layer is one for both, and so are its tests. */
static enum sotls_aead_alg g_alg = SOTLS_AEAD_ARIA_128_GCM;

/* A talks to B: A sends with (K_AB, S_AB), B sends with (K_BA, S_BA). */
struct pair {
	int fd[2];
	struct sotls_wire wa, wb;
	struct sotls_record a, b;
	enum sotls_aead_alg alg;
};

static void set_nonblock(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

static void pair_open(struct pair *p, enum sotls_aead_alg alg, uint64_t seq_ab, uint64_t seq_ba)
{
	memset(p, 0, sizeof(*p));
	p->alg = alg;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd), 0);
	set_nonblock(p->fd[0]);
	set_nonblock(p->fd[1]);
	p->wa.fd = p->fd[0];
	p->wb.fd = p->fd[1];
	struct sotls_dir_keys ab = {K_AB, S_AB, seq_ab}, ba = {K_BA, S_BA, seq_ba};
	assert_int_equal(sotls_record_init(&p->a, &p->wa, alg, &ab, &ba, NULL, 0), 0);
	assert_int_equal(sotls_record_init(&p->b, &p->wb, alg, &ba, &ab, NULL, 0), 0);
}

static void pair_close(struct pair *p)
{
	sotls_record_free(&p->a);
	sotls_record_free(&p->b);
	if (p->fd[0] >= 0)
		close(p->fd[0]);
	if (p->fd[1] >= 0)
		close(p->fd[1]);
}

static uint8_t *pattern(size_t len, uint8_t seed)
{
	uint8_t *d = malloc(len ? len : 1);
	assert_non_null(d);
	uint32_t x = 0x9e3779b9u * (seed + 1u);
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		d[i] = (uint8_t)x;
	}
	return d;
}

/* Moves len bytes from one record layer to the other, both non-blocking,
 * interleaving sends and receives; checks the result. */
static void pump(struct sotls_record *tx, struct sotls_record *rx, const uint8_t *data, size_t len,
		 size_t recv_chunk)
{
	uint8_t *got = malloc(len + 1);
	uint8_t *chunk = malloc(recv_chunk);
	size_t sent = 0, recvd = 0;
	int idle = 0;

	assert_non_null(got);
	assert_non_null(chunk);
	while (recvd < len) {
		int progress = 0;
		if (sent < len) {
			ssize_t n = sotls_record_send(tx, data + sent, len - sent);
			if (n > 0) {
				sent += (size_t)n;
				progress = 1;
			} else {
				assert_int_equal(n, SOTLS_WANT_WRITE);
			}
		}
		ssize_t n = sotls_record_recv(rx, chunk, recv_chunk);
		if (n > 0) {
			assert_true(recvd + (size_t)n <= len);
			memcpy(got + recvd, chunk, (size_t)n);
			recvd += (size_t)n;
			progress = 1;
		} else {
			assert_int_equal(n, SOTLS_WANT_READ);
		}
		idle = progress ? 0 : idle + 1;
		assert_true(idle < 1000);
	}
	assert_memory_equal(got, data, len);
	free(got);
	free(chunk);
}

/* ---- hand-made records ---- */

/* Seals a record as the peer with (key, salt) would; returns its length.
 * len_override >= 0 replaces the length field. */
static size_t craft(uint8_t *out, enum sotls_aead_alg alg, const uint8_t *key, const uint8_t *salt,
		    uint64_t seq, uint64_t explicit_nonce, uint8_t type, uint16_t version,
		    const uint8_t *pt, size_t len)
{
	struct sotls_aead a;
	uint8_t nonce[12], aad[13];

	assert_int_equal(sotls_aead_init(&a, alg, key, sotls_aead_key_len(alg)), 0);
	size_t frag = 8 + len + 16;
	out[0] = type;
	out[1] = (uint8_t)(version >> 8);
	out[2] = (uint8_t)version;
	out[3] = (uint8_t)(frag >> 8);
	out[4] = (uint8_t)frag;
	sotls_store_be64(out + 5, explicit_nonce);
	memcpy(nonce, salt, 4);
	memcpy(nonce + 4, out + 5, 8);
	sotls_store_be64(aad, seq);
	aad[8] = type;
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(len >> 8);
	aad[12] = (uint8_t)len;
	assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, len, out + 13, out + 13 + len), 0);
	sotls_aead_clear(&a);
	return 5 + frag;
}

/* A record from B's side toward A (B's key, B's salt). */
static size_t craft_ba(uint8_t *out, uint64_t seq, uint8_t type, const uint8_t *pt, size_t len)
{
	return craft(out, g_alg, K_BA, S_BA, seq, seq, type, 0x0303, pt, len);
}

static void write_all(int fd, const uint8_t *d, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, d, len);
		assert_true(n > 0);
		d += n;
		len -= (size_t)n;
	}
}

/* Reads one record sent by A toward B and opens it with A's key. Returns
 * the plaintext length, fills type and pt. */
static size_t read_from_a(int fd, uint64_t seq, uint8_t *type, uint8_t *pt)
{
	uint8_t buf[SOTLS_REC_HEADER + SOTLS_REC_MAX_CIPHERTEXT];
	size_t have = 0, need = 5;
	while (have < need) {
		ssize_t n = read(fd, buf + have, need - have);
		assert_true(n > 0);
		have += (size_t)n;
		if (have == 5)
			need = 5 + (((size_t)buf[3] << 8) | buf[4]);
	}
	size_t len = need - 5 - 8 - 16;
	struct sotls_aead a;
	uint8_t nonce[12], aad[13];
	assert_int_equal(sotls_aead_init(&a, g_alg, K_AB, 16), 0);
	memcpy(nonce, S_AB, 4);
	memcpy(nonce + 4, buf + 5, 8);
	assert_int_equal(sotls_load_be64(buf + 5), seq); /* explicit nonce = seq */
	sotls_store_be64(aad, seq);
	aad[8] = buf[0];
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(len >> 8);
	aad[12] = (uint8_t)len;
	assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, buf + 13, len, buf + 13 + len, pt), 0);
	sotls_aead_clear(&a);
	*type = buf[0];
	return len;
}

/* Expects A to have sent exactly one alert (level, desc) at seq. */
static void expect_alert_from_a(struct pair *p, uint64_t seq, uint8_t level, uint8_t desc)
{
	uint8_t type, pt[SOTLS_REC_MAX_CIPHERTEXT];
	size_t n = read_from_a(p->fd[1], seq, &type, pt);
	assert_int_equal(type, SOTLS_CT_ALERT);
	assert_int_equal(n, 2);
	assert_int_equal(pt[0], level);
	assert_int_equal(pt[1], desc);
}

static void expect_nothing_from_a(struct pair *p)
{
	uint8_t b;
	assert_int_equal(read(p->fd[1], &b, 1), -1);
	assert_int_equal(errno, EAGAIN);
}

/* ---- tests ---- */

static void test_roundtrip_sizes(void **state)
{
	(void)state;
	static const size_t sizes[] = {1, 2, 15, 16, 17, 100, 16383, 16384, 16385, 65536, 100001,
				       1 << 20};
	for (int alg = SOTLS_AEAD_ARIA_128_GCM; alg <= SOTLS_AEAD_AES_256_GCM; alg++) {
		struct pair p;
		pair_open(&p, (enum sotls_aead_alg)alg, 1, 1);
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint8_t *d = pattern(sizes[i], (uint8_t)i);
			pump(&p.a, &p.b, d, sizes[i], 65536);
			pump(&p.b, &p.a, d, sizes[i], 7); /* tiny reads: buffered plaintext */
			free(d);
		}
		pair_close(&p);
	}
}

static void test_records_are_full_and_seq_advances(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 5, 9);
	uint8_t *d = pattern(3 * 16384 + 10, 1);
	/* 3 full records + 1 short one, in one call. */
	assert_int_equal(sotls_record_send(&p.a, d, 3 * 16384 + 10), 3 * 16384 + 10);
	assert_int_equal(p.a.tx.seq, 5 + 4);
	uint8_t type, pt[SOTLS_REC_MAX_CIPHERTEXT];
	for (uint64_t i = 0; i < 4; i++) {
		size_t n = read_from_a(p.fd[1], 5 + i, &type, pt);
		assert_int_equal(type, SOTLS_CT_APPLICATION_DATA);
		assert_int_equal(n, i < 3 ? 16384 : 10);
		assert_memory_equal(pt, d + i * 16384, n);
	}
	free(d);
	pair_close(&p);
}

/* RFC 6066 §4: with a max_fragment_length every record sent is cut to it,
 * and a received record above it is a record_overflow, nothing released. */
static void test_max_fragment_length(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 3, 7);
	p.a.max_plain = 512;
	uint8_t *d = pattern(1300, 4);
	assert_int_equal(sotls_record_send(&p.a, d, 1300), 1300);
	uint8_t type, pt[SOTLS_REC_MAX_CIPHERTEXT];
	for (uint64_t i = 0; i < 3; i++) {
		size_t n = read_from_a(p.fd[1], 3 + i, &type, pt);
		assert_int_equal(n, i < 2 ? 512 : 276);
		assert_memory_equal(pt, d + i * 512, n);
	}

	uint8_t rec[SOTLS_REC_HEADER + SOTLS_REC_MAX_CIPHERTEXT], out[1024];
	size_t n = craft_ba(rec, 7, SOTLS_CT_APPLICATION_DATA, d, 512);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, out, sizeof(out)), 512);
	n = craft_ba(rec, 8, SOTLS_CT_APPLICATION_DATA, d, 513);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, out, sizeof(out)), SOTLS_ERR_RECORD_OVERFLOW);
	expect_alert_from_a(&p, 6, SOTLS_ALERT_FATAL, SOTLS_ALERT_RECORD_OVERFLOW);
	free(d);
	pair_close(&p);
}

static void test_many_records_one_read(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t msg[10][100];
	for (int i = 0; i < 10; i++) {
		memset(msg[i], 'a' + i, 100);
		assert_int_equal(sotls_record_send(&p.a, msg[i], 100), 100);
	}
	uint8_t buf[4096];
	ssize_t n = sotls_record_recv(&p.b, buf, sizeof(buf));
	assert_int_equal(n, 1000); /* all ten records from one read */
	assert_memory_equal(buf, msg, 1000);
	assert_int_equal(p.b.rx.seq, 11);
	assert_int_equal(p.b.rx_records, 10);
	pair_close(&p);
}

/* Every split point of a stream of three records, plus 1-byte delivery. */
static void test_every_split_point(void **state)
{
	(void)state;
	static const size_t lens[] = {1, 300, 16384};
	uint8_t *stream = malloc(3 * (16384 + 29));
	uint8_t *expect = malloc(1 + 300 + 16384);
	size_t slen = 0, elen = 0;
	for (int i = 0; i < 3; i++) {
		uint8_t *d = pattern(lens[i], (uint8_t)(10 + i));
		slen += craft_ba(stream + slen, 1 + (uint64_t)i, SOTLS_CT_APPLICATION_DATA, d,
				 lens[i]);
		memcpy(expect + elen, d, lens[i]);
		elen += lens[i];
		free(d);
	}
	uint8_t *got = malloc(elen);

	for (size_t split = 0; split <= slen; split++) {
		int fd[2];
		struct sotls_record r;
		struct sotls_dir_keys tx = {K_AB, S_AB, 1}, rx = {K_BA, S_BA, 1};
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
		set_nonblock(fd[0]);
		struct sotls_wire w = {.fd = fd[0]};
		assert_int_equal(sotls_record_init(&r, &w, g_alg, &tx, &rx, NULL, 0), 0);
		size_t have = 0;
		write_all(fd[1], stream, split);
		while (have < elen) {
			ssize_t n = sotls_record_recv(&r, got + have, elen - have);
			if (n == SOTLS_WANT_READ)
				break;
			assert_true(n > 0);
			have += (size_t)n;
		}
		/* Only whole records may have come out. */
		assert_true(have == 0 || have == 1 || have == 301 || have == elen);
		write_all(fd[1], stream + split, slen - split);
		while (have < elen) {
			ssize_t n = sotls_record_recv(&r, got + have, elen - have);
			assert_true(n > 0);
			have += (size_t)n;
		}
		assert_memory_equal(got, expect, elen);
		assert_int_equal(sotls_record_recv(&r, got, 1), SOTLS_WANT_READ);
		sotls_record_free(&r);
		close(fd[0]);
		close(fd[1]);
	}

	/* One byte at a time. */
	{
		int fd[2];
		struct sotls_record r;
		struct sotls_dir_keys tx = {K_AB, S_AB, 1}, rx = {K_BA, S_BA, 1};
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
		set_nonblock(fd[0]);
		struct sotls_wire w = {.fd = fd[0]};
		assert_int_equal(sotls_record_init(&r, &w, g_alg, &tx, &rx, NULL, 0), 0);
		size_t have = 0;
		for (size_t i = 0; i < slen; i++) {
			write_all(fd[1], stream + i, 1);
			ssize_t n = sotls_record_recv(&r, got + have, elen - have);
			if (n == SOTLS_WANT_READ)
				continue;
			assert_true(n > 0);
			have += (size_t)n;
		}
		assert_int_equal(have, elen);
		assert_memory_equal(got, expect, elen);
		sotls_record_free(&r);
		close(fd[0]);
		close(fd[1]);
	}
	free(stream);
	free(expect);
	free(got);
}

/* The peer may choose any explicit nonce; the AAD uses our sequence number. */
static void test_explicit_nonce_from_wire(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t rec[200], buf[64];
	size_t n = craft(rec, g_alg, K_BA, S_BA, 1, 0x1122334455667788ull,
			 SOTLS_CT_APPLICATION_DATA, 0x0303, (const uint8_t *)"hello", 5);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	pair_close(&p);
}

/* A record with a bad tag: bad_record_mac, nothing released, fail closed. */
static void test_bad_tag(void **state)
{
	(void)state;
	for (int where = 0; where < 3; where++) {
		struct pair p;
		pair_open(&p, g_alg, 1, 1);
		uint8_t rec[2][300], buf[600];
		size_t n0 = craft_ba(rec[0], 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"good", 4);
		size_t n1 = craft_ba(rec[1], 2, SOTLS_CT_APPLICATION_DATA,
				     (const uint8_t *)"secret!!", 8);
		/* corrupt: the ciphertext, the tag, or the explicit nonce */
		size_t at = where == 0 ? 13 : where == 1 ? n1 - 1 : 6;
		rec[1][at] ^= 0x40;
		write_all(p.fd[1], rec[0], n0);
		write_all(p.fd[1], rec[1], n1);
		memset(buf, 0x55, sizeof(buf));
		/* The good record comes out, then the failure. */
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 4);
		assert_memory_equal(buf, "good", 4);
		memset(buf, 0x55, sizeof(buf));
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_BAD_RECORD_MAC);
		for (size_t i = 0; i < sizeof(buf); i++)
			if (buf[i] != 0x55 && buf[i] != 0)
				fail_msg("unauthenticated byte released at %zu", i);
		expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, SOTLS_ALERT_BAD_RECORD_MAC);
		/* Closed for good, both ways. */
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_BAD_RECORD_MAC);
		assert_int_equal(sotls_record_send(&p.a, buf, 10), SOTLS_ERR_BAD_RECORD_MAC);
		expect_nothing_from_a(&p);
		pair_close(&p);
	}
}

/* A record sealed under the wrong sequence number fails authentication. */
static void test_replay_or_reorder(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t rec[2][100], buf[64];
	size_t n0 = craft_ba(rec[0], 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"one", 3);
	write_all(p.fd[1], rec[0], n0);
	write_all(p.fd[1], rec[0], n0); /* replayed */
	assert_int_equal(sotls_record_recv(&p.a, buf, 3), 3);
	assert_int_equal(sotls_record_recv(&p.a, buf, 3), SOTLS_ERR_BAD_RECORD_MAC);
	(void)rec[1];
	pair_close(&p);
}

static void expect_header_error(const uint8_t hdr[5], int err, uint8_t desc)
{
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t buf[64];
	write_all(p.fd[1], hdr, 5);
	/* Refused as soon as the header is in: no wait for the body. */
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), err);
	expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, desc);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), err);
	pair_close(&p);
}

static void test_bad_headers(void **state)
{
	(void)state;
	size_t max = SOTLS_REC_MAX_CIPHERTEXT;
	/* longer than 2^14 + 2048 */
	uint8_t over[5] = {23, 3, 3, (uint8_t)((max + 1) >> 8), (uint8_t)(max + 1)};
	expect_header_error(over, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW);
	/* within 2^14 + 2048 but the plaintext would exceed 2^14 */
	size_t big = 16384 + 24 + 1;
	uint8_t over_pt[5] = {23, 3, 3, (uint8_t)(big >> 8), (uint8_t)big};
	expect_header_error(over_pt, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW);
	/* too short for explicit nonce + tag */
	uint8_t shorty[5] = {23, 3, 3, 0, 23};
	expect_header_error(shorty, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR);
	/* ChangeCipherSpec after the handshake, and an unknown type */
	uint8_t ccs[5] = {20, 3, 3, 0, 1};
	expect_header_error(ccs, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE);
	uint8_t unknown[5] = {99, 3, 3, 0, 40};
	expect_header_error(unknown, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE);
	/* another protocol version */
	uint8_t ver[5] = {23, 3, 1, 0, 40};
	expect_header_error(ver, SOTLS_ERR_PROTOCOL_VERSION, SOTLS_ALERT_PROTOCOL_VERSION);
}

static void test_largest_record_accepted(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t *d = pattern(16384, 3), *rec = malloc(16384 + 29), *buf = malloc(20000);
	size_t n = craft_ba(rec, 1, SOTLS_CT_APPLICATION_DATA, d, 16384);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, buf, 20000), 16384);
	assert_memory_equal(buf, d, 16384);
	free(d);
	free(rec);
	free(buf);
	pair_close(&p);
}

static void test_malformed_alert(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t rec[100], buf[16];
	size_t n = craft_ba(rec, 1, SOTLS_CT_ALERT, (const uint8_t *)"\x01\x00\x00", 3);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_DECODE);
	expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, SOTLS_ALERT_DECODE_ERROR);
	pair_close(&p);
}

static void test_close_notify(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	uint8_t buf[64];
	assert_int_equal(sotls_record_send(&p.b, (const uint8_t *)"last words", 10), 10);
	assert_int_equal(sotls_record_shutdown(&p.b), 0);
	assert_int_equal(sotls_record_send(&p.b, buf, 1), SOTLS_ERR_CLOSED);
	/* Data first, then 0 for good. */
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "last words", 10);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 0);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 0);
	assert_int_equal(p.a.pol.peer_alert, SOTLS_ALERT_CLOSE_NOTIFY);
	/* A may still send (half-close), then close too. */
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"bye", 3), 3);
	assert_int_equal(sotls_record_shutdown(&p.a), 0);
	assert_int_equal(sotls_record_recv(&p.b, buf, sizeof(buf)), 3);
	assert_int_equal(sotls_record_recv(&p.b, buf, sizeof(buf)), 0);
	pair_close(&p);
}

static void test_truncation(void **state)
{
	(void)state;
	uint8_t buf[64];
	/* EOF at a record boundary without close_notify */
	{
		struct pair p;
		pair_open(&p, g_alg, 1, 1);
		assert_int_equal(sotls_record_send(&p.b, (const uint8_t *)"data", 4), 4);
		shutdown(p.fd[1], SHUT_WR);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 4);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_TRUNCATED);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_TRUNCATED);
		pair_close(&p);
	}
	/* EOF inside a record */
	{
		struct pair p;
		pair_open(&p, g_alg, 1, 1);
		uint8_t rec[100];
		size_t n = craft_ba(rec, 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"partial", 7);
		write_all(p.fd[1], rec, n - 3);
		shutdown(p.fd[1], SHUT_WR);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_TRUNCATED);
		pair_close(&p);
	}
}

static void test_peer_alerts(void **state)
{
	(void)state;
	uint8_t rec[3][100], buf[64];
	/* a fatal alert: distinct error, nothing sent back */
	{
		struct pair p;
		pair_open(&p, g_alg, 1, 1);
		size_t n = craft_ba(rec[0], 1, SOTLS_CT_ALERT, (const uint8_t *)"\x02\x28", 2);
		write_all(p.fd[1], rec[0], n);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_PEER_ALERT);
		assert_int_equal(p.a.pol.peer_alert, 40);
		expect_nothing_from_a(&p);
		assert_int_equal(sotls_record_send(&p.a, buf, 1), SOTLS_ERR_PEER_ALERT);
		pair_close(&p);
	}
	/* a warning (user_canceled) and an empty record change nothing */
	{
		struct pair p;
		pair_open(&p, g_alg, 1, 1);
		size_t n0 = craft_ba(rec[0], 1, SOTLS_CT_ALERT, (const uint8_t *)"\x01\x5a", 2);
		size_t n1 = craft_ba(rec[1], 2, SOTLS_CT_APPLICATION_DATA, NULL, 0);
		size_t n2 = craft_ba(rec[2], 3, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"ok", 2);
		write_all(p.fd[1], rec[0], n0);
		write_all(p.fd[1], rec[1], n1);
		write_all(p.fd[1], rec[2], n2);
		assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), 2);
		assert_memory_equal(buf, "ok", 2);
		assert_int_equal(p.a.pol.peer_alert, 90);
		pair_close(&p);
	}
}

/* Receives on A until it stops asking for more bytes. */
static ssize_t recv_a(struct pair *p, uint8_t *buf, size_t len)
{
	ssize_t rc;
	int spins = 0;
	do
		rc = sotls_record_recv(&p->a, buf, len);
	while (rc == SOTLS_WANT_READ && ++spins < 100000);
	return rc;
}

/* B -> A: count records of (type, pt, len) from *seq on. */
static void send_ba(struct pair *p, uint64_t *seq, unsigned count, uint8_t type, const uint8_t *pt,
		    size_t len)
{
	uint8_t rec[200];
	for (unsigned i = 0; i < count; i++)
		write_all(p->fd[1], rec, craft_ba(rec, (*seq)++, type, pt, len));
}

/* A data record after the run: delivered, and it resets the counters. */
static void expect_data_after(struct pair *p, uint64_t *seq)
{
	uint8_t buf[16];
	send_ba(p, seq, 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"data", 4);
	assert_int_equal(recv_a(p, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "data", 4);
	assert_int_equal(p->a.pol.useless.empty + p->a.pol.useless.warnings + p->a.pol.useless.refusals, 0);
}

/* The cap-th useless record of a kind is accepted, the next one is fatal. */
static void check_cap(uint8_t type, const uint8_t *pt, size_t len, unsigned cap, bool server)
{
	uint8_t buf[16];
	struct pair p;
	uint64_t seq = 1;
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, server, SOTLS_REC_DEFAULT_KEY_LIMIT);
	/* cap of them, twice, with data between: all accepted */
	for (int round = 0; round < 2; round++) {
		send_ba(&p, &seq, cap, type, pt, len);
		expect_data_after(&p, &seq);
	}
	/* cap + 1 in a row: unexpected_message, SOTLS_ERR_RECORD_FLOOD */
	send_ba(&p, &seq, cap + 1, type, pt, len);
	send_ba(&p, &seq, 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"late", 4);
	assert_int_equal(recv_a(&p, buf, sizeof(buf)), SOTLS_ERR_RECORD_FLOOD);
	assert_int_equal(p.a.pol.why.value, cap);
	assert_non_null(p.a.pol.why.what);
	/* the answers before it (no_renegotiation warnings), then the alert */
	uint8_t t, out[64];
	uint64_t aseq = 1;
	if (type == SOTLS_CT_HANDSHAKE)
		for (; aseq <= 3 * (uint64_t)cap; aseq++) {
			assert_int_equal(read_from_a(p.fd[1], aseq, &t, out), 2);
			assert_int_equal(out[1], SOTLS_ALERT_NO_RENEGOTIATION);
		}
	expect_alert_from_a(&p, aseq, SOTLS_ALERT_FATAL, SOTLS_ALERT_UNEXPECTED_MESSAGE);
	expect_nothing_from_a(&p);
	pair_close(&p);
}

/* Records that deliver nothing: a few are fine, a flood is refused. */
static void test_useless_record_caps(void **state)
{
	(void)state;
	static const uint8_t hello_request[4] = {0, 0, 0, 0};
	static const uint8_t client_hello[8] = {1, 0, 0, 4, 3, 3, 0, 0};
	check_cap(SOTLS_CT_APPLICATION_DATA, NULL, 0, SOTLS_REC_MAX_EMPTY_RECORDS, false);
	/* warnings, an unassigned description among them: counted, not fatal */
	check_cap(SOTLS_CT_ALERT, (const uint8_t *)"\x01\xff", 2, SOTLS_REC_MAX_WARNING_ALERTS,
		  false);
	check_cap(SOTLS_CT_ALERT, (const uint8_t *)"\x01\x5a", 2, SOTLS_REC_MAX_WARNING_ALERTS,
		  false);
	check_cap(SOTLS_CT_HANDSHAKE, hello_request, 4, SOTLS_REC_MAX_RENEG_REFUSALS, false);
	check_cap(SOTLS_CT_HANDSHAKE, client_hello, 8, SOTLS_REC_MAX_RENEG_REFUSALS, true);
}

/* Each sotls_record_recv returns after bounded work: a flood with no data
 * ends the call with the error instead of reading on. */
static void test_flood_ends_one_call(void **state)
{
	(void)state;
	struct pair p;
	uint64_t seq = 1;
	uint8_t buf[16];
	pair_open(&p, g_alg, 1, 1);
	send_ba(&p, &seq, 200, SOTLS_CT_APPLICATION_DATA, NULL, 0);
	assert_int_equal(sotls_record_recv(&p.a, buf, sizeof(buf)), SOTLS_ERR_RECORD_FLOOD);
	assert_int_equal(p.a.rx.seq, 1 + SOTLS_REC_MAX_EMPTY_RECORDS + 1);
	pair_close(&p);
}

/* One alert record {level, desc} to A; the result of the next recv. */
static ssize_t alert_to_a(struct pair *p, uint8_t level, uint8_t desc)
{
	uint8_t a[2] = {level, desc}, buf[16];
	uint64_t seq = p->a.rx.seq;
	send_ba(p, &seq, 1, SOTLS_CT_ALERT, a, 2);
	return recv_a(p, buf, sizeof(buf));
}

/* RFC 5246 7.2: close_notify is a warning; a fatal one is fatal; there is
 * no third level. */
static void test_alert_levels(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	assert_int_equal(alert_to_a(&p, 1, 0), 0);
	assert_true(p.a.pol.rx_closed);
	pair_close(&p);

	pair_open(&p, g_alg, 1, 1);
	assert_int_equal(alert_to_a(&p, 2, 0), SOTLS_ERR_PEER_ALERT);
	assert_false(p.a.pol.rx_closed);
	expect_nothing_from_a(&p);
	pair_close(&p);

	static const uint8_t bad_levels[] = {0, 3, 7, 255};
	for (size_t i = 0; i < sizeof(bad_levels); i++) {
		pair_open(&p, g_alg, 1, 1);
		assert_int_equal(alert_to_a(&p, bad_levels[i], 0), SOTLS_ERR_DECODE);
		assert_int_equal(p.a.pol.why.value, bad_levels[i]);
		expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, SOTLS_ALERT_ILLEGAL_PARAMETER);
		pair_close(&p);
	}
}

/* A handshake record to A (client or server); the result of the next recv. */
static ssize_t handshake_to_a(struct pair *p, bool server, const uint8_t *msg, size_t len)
{
	uint8_t buf[16];
	uint64_t seq = p->a.rx.seq;
	sotls_record_set_policy(&p->a, server, SOTLS_REC_DEFAULT_KEY_LIMIT);
	send_ba(p, &seq, 1, SOTLS_CT_HANDSHAKE, msg, len);
	send_ba(p, &seq, 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"x", 1);
	return recv_a(p, buf, sizeof(buf));
}

static void expect_handshake_fatal(bool server, const uint8_t *msg, size_t len, int err,
				   uint8_t desc)
{
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	assert_int_equal(handshake_to_a(&p, server, msg, len), err);
	expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, desc);
	pair_close(&p);
}

/* After the handshake only HelloRequest (client) and ClientHello (server)
 * are refused with a warning; anything else is fatal (RFC 5246 7.4.1.1,
 * RFC 5746 4.2 / 4.4). */
static void test_post_handshake_messages(void **state)
{
	(void)state;
	static const uint8_t hello_request[4] = {0, 0, 0, 0};
	static const uint8_t hello_request_body[5] = {0, 0, 0, 1, 0};
	static const uint8_t client_hello[8] = {1, 0, 0, 4, 3, 3, 0, 0};
	static const uint8_t finished[16] = {20, 0, 0, 12};
	static const uint8_t server_hello[4] = {2, 0, 0, 0};
	static const uint8_t two_requests[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	expect_handshake_fatal(false, hello_request_body, 5, SOTLS_ERR_UNEXPECTED_MESSAGE,
			       SOTLS_ALERT_UNEXPECTED_MESSAGE);
	expect_handshake_fatal(false, client_hello, 8, SOTLS_ERR_UNEXPECTED_MESSAGE,
			       SOTLS_ALERT_UNEXPECTED_MESSAGE);
	expect_handshake_fatal(true, hello_request, 4, SOTLS_ERR_UNEXPECTED_MESSAGE,
			       SOTLS_ALERT_UNEXPECTED_MESSAGE);
	for (int server = 0; server <= 1; server++) {
		expect_handshake_fatal(server, finished, 16, SOTLS_ERR_UNEXPECTED_MESSAGE,
				       SOTLS_ALERT_UNEXPECTED_MESSAGE);
		expect_handshake_fatal(server, server_hello, 4, SOTLS_ERR_UNEXPECTED_MESSAGE,
				       SOTLS_ALERT_UNEXPECTED_MESSAGE);
		/* RFC 5246 6.2.1: no zero-length handshake fragments */
		expect_handshake_fatal(server, NULL, 0, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR);
	}

	/* Refused: a warning per message, the stream goes on. */
	struct pair p;
	uint8_t t, out[64];
	pair_open(&p, g_alg, 1, 1);
	assert_int_equal(handshake_to_a(&p, false, two_requests, 8), 1);
	for (uint64_t s = 1; s <= 2; s++) {
		assert_int_equal(read_from_a(p.fd[1], s, &t, out), 2);
		assert_int_equal(t, SOTLS_CT_ALERT);
		assert_int_equal(out[0], SOTLS_ALERT_WARNING);
		assert_int_equal(out[1], SOTLS_ALERT_NO_RENEGOTIATION);
	}
	pair_close(&p);

	/* A ClientHello cut across records, header included: one refusal. */
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, true, SOTLS_REC_DEFAULT_KEY_LIMIT);
	uint64_t seq = 1;
	for (size_t i = 0; i < sizeof(client_hello); i += 2)
		send_ba(&p, &seq, 1, SOTLS_CT_HANDSHAKE, client_hello + i, 2);
	send_ba(&p, &seq, 1, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"y", 1);
	assert_int_equal(recv_a(&p, out, sizeof(out)), 1);
	expect_alert_from_a(&p, 1, SOTLS_ALERT_WARNING, SOTLS_ALERT_NO_RENEGOTIATION);
	expect_nothing_from_a(&p);
	pair_close(&p);
}

/* The AEAD usage limit: close_notify before the sequence number passes it,
 * then SOTLS_ERR_KEY_USAGE_LIMIT; receiving still works; a peer that goes
 * past it is refused. */
static void test_key_usage_limit(void **state)
{
	(void)state;
	const uint64_t limit = 10;
	struct pair p;
	uint8_t buf[64], t;
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, false, limit);
	/* data may take 1 .. limit - 2, close_notify limit - 1 */
	for (uint64_t s = 1; s + 1 < limit; s++)
		assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"z", 1), 1);
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"z", 1),
			 SOTLS_ERR_KEY_USAGE_LIMIT);
	assert_int_equal(p.a.tx.seq, limit);
	assert_true(p.a.pol.tx_limited);
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"z", 1),
			 SOTLS_ERR_KEY_USAGE_LIMIT);
	assert_int_equal(sotls_record_shutdown(&p.a), 0);
	for (uint64_t s = 1; s + 1 < limit; s++)
		assert_int_equal(read_from_a(p.fd[1], s, &t, buf), 1);
	expect_alert_from_a(&p, limit - 1, SOTLS_ALERT_WARNING, SOTLS_ALERT_CLOSE_NOTIFY);
	expect_nothing_from_a(&p);
	/* A still receives */
	assert_int_equal(sotls_record_send(&p.b, (const uint8_t *)"more", 4), 4);
	assert_int_equal(recv_a(&p, buf, sizeof(buf)), 4);
	pair_close(&p);

	/* A send that crosses the limit: what fits is reported, in order
	 * before close_notify. */
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, false, limit);
	sotls_record_set_policy(&p.b, false, limit);
	uint8_t *d = pattern(20 * 16384, 5), *got = malloc(20 * 16384);
	assert_non_null(got);
	assert_int_equal(sotls_record_send(&p.a, d, 20 * 16384), (limit - 2) * 16384);
	size_t n = 0;
	ssize_t r;
	while ((r = sotls_record_recv(&p.b, got + n, 20 * 16384 - n)) > 0)
		n += (size_t)r;
	assert_int_equal(r, 0); /* close_notify at limit - 1 is within B's limit */
	assert_int_equal(n, (limit - 2) * 16384);
	assert_memory_equal(got, d, n);
	free(d);
	free(got);
	pair_close(&p);

	/* The peer goes past A's limit: unexpected_message, nothing opened. */
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, false, limit);
	uint64_t seq = 1;
	send_ba(&p, &seq, (unsigned)limit, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"q", 1);
	size_t got_bytes = 0;
	while ((r = recv_a(&p, buf, sizeof(buf))) > 0)
		got_bytes += (size_t)r;
	assert_int_equal(r, SOTLS_ERR_KEY_USAGE_LIMIT);
	assert_int_equal(got_bytes, limit - 1);
	assert_int_equal(p.a.rx.seq, limit);
	expect_alert_from_a(&p, 1, SOTLS_ALERT_FATAL, SOTLS_ALERT_UNEXPECTED_MESSAGE);
	pair_close(&p);
}

static void test_sequence_never_wraps(void **state)
{
	(void)state;
	struct pair p;
	uint8_t buf[16];
	pair_open(&p, g_alg, UINT64_MAX - 2, 1);
	/* As far as a usage limit can go: the last number before the wrap is
	 * close_notify's, and the wrap itself is never reached. */
	sotls_record_set_policy(&p.a, false, UINT64_MAX);
	sotls_record_set_policy(&p.b, false, UINT64_MAX);
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"a", 1), 1);
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"b", 1), SOTLS_ERR_KEY_USAGE_LIMIT);
	assert_int_equal(p.a.tx.seq, UINT64_MAX);
	assert_int_equal(sotls_record_send(&p.a, (const uint8_t *)"c", 1), SOTLS_ERR_KEY_USAGE_LIMIT);
	assert_int_equal(sotls_record_recv(&p.b, buf, 1), 1);
	assert_int_equal(sotls_record_recv(&p.b, buf, 1), 0);
	assert_int_equal(p.b.rx.seq, UINT64_MAX);
	pair_close(&p);

	/* the receiving side refuses a record at the last value */
	pair_open(&p, g_alg, 1, 1);
	sotls_record_set_policy(&p.a, false, UINT64_MAX);
	p.a.rx.seq = UINT64_MAX;
	uint8_t rec[100];
	size_t n = craft_ba(rec, UINT64_MAX, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"z", 1);
	write_all(p.fd[1], rec, n);
	assert_int_equal(sotls_record_recv(&p.a, buf, 1), SOTLS_ERR_SEQUENCE_OVERFLOW);
	pair_close(&p);
}

/* A socket that takes little at a time: sends resume where they stopped,
 * nothing is sealed twice, nothing reordered. */
static void test_partial_writes_resume(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, SOTLS_AEAD_ARIA_256_GCM, 1, 1);
	int small = 4096;
	setsockopt(p.fd[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(p.fd[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	size_t len = 3 * 1000 * 1000 + 7;
	uint8_t *d = pattern(len, 42);
	uint64_t seq0 = p.a.tx.seq;
	pump(&p.a, &p.b, d, len, 3000);
	/* exactly the records needed: ceil(len / 2^14), no resealing */
	assert_int_equal(p.a.tx.seq - seq0, (len + 16383) / 16384);
	assert_int_equal(p.b.rx.seq, p.a.tx.seq);

	/* WANT_WRITE while bytes are sealed: a shorter retry is refused. */
	uint8_t *big = pattern(1 << 20, 7);
	ssize_t n;
	size_t sent = 0;
	while ((n = sotls_record_send(&p.a, big + sent, (1 << 20) - sent)) > 0)
		sent += (size_t)n;
	assert_int_equal(n, SOTLS_WANT_WRITE);
	if (p.a.tx_pending > 1)
		assert_int_equal(sotls_record_send(&p.a, big + sent, 1), SOTLS_ERR_INVALID_ARGUMENT);
	free(big);
	free(d);
	pair_close(&p);
}

static void test_initial_bytes_and_args(void **state)
{
	(void)state;
	int fd[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	set_nonblock(fd[0]);
	uint8_t rec[100], buf[16];
	size_t n = craft_ba(rec, 7, SOTLS_CT_APPLICATION_DATA, (const uint8_t *)"early", 5);
	struct sotls_record r;
	struct sotls_wire w = {.fd = fd[0]};
	struct sotls_dir_keys tx = {K_AB, S_AB, 1}, rx = {K_BA, S_BA, 7};
	/* bytes already read (e.g. by a handshake library) are consumed first */
	assert_int_equal(sotls_record_init(&r, &w, g_alg, &tx, &rx, rec, n), 0);
	assert_int_equal(sotls_record_recv(&r, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "early", 5);
	assert_int_equal(sotls_record_recv(&r, buf, 0), SOTLS_ERR_INVALID_ARGUMENT);
	sotls_record_free(&r);
	struct sotls_dir_keys bad = {NULL, S_AB, 1};
	assert_int_equal(sotls_record_init(&r, &w, g_alg, &bad, &rx, NULL, 0),
			 SOTLS_ERR_INVALID_ARGUMENT);
	close(fd[0]);
	close(fd[1]);
}

/* Buffers are lent only while bytes are in them (record_buffers.c). */
static void test_buffers_lent_while_in_use(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, g_alg, 1, 1);
	assert_null(p.a.txbuf);
	assert_null(p.a.rxbuf);
	assert_null(p.b.rxbuf);

	/* A completed send gives its buffer back; so does a drained receive. */
	uint8_t *d = pattern(40000, 3), out[40000], tiny[10];
	assert_int_equal(sotls_record_send(&p.a, d, 40000), 40000);
	assert_null(p.a.txbuf);
	size_t got = 0;
	while (got < 40000) {
		ssize_t n = sotls_record_recv(&p.b, out + got, sizeof(out) - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_memory_equal(out, d, 40000);
	assert_null(p.b.rxbuf);
	assert_int_equal(sotls_record_recv(&p.b, out, sizeof(out)), SOTLS_WANT_READ);
	assert_null(p.b.rxbuf);

	/* Plaintext not yet handed out keeps the receive buffer, and only the
	 * rest of it, wiped as it goes, is there to give back. */
	assert_int_equal(sotls_record_send(&p.a, d, 100), 100);
	assert_int_equal(sotls_record_recv(&p.b, tiny, sizeof(tiny)), 10);
	assert_non_null(p.b.rxbuf);
	assert_int_equal(p.b.plain_len, 90);
	assert_int_equal(sotls_record_recv(&p.b, out, sizeof(out)), 90);
	assert_memory_equal(out, d + 10, 90);
	assert_null(p.b.rxbuf);

	/* Half a record in: kept until the rest comes. */
	uint8_t rec[200];
	size_t n = craft_ba(rec, p.a.rx.seq, SOTLS_CT_APPLICATION_DATA, d, 50);
	write_all(p.fd[1], rec, 20);
	assert_int_equal(sotls_record_recv(&p.a, out, sizeof(out)), SOTLS_WANT_READ);
	assert_non_null(p.a.rxbuf);
	write_all(p.fd[1], rec + 20, n - 20);
	assert_int_equal(sotls_record_recv(&p.a, out, sizeof(out)), 50);
	assert_null(p.a.rxbuf);

	/* Sealed bytes the socket refused keep the send buffer. */
	int small = 4096;
	setsockopt(p.fd[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	uint8_t *big = pattern(1 << 20, 9);
	size_t sent = 0;
	ssize_t r;
	while ((r = sotls_record_send(&p.a, big + sent, (1 << 20) - sent)) > 0)
		sent += (size_t)r;
	assert_int_equal(r, SOTLS_WANT_WRITE);
	assert_non_null(p.a.txbuf);
	free(big);
	free(d);
	pair_close(&p);
}

int main(int argc, char **argv)
{
	bool aes = argc == 2 && strcmp(argv[1], "aes") == 0;
	if (argc > 2 || (argc == 2 && !aes)) {
		fprintf(stderr, "usage: test_record [aes]\n");
		return 2;
	}
	g_alg = aes ? SOTLS_AEAD_AES_128_GCM : SOTLS_AEAD_ARIA_128_GCM;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_sizes),
		cmocka_unit_test(test_records_are_full_and_seq_advances),
		cmocka_unit_test(test_max_fragment_length),
		cmocka_unit_test(test_many_records_one_read),
		cmocka_unit_test(test_every_split_point),
		cmocka_unit_test(test_explicit_nonce_from_wire),
		cmocka_unit_test(test_bad_tag),
		cmocka_unit_test(test_replay_or_reorder),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_largest_record_accepted),
		cmocka_unit_test(test_malformed_alert),
		cmocka_unit_test(test_close_notify),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_peer_alerts),
		cmocka_unit_test(test_useless_record_caps),
		cmocka_unit_test(test_flood_ends_one_call),
		cmocka_unit_test(test_alert_levels),
		cmocka_unit_test(test_post_handshake_messages),
		cmocka_unit_test(test_key_usage_limit),
		cmocka_unit_test(test_sequence_never_wraps),
		cmocka_unit_test(test_partial_writes_resume),
		cmocka_unit_test(test_initial_bytes_and_args),
		cmocka_unit_test(test_buffers_lent_while_in_use),
	};
	return cmocka_run_group_tests_name(aes ? "record (AES-128-GCM)" : "record (ARIA-128-GCM)",
					   tests, NULL, NULL);
}

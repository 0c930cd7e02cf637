/*
 * AES-GCM's bulk, stitched, for CPUs with AES-NI and PCLMULQDQ but no VAES
 * (or without AVX-512 for the VAES loop): one loop over batches of eight
 * blocks that encrypts a batch's eight counter blocks with AES-NI while it
 * hashes eight ciphertext blocks with PCLMULQDQ.
 *
 * Two batches are hashed with one reduction: their sixteen blocks are
 * multiplied by H^16 .. H^1 (Karatsuba, three carry-less products a block)
 * and summed, the running Y added into the first block, with the last
 * sixteen of ghash_pclmul.c's table of powers (ghash_pclmul.h); a last odd
 * batch takes H^8 .. H^1 and a reduction of its own. (One reduction a
 * batch sealed 16 KiB 5% slower with AES-128 on Zen 3, 2.5% with AES-256.)
 * The AES rounds and the products are independent, so the products go
 * between rounds of the eight blocks and the AES and CLMUL instructions
 * issue side by side; the reduction, which the next pair's block 0 product
 * waits for, overlaps with the next batch's rounds.
 *  - opening, the batch being decrypted is hashed: each ciphertext block is
 *    loaded for GHASH before any output of the batch is stored (so in == out
 *    is safe);
 *  - sealing, the batch encrypted one step before is hashed, from the
 *    output, where it was just stored; the last one is hashed after the loop.
 * The rest, under 128 bytes, runs through a zero-padded stack buffer. The tag
 * mask E(K, J0) is one block on the side, which the out-of-order core
 * overlaps with the rest.
 */
#include <string.h>

#include "aes_aesni.h"
#include "gcm.h"
#include "ghash_pclmul.h"
#include "util.h"

#define BATCH 8 /* blocks */
#define PAIR (2 * BATCH)

_Static_assert(PAIR <= PCLMUL_POWERS, "two batches are hashed with the last powers of H");

/*
 * Two batches are hashed with one reduction: the first one's block i times
 * H^(PAIR - i), the second one's times H^(BATCH - i). A batch's block i
 * takes the power at index POW(half, i) of the table, half 0 for the
 * first batch of a pair (or a batch alone, then hashed as a second).
 */
#define POW(half, i) (PCLMUL_POWERS - PAIR + BATCH * (half) + (i))

/*
 * One batch: encrypts the eight counter blocks from c into out (XOR in), and
 * meanwhile adds the eight blocks at h, y added into the first, times the
 * powers of `half` into a (h may be in: it is read before anything is
 * stored).
 */
static AESNI_INLINE void batch(const struct sotls_aes_key *k, const struct pclmul_tab *t,
			       unsigned rounds, __m128i c, const uint8_t *in, uint8_t *out,
			       const uint8_t *h, __m128i y, unsigned half, struct ghash_acc *a)
{
	__m128i b[BATCH];

	aesni_ctr_blocks(b, c, aesni_rkey(k, 0), BATCH);
	/*
	 * The products go between the rounds, `per` after each round from the
	 * first on, block 0 (the one carrying Y, which waits for the previous
	 * pair's reduction) last. Measured on Zen 3, where AESENC and
	 * PCLMULQDQ compete for the same pipes: AES-128's nine middle rounds
	 * do best with three products a round, the longer keys with one
	 * (sealing 16 KiB, AES-128 0.54 against 0.61 TSC cycles a byte with
	 * one a round; AES-256 0.62 against 0.64 with three; measured again
	 * with the pairs, 2, 4 or 8 a round for AES-128 and 2 or 4 for the
	 * others were 1-4% slower).
	 * Unrolled whole: GCC leaves this loop rolled, with a branch between
	 * the products.
	 */
	const unsigned per = rounds == 10 ? 3 : 1;
#pragma GCC unroll 16
	for (unsigned r = 1; r < rounds; r++) {
		const __m128i kr = aesni_rkey(k, r);

		for (unsigned j = 0; j < BATCH; j++)
			b[j] = _mm_aesenc_si128(b[j], kr);
		for (unsigned q = 0; q < per; q++) {
			const unsigned i = per * (r - 1) + q + 1;

			if (i < BATCH)
				ghash_acc_mul(a, ghash_load(h + 16 * i), t->key[POW(half, i)],
					      t->mid[POW(half, i)]);
			else if (i == BATCH)
				ghash_acc_mul(a, ghash_load(h) ^ y, t->key[POW(half, 0)],
					      t->mid[POW(half, 0)]);
		}
	}
	const __m128i kl = aesni_rkey(k, rounds);
	for (unsigned j = 0; j < BATCH; j++)
		b[j] = _mm_aesenclast_si128(b[j],
					    kl ^ _mm_loadu_si128((const __m128i *)(in + 16 * j)));
	for (unsigned j = 0; j < BATCH; j++)
		_mm_storeu_si128((__m128i *)(out + 16 * j), b[j]);
}

/*
 * The last 1..127 bytes: CTR from c and GHASH of the ciphertext, zero-padded
 * to whole blocks, through a stack buffer that is wiped afterwards.
 */
static AESNI_INLINE __m128i tail(const struct sotls_aes_key *k, const struct pclmul_tab *t,
				 unsigned rounds, __m128i c, bool open, const uint8_t *in,
				 uint8_t *out, size_t n, __m128i y)
{
	_Alignas(16) uint8_t buf[16 * BATCH];
	const unsigned nb = (unsigned)(n + 15) / 16;

	memcpy(buf, in, n);
	memset(buf + n, 0, sizeof(buf) - n);
	if (open)
		y = pclmul_fold(t, y, buf, nb);
	aesni_blocks(k, rounds, c, buf, buf, nb);
	if (!open) {
		memset(buf + n, 0, sizeof(buf) - n);
		y = pclmul_fold(t, y, buf, nb);
	}
	memcpy(out, buf, n);
	sotls_wipe(buf, sizeof(buf));
	return y;
}

static AESNI_INLINE void bulk(unsigned rounds, const struct sotls_aes_key *k,
			      const struct pclmul_tab *t, bool open, const uint8_t j0[16],
			      uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			      uint8_t mask[16])
{
	__m128i acc = ghash_load(y);

	/* E(K, J0): one block on the side, nothing waits for it. */
	__m128i m = _mm_loadu_si128((const __m128i *)j0) ^ aesni_rkey(k, 0);
	for (unsigned r = 1; r < rounds; r++)
		m = _mm_aesenc_si128(m, aesni_rkey(k, r));
	_mm_storeu_si128((__m128i *)mask, _mm_aesenclast_si128(m, aesni_rkey(k, rounds)));

	const __m128i step = _mm_set_epi32(BATCH, 0, 0, 0);
	__m128i c = _mm_add_epi32(aesni_ctr_swap(_mm_loadu_si128((const __m128i *)j0)),
				  _mm_set_epi32(1, 0, 0, 0));
	const uint8_t *prev = NULL; /* sealing: the batch to hash next */
	if (!open && len >= 16 * BATCH) {
		/* The first batch has nothing before it to hash. */
		aesni_blocks(k, rounds, c, in, out, BATCH);
		c = _mm_add_epi32(c, step);
		prev = out;
		len -= 16 * BATCH, in += 16 * BATCH, out += 16 * BATCH;
	}
	/* Two batches a reduction; a last one alone. Opening hashes the
	 * batch it decrypts, sealing the one it encrypted before. */
	for (; len >= 2 * 16 * BATCH; len -= 32 * BATCH, in += 32 * BATCH, out += 32 * BATCH) {
		struct ghash_acc a = ghash_acc_zero();
		const uint8_t *h = open ? in : prev;

		batch(k, t, rounds, c, in, out, h, acc, 0, &a);
		c = _mm_add_epi32(c, step);
		h = open ? in + 16 * BATCH : out;
		batch(k, t, rounds, c, in + 16 * BATCH, out + 16 * BATCH, h, _mm_setzero_si128(),
		      1, &a);
		c = _mm_add_epi32(c, step);
		acc = ghash_acc_reduce(&a);
		prev = open ? NULL : out + 16 * BATCH;
	}
	if (len >= 16 * BATCH) {
		struct ghash_acc a = ghash_acc_zero();

		batch(k, t, rounds, c, in, out, open ? in : prev, acc, 1, &a);
		c = _mm_add_epi32(c, step);
		acc = ghash_acc_reduce(&a);
		prev = open ? NULL : out;
		len -= 16 * BATCH, in += 16 * BATCH, out += 16 * BATCH;
	}
	if (prev != NULL)
		acc = pclmul_fold(t, acc, prev, BATCH);
	if (len > 0)
		acc = tail(k, t, rounds, c, open, in, out, len, acc);
	ghash_store(y, acc);
}

void sotls_gcm_aes_aesni_pclmul(const union sotls_aead_cipher_key *k,
				const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
				uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
				uint8_t mask[16])
{
	/* open a constant in each copy of the loops. */
	if (open)
		SOTLS_AES_WITH_ROUNDS(k->aes.rounds, bulk, &k->aes, pclmul_tab(gk), true, j0, y,
				      in, out, len, mask);
	else
		SOTLS_AES_WITH_ROUNDS(k->aes.rounds, bulk, &k->aes, pclmul_tab(gk), false, j0, y,
				      in, out, len, mask);
}

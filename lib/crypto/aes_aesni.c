/*
 * AES CTR with AES-NI: eight blocks interleaved, so that the four-cycle-ish
 * latency of AESENC is hidden behind the seven other blocks' rounds. The
 * counter word is kept byte-swapped in lane 3 of an xmm register, where a
 * 32-bit add wraps it without touching the 12 fixed bytes. The input is
 * folded into the last round key: AESENCLAST ends with the key XOR, so
 * AESENCLAST(s, rk ^ in) = E(ctr) ^ in.
 *
 * The round count is a compile-time constant in each specialisation (10, 12,
 * 14), so the round loops unroll completely.
 */
#include <immintrin.h>

#include "aes.h"

#define AES_INLINE inline __attribute__((always_inline))

/* Reverses bytes 12..15 and leaves the rest: its own inverse. */
static AES_INLINE __m128i ctr_swap(__m128i x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
						0));
}

static AES_INLINE __m128i rkey(const struct sotls_aes_key *k, unsigned r)
{
	return _mm_load_si128((const __m128i *)k->rk[r]);
}

/* n (1..8) blocks from counter c (swapped form), into out. */
static AES_INLINE void blocks(const struct sotls_aes_key *k, unsigned rounds, __m128i c,
			      const uint8_t *in, uint8_t *out, unsigned n)
{
	__m128i b[8];
	const __m128i k0 = rkey(k, 0);

	for (unsigned j = 0; j < n; j++)
		b[j] = ctr_swap(_mm_add_epi32(c, _mm_set_epi32((int)j, 0, 0, 0))) ^ k0;
	for (unsigned r = 1; r < rounds; r++) {
		const __m128i kr = rkey(k, r);

		for (unsigned j = 0; j < n; j++)
			b[j] = _mm_aesenc_si128(b[j], kr);
	}
	const __m128i kl = rkey(k, rounds);
	for (unsigned j = 0; j < n; j++)
		b[j] = _mm_aesenclast_si128(
			b[j], kl ^ _mm_loadu_si128((const __m128i *)(in + 16 * j)));
	for (unsigned j = 0; j < n; j++)
		_mm_storeu_si128((__m128i *)(out + 16 * j), b[j]);
}

static AES_INLINE void ctr32(unsigned rounds, const struct sotls_aes_key *k, uint8_t ctr[16],
			     const uint8_t *in, uint8_t *out, size_t nblocks)
{
	__m128i c = ctr_swap(_mm_loadu_si128((const __m128i *)ctr));

	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		blocks(k, rounds, c, in, out, 8);
		c = _mm_add_epi32(c, _mm_set_epi32(8, 0, 0, 0));
	}
	/* At most three more passes: 4, 2, 1 blocks (constant widths, so each
	 * unrolls and keeps its blocks in registers). */
	if (nblocks & 4) {
		blocks(k, rounds, c, in, out, 4);
		c = _mm_add_epi32(c, _mm_set_epi32(4, 0, 0, 0));
		in += 64;
		out += 64;
	}
	if (nblocks & 2) {
		blocks(k, rounds, c, in, out, 2);
		c = _mm_add_epi32(c, _mm_set_epi32(2, 0, 0, 0));
		in += 32;
		out += 32;
	}
	if (nblocks & 1) {
		blocks(k, rounds, c, in, out, 1);
		c = _mm_add_epi32(c, _mm_set_epi32(1, 0, 0, 0));
	}
	_mm_storeu_si128((__m128i *)ctr, ctr_swap(c));
}

void sotls_aes_ctr32_aesni(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			   uint8_t *out, size_t nblocks)
{
	if (nblocks == 0)
		return;
	SOTLS_AES_WITH_ROUNDS(k->rounds, ctr32, k, ctr, in, out, nblocks);
}

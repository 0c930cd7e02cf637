/*
 * AES CTR with AES-NI: eight blocks interleaved, so that the four-cycle-ish
 * latency of AESENC is hidden behind the seven other blocks' rounds (the
 * pieces are in aes_aesni.h).
 *
 * The round count is a compile-time constant in each specialisation (10, 12,
 * 14), so the round loops unroll completely.
 */
#include "aes_aesni.h"

static AESNI_INLINE void ctr32(unsigned rounds, const struct sotls_aes_key *k, uint8_t ctr[16],
			     const uint8_t *in, uint8_t *out, size_t nblocks)
{
	__m128i c = aesni_ctr_swap(_mm_loadu_si128((const __m128i *)ctr));

	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		aesni_blocks(k, rounds, c, in, out, 8);
		c = _mm_add_epi32(c, _mm_set_epi32(8, 0, 0, 0));
	}
	/* At most three more passes: 4, 2, 1 blocks (constant widths, so each
	 * unrolls and keeps its blocks in registers). */
	if (nblocks & 4) {
		aesni_blocks(k, rounds, c, in, out, 4);
		c = _mm_add_epi32(c, _mm_set_epi32(4, 0, 0, 0));
		in += 64;
		out += 64;
	}
	if (nblocks & 2) {
		aesni_blocks(k, rounds, c, in, out, 2);
		c = _mm_add_epi32(c, _mm_set_epi32(2, 0, 0, 0));
		in += 32;
		out += 32;
	}
	if (nblocks & 1) {
		aesni_blocks(k, rounds, c, in, out, 1);
		c = _mm_add_epi32(c, _mm_set_epi32(1, 0, 0, 0));
	}
	_mm_storeu_si128((__m128i *)ctr, aesni_ctr_swap(c));
}

void sotls_aes_ctr32_aesni(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			   uint8_t *out, size_t nblocks)
{
	if (nblocks == 0)
		return;
	SOTLS_AES_WITH_ROUNDS(k->rounds, ctr32, k, ctr, in, out, nblocks);
}

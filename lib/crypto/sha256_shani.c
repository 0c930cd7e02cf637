/*
 * The SHA-256 compression with the SHA extensions (SHA256RNDS2, SHA256MSG1,
 * SHA256MSG2; with SSSE3's PSHUFB and SSE4.1's PBLENDW), compiled with
 * -msha -mssse3 -msse4.1 and called only when cpu.c reports them.
 *
 * SHA256RNDS2 keeps the working variables as two registers, {A, B, E, F}
 * and {C, D, G, H} (A, C in the top dword), runs two rounds on the W + K
 * words in the low half of its third operand and returns the new
 * {A, B, E, F}; the old one is the new {C, D, G, H}. So four rounds are two
 * calls with the operands swapped, the second on the upper two words.
 * SHA256MSG1/MSG2 compute four schedule words W[t..t+3] from the sixteen
 * before them (FIPS 180-4 §6.2.2 step 1) with W[t-7..t-4] added between.
 */
#include "sha256.h"

#include <immintrin.h>

void sotls_sha256_blocks_shani(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	/* big-endian words: reverse the bytes of each dword */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, t;

	/* {A, B, C, D}, {E, F, G, H} (A in the low dword) to {A, B, E, F}, {C, D, G, H} */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);      /* B A D C */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b); /* H G F E */
	abef = _mm_alignr_epi8(t, cdgh, 8);		  /* F E B A */
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);		  /* H G D C */

	for (; blocks > 0; blocks--, p += 64) {
		const __m128i abef0 = abef, cdgh0 = cdgh;
		__m128i w[4];

		for (int g = 0; g < 16; g++) {
			__m128i wk;

			if (g < 4) {
				w[g] = _mm_shuffle_epi8(
					_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
			} else {
				/* W[t..t+3] from W[t-16..t-13], W[t-15..t-12] (MSG1),
				 * W[t-7..t-4] and W[t-4..t-1] (MSG2) */
				__m128i x = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);

				x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
				w[g % 4] = _mm_sha256msg2_epu32(x, w[(g + 3) % 4]);
			}
			wk = _mm_add_epi32(w[g % 4], _mm_loadu_si128((const __m128i *)(sotls_sha256_k + 4 * g)));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}

	/* back to {A, B, C, D}, {E, F, G, H} */
	t = _mm_shuffle_epi32(abef, 0x1b);		    /* A B E F */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);		    /* G H C D */
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(t, cdgh, 0xf0));	 /* A B C D */
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(cdgh, t, 8)); /* E F G H */
}

/*
 * GHASH with VPCLMULQDQ on 512-bit registers (internal to lib/crypto): the
 * table of powers of H that sotls_ghash_init_vpclmul_avx512 fills, and the
 * four-blocks-a-register Karatsuba accumulator, shared by the GHASH routine
 * (ghash_vpclmul_avx512.c) and the stitched AES-GCM loop
 * (gcm_aes_vaes_avx512.c). The including file is compiled with VPCLMULQDQ,
 * AVX-512 F/BW/VL and what ghash_clmul.h needs.
 */
#ifndef SOTLS_CRYPTO_GHASH_VPCLMUL_AVX512_H
#define SOTLS_CRYPTO_GHASH_VPCLMUL_AVX512_H

#include <immintrin.h>

#include "ghash.h"
#include "ghash_clmul.h"

#define VPCLMUL_INLINE inline __attribute__((always_inline))

#define VPCLMUL_POWERS 32

/*
 * key[i] = H^(32-i)*x^-1 and mid[i] = ghash_mid(key[i]) (ghash_powers_init):
 * highest power first, so that the n blocks of a short run line up with the
 * last n entries and any four consecutive ones load as one zmm. The 32 keys
 * with their middle factors fill the table exactly. Overlays the opaque byte
 * table, hence may_alias.
 */
struct __attribute__((may_alias)) vpclmul_tab {
	__m128i key[VPCLMUL_POWERS];
	__m128i mid[VPCLMUL_POWERS];
};

_Static_assert(sizeof(struct vpclmul_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "VPCLMULQDQ GHASH table too large");

static VPCLMUL_INLINE const struct vpclmul_tab *vpclmul_tab(const struct sotls_ghash_key *gk)
{
	return (const struct vpclmul_tab *)gk->tab;
}

/* Unreduced Karatsuba partial products, four blocks lane by lane. */
struct acc512 {
	__m512i lo, hi, mid;
};

static VPCLMUL_INLINE struct acc512 acc512_zero(void)
{
	return (struct acc512){ _mm512_setzero_si512(), _mm512_setzero_si512(),
				_mm512_setzero_si512() };
}

/* ghash_bswap of each of the four blocks. */
static VPCLMUL_INLINE __m512i bswap4(__m512i x)
{
	const __m512i rev = _mm512_broadcast_i32x4(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));

	return _mm512_shuffle_epi8(x, rev);
}

/* Adds four products x*K lane by lane, k holding the keys and km their ghash_mid(). */
static VPCLMUL_INLINE void acc512_mul(struct acc512 *a, __m512i x, __m512i k, __m512i km)
{
	const __m512i xm = x ^ _mm512_shuffle_epi32(x, _MM_PERM_BADC);

	a->lo ^= _mm512_clmulepi64_epi128(x, k, 0x00);
	a->hi ^= _mm512_clmulepi64_epi128(x, k, 0x11);
	a->mid ^= _mm512_clmulepi64_epi128(xm, km, 0x00);
}

static VPCLMUL_INLINE __m128i lanes_sum(__m512i v)
{
	const __m256i h = _mm512_castsi512_si256(v) ^ _mm512_extracti64x4_epi64(v, 1);

	return _mm256_castsi256_si128(h) ^ _mm256_extracti128_si256(h, 1);
}

/* The four lanes added and reduced: the sum of all the products. */
static VPCLMUL_INLINE __m128i acc512_reduce(const struct acc512 *a)
{
	const struct ghash_acc s = { lanes_sum(a->lo), lanes_sum(a->hi), lanes_sum(a->mid) };

	return ghash_acc_reduce(&s);
}

#endif

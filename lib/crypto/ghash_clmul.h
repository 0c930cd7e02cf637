/*
 * 128-bit carry-less multiplication helpers shared by the PCLMULQDQ and
 * VPCLMULQDQ GHASH implementations (internal to lib/crypto; the including
 * file is compiled with PCLMUL, SSSE3 and AVX). Values are the reflected
 * integers of ghash_field.h, one per xmm register, and keys are H^k*x^-1.
 */
#ifndef SOTLS_CRYPTO_GHASH_CLMUL_H
#define SOTLS_CRYPTO_GHASH_CLMUL_H

#include <immintrin.h>
#include <stdint.h>

#include "ghash_field.h"

/* Reversing a block's bytes gives its reflected integer, and back. */
static inline __m128i ghash_bswap(__m128i x)
{
	const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	return _mm_shuffle_epi8(x, rev);
}

static inline __m128i ghash_load(const uint8_t *p)
{
	return ghash_bswap(_mm_loadu_si128((const __m128i *)p));
}

static inline void ghash_store(uint8_t *p, __m128i v)
{
	_mm_storeu_si128((__m128i *)p, ghash_bswap(v));
}

/* H*x^-1: the key for H. */
static inline __m128i ghash_key1(const uint8_t h[16])
{
	uint64_t hi, lo;

	ghash_h_div_x(&hi, &lo, h);
	return _mm_set_epi64x((long long)hi, (long long)lo);
}

/* The Karatsuba middle operand: the xor of the two halves (in both qwords). */
static inline __m128i ghash_mid(__m128i v)
{
	return v ^ _mm_shuffle_epi32(v, 0x4e);
}

/* Unreduced Karatsuba partial products, summed over several blocks. */
struct ghash_acc {
	__m128i lo, hi, mid;
};

static inline struct ghash_acc ghash_acc_zero(void)
{
	return (struct ghash_acc){ _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128() };
}

/* Adds x*K, where k is the key for K and km = ghash_mid(k). */
static inline void ghash_acc_mul(struct ghash_acc *a, __m128i x, __m128i k, __m128i km)
{
	a->lo ^= _mm_clmulepi64_si128(x, k, 0x00);
	a->hi ^= _mm_clmulepi64_si128(x, k, 0x11);
	a->mid ^= _mm_clmulepi64_si128(ghash_mid(x), km, 0x00);
}

/*
 * Reduces the 256-bit reflected product hi:lo = d3:d2:d1:d0 modulo P by
 * folding d0, then d1, as derived in ghash_field.h: each fold is the word's
 * carry-less product with 0xC200000000000000 (the x, x^2, x^7 terms) one
 * word up, plus the word itself two words up, which swapping the qwords of
 * the low half provides. (This measured faster than the same folds done
 * with shifts.)
 */
static inline __m128i ghash_reduce(__m128i lo, __m128i hi)
{
	const __m128i poly = _mm_set_epi64x(0, (long long)0xc200000000000000);

	lo = _mm_shuffle_epi32(lo, 0x4e) ^ _mm_clmulepi64_si128(lo, poly, 0x00);
	return hi ^ _mm_shuffle_epi32(lo, 0x4e) ^ _mm_clmulepi64_si128(lo, poly, 0x00);
}

/* Karatsuba: the middle product less the outer two straddles the halves. */
static inline __m128i ghash_acc_reduce(const struct ghash_acc *a)
{
	__m128i mid = a->mid ^ a->lo ^ a->hi;

	return ghash_reduce(a->lo ^ _mm_slli_si128(mid, 8), a->hi ^ _mm_srli_si128(mid, 8));
}

/* x*K where k is the key for K: used to derive the powers of H. */
static inline __m128i ghash_mul(__m128i x, __m128i k)
{
	struct ghash_acc a = ghash_acc_zero();

	ghash_acc_mul(&a, x, k, ghash_mid(k));
	return ghash_acc_reduce(&a);
}

/*
 * The table of powers both implementations keep: key[i] = H^(n-i)*x^-1 for
 * i < n, highest power first, so that the m blocks of a short run use the
 * last m entries; mid[i] = ghash_mid(key[i]).
 */
static inline void ghash_powers_init(__m128i *key, __m128i *mid, int n, const uint8_t h[16])
{
	__m128i k1 = ghash_key1(h), k = k1;

	for (int i = n - 1; i >= 0; i--) {
		key[i] = k;
		mid[i] = ghash_mid(k);
		k = ghash_mul(k, k1);
	}
}

#endif

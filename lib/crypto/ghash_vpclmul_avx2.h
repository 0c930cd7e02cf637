/*
 * GHASH with VPCLMULQDQ on 256-bit registers (internal to lib/crypto), for
 * CPUs with VAES and VPCLMULQDQ but no AVX-512 (AMD Zen 3): the table of
 * powers of H that sotls_ghash_init_vpclmul_avx2 fills, the two-blocks-a-
 * register Karatsuba accumulator, and the fold of up to 32 blocks with one
 * reduction, shared by the GHASH routine (ghash_vpclmul_avx2.c) and the
 * stitched AES-GCM loop (gcm_aes_vaes_avx2.c). The including file is
 * compiled with VPCLMULQDQ, AVX2 and what ghash_clmul.h needs.
 */
#ifndef SOTLS_CRYPTO_GHASH_VPCLMUL_AVX2_H
#define SOTLS_CRYPTO_GHASH_VPCLMUL_AVX2_H

#include <immintrin.h>
#include <stddef.h>

#include "ghash.h"
#include "ghash_clmul.h"

#define VPCLMUL256_INLINE inline __attribute__((always_inline))

/*
 * 32 powers: two of the stitched loop's batches of eight ymm registers a
 * reduction. With one batch a reduction the chain through Y (block 0's
 * product, then the reduction) held the loop back: two measured 6-9%
 * faster on Zen 3. The 32 keys with their middle factors fill the table
 * exactly.
 */
#define VPCLMUL256_POWERS 32

/*
 * key[i] = H^(32-i)*x^-1 and mid[i] = ghash_mid(key[i]) (ghash_powers_init):
 * highest power first, so that the n blocks of a short run line up with the
 * last n entries and any two consecutive ones load as one ymm. Overlays the
 * opaque byte table, hence may_alias.
 */
struct __attribute__((may_alias)) vpclmul256_tab {
	__m128i key[VPCLMUL256_POWERS];
	__m128i mid[VPCLMUL256_POWERS];
};

_Static_assert(sizeof(struct vpclmul256_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "VPCLMULQDQ (ymm) GHASH table too large");

static VPCLMUL256_INLINE const struct vpclmul256_tab *vpclmul256_tab(
	const struct sotls_ghash_key *gk)
{
	return (const struct vpclmul256_tab *)gk->tab;
}

/* Unreduced Karatsuba partial products, two blocks lane by lane. */
struct acc256 {
	__m256i lo, hi, mid;
};

static VPCLMUL256_INLINE struct acc256 acc256_zero(void)
{
	return (struct acc256){ _mm256_setzero_si256(), _mm256_setzero_si256(),
				_mm256_setzero_si256() };
}

/* ghash_bswap of both blocks. */
static VPCLMUL256_INLINE __m256i bswap2(__m256i x)
{
	const __m256i rev = _mm256_broadcastsi128_si256(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));

	return _mm256_shuffle_epi8(x, rev);
}

/* Adds two products x*K lane by lane, k holding the keys and km their ghash_mid(). */
static VPCLMUL256_INLINE void acc256_mul(struct acc256 *a, __m256i x, __m256i k, __m256i km)
{
	const __m256i xm = x ^ _mm256_shuffle_epi32(x, 0x4e);

	a->lo ^= _mm256_clmulepi64_epi128(x, k, 0x00);
	a->hi ^= _mm256_clmulepi64_epi128(x, k, 0x11);
	a->mid ^= _mm256_clmulepi64_epi128(xm, km, 0x00);
}

/* Adds the products of the two blocks at p (as stored) with the keys at key[i], key[i+1]. */
static VPCLMUL256_INLINE void acc256_mul_at(struct acc256 *a, const struct vpclmul256_tab *t,
					    const uint8_t *p, size_t i)
{
	acc256_mul(a, bswap2(_mm256_loadu_si256((const __m256i *)p)),
		   _mm256_loadu_si256((const __m256i *)&t->key[i]),
		   _mm256_loadu_si256((const __m256i *)&t->mid[i]));
}

/* The two lanes added and reduced: the sum of all the products. */
static VPCLMUL256_INLINE __m128i acc256_reduce(const struct acc256 *a)
{
#define LANES_SUM(v) (_mm256_castsi256_si128(v) ^ _mm256_extracti128_si256((v), 1))
	const struct ghash_acc s = { LANES_SUM(a->lo), LANES_SUM(a->hi), LANES_SUM(a->mid) };
#undef LANES_SUM

	return ghash_acc_reduce(&s);
}

/*
 * (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= 32 whole blocks at
 * in, two a register and one reduction. As in ghash_pclmul.h the block
 * carrying Y goes last, off the critical path until the end; an odd last
 * block takes an xmm product. A single block (the length block, a TLS
 * record's AAD) stays on xmm altogether.
 */
static VPCLMUL256_INLINE __m128i vpclmul256_fold(const struct vpclmul256_tab *t, __m128i y,
						 const uint8_t *in, size_t n)
{
	const size_t base = VPCLMUL256_POWERS - n;
	struct ghash_acc s = ghash_acc_zero();

	if (n == 1) {
		ghash_acc_mul(&s, ghash_load(in) ^ y, t->key[base], t->mid[base]);
		return ghash_acc_reduce(&s);
	}
	if (n % 2 != 0)
		ghash_acc_mul(&s, ghash_load(in + 16 * (n - 1)), t->key[base + n - 1],
			      t->mid[base + n - 1]);

	struct acc256 a = acc256_zero();
	for (size_t i = 2; i + 1 < n; i += 2)
		acc256_mul_at(&a, t, in + 16 * i, base + i);
	a.lo ^= _mm256_zextsi128_si256(s.lo);
	a.hi ^= _mm256_zextsi128_si256(s.hi);
	a.mid ^= _mm256_zextsi128_si256(s.mid);
	acc256_mul(&a, bswap2(_mm256_loadu_si256((const __m256i *)in)) ^ _mm256_zextsi128_si256(y),
		   _mm256_loadu_si256((const __m256i *)&t->key[base]),
		   _mm256_loadu_si256((const __m256i *)&t->mid[base]));
	return acc256_reduce(&a);
}

#endif

/*
 * GHASH with VPCLMULQDQ on 512-bit vectors: four blocks a register, 32
 * blocks multiplied by H^32..H^1 and summed unreduced (Karatsuba), then the
 * four lanes are added and reduced once. With 16 blocks a reduction the loop
 * waited on the chain through the previous Y; 32 keeps the multiplier busy.
 * Fewer than 32 blocks take the matching tail of the same powers, still four
 * at a time (the last zmm loaded under a mask) and with a single reduction.
 */
#include "ghash.h"

#include "ghash_clmul.h"

#define POWERS 32

/*
 * Highest power first, so that the n blocks of a short run line up with the
 * last n entries and any four consecutive ones load as one zmm. The 32 keys
 * with their middle factors fill the table exactly.
 */
/* Overlays the opaque byte table, hence may_alias. */
struct __attribute__((may_alias)) avx512_tab {
	__m128i key[POWERS];	/* key[i]: H^(POWERS-i)*x^-1 */
	__m128i mid[POWERS];	/* ghash_mid(key[i]) */
};

_Static_assert(sizeof(struct avx512_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "VPCLMULQDQ GHASH table too large");

struct acc512 {
	__m512i lo, hi, mid;
};

static inline __m512i bswap4(__m512i x)
{
	const __m512i rev = _mm512_broadcast_i32x4(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));

	return _mm512_shuffle_epi8(x, rev);
}

/* Adds four products x*K lane by lane, k holding the keys and km their ghash_mid(). */
static inline void acc512_mul(struct acc512 *a, __m512i x, __m512i k, __m512i km)
{
	__m512i xm = x ^ _mm512_shuffle_epi32(x, _MM_PERM_BADC);

	a->lo ^= _mm512_clmulepi64_epi128(x, k, 0x00);
	a->hi ^= _mm512_clmulepi64_epi128(x, k, 0x11);
	a->mid ^= _mm512_clmulepi64_epi128(xm, km, 0x00);
}

static inline __m128i lanes_sum(__m512i v)
{
	__m256i h = _mm512_castsi512_si256(v) ^ _mm512_extracti64x4_epi64(v, 1);

	return _mm256_castsi256_si128(h) ^ _mm256_extracti128_si256(h, 1);
}

void sotls_ghash_init_vpclmul_avx512(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct avx512_tab *t = (struct avx512_tab *)gk->tab;
	__m128i k1 = ghash_key1(h), k = k1;

	for (int i = POWERS - 1; i >= 0; i--) {
		t->key[i] = k;
		t->mid[i] = ghash_mid(k);
		k = ghash_mul(k, k1);
	}
}

/* (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= POWERS. */
static inline __m128i fold_blocks(const struct avx512_tab *t, __m128i y, const uint8_t *in,
				  size_t n)
{
	const __m128i *key = &t->key[POWERS - n], *mid = &t->mid[POWERS - n];
	struct ghash_acc s;

	if (n < 4) {
		/* Too few to fill a zmm: xmm spares adding up lanes afterwards. */
		s = ghash_acc_zero();
		for (size_t i = 1; i < n; i++)
			ghash_acc_mul(&s, ghash_load(in + 16 * i), key[i], mid[i]);
		ghash_acc_mul(&s, ghash_load(in) ^ y, key[0], mid[0]);
	} else {
		struct acc512 a = { _mm512_setzero_si512(), _mm512_setzero_si512(),
				    _mm512_setzero_si512() };
		size_t i;

		/* As in ghash_pclmul.c the block carrying Y goes last. */
		for (i = 4; i + 4 <= n; i += 4)
			acc512_mul(&a, bswap4(_mm512_loadu_si512(in + 16 * i)),
				   _mm512_loadu_si512(&key[i]), _mm512_loadu_si512(&mid[i]));
		if (i < n) {
			/* Masked loads: zero lanes past the input, and past the table. */
			__mmask8 m = (__mmask8)((1u << 2 * (n - i)) - 1);

			acc512_mul(&a, bswap4(_mm512_maskz_loadu_epi64(m, in + 16 * i)),
				   _mm512_maskz_loadu_epi64(m, &key[i]),
				   _mm512_maskz_loadu_epi64(m, &mid[i]));
		}
		acc512_mul(&a, bswap4(_mm512_loadu_si512(in)) ^ _mm512_zextsi128_si512(y),
			   _mm512_loadu_si512(&key[0]), _mm512_loadu_si512(&mid[0]));
		s = (struct ghash_acc){ lanes_sum(a.lo), lanes_sum(a.hi), lanes_sum(a.mid) };
	}
	return ghash_acc_reduce(&s);
}

void sotls_ghash_update_vpclmul_avx512(const struct sotls_ghash_key *gk, uint8_t y[16],
				       const uint8_t *in, size_t nblocks)
{
	const struct avx512_tab *t = (const struct avx512_tab *)gk->tab;
	__m128i acc = ghash_load(y);

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		acc = fold_blocks(t, acc, in, POWERS);
	if (nblocks)
		acc = fold_blocks(t, acc, in, nblocks);
	ghash_store(y, acc);
}

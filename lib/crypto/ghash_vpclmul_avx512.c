/*
 * GHASH with VPCLMULQDQ on 512-bit vectors: four blocks a register, 32
 * blocks multiplied by H^32..H^1 and summed unreduced (Karatsuba), then the
 * four lanes are added and reduced once. With 16 blocks a reduction the loop
 * waited on the chain through the previous Y; 32 keeps the multiplier busy.
 * Fewer than 32 blocks take the matching tail of the same powers, still four
 * at a time (the last zmm loaded under a mask) and with a single reduction.
 */
#include "ghash_vpclmul_avx512.h"

#define POWERS VPCLMUL_POWERS

void sotls_ghash_init_vpclmul_avx512(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct vpclmul_tab *t = (struct vpclmul_tab *)gk->tab;

	ghash_powers_init(t->key, t->mid, POWERS, h);
}

/* (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= POWERS. */
static inline __m128i fold_blocks(const struct vpclmul_tab *t, __m128i y, const uint8_t *in,
				  size_t n)
{
	const __m128i *key = &t->key[POWERS - n], *mid = &t->mid[POWERS - n];

	if (n < 4) {
		/* Too few to fill a zmm: xmm spares adding up lanes afterwards. */
		struct ghash_acc s = ghash_acc_zero();

		for (size_t i = 1; i < n; i++)
			ghash_acc_mul(&s, ghash_load(in + 16 * i), key[i], mid[i]);
		ghash_acc_mul(&s, ghash_load(in) ^ y, key[0], mid[0]);
		return ghash_acc_reduce(&s);
	} else {
		struct acc512 a = acc512_zero();
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
		return acc512_reduce(&a);
	}
}

void sotls_ghash_update_vpclmul_avx512(const struct sotls_ghash_key *gk, uint8_t y[16],
				       const uint8_t *in, size_t nblocks)
{
	const struct vpclmul_tab *t = vpclmul_tab(gk);
	__m128i acc = ghash_load(y);

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		acc = fold_blocks(t, acc, in, POWERS);
	if (nblocks)
		acc = fold_blocks(t, acc, in, nblocks);
	ghash_store(y, acc);
}

/*
 * GHASH with PCLMULQDQ: eight blocks are multiplied by H^8..H^1 and summed
 * unreduced (Karatsuba, three products a block), so one reduction serves
 * eight blocks and of their products only the first block's waits for the
 * previous Y. Shorter runs use the matching tail of the same powers.
 */
#include "ghash.h"

#include "ghash_clmul.h"

#define POWERS 8

/* Highest power first, so that the n blocks of a short run use the last n. */
/* Overlays the opaque byte table, hence may_alias. */
struct __attribute__((may_alias)) pclmul_tab {
	__m128i key[POWERS];	/* key[i]: H^(POWERS-i)*x^-1 */
	__m128i mid[POWERS];	/* ghash_mid(key[i]) */
};

_Static_assert(sizeof(struct pclmul_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "PCLMUL GHASH table too large");

void sotls_ghash_init_pclmul(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct pclmul_tab *t = (struct pclmul_tab *)gk->tab;

	ghash_powers_init(t->key, t->mid, POWERS, h);
}

/* (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= POWERS. */
static inline __m128i fold_blocks(const struct pclmul_tab *t, __m128i y, const uint8_t *in,
				  size_t n)
{
	const __m128i *key = &t->key[POWERS - n], *mid = &t->mid[POWERS - n];
	struct ghash_acc a = ghash_acc_zero();

	/* The block carrying Y goes last, off the critical path until the end. */
	for (size_t i = 1; i < n; i++)
		ghash_acc_mul(&a, ghash_load(in + 16 * i), key[i], mid[i]);
	ghash_acc_mul(&a, ghash_load(in) ^ y, key[0], mid[0]);
	return ghash_acc_reduce(&a);
}

void sotls_ghash_update_pclmul(const struct sotls_ghash_key *gk, uint8_t y[16],
			       const uint8_t *in, size_t nblocks)
{
	const struct pclmul_tab *t = (const struct pclmul_tab *)gk->tab;
	__m128i acc = ghash_load(y);

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		acc = fold_blocks(t, acc, in, POWERS);
	if (nblocks)
		acc = fold_blocks(t, acc, in, nblocks);
	ghash_store(y, acc);
}

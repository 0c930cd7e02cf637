/*
 * GHASH with PCLMULQDQ: 32 blocks are multiplied by H^32..H^1 and summed
 * unreduced (Karatsuba, three products a block), so one reduction serves
 * 32 blocks and of their products only the first block's waits for the
 * previous Y. Shorter runs use the matching tail of the same powers
 * (ghash_pclmul.h).
 */
#include "ghash.h"

#include "ghash_pclmul.h"

void sotls_ghash_init_pclmul(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct pclmul_tab *t = (struct pclmul_tab *)gk->tab;

	ghash_powers_init(t->key, t->mid, PCLMUL_POWERS, h);
}

void sotls_ghash_update_pclmul(const struct sotls_ghash_key *gk, uint8_t y[16],
			       const uint8_t *in, size_t nblocks)
{
	const struct pclmul_tab *t = pclmul_tab(gk);
	__m128i acc = ghash_load(y);

	for (; nblocks >= PCLMUL_POWERS; nblocks -= PCLMUL_POWERS, in += 16 * PCLMUL_POWERS)
		acc = pclmul_fold(t, acc, in, PCLMUL_POWERS);
	if (nblocks)
		acc = pclmul_fold(t, acc, in, nblocks);
	ghash_store(y, acc);
}

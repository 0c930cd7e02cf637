/*
 * GHASH with VPCLMULQDQ on 256-bit vectors, for CPUs without AVX-512 (AMD
 * Zen 3): two blocks a register, 32 blocks multiplied by H^32..H^1 and
 * summed unreduced (Karatsuba), then the two lanes are added and reduced
 * once. Its table is the one the stitched VAES (ymm) AES-GCM loop reads, so
 * the AAD and the length block of that loop's records come here.
 */
#include "ghash_vpclmul_avx2.h"

#define POWERS VPCLMUL256_POWERS

void sotls_ghash_init_vpclmul_avx2(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct vpclmul256_tab *t = (struct vpclmul256_tab *)gk->tab;

	ghash_powers_init(t->key, t->mid, POWERS, h);
}

void sotls_ghash_update_vpclmul_avx2(const struct sotls_ghash_key *gk, uint8_t y[16],
				     const uint8_t *in, size_t nblocks)
{
	const struct vpclmul256_tab *t = vpclmul256_tab(gk);
	__m128i acc = ghash_load(y);

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		acc = vpclmul256_fold(t, acc, in, POWERS);
	if (nblocks)
		acc = vpclmul256_fold(t, acc, in, nblocks);
	ghash_store(y, acc);
}

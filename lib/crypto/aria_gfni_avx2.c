/*
 * ARIA CTR, byte-sliced, 32 blocks per batch in ymm registers with GFNI
 * S-boxes (aria_gfni_sliced.h), for CPUs with AVX2 and GFNI but no AVX-512:
 * three-input XORs take two instructions, and the 16 state vectors fill the
 * 16 ymm registers, so the compiler keeps some in memory during diffusion.
 */
#include "aria.h"
#include "util.h"

#define SL_WIDTH 256
#define SL_TERNLOG 0
#include "aria_gfni_sliced.h"

void sotls_aria_ctr32_gfni_avx2(const struct sotls_aria_key *k, uint8_t ctr[16], const uint8_t *in,
				uint8_t *out, size_t nblocks)
{
	struct aria_sl_ctx cx;
	uint32_t c;

	if (nblocks == 0)
		return;
	aria_prepare_ymm(&cx, k, ctr);
	c = sotls_load_be32(ctr + 12);
	while (nblocks > 0) {
		const size_t nb = nblocks < 32 ? nblocks : 32;

		aria_blocks_ymm(&cx, c, in, out, nb);
		c += (uint32_t)nb;
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&cx, sizeof(cx));
}

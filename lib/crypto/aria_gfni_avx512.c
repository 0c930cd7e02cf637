/*
 * ARIA CTR, byte-sliced, 64 blocks per batch in zmm registers with GFNI
 * S-boxes and VPTERNLOGD three-input XORs (aria_gfni_sliced.h). Tails of up
 * to 32 blocks run in ymm registers with the same AVX-512VL instructions.
 * On Zen 4, which executes a zmm operation as two ymm halves, 32-block ymm
 * batches are exactly as fast per byte; zmm is kept for CPUs with full-width
 * units, where it halves the instruction count.
 */
#include "aria.h"
#include "util.h"

#define SL_WIDTH 512
#include "aria_gfni_sliced.h"

#define SL_WIDTH 256
#define SL_TERNLOG 1
#include "aria_gfni_sliced.h"

void sotls_aria_ctr32_gfni_avx512(const struct sotls_aria_key *k, uint8_t ctr[16],
				  const uint8_t *in, uint8_t *out, size_t nblocks)
{
	struct aria_sl_ctx cx;
	uint32_t c;

	if (nblocks == 0)
		return;
	aria_prepare_ymm_vl(&cx, k, ctr);
	c = sotls_load_be32(ctr + 12);
	/* A partial zmm batch costs as much as a full one, so at most 32
	 * blocks go to one ymm batch at the end: a 94-block record is 64 + 30,
	 * not 64 + 64. */
	while (nblocks > 32) {
		const size_t nb = nblocks < 64 ? nblocks : 64;

		aria_blocks_zmm(&cx, c, in, out, nb);
		c += (uint32_t)nb;
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
	if (nblocks > 0) {
		aria_blocks_ymm_vl(&cx, c, in, out, nblocks);
		c += (uint32_t)nblocks;
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&cx, sizeof(cx));
}

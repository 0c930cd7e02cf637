/*
 * ARIA CTR, byte-sliced, 64 blocks per batch in zmm registers with GFNI
 * S-boxes and VPTERNLOGD three-input XORs (aria_sliced.h). Tails of up
 * to 32 blocks run in ymm registers with the same AVX-512VL instructions.
 * On Zen 4, which executes a zmm operation as two ymm halves, 32-block ymm
 * batches are exactly as fast per byte; zmm is kept for CPUs with full-width
 * units, where it halves the instruction count.
 */
#include "aria.h"
#include "util.h"

#define SL_WIDTH 512
#include "aria_sliced.h"

#define SL_WIDTH 256
#define SL_TERNLOG 1
#include "aria_sliced.h"

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
	nblocks = aria_batches_zmm(&cx, &c, &in, &out, nblocks, 32);
	aria_batches_ymm_vl(&cx, &c, &in, &out, nblocks, 0);
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&cx, sizeof(cx));
}

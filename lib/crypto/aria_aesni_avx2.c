/*
 * ARIA CTR, byte-sliced (aria_sliced.h), 32 blocks per batch in ymm
 * registers, for CPUs with AVX2 and AES-NI but neither GFNI nor VAES: the
 * S-boxes are AESENCLAST / AESDECLAST on each 128-bit half apart plus affine
 * byte maps (aria_aesni_sbox.h); everything else (diffusion, counters,
 * transpose) runs on whole ymm registers. What is left after the full
 * batches goes through one ymm batch if it is more than 16 blocks, else
 * through a 16-block xmm batch, which costs about half as much; calls of a
 * few blocks take aria_aesni_avx.c's unsliced path (aria_aesni_sbox.h).
 *
 * aria_vaes_avx2.c compiles this file again with VAES S-boxes for the ymm
 * batches, through ARIA_AVX2_SBOX and ARIA_AVX2_CTR32.
 */
#include "aria.h"
#include "util.h"

#ifndef ARIA_AVX2_SBOX
#define ARIA_AVX2_SBOX ARIA_SL_AESNI
#define ARIA_AVX2_CTR32 sotls_aria_ctr32_aesni_avx2
#endif

#define SL_WIDTH 256
#define SL_TERNLOG 0
#define SL_SBOX ARIA_AVX2_SBOX
#include "aria_sliced.h"

#define SL_WIDTH 128
#define SL_SBOX ARIA_SL_AESNI
#include "aria_sliced.h"

void ARIA_AVX2_CTR32(const struct sotls_aria_key *k, uint8_t ctr[16], const uint8_t *in,
		     uint8_t *out, size_t nblocks)
{
	uint8_t sk[SOTLS_ARIA_MAX_ROUNDS - 1][16];
	struct aria_sl_ctx cx;
	uint32_t c;

	if (nblocks <= ARIA_AES_UNSLICED_MAX) {
		aria_aes_ctr_unsliced(k, ctr, in, out, nblocks);
		return;
	}
	/* The per-call part works on broadcasts: xmm does it with a quarter of
	 * the AES-NI work of split ymm registers. */
	aria_prepare_xmm(&cx, k, ctr);
	aria_aes_sbox_keys(sk, k);
	cx.sk = (const uint8_t(*)[16])sk;
	c = sotls_load_be32(ctr + 12);
	nblocks = aria_batches_ymm(&cx, &c, &in, &out, nblocks, 16);
	aria_batches_xmm(&cx, &c, &in, &out, nblocks, 0);
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&cx, sizeof(cx));
	sotls_wipe(sk, (k->rounds - 1) * sizeof(sk[0]));
}

/*
 * The SHA-256 compression with the ARMv8 SHA2 instructions, compiled with
 * +crypto (meson.build) and called only when cpu.c reports them.
 *
 * Unlike x86's, the instructions keep the working variables in FIPS order:
 * {A, B, C, D} and {E, F, G, H}, A and E in lane 0, which is how h[] lies in
 * memory. SHA256H gives the new {A, B, C, D} after four rounds on the four
 * W + K words of its third operand, SHA256H2 the new {E, F, G, H} (given the
 * old {A, B, C, D}). SHA256SU0 and SHA256SU1 together compute W[t..t+3]
 * from the sixteen words before them (FIPS 180-4 §6.2.2 step 1).
 */
#include "sha256.h"

#include <arm_neon.h>

void sotls_sha256_blocks_armv8(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	uint32x4_t abcd = vld1q_u32(h), efgh = vld1q_u32(h + 4);

	for (; blocks > 0; blocks--, p += 64) {
		const uint32x4_t abcd0 = abcd, efgh0 = efgh;
		uint32x4_t w[4];

		/* The message is big-endian words. */
		for (int i = 0; i < 4; i++)
			w[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
		for (int i = 0; i < 16; i++) {
			const uint32x4_t wk = vaddq_u32(w[i % 4], vld1q_u32(sotls_sha256_k + 4 * i));
			const uint32x4_t prev = abcd;

			abcd = vsha256hq_u32(abcd, efgh, wk);
			efgh = vsha256h2q_u32(efgh, prev, wk);
			/* w[i % 4] is spent: it becomes the words 16 on. */
			if (i < 12)
				w[i % 4] = vsha256su1q_u32(vsha256su0q_u32(w[i % 4], w[(i + 1) % 4]),
							   w[(i + 2) % 4], w[(i + 3) % 4]);
		}
		abcd = vaddq_u32(abcd, abcd0);
		efgh = vaddq_u32(efgh, efgh0);
	}
	vst1q_u32(h, abcd);
	vst1q_u32(h + 4, efgh);
}

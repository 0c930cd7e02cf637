/*
 * AES CTR with the ARMv8 Cryptography Extensions (AESE, AESMC): eight blocks
 * interleaved, so that each AESE/AESMC pair's latency is covered by the
 * seven other blocks' rounds (cores fuse the pair, but only back to back).
 *
 * AESE is AddRoundKey, SubBytes and ShiftRows in that order, one step ahead
 * of FIPS-197's round: round key r enters the AESE of round r + 1, and the
 * last key is a plain XOR, which here also takes in the input.
 *
 * The counter lives byte-swapped in a vector (every word reversed), where
 * a 32-bit add on lane 3 is the big-endian increment mod 2^32 that GCM
 * wants and leaves the 12 fixed bytes alone; REV32 turns it back.
 *
 * The round count is a compile-time constant in each specialisation (10, 12,
 * 14), so the round loops unroll completely and every round key stays in a
 * register. Compiled with +crypto (meson.build).
 */
#include <arm_neon.h>

#include "aes.h"

#define CE_INLINE inline __attribute__((always_inline))

/* n (1..8) blocks from counter c (word-swapped form), into out. */
static CE_INLINE void ce_blocks(const uint8x16_t *rk, unsigned rounds, uint32x4_t c,
				const uint8_t *in, uint8_t *out, unsigned n)
{
	uint8x16_t b[8];

	for (unsigned j = 0; j < n; j++)
		b[j] = vrev32q_u8(vreinterpretq_u8_u32(
			vaddq_u32(c, vsetq_lane_u32(j, vdupq_n_u32(0), 3))));
	for (unsigned r = 0; r + 1 < rounds; r++)
		for (unsigned j = 0; j < n; j++)
			b[j] = vaesmcq_u8(vaeseq_u8(b[j], rk[r]));
	for (unsigned j = 0; j < n; j++)
		b[j] = veorq_u8(vaeseq_u8(b[j], rk[rounds - 1]),
				veorq_u8(rk[rounds], vld1q_u8(in + 16 * j)));
	for (unsigned j = 0; j < n; j++)
		vst1q_u8(out + 16 * j, b[j]);
}

static CE_INLINE uint32x4_t ce_step(uint32x4_t c, unsigned n)
{
	return vaddq_u32(c, vsetq_lane_u32(n, vdupq_n_u32(0), 3));
}

static CE_INLINE void ctr32(unsigned rounds, const struct sotls_aes_key *k, uint8_t ctr[16],
			    const uint8_t *in, uint8_t *out, size_t nblocks)
{
	uint8x16_t rk[SOTLS_AES_MAX_ROUNDS + 1];
	uint32x4_t c = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(ctr)));

	for (unsigned r = 0; r <= rounds; r++)
		rk[r] = vld1q_u8(k->rk[r]);
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		ce_blocks(rk, rounds, c, in, out, 8);
		c = ce_step(c, 8);
	}
	/* At most three more passes of constant width, each unrolled. */
	if (nblocks & 4) {
		ce_blocks(rk, rounds, c, in, out, 4);
		c = ce_step(c, 4);
		in += 64;
		out += 64;
	}
	if (nblocks & 2) {
		ce_blocks(rk, rounds, c, in, out, 2);
		c = ce_step(c, 2);
		in += 32;
		out += 32;
	}
	if (nblocks & 1) {
		ce_blocks(rk, rounds, c, in, out, 1);
		c = ce_step(c, 1);
	}
	vst1q_u8(ctr, vrev32q_u8(vreinterpretq_u8_u32(c)));
}

void sotls_aes_ctr32_armv8ce(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			     uint8_t *out, size_t nblocks)
{
	if (nblocks == 0)
		return;
	SOTLS_AES_WITH_ROUNDS(k->rounds, ctr32, k, ctr, in, out, nblocks);
}

/*
 * AES CTR with VAES on 512-bit registers: four blocks a register, eight
 * registers (32 blocks) in flight, so that each round's VAESENCs are
 * independent of each other for longer than the instruction's latency. The
 * rest of a call, under 32 blocks, takes at most two more passes: 16 blocks,
 * then 1, 2 or 4 registers with the last one under a mask that neither reads
 * nor writes past the data.
 */
#include "aes.h"
#include "aes_vaes_avx512.h"
#include "util.h"

static VAES_INLINE void ctr32(unsigned rounds, const struct sotls_aes_key *k, uint8_t ctr[16],
			      const uint8_t *in, uint8_t *out, size_t nblocks)
{
	struct vaes_keys v;
	__m512i c = vaes_ctr_base(ctr);

	vaes_load_keys(&v, k, rounds);
	for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512) {
		vaes_ctr_blocks(&v, rounds, c, in, out, 8, 32);
		c = vaes_ctr_add(c, 32);
	}
	if (nblocks >= 16) {
		vaes_ctr_blocks(&v, rounds, c, in, out, 4, 16);
		c = vaes_ctr_add(c, 16);
		in += 256;
		out += 256;
		nblocks -= 16;
	}
	if (nblocks > 8)
		vaes_ctr_blocks(&v, rounds, c, in, out, 4, nblocks);
	else if (nblocks > 4)
		vaes_ctr_blocks(&v, rounds, c, in, out, 2, nblocks);
	else if (nblocks > 0)
		vaes_ctr_blocks(&v, rounds, c, in, out, 1, nblocks);
	vaes_ctr_store(ctr, vaes_ctr_add(c, (int)nblocks));
	sotls_wipe(v.rk, (rounds + 1) * sizeof(v.rk[0]));
}

void sotls_aes_ctr32_vaes_avx512(const struct sotls_aes_key *k, uint8_t ctr[16],
				 const uint8_t *in, uint8_t *out, size_t nblocks)
{
	if (nblocks == 0)
		return;
	SOTLS_AES_WITH_ROUNDS(k->rounds, ctr32, k, ctr, in, out, nblocks);
}

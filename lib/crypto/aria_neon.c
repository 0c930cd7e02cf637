/*
 * ARIA CTR on NEON with the ARMv8 AES instructions, byte-sliced: a batch of
 * 16 blocks lives in 16 vectors, vector i holding byte i of every block, so
 * each S-box acts on a whole vector and the diffusion layer is vector XOR.
 * Nothing is looked up by a secret: the S-boxes are AESE/AESD (S1, S1^-1)
 * and, for S2 and S2^-1, the affine maps F and G of aria_aes_affine.h as
 * TBL lookups of nibbles into 16-byte constants.
 *
 * Round keys. AESE(x, k) = SubBytes(ShiftRows(x ^ k)) adds its key before
 * the S-box, which is where ARIA adds the round key, and a key byte
 * broadcast to a whole vector is untouched by ShiftRows: every key addition
 * rides in the AES instructions. S2^-1 = S1^-1 o G takes G first; as G is
 * affine, G(x ^ k) = G(x) ^ L(k), L(k) = G(k) ^ G(0), so AESD takes L(k).
 *
 * Lanes. AESE moves lane sigma(l) to lane l (sigma = ShiftRows), AESD
 * sigma^-1(l); every vector must share one lane order before the diffusion
 * XORs, so after each substitution layer the vectors of bytes 2 and 3 of
 * each word get sigma^2 (aria_aesni_sbox.h "Lanes"): after an odd round all
 * lanes are permuted by sigma, after an even one they are back in order, and
 * ARIA's round count is even.
 *
 * The counter blocks are built sliced (bytes 0..11 are the same in every
 * block); only the keystream is transposed back to blocks. Compiled with
 * +crypto (meson.build).
 */
#include <arm_neon.h>
#include <string.h>

#include "aria.h"
#include "aria_aes_affine.h"
#include "util.h"

#define BATCH 16
#define NEON_INLINE static inline __attribute__((always_inline))

/* Per call: each round's 16 key vectors, as the AES instructions take them. */
struct sliced_keys {
	uint8_t k[SOTLS_ARIA_MAX_ROUNDS + 1][16][16];
};

struct consts {
	uint8x16_t f_lo, f_hi, g_lo, g_hi, nib, fix;
};

NEON_INLINE uint8x16_t affine(uint8x16_t x, uint8x16_t lo, uint8x16_t hi, uint8x16_t nib)
{
	/* A per-byte shift needs no mask: TBL sees indices 0..15. */
	return veorq_u8(vqtbl1q_u8(lo, vandq_u8(x, nib)), vqtbl1q_u8(hi, vshrq_n_u8(x, 4)));
}

/*
 * sk->k[r] for round r + 1 (0-based r < rounds): ek(r + 1) broadcast byte by
 * byte, as L(k) in the S2^-1 bytes (3 of each word in odd rounds, 1 in even
 * ones); sk->k[rounds] is ek(rounds + 1), added plainly at the end.
 */
static void slice_keys(struct sliced_keys *sk, const struct sotls_aria_key *k,
		       const struct consts *c)
{
	uint8_t b[16];

	for (unsigned r = 0; r <= k->rounds; r++) {
		uint8x16_t kv = vld1q_u8(k->rk[r]);

		if (r < k->rounds) {
			const uint8x16_t lk = veorq_u8(affine(kv, c->g_lo, c->g_hi, c->nib),
						       vdupq_n_u8(ARIA_AES_G_LO[0] ^ ARIA_AES_G_HI[0]));
			/* r even is an odd round (rounds count from 1). */
			const uint8x16_t inv2 = vreinterpretq_u8_u32(
				vdupq_n_u32(r % 2 == 0 ? 0xff000000u : 0x0000ff00u));
			kv = vbslq_u8(inv2, lk, kv);
		}
		vst1q_u8(b, kv);
		for (int i = 0; i < 16; i++)
			vst1q_u8(sk->k[r][i], vld1q_dup_u8(&b[i]));
	}
	sotls_wipe(b, sizeof(b));
}

/* The substitution layer of round r + 1 with its key, lanes fixed up. */
NEON_INLINE void subst(uint8x16_t x[16], const uint8_t (*kr)[16], int odd,
		       const struct consts *c)
{
	for (int w = 0; w < 16; w += 4) {
		const uint8x16x4_t kk = vld1q_u8_x4(kr[w]);
		uint8x16_t s1 = vaeseq_u8(x[w + (odd ? 0 : 2)], kk.val[odd ? 0 : 2]);
		uint8x16_t s2 = affine(vaeseq_u8(x[w + (odd ? 1 : 3)], kk.val[odd ? 1 : 3]),
				       c->f_lo, c->f_hi, c->nib);
		uint8x16_t i1 = vaesdq_u8(x[w + (odd ? 2 : 0)], kk.val[odd ? 2 : 0]);
		uint8x16_t i2 = vaesdq_u8(affine(x[w + (odd ? 3 : 1)], c->g_lo, c->g_hi, c->nib),
					  kk.val[odd ? 3 : 1]);

		/* Bytes 2 and 3 of the word take sigma^2. */
		if (odd) {
			i1 = vqtbl1q_u8(i1, c->fix);
			i2 = vqtbl1q_u8(i2, c->fix);
		} else {
			s1 = vqtbl1q_u8(s1, c->fix);
			s2 = vqtbl1q_u8(s2, c->fix);
		}
		x[w + (odd ? 0 : 2)] = s1;
		x[w + (odd ? 1 : 3)] = s2;
		x[w + (odd ? 2 : 0)] = i1;
		x[w + (odd ? 3 : 1)] = i2;
	}
}

/*
 * ARIA's diffusion A (RFC 5794 §2.4.3): y_i is the XOR of seven x_j. The
 * 96 XORs of the rows share pairs; this order, found by greedily taking the
 * pair most rows share (Paar's heuristic) and checked against the rows,
 * needs 48.
 */
NEON_INLINE void diffuse(uint8x16_t x[16])
{
	const uint8x16_t t0 = veorq_u8(x[6], x[8]);
	const uint8x16_t t1 = veorq_u8(x[7], x[13]);
	const uint8x16_t t2 = veorq_u8(x[5], x[11]);
	const uint8x16_t t3 = veorq_u8(x[3], x[14]);
	const uint8x16_t t4 = veorq_u8(x[1], x[10]);
	const uint8x16_t t5 = veorq_u8(x[4], t3);
	const uint8x16_t t6 = veorq_u8(x[0], t2);
	const uint8x16_t t7 = veorq_u8(x[2], x[15]);
	const uint8x16_t t8 = veorq_u8(x[9], x[12]);
	const uint8x16_t t9 = veorq_u8(x[2], t8);
	const uint8x16_t t10 = veorq_u8(x[10], t1);
	const uint8x16_t t11 = veorq_u8(x[8], t7);
	const uint8x16_t t12 = veorq_u8(x[9], t5);
	const uint8x16_t t13 = veorq_u8(x[14], t6);
	const uint8x16_t t14 = veorq_u8(x[13], t0);
	const uint8x16_t t15 = veorq_u8(x[15], t4);
	const uint8x16_t t16 = veorq_u8(x[1], x[11]);
	const uint8x16_t t17 = veorq_u8(x[3], t14);
	const uint8x16_t t18 = veorq_u8(x[5], t11);
	const uint8x16_t t19 = veorq_u8(x[7], t9);
	const uint8x16_t t20 = veorq_u8(x[6], x[12]);
	const uint8x16_t t21 = veorq_u8(x[4], t15);
	const uint8x16_t t22 = veorq_u8(x[0], t10);
	const uint8x16_t t23 = veorq_u8(x[5], t7);
	const uint8x16_t t24 = veorq_u8(x[7], t8);
	const uint8x16_t t25 = veorq_u8(t12, t14);
	const uint8x16_t t26 = veorq_u8(t18, t24);
	const uint8x16_t t27 = veorq_u8(t16, t19);
	const uint8x16_t t28 = veorq_u8(t5, t19);
	const uint8x16_t t29 = veorq_u8(x[11], t20);
	const uint8x16_t t30 = veorq_u8(x[1], t20);
	const uint8x16_t t31 = veorq_u8(x[12], t17);
	const uint8x16_t t32 = veorq_u8(x[3], t22);
	const uint8x16_t t33 = veorq_u8(t21, t29);
	const uint8x16_t t34 = veorq_u8(t1, t21);
	const uint8x16_t t35 = veorq_u8(x[4], t18);
	const uint8x16_t t36 = veorq_u8(t17, t23);
	const uint8x16_t t37 = veorq_u8(x[6], t27);
	const uint8x16_t t38 = veorq_u8(t6, t12);
	const uint8x16_t t39 = veorq_u8(t9, t22);
	const uint8x16_t t40 = veorq_u8(t13, t30);
	const uint8x16_t t41 = veorq_u8(t11, t13);
	const uint8x16_t t42 = veorq_u8(t4, t35);
	const uint8x16_t t43 = veorq_u8(t12, t15);
	const uint8x16_t t44 = veorq_u8(t0, t32);
	const uint8x16_t t45 = veorq_u8(t16, t31);
	const uint8x16_t t46 = veorq_u8(t10, t13);
	const uint8x16_t t47 = veorq_u8(x[0], t34);

	x[0] = t25;
	x[1] = t26;
	x[2] = t33;
	x[3] = t46;
	x[4] = t41;
	x[5] = t43;
	x[6] = t39;
	x[7] = t45;
	x[8] = t47;
	x[9] = t40;
	x[10] = t36;
	x[11] = t28;
	x[12] = t37;
	x[13] = t44;
	x[14] = t38;
	x[15] = t42;
}

/* Transposes the 16x16 byte matrix: vector i, lane j becomes vector j, lane i. */
NEON_INLINE void transpose(uint8x16_t x[16])
{
	uint8x16_t a[16], b[16];

	for (int i = 0; i < 16; i += 2) {
		a[i] = vtrn1q_u8(x[i], x[i + 1]);
		a[i + 1] = vtrn2q_u8(x[i], x[i + 1]);
	}
	for (int i = 0; i < 16; i += 4)
		for (int j = 0; j < 2; j++) {
			b[i + j] = vreinterpretq_u8_u16(vtrn1q_u16(vreinterpretq_u16_u8(a[i + j]),
								   vreinterpretq_u16_u8(a[i + j + 2])));
			b[i + j + 2] = vreinterpretq_u8_u16(vtrn2q_u16(
				vreinterpretq_u16_u8(a[i + j]), vreinterpretq_u16_u8(a[i + j + 2])));
		}
	for (int i = 0; i < 16; i += 8)
		for (int j = 0; j < 4; j++) {
			a[i + j] = vreinterpretq_u8_u32(vtrn1q_u32(vreinterpretq_u32_u8(b[i + j]),
								   vreinterpretq_u32_u8(b[i + j + 4])));
			a[i + j + 4] = vreinterpretq_u8_u32(vtrn2q_u32(
				vreinterpretq_u32_u8(b[i + j]), vreinterpretq_u32_u8(b[i + j + 4])));
		}
	for (int j = 0; j < 8; j++) {
		x[j] = vreinterpretq_u8_u64(vtrn1q_u64(vreinterpretq_u64_u8(a[j]),
						       vreinterpretq_u64_u8(a[j + 8])));
		x[j + 8] = vreinterpretq_u8_u64(vtrn2q_u64(vreinterpretq_u64_u8(a[j]),
							   vreinterpretq_u64_u8(a[j + 8])));
	}
}

/* The keystream of counters c .. c + 15 after the 12 fixed bytes in head,
 * as 16 blocks in ks[0..15]. */
NEON_INLINE void batch(const struct sliced_keys *sk, unsigned rounds, const uint8x16_t head[12],
		       uint32_t c, uint8x16_t x[16], const struct consts *cs)
{
	static const uint32_t STEP[4] = {0, 1, 2, 3};
	uint32x4_t v[4];

	for (int i = 0; i < 12; i++)
		x[i] = head[i];
	for (int q = 0; q < 4; q++)
		v[q] = vaddq_u32(vdupq_n_u32(c + 4u * (uint32_t)q), vld1q_u32(STEP));
	/* Byte planes of the 16 counters: the least significant is byte 15. */
	const uint8x16_t ev0 = vuzp1q_u8(vreinterpretq_u8_u32(v[0]), vreinterpretq_u8_u32(v[1]));
	const uint8x16_t ev1 = vuzp1q_u8(vreinterpretq_u8_u32(v[2]), vreinterpretq_u8_u32(v[3]));
	const uint8x16_t od0 = vuzp2q_u8(vreinterpretq_u8_u32(v[0]), vreinterpretq_u8_u32(v[1]));
	const uint8x16_t od1 = vuzp2q_u8(vreinterpretq_u8_u32(v[2]), vreinterpretq_u8_u32(v[3]));
	x[15] = vuzp1q_u8(ev0, ev1);
	x[13] = vuzp2q_u8(ev0, ev1);
	x[14] = vuzp1q_u8(od0, od1);
	x[12] = vuzp2q_u8(od0, od1);

	unsigned r = 0;
	for (; r + 2 < rounds; r += 2) {
		subst(x, sk->k[r], 1, cs);
		diffuse(x);
		subst(x, sk->k[r + 1], 0, cs);
		diffuse(x);
	}
	subst(x, sk->k[r], 1, cs);
	diffuse(x);
	subst(x, sk->k[r + 1], 0, cs);
	for (int w = 0; w < 16; w += 4) {
		const uint8x16x4_t kk = vld1q_u8_x4(sk->k[rounds][w]);

		for (int j = 0; j < 4; j++)
			x[w + j] = veorq_u8(x[w + j], kk.val[j]);
	}
	transpose(x);
}

void sotls_aria_ctr32_neon(const struct sotls_aria_key *k, uint8_t ctr[16], const uint8_t *in,
			   uint8_t *out, size_t nblocks)
{
	const struct consts cs = {
		vld1q_u8(ARIA_AES_F_LO), vld1q_u8(ARIA_AES_F_HI), vld1q_u8(ARIA_AES_G_LO),
		vld1q_u8(ARIA_AES_G_HI), vdupq_n_u8(0x0f),	  vld1q_u8(ARIA_AES_LANE_FIX),
	};
	struct sliced_keys sk;
	uint8x16_t head[12], x[16];
	uint32_t c = sotls_load_be32(ctr + 12);

	if (nblocks == 0)
		return;
	slice_keys(&sk, k, &cs);
	for (int i = 0; i < 12; i++)
		head[i] = vdupq_n_u8(ctr[i]);
	for (; nblocks >= BATCH; nblocks -= BATCH, in += 16 * BATCH, out += 16 * BATCH) {
		batch(&sk, k->rounds, head, c, x, &cs);
		c += BATCH;
		for (int j = 0; j < 16; j++)
			vst1q_u8(out + 16 * j, veorq_u8(vld1q_u8(in + 16 * j), x[j]));
	}
	if (nblocks > 0) {
		/* A whole batch for the rest; only its first blocks are used. */
		uint8_t ks[16 * BATCH];

		batch(&sk, k->rounds, head, c, x, &cs);
		c += (uint32_t)nblocks;
		/* Through memory: a variable index would keep x out of registers. */
		for (int j = 0; j < 16; j++)
			vst1q_u8(ks + 16 * j, x[j]);
		for (size_t j = 0; j < nblocks; j++)
			vst1q_u8(out + 16 * j, veorq_u8(vld1q_u8(in + 16 * j), vld1q_u8(ks + 16 * j)));
		sotls_wipe(ks, sizeof(ks));
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&sk, sizeof(sk));
}

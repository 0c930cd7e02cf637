/*
 * GHASH with PMULL (ARMv8 Cryptography Extensions): eight blocks are
 * multiplied by H^8..H^1 and summed unreduced (Karatsuba, three products a
 * block), so one reduction serves eight blocks. The field arithmetic is that
 * of ghash_clmul.h (reflected integers, keys H^k*x^-1, the same two folds by
 * 0xC2 << 56), on NEON registers.
 *
 * REV64 alone turns a block into its reflected integer with the two halves
 * swapped; the keys are kept swapped the same way, so the outer products
 * pair lane 1 with lane 1 (PMULL2) and lane 0 with lane 0 (PMULL) and the
 * blocks never need the EXT that a full byte reversal would add. Compiled
 * with +crypto (meson.build).
 */
#include <arm_neon.h>

#include "ghash.h"
#include "ghash_field.h"

#define POWERS 8

/* Overlays the opaque byte table, hence may_alias. */
struct __attribute__((may_alias)) pmull_tab {
	uint64x2_t ks[POWERS]; /* ks[i]: H^(POWERS-i)*x^-1, halves swapped */
	uint64x2_t km[POWERS]; /* lane 0: the xor of ks[i]'s halves (Karatsuba) */
};

_Static_assert(sizeof(struct pmull_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "PMULL GHASH table too large");

#define PM_INLINE static inline __attribute__((always_inline))

PM_INLINE uint64x2_t swap64(uint64x2_t v)
{
	return vextq_u64(v, v, 1);
}

PM_INLINE uint64x2_t clmul_lo(uint64x2_t a, uint64x2_t b)
{
	return vreinterpretq_u64_p128(
		vmull_p64((poly64_t)vgetq_lane_u64(a, 0), (poly64_t)vgetq_lane_u64(b, 0)));
}

PM_INLINE uint64x2_t clmul_hi(uint64x2_t a, uint64x2_t b)
{
	return vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(a),
						     vreinterpretq_p64_u64(b)));
}

/* A block as its reflected integer, halves swapped ([hi, lo]). */
PM_INLINE uint64x2_t load_swapped(const uint8_t *p)
{
	return vreinterpretq_u64_u8(vrev64q_u8(vld1q_u8(p)));
}

/* Unreduced Karatsuba partial products, summed over several blocks. */
struct acc {
	uint64x2_t lo, hi, mid;
};

/* Adds X*K for a block xs and a key ks, both halves swapped. */
PM_INLINE void acc_mul(struct acc *a, uint64x2_t xs, uint64x2_t ks, uint64x2_t km)
{
	a->lo = veorq_u64(a->lo, clmul_hi(xs, ks));
	a->hi = veorq_u64(a->hi, clmul_lo(xs, ks));
	a->mid = veorq_u64(a->mid, clmul_lo(veorq_u64(xs, swap64(xs)), km));
}

/* The 256-bit product hi:lo reduced modulo P (ghash_clmul.h's ghash_reduce). */
PM_INLINE uint64x2_t reduce(uint64x2_t lo, uint64x2_t hi)
{
	const uint64x2_t poly = vdupq_n_u64(UINT64_C(0xc200000000000000));

	lo = veorq_u64(swap64(lo), clmul_lo(lo, poly));
	return veorq_u64(hi, veorq_u64(swap64(lo), clmul_lo(lo, poly)));
}

/* The sum reduced, in the normal order [lo, hi]. */
PM_INLINE uint64x2_t acc_reduce(const struct acc *a)
{
	const uint64x2_t zero = vdupq_n_u64(0);
	const uint64x2_t mid = veorq_u64(a->mid, veorq_u64(a->lo, a->hi));

	return reduce(veorq_u64(a->lo, vextq_u64(zero, mid, 1)),
		      veorq_u64(a->hi, vextq_u64(mid, zero, 1)));
}

/* x*K, x in the normal order, k the key for K in the normal order. */
static uint64x2_t mul(uint64x2_t x, uint64x2_t k)
{
	const uint64x2_t ks = swap64(k);
	struct acc a = {vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0)};

	acc_mul(&a, swap64(x), ks, veorq_u64(ks, swap64(ks)));
	return acc_reduce(&a);
}

void sotls_ghash_init_pmull(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct pmull_tab *t = (struct pmull_tab *)gk->tab;
	uint64_t hi, lo;

	ghash_h_div_x(&hi, &lo, h);
	const uint64x2_t k1 = vcombine_u64(vcreate_u64(lo), vcreate_u64(hi));
	uint64x2_t k = k1;
	for (int i = POWERS - 1; i >= 0; i--) {
		t->ks[i] = swap64(k);
		t->km[i] = veorq_u64(k, swap64(k));
		k = mul(k, k1);
	}
}

/* (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= POWERS; y normal order. */
PM_INLINE uint64x2_t fold(const struct pmull_tab *t, uint64x2_t y, const uint8_t *in, size_t n)
{
	const uint64x2_t *ks = &t->ks[POWERS - n], *km = &t->km[POWERS - n];
	struct acc a = {vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0)};

	/* The block carrying Y goes last, off the critical path until the end. */
	for (size_t i = 1; i < n; i++)
		acc_mul(&a, load_swapped(in + 16 * i), ks[i], km[i]);
	acc_mul(&a, veorq_u64(load_swapped(in), swap64(y)), ks[0], km[0]);
	return acc_reduce(&a);
}

void sotls_ghash_update_pmull(const struct sotls_ghash_key *gk, uint8_t y[16],
			      const uint8_t *in, size_t nblocks)
{
	const struct pmull_tab *t = (const struct pmull_tab *)gk->tab;
	/* y is a block too: REV64 then the swap gives the normal order. */
	uint64x2_t acc = swap64(load_swapped(y));

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		acc = fold(t, acc, in, POWERS);
	if (nblocks)
		acc = fold(t, acc, in, nblocks);
	vst1q_u8(y, vrev64q_u8(vreinterpretq_u8_u64(swap64(acc))));
}

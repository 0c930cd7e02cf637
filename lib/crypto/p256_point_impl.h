/*
 * P-256 inversion and point formulas over one level's field multiplication.
 * Included once by each p256_field_<level>.c after it defines
 *   static void fe_mul(p256_fe r, const p256_fe a, const p256_fe b);
 *   static void fe_sqr(p256_fe r, const p256_fe a);
 *   static void sc_mul(p256_fe r, const p256_fe a, const p256_fe b);
 *   static void sc_sqr(p256_fe r, const p256_fe a);
 *   static void fe_add(p256_fe r, const p256_fe a, const p256_fe b);
 *   static void fe_sub(p256_fe r, const p256_fe a, const p256_fe b);
 * (r may alias a or b) and P256_LEVEL_NAME, so that every formula is compiled
 * with that level's multiplication inlined rather than called through a
 * pointer: about 3,000 multiplications make one scalar multiplication.
 *
 * Formulas: Jacobian coordinates with a = -3, the doubling below, and
 * "add-1998-cmo-2" and "madd-2004-hmv" from the Explicit-Formulas Database. Every exceptional case
 * (an input at infinity, equal inputs) is resolved with masks, not branches.
 */
#include <string.h>

#ifndef P256_LEVEL_NAME
#error "define P256_LEVEL_NAME before including p256_point_impl.h"
#endif

#define P256_CAT2(a, b) a##b
#define P256_CAT(a, b) P256_CAT2(a, b)
#define P256_STR2(a) #a
#define P256_STR(a) P256_STR2(a)

/* r = a^(2^k), k >= 1 */
static void fe_sqr_n(p256_fe r, const p256_fe a, int k)
{
	fe_sqr(r, a);
	for (int i = 1; i < k; i++)
		fe_sqr(r, r);
}

/*
 * Fermat: a^(p-2). The exponent, from the top bit down, is 32 ones, 31 zeros,
 * a one, 96 zeros, 94 ones, a zero and a one; the chain builds the runs of
 * ones as a^(2^k - 1) and shifts them into place.
 */
static void fe_inv(p256_fe r, const p256_fe a)
{
	p256_fe x2, x4, x8, x16, x30, x32, t;

	fe_sqr(t, a);
	fe_mul(x2, t, a);
	fe_sqr_n(t, x2, 2);
	fe_mul(x4, t, x2);
	fe_sqr_n(t, x4, 4);
	fe_mul(x8, t, x4);
	fe_sqr_n(t, x8, 8);
	fe_mul(x16, t, x8);
	fe_sqr_n(t, x16, 16);
	fe_mul(x32, t, x16);
	fe_sqr_n(t, x16, 8);
	fe_mul(x30, t, x8);
	fe_sqr_n(x30, x30, 4);
	fe_mul(x30, x30, x4);
	fe_sqr_n(x30, x30, 2);
	fe_mul(x30, x30, x2);

	fe_sqr_n(t, x32, 32);
	fe_mul(t, t, a);
	fe_sqr_n(t, t, 96 + 32);
	fe_mul(t, t, x32);
	fe_sqr_n(t, t, 32);
	fe_mul(t, t, x32);
	fe_sqr_n(t, t, 30);
	fe_mul(t, t, x30);
	fe_sqr_n(t, t, 2);
	fe_mul(r, t, a);
}

/*
 * a^-1 mod n by Fermat, a^(n-2), a plain integer in and out; 0 for 0. The
 * exponent's top half is 32 ones, 32 zeros and 64 ones, built as runs like
 * fe_inv's; the bottom half goes by 4-bit windows over a^1..a^15. The
 * branches are on the public exponent only.
 */
static void sc_inv(p256_fe r, const p256_fe a)
{
	static const p256_fe one = {1, 0, 0, 0};
	static const uint64_t low[2] = {0xf3b9cac2fc63254fULL, 0xbce6faada7179e84ULL};
	p256_fe pow[16], x32, x;

	sc_mul(pow[1], a, P256_R2N);
	for (int i = 2; i < 16; i++)
		sc_mul(pow[i], pow[i - 1], pow[1]);
	/* x32 = a^(2^32 - 1) from a^(2^4 - 1) */
	memcpy(x32, pow[15], sizeof(x32));
	for (int run = 4; run < 32; run *= 2) {
		memcpy(x, x32, sizeof(x));
		for (int i = 0; i < run; i++)
			sc_sqr(x, x);
		sc_mul(x32, x, x32);
	}
	memcpy(x, x32, sizeof(x));
	for (int i = 0; i < 64; i++)
		sc_sqr(x, x);
	sc_mul(x, x, x32);
	for (int i = 0; i < 32; i++)
		sc_sqr(x, x);
	sc_mul(x, x, x32);
	for (int nib = 31; nib >= 0; nib--) {
		const unsigned e = (unsigned)(low[nib / 16] >> (4 * (nib % 16))) & 15;

		for (int i = 0; i < 4; i++)
			sc_sqr(x, x);
		if (e != 0)
			sc_mul(x, x, pow[e]);
	}
	sc_mul(r, x, one);
	memset(pow, 0, sizeof(pow));
	memset(x32, 0, sizeof(x32));
	memset(x, 0, sizeof(x));
}

static void jac_cmov(p256_jac *r, const p256_jac *a, uint64_t mask)
{
	p256_fe_cmov(r->x, a->x, mask);
	p256_fe_cmov(r->y, a->y, mask);
	p256_fe_cmov(r->z, a->z, mask);
}

/*
 * With a = -3: M = 3(X - Z^2)(X + Z^2), S = 4XY^2, X3 = M^2 - 2S,
 * Y3 = M(S - X3) - 8Y^4, Z3 = 2YZ. Z3 as a product and 8Y^4 as half of
 * (2Y)^4 take four additions fewer than dbl-2001-b's squares of sums, for
 * one squaring turned multiplication.
 */
static void pt_dbl(p256_jac *r, const p256_jac *a)
{
	p256_fe s, zz, m, u, t, y4;

	fe_add(s, a->y, a->y);
	fe_sqr(zz, a->z);
	fe_mul(t, a->y, a->z);
	fe_add(m, a->x, zz);
	fe_sub(zz, a->x, zz);
	fe_mul(m, m, zz);
	fe_add(zz, m, m);
	fe_add(m, zz, m);
	fe_sqr(s, s);
	fe_mul(u, s, a->x);
	/* the last read of a, which r may alias, is done */
	fe_add(r->z, t, t);
	fe_sqr(y4, s);
	p256_fe_half(y4, y4);
	fe_sqr(r->x, m);
	fe_add(t, u, u);
	fe_sub(r->x, r->x, t);
	fe_sub(t, u, r->x);
	fe_mul(t, t, m);
	fe_sub(r->y, t, y4);
}

/*
 * The common tail of add and madd ("add-1998-cmo-2" and "madd-2004-hmv"):
 * with H = U2 - U1 and R = S2 - S1,
 *   X3 = R^2 - H^3 - 2 U1 H^2, Y3 = R (U1 H^2 - X3) - S1 H^3, Z3 = zz·H,
 * where zz is Z1·Z2 (Z1 for madd). Seven additions where add-2007-bl needs
 * fourteen, for the same count of multiplications. Equal inputs (H = R = 0)
 * are the caller's, opposite ones (H = 0 alone) give Z3 = 0, infinity.
 */
static void add_tail(p256_jac *out, const p256_fe h, const p256_fe rr, const p256_fe u1,
		     const p256_fe s1, const p256_fe zz)
{
	p256_fe hh, hhh, v, t;

	fe_sqr(hh, h);
	fe_mul(hhh, hh, h);
	fe_mul(v, u1, hh);
	fe_mul(out->z, zz, h);
	fe_sqr(out->x, rr);
	fe_sub(out->x, out->x, hhh);
	fe_add(t, v, v);
	fe_sub(out->x, out->x, t);
	fe_sub(t, v, out->x);
	fe_mul(t, rr, t);
	fe_mul(hhh, s1, hhh);
	fe_sub(out->y, t, hhh);
}

static inline void pt_add_any(p256_jac *r, const p256_jac *a, const p256_jac *b, int full)
{
	p256_fe z1z1, z2z2, u1, u2, s1, s2, h, rr, zz;
	p256_jac out;
	const uint64_t a_inf = p256_fe_is_zero(a->z), b_inf = p256_fe_is_zero(b->z);

	fe_sqr(z1z1, a->z);
	fe_sqr(z2z2, b->z);
	fe_mul(u1, a->x, z2z2);
	fe_mul(u2, b->x, z1z1);
	fe_mul(s1, a->y, b->z);
	fe_mul(s1, s1, z2z2);
	fe_mul(s2, b->y, a->z);
	fe_mul(s2, s2, z1z1);
	fe_mul(zz, a->z, b->z);
	fe_sub(h, u2, u1);
	fe_sub(rr, s2, s1);
	const uint64_t same = p256_fe_is_zero(h) & p256_fe_is_zero(rr);
	add_tail(&out, h, rr, u1, s1, zz);

	if (full) {
		p256_jac d;

		pt_dbl(&d, a);
		jac_cmov(&out, &d, same & ~a_inf & ~b_inf);
	}
	jac_cmov(&out, b, a_inf);
	jac_cmov(&out, a, b_inf);
	*r = out;
}

static inline void pt_madd_any(p256_jac *r, const p256_jac *a, const p256_aff *b,
			       uint64_t b_mask, int full)
{
	p256_fe z1z1, u2, s2, h, rr;
	p256_jac out, lifted;
	const uint64_t a_inf = p256_fe_is_zero(a->z);

	fe_sqr(z1z1, a->z);
	fe_mul(u2, b->x, z1z1);
	fe_mul(s2, b->y, a->z);
	fe_mul(s2, s2, z1z1);
	fe_sub(h, u2, a->x);
	fe_sub(rr, s2, a->y);
	const uint64_t same = p256_fe_is_zero(h) & p256_fe_is_zero(rr);
	add_tail(&out, h, rr, a->x, a->y, a->z);

	if (full) {
		p256_jac d;

		pt_dbl(&d, a);
		jac_cmov(&out, &d, same & ~a_inf & b_mask);
	}
	for (int k = 0; k < 4; k++) {
		lifted.x[k] = b->x[k];
		lifted.y[k] = b->y[k];
		lifted.z[k] = P256_ONE[k];
	}
	jac_cmov(&out, &lifted, a_inf);
	jac_cmov(&out, a, ~b_mask);
	*r = out;
}

static void pt_add(p256_jac *r, const p256_jac *a, const p256_jac *b)
{
	pt_add_any(r, a, b, 1);
}

static void pt_add_distinct(p256_jac *r, const p256_jac *a, const p256_jac *b)
{
	pt_add_any(r, a, b, 0);
}

static void pt_madd(p256_jac *r, const p256_jac *a, const p256_aff *b, uint64_t b_mask)
{
	pt_madd_any(r, a, b, b_mask, 1);
}

static void pt_madd_distinct(p256_jac *r, const p256_jac *a, const p256_aff *b, uint64_t b_mask)
{
	pt_madd_any(r, a, b, b_mask, 0);
}

const struct p256_impl P256_CAT(p256_impl_, P256_LEVEL_NAME) = {
	.name = P256_STR(P256_LEVEL_NAME),
	.fe_mul = fe_mul,
	.fe_sqr = fe_sqr,
	.fe_inv = fe_inv,
	.sc_mul = sc_mul,
	.sc_sqr = sc_sqr,
	.sc_inv = sc_inv,
	.dbl = pt_dbl,
	.add = pt_add,
	.madd = pt_madd,
	.add_distinct = pt_add_distinct,
	.madd_distinct = pt_madd_distinct,
};

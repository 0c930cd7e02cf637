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

/*
 * Both inversions are Fermat's, a^(m-2), as addition chains: steps
 * r[dst] = r[src]^(2^sqr) · r[mul] over a few registers (the exponents are
 * public, so the steps are data). They are one long run of dependent
 * squarings each, bound by the multiplication's latency; a signature needs
 * both (Z^-1 mod p for x(k·G), k^-1 mod n), so inv2 runs the two chains
 * interleaved one operation at a time and the CPU overlaps them.
 */
struct chain_step {
	uint8_t sqr, dst, src, mul;
};

struct chain {
	const struct chain_step *step;
	int steps, at, left; /* the step being run, and squarings left in it */
	p256_fe *reg, t;
	int mod_n;
};

/* One multiplication or squaring of c's current step; 0 once it is done. */
static inline int chain_op(struct chain *c)
{
	if (c->at == c->steps)
		return 0;
	const struct chain_step *st = &c->step[c->at];

	if (c->left == st->sqr)
		memcpy(c->t, c->reg[st->src], sizeof(p256_fe));
	if (c->left > 0) {
		if (c->mod_n)
			sc_sqr(c->t, c->t);
		else
			fe_sqr(c->t, c->t);
		c->left--;
		return 1;
	}
	if (c->mod_n)
		sc_mul(c->reg[st->dst], c->t, c->reg[st->mul]);
	else
		fe_mul(c->reg[st->dst], c->t, c->reg[st->mul]);
	if (++c->at < c->steps)
		c->left = c->step[c->at].sqr;
	return 1;
}

static void chain_start(struct chain *c, const struct chain_step *step, int steps, p256_fe *reg,
			int mod_n)
{
	c->step = step;
	c->steps = steps;
	c->at = 0;
	c->left = step[0].sqr;
	c->reg = reg;
	c->mod_n = mod_n;
}

/*
 * p - 2, from the top bit down: 32 ones, 31 zeros, a one, 96 zeros, 94 ones,
 * a zero and a one; the runs of ones are a^(2^k - 1), shifted into place.
 * Registers: a, x2, x4, x8, x16, x32, x30 (x_k = a^(2^k - 1)) and the result.
 */
enum { FA, FX2, FX4, FX8, FX16, FX32, FX30, FR, FREGS };
static const struct chain_step FE_CHAIN[] = {
	{1, FX2, FA, FA},      {2, FX4, FX2, FX2},    {4, FX8, FX4, FX4},
	{8, FX16, FX8, FX8},   {16, FX32, FX16, FX16}, {8, FX30, FX16, FX8},
	{4, FX30, FX30, FX4},  {2, FX30, FX30, FX2},  {32, FR, FX32, FA},
	{128, FR, FR, FX32},   {32, FR, FR, FX32},    {30, FR, FR, FX30},
	{2, FR, FR, FA},
};

/*
 * n - 2: its top half is 32 ones, 32 zeros and 64 ones, built as runs like
 * p - 2's; the bottom half, 0xbce6faada7179e84f3b9cac2fc63254f, goes by
 * 4-bit windows over a^1..a^15 (none of its nibbles is zero).
 * Registers: a^1..a^15, x32, the result.
 */
enum { SX32 = 16, SR, SREGS };

/* The bottom half's nibbles, high to low, are the last 32 steps' multipliers. */
static const struct chain_step SC_CHAIN[] = {
	{0, 2, 1, 1}, {0, 3, 2, 1}, {0, 4, 3, 1}, {0, 5, 4, 1},
	{0, 6, 5, 1}, {0, 7, 6, 1}, {0, 8, 7, 1}, {0, 9, 8, 1},
	{0, 10, 9, 1}, {0, 11, 10, 1}, {0, 12, 11, 1}, {0, 13, 12, 1},
	{0, 14, 13, 1}, {0, 15, 14, 1}, {4, SX32, 15, 15}, {8, SX32, SX32, SX32},
	{16, SX32, SX32, SX32}, {64, SR, SX32, SX32}, {32, SR, SR, SX32},
	{4, SR, SR, 11}, {4, SR, SR, 12}, {4, SR, SR, 14}, {4, SR, SR, 6},
	{4, SR, SR, 15}, {4, SR, SR, 10}, {4, SR, SR, 10}, {4, SR, SR, 13},
	{4, SR, SR, 10}, {4, SR, SR, 7}, {4, SR, SR, 1}, {4, SR, SR, 7},
	{4, SR, SR, 9}, {4, SR, SR, 14}, {4, SR, SR, 8}, {4, SR, SR, 4},
	{4, SR, SR, 15}, {4, SR, SR, 3}, {4, SR, SR, 11}, {4, SR, SR, 9},
	{4, SR, SR, 12}, {4, SR, SR, 10}, {4, SR, SR, 12}, {4, SR, SR, 2},
	{4, SR, SR, 15}, {4, SR, SR, 12}, {4, SR, SR, 6}, {4, SR, SR, 3},
	{4, SR, SR, 2}, {4, SR, SR, 5}, {4, SR, SR, 4}, {4, SR, SR, 15},
};

/*
 * zi = z^-1 mod p (Montgomery in and out) and ki = k^-1 mod n (plain in and
 * out), 0 for 0, either skipped when its input is NULL. Constant time.
 */
static void inv2(p256_fe zi, const p256_fe z, p256_fe ki, const p256_fe k)
{
	static const p256_fe one = {1, 0, 0, 0};
	p256_fe freg[FREGS], sreg[SREGS];
	struct chain fc, sc;
	int busy;

	chain_start(&fc, FE_CHAIN, z != NULL ? (int)(sizeof(FE_CHAIN) / sizeof(FE_CHAIN[0])) : 0,
		    freg, 0);
	if (z != NULL)
		memcpy(freg[FA], z, sizeof(p256_fe));
	chain_start(&sc, SC_CHAIN, k != NULL ? (int)(sizeof(SC_CHAIN) / sizeof(SC_CHAIN[0])) : 0,
		    sreg, 1);
	if (k != NULL)
		sc_mul(sreg[1], k, P256_R2N);
	do {
		busy = chain_op(&fc);
		busy |= chain_op(&sc);
	} while (busy);
	if (z != NULL)
		memcpy(zi, freg[FR], sizeof(p256_fe));
	if (k != NULL)
		sc_mul(ki, sreg[SR], one);
	memset(freg, 0, sizeof(freg));
	memset(sreg, 0, sizeof(sreg));
	memset(&fc, 0, sizeof(fc));
	memset(&sc, 0, sizeof(sc));
}

static void fe_inv(p256_fe r, const p256_fe a)
{
	inv2(r, a, NULL, NULL);
}

static void sc_inv(p256_fe r, const p256_fe a)
{
	inv2(NULL, NULL, r, a);
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
	.inv2 = inv2,
	.dbl = pt_dbl,
	.add = pt_add,
	.madd = pt_madd,
	.add_distinct = pt_add_distinct,
	.madd_distinct = pt_madd_distinct,
};

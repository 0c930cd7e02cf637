/*
 * P-256 scalar multiplication, constant time in the scalar and the point.
 *
 * Both methods recode the scalar into signed digits d in [-2^(w-1), 2^(w-1)]
 * (k = sum d_i·2^(w·i)), so a window needs only the multiples 1..2^(w-1) of
 * its point, the sign being a masked negation of Y. Every table lookup reads
 * the whole table and keeps one entry with a mask.
 *
 * Why the cheap "distinct" additions are safe: before the last step of a
 * walk, the accumulated multiple m and the added multiple d·2^(w·i) are both
 * far below n in magnitude (below 2^252, given k < n), so m ≡ ±d·2^(w·i)
 * (mod n) only when they are equal as integers, which the recoding rules out
 * unless one of them is zero: a point at infinity, which those additions
 * handle. At the last step that bound is gone, so the last addition of each
 * walk is the complete one, at the price of one doubling.
 */
#include "p256_point.h"

#include <string.h>

#define VAR_BITS 5
#define VAR_WINDOWS 52 /* 52·5 = 260 bits: room for the recoding's carry */
#define VAR_POINTS 16

void p256_load_be(p256_fe r, const uint8_t in[32])
{
	for (int i = 0; i < 4; i++) {
		uint64_t w = 0;

		for (int b = 0; b < 8; b++)
			w = (w << 8) | in[(3 - i) * 8 + b];
		r[i] = w;
	}
}

void p256_store_be(uint8_t out[32], const p256_fe a)
{
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			out[(3 - i) * 8 + b] = (uint8_t)(a[i] >> (56 - 8 * b));
}

/* Bits [pos, pos + w) of k; pos and w are public. */
static uint64_t window_bits(const p256_fe k, int pos, int w)
{
	const int limb = pos / 64, off = pos % 64;
	uint64_t v = 0;

	if (limb < 4) {
		v = k[limb] >> off;
		if (off + w > 64 && limb + 1 < 4)
			v |= k[limb + 1] << (64 - off);
	}
	return v & ((1u << w) - 1);
}

/* Signed digits: a window above 2^(w-1) becomes window - 2^w with a carry. */
static void recode(int8_t *digits, int windows, const p256_fe k, int w)
{
	uint64_t carry = 0;

	for (int i = 0; i < windows; i++) {
		const uint64_t win = window_bits(k, i * w, w) + carry;

		carry = ((1u << (w - 1)) - win) >> 63;
		digits[i] = (int8_t)(int64_t)(win - (carry << w));
	}
}

/* |d| and an all-ones mask when d < 0. */
static uint64_t digit_abs(int8_t d, uint64_t *neg)
{
	const int64_t sd = d;
	const uint64_t sign = (uint64_t)(sd >> 63);

	*neg = sign;
	return ((uint64_t)sd ^ sign) - sign;
}

/*
 * r = entry idx (1..n) of a table of n entries of `fes` field elements each,
 * or all zeros for idx = 0: every entry is read and masked.
 */
void p256_select_generic(uint64_t *r, const uint64_t *tab, int n, int fes, uint64_t idx)
{
	memset(r, 0, sizeof(uint64_t) * 4 * (size_t)fes);
	for (int e = 0; e < n; e++) {
		uint64_t j = (uint64_t)(e + 1);

		/* Hidden from gcc, which otherwise counts the loop with idx - j
		 * and so ends it by a comparison on the secret idx (the ct suite
		 * caught that). */
		__asm__("" : "+r"(j));
		const uint64_t m = p256_mask_zero64(idx - j);

		for (int k = 0; k < 4 * fes; k++)
			r[k] |= tab[4 * fes * e + k] & m;
	}
}

static void aff_select(p256_aff *r, const p256_aff *tab, int n, uint64_t idx)
{
	p256_select()((uint64_t *)r, (const uint64_t *)tab, n, 2, idx);
}

static void jac_select(p256_jac *r, const p256_jac *tab, int n, uint64_t idx)
{
	p256_select()((uint64_t *)r, (const uint64_t *)tab, n, 3, idx);
}

void p256_mul_base(const struct p256_impl *im, p256_jac *r, const p256_fe k)
{
	int8_t digits[P256_COMB_WINDOWS];
	p256_jac q;
	p256_aff t;

	recode(digits, P256_COMB_WINDOWS, k, P256_COMB_BITS);
	memset(&q, 0, sizeof(q));
	for (int i = 0; i < P256_COMB_WINDOWS; i++) {
		uint64_t neg;
		const uint64_t idx = digit_abs(digits[i], &neg);

		aff_select(&t, p256_comb_table[i], P256_COMB_POINTS, idx);
		p256_fe_cneg(t.y, t.y, neg);
		if (i == P256_COMB_WINDOWS - 1)
			im->madd(&q, &q, &t, ~p256_mask_zero64(idx));
		else
			im->madd_distinct(&q, &q, &t, ~p256_mask_zero64(idx));
	}
	*r = q;
	memset(digits, 0, sizeof(digits));
	memset(&t, 0, sizeof(t));
	memset(&q, 0, sizeof(q));
}

void p256_mul_var(const struct p256_impl *im, p256_jac *r, const p256_fe k, const p256_aff *p)
{
	int8_t digits[VAR_WINDOWS];
	p256_jac tab[VAR_POINTS], q, t;

	memcpy(tab[0].x, p->x, sizeof(p256_fe));
	memcpy(tab[0].y, p->y, sizeof(p256_fe));
	memcpy(tab[0].z, P256_ONE, sizeof(p256_fe));
	im->dbl(&tab[1], &tab[0]);
	for (int j = 2; j < VAR_POINTS; j++)
		im->madd_distinct(&tab[j], &tab[j - 1], p, ~(uint64_t)0);

	recode(digits, VAR_WINDOWS, k, VAR_BITS);
	uint64_t neg, idx = digit_abs(digits[VAR_WINDOWS - 1], &neg);
	jac_select(&q, tab, VAR_POINTS, idx);
	p256_fe_cneg(q.y, q.y, neg);
	for (int i = VAR_WINDOWS - 2; i >= 0; i--) {
		for (int b = 0; b < VAR_BITS; b++)
			im->dbl(&q, &q);
		idx = digit_abs(digits[i], &neg);
		jac_select(&t, tab, VAR_POINTS, idx);
		p256_fe_cneg(t.y, t.y, neg);
		if (i == 0)
			im->add(&q, &q, &t);
		else
			im->add_distinct(&q, &q, &t);
	}
	*r = q;
	memset(digits, 0, sizeof(digits));
	memset(tab, 0, sizeof(tab));
	memset(&t, 0, sizeof(t));
	memset(&q, 0, sizeof(q));
}

/* Width-5 NAF of k < 2^256: odd digits in [-15, 15], any five consecutive
 * digits holding at most one that is not zero. Returns the digit count. */
static int wnaf5(int8_t naf[258], const p256_fe k)
{
	uint64_t v[5] = {k[0], k[1], k[2], k[3], 0};
	int len = 0;

	while ((v[0] | v[1] | v[2] | v[3] | v[4]) != 0) {
		int d = 0;

		if (v[0] & 1) {
			d = (int)(v[0] & 31);
			if (d >= 16)
				d -= 32;
			/* v -= d: clears the low five bits, so only -d > 0 carries */
			if (d > 0) {
				v[0] -= (uint64_t)d;
			} else {
				uint64_t c = (uint64_t)-d;

				for (int i = 0; i < 5 && c != 0; i++) {
					v[i] += c;
					c = v[i] < c;
				}
			}
		}
		naf[len++] = (int8_t)d;
		for (int i = 0; i < 4; i++)
			v[i] = (v[i] >> 1) | (v[i + 1] << 63);
		v[4] >>= 1;
	}
	return len;
}

void p256_mul_var_public(const struct p256_impl *im, p256_jac *r, const p256_fe k,
			 const p256_aff *p)
{
	int8_t naf[258];
	p256_jac tab[8], p2, t, o;
	int started = 0;

	/* tab[j] = (2j + 1)·P */
	memcpy(tab[0].x, p->x, sizeof(p256_fe));
	memcpy(tab[0].y, p->y, sizeof(p256_fe));
	memcpy(tab[0].z, P256_ONE, sizeof(p256_fe));
	im->dbl(&p2, &tab[0]);
	for (int j = 1; j < 8; j++)
		im->add_distinct(&tab[j], &tab[j - 1], &p2);

	memset(r, 0, sizeof(*r));
	for (int i = wnaf5(naf, k) - 1; i >= 0; i--) {
		if (started)
			im->dbl(r, r);
		if (naf[i] == 0)
			continue;
		t = tab[(naf[i] < 0 ? -naf[i] : naf[i]) >> 1];
		if (naf[i] < 0)
			p256_fe_cneg(t.y, t.y, ~(uint64_t)0);
		if (!started) {
			*r = t;
			started = 1;
			continue;
		}
		/* The cheap addition gives infinity for equal inputs as for
		 * opposite ones; only then is the complete one needed. */
		im->add_distinct(&o, r, &t);
		if (p256_fe_is_zero(o.z))
			im->add(&o, r, &t);
		*r = o;
	}
}

uint64_t p256_to_affine(const struct p256_impl *im, p256_aff *r, const p256_jac *a)
{
	p256_fe zi, zi2;

	im->fe_inv(zi, a->z);
	im->fe_sqr(zi2, zi);
	im->fe_mul(r->x, a->x, zi2);
	im->fe_mul(zi2, zi2, zi);
	im->fe_mul(r->y, a->y, zi2);
	return p256_fe_is_zero(a->z);
}

void p256_fe_from_mont(const struct p256_impl *im, p256_fe r, const p256_fe a)
{
	static const p256_fe one = {1, 0, 0, 0};

	im->fe_mul(r, a, one);
}

int p256_point_decode(const struct p256_impl *im, p256_aff *r, const uint8_t in[65])
{
	p256_fe x, y, t, lhs, rhs;

	/* SEC1 §2.3.4: 0x04 introduces an uncompressed point; RFC 8422 §5.1.2
	 * leaves the compressed forms out of TLS, and infinity (0x00) is never a
	 * valid share (RFC 8422 §5.10). */
	if (in[0] != 0x04)
		return -1;
	p256_load_be(x, in + 1);
	p256_load_be(y, in + 33);
	/* SEC1 §3.2.2.1 step 2: each coordinate is an element of F_p, i.e. < p. */
	if (!p256_sub4(t, x, P256_P) || !p256_sub4(t, y, P256_P))
		return -1;
	im->fe_mul(x, x, P256_R2P);
	im->fe_mul(y, y, P256_R2P);
	/* SEC1 §3.2.2.1 step 3: y^2 = x^3 - 3x + b. */
	im->fe_sqr(lhs, y);
	im->fe_sqr(rhs, x);
	im->fe_mul(rhs, rhs, x);
	p256_fe_sub(rhs, rhs, x);
	p256_fe_sub(rhs, rhs, x);
	p256_fe_sub(rhs, rhs, x);
	p256_fe_add(rhs, rhs, P256_B);
	if (!p256_fe_eq(lhs, rhs))
		return -1;
	/* P-256 has cofactor 1: a point on the curve other than infinity has order n
	 * (SEC1 §3.2.2.1 step 4 holds), and infinity has no uncompressed encoding. */
	memcpy(r->x, x, sizeof(x));
	memcpy(r->y, y, sizeof(y));
	return 0;
}

void p256_point_encode(const struct p256_impl *im, uint8_t out[65], const p256_aff *a)
{
	p256_fe t;

	out[0] = 0x04;
	p256_fe_from_mont(im, t, a->x);
	p256_store_be(out + 1, t);
	p256_fe_from_mont(im, t, a->y);
	p256_store_be(out + 33, t);
}

/*
 * P-256 field and scalar multiplication with BMI2 MULX and ADX ADCX/ADOX
 * (compiled with -mbmi2 -madx; p256_level.c calls it only when the CPU has
 * both). MULX leaves the flags alone, and ADCX (carry flag) and ADOX (overflow
 * flag) are two independent carry chains, so the low and the high halves of a
 * row of products are summed in parallel, as the same Montgomery (CIOS)
 * schedule as p256_field_generic.c. The point formulas on top come from
 * p256_point_impl.h.
 */
#include "p256_internal.h"

#include <immintrin.h>

typedef unsigned long long ull;

/*
 * t[0..5] += x·y[0..3] (t[5] takes the final carries): the low halves go
 * through one chain, the high halves (one word up) through the other.
 */
static inline void row(ull t[6], ull x, const uint64_t y[4])
{
	ull lo[4], hi[4];
	unsigned char c = 0, o = 0;

	for (int k = 0; k < 4; k++)
		lo[k] = _mulx_u64(x, y[k], &hi[k]);
	c = _addcarryx_u64(c, t[0], lo[0], &t[0]);
	c = _addcarryx_u64(c, t[1], lo[1], &t[1]);
	o = _addcarryx_u64(o, t[1], hi[0], &t[1]);
	c = _addcarryx_u64(c, t[2], lo[2], &t[2]);
	o = _addcarryx_u64(o, t[2], hi[1], &t[2]);
	c = _addcarryx_u64(c, t[3], lo[3], &t[3]);
	o = _addcarryx_u64(o, t[3], hi[2], &t[3]);
	c = _addcarryx_u64(c, t[4], 0, &t[4]);
	o = _addcarryx_u64(o, t[4], hi[3], &t[4]);
	t[5] += (ull)c + o;
}

static inline void mont_mul(p256_fe r, const p256_fe a, const p256_fe b, const p256_fe m,
			    uint64_t m0)
{
	ull t[6] = {0, 0, 0, 0, 0, 0};

	for (int i = 0; i < 4; i++) {
		row(t, a[i], b);
		row(t, t[0] * m0, m);
		/* t[0] is now zero: drop it. */
		t[0] = t[1];
		t[1] = t[2];
		t[2] = t[3];
		t[3] = t[4];
		t[4] = t[5];
		t[5] = 0;
	}

	p256_fe u, tt = {t[0], t[1], t[2], t[3]};
	const uint64_t borrow = p256_sub4(u, tt, m);
	const uint64_t keep_t = 0 - (borrow & (t[4] ^ 1));
	for (int k = 0; k < 4; k++)
		r[k] = (tt[k] & keep_t) | (u[k] & ~keep_t);
}

static void fe_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	mont_mul(r, a, b, P256_P, 1);
}

static void fe_sqr(p256_fe r, const p256_fe a)
{
	mont_mul(r, a, a, P256_P, 1);
}

static void sc_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	mont_mul(r, a, b, P256_N, P256_N0);
}

#define P256_LEVEL_NAME mulx
#include "p256_point_impl.h"

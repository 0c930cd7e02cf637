/*
 * P-256 field and scalar multiplication in portable C: 4x64-bit limbs,
 * products through unsigned __int128, word-by-word Montgomery reduction
 * (CIOS), the same code mod p and mod n. The point formulas on top come
 * from p256_point_impl.h.
 */
#include "p256_internal.h"

/*
 * r = a·b·2^-256 mod m for a, b < m, with m0 = -m^-1 mod 2^64. Each round adds
 * a[i]·b, then q·m with q chosen to clear the low word, and drops that word;
 * the sum stays below 2m, so one masked subtraction finishes.
 */
static inline void mont_mul(p256_fe r, const p256_fe a, const p256_fe b, const p256_fe m,
			    uint64_t m0)
{
	uint64_t t[5] = {0, 0, 0, 0, 0}, t5;

	for (int i = 0; i < 4; i++) {
		p256_u128 c = 0;

		for (int k = 0; k < 4; k++) {
			c += (p256_u128)a[i] * b[k] + t[k];
			t[k] = (uint64_t)c;
			c >>= 64;
		}
		c += t[4];
		t[4] = (uint64_t)c;
		t5 = (uint64_t)(c >> 64);

		const uint64_t q = t[0] * m0;
		c = (p256_u128)q * m[0] + t[0];
		c >>= 64;
		for (int k = 1; k < 4; k++) {
			c += (p256_u128)q * m[k] + t[k];
			t[k - 1] = (uint64_t)c;
			c >>= 64;
		}
		c += t[4];
		t[3] = (uint64_t)c;
		t[4] = t5 + (uint64_t)(c >> 64);
	}

	p256_fe u;
	const uint64_t borrow = p256_sub4(u, t, m);
	const uint64_t keep_t = 0 - (borrow & (t[4] ^ 1));
	for (int k = 0; k < 4; k++)
		r[k] = (t[k] & keep_t) | (u[k] & ~keep_t);
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

static void sc_sqr(p256_fe r, const p256_fe a)
{
	mont_mul(r, a, a, P256_N, P256_N0);
}

static inline void fe_add(p256_fe r, const p256_fe a, const p256_fe b)
{
	p256_fe_add(r, a, b);
}

static inline void fe_sub(p256_fe r, const p256_fe a, const p256_fe b)
{
	p256_fe_sub(r, a, b);
}

#define P256_LEVEL_NAME generic
#include "p256_point_impl.h"

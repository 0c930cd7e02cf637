/*
 * The Montgomery multiplication (CIOS) shared by the P-256 levels, included by
 * p256_field_<level>.c, each compiled for its CPU: the same schedule, with the
 * instructions that level's flags allow (MULX under -mbmi2). The portable
 * level's fe_mul and fe_sqr are this mod p; every level's sc_mul is this
 * mod n.
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

static void sc_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	mont_mul(r, a, b, P256_N, P256_N0);
}

/*
 * Portable Montgomery multiplication on 64-bit limbs with unsigned
 * __int128 (CIOS: a row of a b_i, then a row of q m, shifting one limb a
 * row), one copy per size so that every loop has a constant trip count.
 */
#include "rsa_mont.h"

typedef unsigned __int128 u128;

static inline __attribute__((always_inline)) void
mont_mul_fixed(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct sotls_mont *mt,
	       const size_t n)
{
	const uint64_t *m = mt->m;
	uint64_t t[SOTLS_RSA_MAX_LIMBS + 2] = {0};

	for (size_t i = 0; i < n; i++) {
		uint64_t carry = 0;
		for (size_t j = 0; j < n; j++) {
			u128 x = (u128)a[j] * b[i] + t[j] + carry;
			t[j] = (uint64_t)x;
			carry = (uint64_t)(x >> 64);
		}
		u128 x = (u128)t[n] + carry;
		t[n] = (uint64_t)x;
		t[n + 1] = (uint64_t)(x >> 64);

		const uint64_t q = t[0] * mt->m0inv;
		x = (u128)q * m[0] + t[0];
		carry = (uint64_t)(x >> 64);
		for (size_t j = 1; j < n; j++) {
			x = (u128)q * m[j] + t[j] + carry;
			t[j - 1] = (uint64_t)x;
			carry = (uint64_t)(x >> 64);
		}
		x = (u128)t[n] + carry;
		t[n - 1] = (uint64_t)x;
		t[n] = t[n + 1] + (uint64_t)(x >> 64);
	}
	sotls_mont_final_sub(r, t, t[n], m, n);
}

#define MUL_N(N)                                                                           \
	static void mul_##N(uint64_t *r, const uint64_t *a, const uint64_t *b,             \
			    const struct sotls_mont *mt)                                   \
	{                                                                                  \
		mont_mul_fixed(r, a, b, mt, N);                                            \
	}
SOTLS_MONT_SIZES(MUL_N)
SOTLS_MONT_BY_SIZE(mul)

const struct sotls_mont_ops sotls_mont_generic = {
	.name = "generic",
	.mul = mul,
	.sqr = sqr,
	.exp2 = sotls_modexp_window,
};

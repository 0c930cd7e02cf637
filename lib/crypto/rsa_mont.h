/*
 * Fixed-size Montgomery arithmetic for the RSA private key operation: the
 * interface each implementation level provides, and the constant-time limb
 * helpers they share. Numbers are arrays of 64-bit limbs, least significant
 * first, of one of the sizes RSA-2048/3072/4096 need: 16, 24, 32 limbs for a
 * prime, 32, 48, 64 for the modulus.
 *
 * Constant time: no branch and no memory index depends on a limb's value;
 * only the sizes (public) steer the code.
 */
#ifndef SOTLS_CRYPTO_RSA_MONT_H
#define SOTLS_CRYPTO_RSA_MONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOTLS_RSA_MAX_LIMBS 64 /* a 4096-bit modulus */
#define SOTLS_RSA_MAX_HALF 32  /* one of its primes */

/* A modulus m (odd) with R = 2^(64 n). */
struct sotls_mont {
	size_t n;
	uint64_t m0inv; /* -m^-1 mod 2^64 */
	uint64_t m[SOTLS_RSA_MAX_LIMBS];
	uint64_t rr[SOTLS_RSA_MAX_LIMBS]; /* R^2 mod m */
};

/* One exponentiation: r = base^exp mod m, base and r in Montgomery form
 * (x R mod m), exp of m->n limbs, all of it processed whatever its value. */
struct sotls_exp_job {
	uint64_t *r;
	const uint64_t *base;
	const uint64_t *exp;
	const struct sotls_mont *m;
};

/*
 * An implementation level. mul: r = a b / R mod m, fully reduced, for any
 * a < R and b < m (r may be a or b); sqr: mul(r, a, a) for a < m. exp2 runs
 * the two CRT exponentiations (two moduli of the same size), in parallel
 * where the level can.
 */
struct sotls_mont_ops {
	const char *name;
	void (*mul)(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct sotls_mont *m);
	void (*sqr)(uint64_t *r, const uint64_t *a, const struct sotls_mont *m);
	void (*exp2)(const struct sotls_mont_ops *ops, const struct sotls_exp_job jobs[2]);
};

extern const struct sotls_mont_ops sotls_mont_generic; /* rsa_mont_generic.c */
extern const struct sotls_mont_ops sotls_mont_mulx;    /* rsa_mont_mulx.c */
extern const struct sotls_mont_ops sotls_mont_ifma;    /* rsa_mont_ifma.c */

/* The fixed-window exponentiation on ops->mul / ops->sqr with a
 * constant-time table scan (rsa_modexp.c); the exp2 of the 64-bit levels. */
void sotls_modexp_window(const struct sotls_mont_ops *ops, const struct sotls_exp_job jobs[2]);

/*
 * The window schedule every level follows: windows of SOTLS_EXP_WINDOW bits
 * over all 64 n bits of the exponent, the top one at sotls_exp_top(n) (what
 * the full windows leave over), then one every SOTLS_EXP_WINDOW bits down
 * to 0. sotls_exp_window is the window at bit pos (public) of e.
 */
#define SOTLS_EXP_WINDOW 5
size_t sotls_exp_top(size_t n);
uint64_t sotls_exp_window(const uint64_t *e, size_t n, size_t pos);

/*
 * Sets up mt for the odd modulus m > 1 of n limbs, n one of the sizes above
 * (the caller checks both). R^2 comes from modular doubling, constant time,
 * so m may be a secret prime.
 */
void sotls_mont_init(struct sotls_mont *mt, const uint64_t *m, size_t n);

/* The sizes, for levels that make one copy of their code per size. */
#define SOTLS_MONT_SIZES(X) X(16) X(24) X(32) X(48) X(64)

/* static void FN(r, a, b, mt) calling FN##_16 ... FN##_64 by mt->n, and
 * sqr(r, a, mt) = FN(r, a, a, mt). */
#define SOTLS_MONT_BY_SIZE(FN)                                                             \
	static void FN(uint64_t *r, const uint64_t *a, const uint64_t *b,                  \
		       const struct sotls_mont *mt)                                        \
	{                                                                                  \
		switch (mt->n) {                                                           \
		case 16: FN##_16(r, a, b, mt); break;                                      \
		case 24: FN##_24(r, a, b, mt); break;                                      \
		case 32: FN##_32(r, a, b, mt); break;                                      \
		case 48: FN##_48(r, a, b, mt); break;                                      \
		case 64: FN##_64(r, a, b, mt); break;                                      \
		}                                                                          \
	}                                                                                  \
	static void sqr(uint64_t *r, const uint64_t *a, const struct sotls_mont *mt)       \
	{                                                                                  \
		FN(r, a, a, mt);                                                           \
	}

/* ---- limb helpers, constant time in the values ---- */

/* All ones if x != 0, else 0. */
static inline uint64_t sotls_limb_nonzero_mask(uint64_t x)
{
	return (uint64_t)0 - ((x | ((uint64_t)0 - x)) >> 63);
}

/* The compiler must not see through a mask and turn its use into a branch. */
static inline uint64_t sotls_limb_barrier(uint64_t x)
{
	__asm__("" : "+r"(x));
	return x;
}

/* r = a - b over n limbs; returns the borrow (0 or 1). */
static inline uint64_t sotls_limbs_sub(uint64_t *r, const uint64_t *a, const uint64_t *b,
				       size_t n)
{
	uint64_t borrow = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 d = (unsigned __int128)a[i] - b[i] - borrow;
		r[i] = (uint64_t)d;
		borrow = (uint64_t)(d >> 64) & 1;
	}
	return borrow;
}

/* r = a + b over n limbs; returns the carry. */
static inline uint64_t sotls_limbs_add(uint64_t *r, const uint64_t *a, const uint64_t *b,
				       size_t n)
{
	uint64_t carry = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 s = (unsigned __int128)a[i] + b[i] + carry;
		r[i] = (uint64_t)s;
		carry = (uint64_t)(s >> 64);
	}
	return carry;
}

/* r = mask ? a : b (mask all ones or zero). */
static inline void sotls_limbs_select(uint64_t *r, const uint64_t *a, const uint64_t *b,
				      uint64_t mask, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (a[i] & mask) | (b[i] & ~mask);
}

/*
 * r = t mod m for t = (top, t[0..n)) < 2m: the Montgomery final
 * subtraction, done always and kept by mask. r may be t.
 */
static inline void sotls_mont_final_sub(uint64_t *r, const uint64_t *t, uint64_t top,
					const uint64_t *m, size_t n)
{
	uint64_t u[SOTLS_RSA_MAX_LIMBS];
	uint64_t borrow = sotls_limbs_sub(u, t, m, n);
	/* t - m is negative (keep t) exactly when the subtraction borrows
	 * more than the top limb holds. */
	uint64_t keep_t = sotls_limb_barrier((uint64_t)0 - (borrow & (top ^ 1)));
	sotls_limbs_select(r, t, u, keep_t, n);
}

/* x = 2 x mod m, for x < m (n limbs). */
static inline void sotls_mont_double(uint64_t *x, const uint64_t *m, size_t n)
{
	uint64_t top = x[n - 1] >> 63;
	for (size_t i = n - 1; i > 0; i--)
		x[i] = (x[i] << 1) | (x[i - 1] >> 63);
	x[0] <<= 1;
	sotls_mont_final_sub(x, x, top, m, n);
}

/* All ones if a < b (n limbs), else 0. */
static inline uint64_t sotls_limbs_lt_mask(const uint64_t *a, const uint64_t *b, size_t n)
{
	uint64_t borrow = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 d = (unsigned __int128)a[i] - b[i] - borrow;
		borrow = (uint64_t)(d >> 64) & 1;
	}
	return (uint64_t)0 - borrow;
}

#endif

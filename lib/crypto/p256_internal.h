/*
 * P-256 internals shared by the field levels, the point code and the scalar
 * code. Field elements are 4 little-endian 64-bit limbs in the Montgomery
 * domain (x·2^256 mod p), always fully reduced (< p), so equality and zero
 * tests work on the limbs directly. Scalars mod n use the same layout.
 *
 * Montgomery rather than Solinas reduction: p ≡ -1 mod 2^64, so the
 * per-word quotient is the low limb itself (no multiplication), the same
 * code serves mod n for ECDSA, and the multiply and the reduction
 * interleave into one carry chain per word, which is what MULX/ADCX/ADOX
 * speed up.
 *
 * Nothing here branches on or indexes by a value: selections use masks
 * (all ones or all zeros), which tests/unit/test_p256_ct.c checks under
 * valgrind.
 */
#ifndef SOTLS_CRYPTO_P256_INTERNAL_H
#define SOTLS_CRYPTO_P256_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <valgrind/memcheck.h>

typedef uint64_t p256_fe[4];

/* Jacobian (X/Z^2, Y/Z^3); Z = 0 is the point at infinity. */
typedef struct {
	p256_fe x, y, z;
} p256_jac;

typedef struct {
	p256_fe x, y;
} p256_aff;

typedef unsigned __int128 p256_u128;

/* p = 2^256 - 2^224 + 2^192 + 2^96 - 1, n the group order. */
static const p256_fe P256_P = {0xffffffffffffffffULL, 0x00000000ffffffffULL, 0x0ULL,
			       0xffffffff00000001ULL};
static const p256_fe P256_N = {0xf3b9cac2fc632551ULL, 0xbce6faada7179e84ULL,
			       0xffffffffffffffffULL, 0xffffffff00000000ULL};
/* -n^-1 mod 2^64 (for p it is 1). */
#define P256_N0 0xccd1c8aaee00bc4fULL
/* 2^512 mod p and mod n: multiplying by them enters the Montgomery domain. */
static const p256_fe P256_R2P = {0x0000000000000003ULL, 0xfffffffbffffffffULL,
				 0xfffffffffffffffeULL, 0x00000004fffffffdULL};
static const p256_fe P256_R2N = {0x83244c95be79eea2ULL, 0x4699799c49bd6fa6ULL,
				 0x2845b2392b6bec59ULL, 0x66e12d94f3d95620ULL};
/* 1 in the Montgomery domain mod p (2^256 mod p). */
static const p256_fe P256_ONE = {0x0000000000000001ULL, 0xffffffff00000000ULL,
				 0xffffffffffffffffULL, 0x00000000fffffffeULL};
/* The curve's b in the Montgomery domain (y^2 = x^3 - 3x + b). */
static const p256_fe P256_B = {0xd89cdf6229c4bddfULL, 0xacf005cd78843090ULL,
			       0xe5a220abf7212ed6ULL, 0xdc30061d04874834ULL};

/* One implementation level: the field and scalar multiplications and the
 * point formulas built on them (p256_point_impl.h), compiled per level. */
struct p256_impl {
	const char *name;
	void (*fe_mul)(p256_fe r, const p256_fe a, const p256_fe b);
	void (*fe_sqr)(p256_fe r, const p256_fe a);
	/* a^-1 (0 for 0), constant time. */
	void (*fe_inv)(p256_fe r, const p256_fe a);
	/* Montgomery multiplication mod n: a·b·2^-256. */
	void (*sc_mul)(p256_fe r, const p256_fe a, const p256_fe b);
	void (*sc_sqr)(p256_fe r, const p256_fe a);
	/* a^-1 mod n for a plain a (0 for 0), constant time. */
	void (*sc_inv)(p256_fe r, const p256_fe a);
	/* Both at once, interleaved (a signature's two inversions). */
	void (*inv2)(p256_fe zi, const p256_fe z, p256_fe ki, const p256_fe k);
	/* Doubling; infinity stays infinity (P-256 has no point of order 2). */
	void (*dbl)(p256_jac *r, const p256_jac *a);
	/* a + b for any a, b (infinity, equal, opposite): constant time. */
	void (*add)(p256_jac *r, const p256_jac *a, const p256_jac *b);
	/* a + b where b is affine and present only where b_mask is all ones;
	 * every case handled, as for add. */
	void (*madd)(p256_jac *r, const p256_jac *a, const p256_aff *b, uint64_t b_mask);
	/* The same two without the a == b case (which then gives infinity):
	 * for the window steps where a == ±b cannot happen (p256_point.c). */
	void (*add_distinct)(p256_jac *r, const p256_jac *a, const p256_jac *b);
	void (*madd_distinct)(p256_jac *r, const p256_jac *a, const p256_aff *b, uint64_t b_mask);
};

enum p256_level {
	P256_GENERIC, /* unsigned __int128, any 64-bit CPU */
	P256_MULX,    /* BMI2 MULX + ADX ADCX/ADOX */
	P256_LEVELS,
};

extern const struct p256_impl p256_impl_generic;
extern const struct p256_impl p256_impl_mulx;

/* The level chosen once from the CPU's features (cpu.h; SOTLS_CPU=generic or
 * -bmi2 forces the portable one). */
const struct p256_impl *p256_impl_default(void);
/* A given level, or NULL when this CPU cannot run it. */
const struct p256_impl *p256_impl_get(enum p256_level level);

/* ------------------------------------------------ constant-time helpers */

/*
 * Declares a value computed from secrets safe to branch on: a key's validity,
 * or the rejection of an RFC 6979 candidate nonce, which tells nothing about
 * the nonce that is used. Under valgrind (tests/unit/test_p256_ct.c, secrets
 * marked undefined) it marks the bytes defined; elsewhere it is a few no-op
 * instructions.
 */
static inline void sotls_ct_public(const void *p, size_t n)
{
	(void)VALGRIND_MAKE_MEM_DEFINED(p, n);
}

/* All ones when x == 0, else 0. */
static inline uint64_t p256_mask_zero64(uint64_t x)
{
	return ((x | (0 - x)) >> 63) - 1;
}

static inline uint64_t p256_fe_is_zero(const p256_fe a)
{
	return p256_mask_zero64(a[0] | a[1] | a[2] | a[3]);
}

static inline uint64_t p256_fe_eq(const p256_fe a, const p256_fe b)
{
	return p256_mask_zero64((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

/* r = mask ? a : r */
static inline void p256_fe_cmov(p256_fe r, const p256_fe a, uint64_t mask)
{
	for (int i = 0; i < 4; i++)
		r[i] ^= (r[i] ^ a[i]) & mask;
}

/* r = a - m, returning the borrow (0 or 1). */
static inline uint64_t p256_sub4(p256_fe r, const p256_fe a, const p256_fe m)
{
	uint64_t borrow = 0;

	for (int i = 0; i < 4; i++) {
		p256_u128 d = (p256_u128)a[i] - m[i] - borrow;
		r[i] = (uint64_t)d;
		borrow = (uint64_t)(d >> 64) & 1;
	}
	return borrow;
}

/* r = (a + b) mod m for a, b < m. */
static inline void p256_add_mod(p256_fe r, const p256_fe a, const p256_fe b, const p256_fe m)
{
	p256_fe t, u;
	p256_u128 c = 0;

	for (int i = 0; i < 4; i++) {
		c += (p256_u128)a[i] + b[i];
		t[i] = (uint64_t)c;
		c >>= 64;
	}
	const uint64_t top = (uint64_t)c;
	const uint64_t borrow = p256_sub4(u, t, m);
	/* t < m exactly when the 257-bit sum minus m borrows. */
	const uint64_t keep_t = 0 - (borrow & (top ^ 1));
	for (int i = 0; i < 4; i++)
		r[i] = (t[i] & keep_t) | (u[i] & ~keep_t);
}

/* r = (a - b) mod m for a, b < m. */
static inline void p256_sub_mod(p256_fe r, const p256_fe a, const p256_fe b, const p256_fe m)
{
	const uint64_t mask = 0 - p256_sub4(r, a, b);
	p256_u128 c = 0;

	for (int i = 0; i < 4; i++) {
		c += (p256_u128)r[i] + (m[i] & mask);
		r[i] = (uint64_t)c;
		c >>= 64;
	}
}

static inline void p256_fe_add(p256_fe r, const p256_fe a, const p256_fe b)
{
	p256_add_mod(r, a, b, P256_P);
}

static inline void p256_fe_sub(p256_fe r, const p256_fe a, const p256_fe b)
{
	p256_sub_mod(r, a, b, P256_P);
}

/* r = a / 2 mod p: a, plus p when a is odd, shifted right. */
static inline void p256_fe_half(p256_fe r, const p256_fe a)
{
	const uint64_t odd = 0 - (a[0] & 1);
	uint64_t t[4];
	p256_u128 c = 0;

	for (int i = 0; i < 4; i++) {
		c += (p256_u128)a[i] + (P256_P[i] & odd);
		t[i] = (uint64_t)c;
		c >>= 64;
	}
	for (int i = 0; i < 3; i++)
		r[i] = (t[i] >> 1) | (t[i + 1] << 63);
	r[3] = (t[3] >> 1) | ((uint64_t)c << 63);
}

/* r = mask ? -a : a */
static inline void p256_fe_cneg(p256_fe r, const p256_fe a, uint64_t mask)
{
	static const p256_fe zero = {0, 0, 0, 0};
	p256_fe n;

	p256_fe_sub(n, zero, a);
	for (int i = 0; i < 4; i++)
		r[i] = (a[i] & ~mask) | (n[i] & mask);
}

/* Big-endian 32 bytes <-> limbs (no reduction). */
void p256_load_be(p256_fe r, const uint8_t in[32]);
void p256_store_be(uint8_t out[32], const p256_fe a);

#endif

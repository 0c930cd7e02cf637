/*
 * Arithmetic mod the group order n for ECDSA signing on mbedTLS's generic
 * curves (ecdsa_scalar.h). mbedTLS's bignum functions, which the signing
 * code used before, are variable time in the values: multiplication and
 * reduction branch on the length of the numbers, division and inversion on
 * the numbers themselves, all of it on d and k. Here no branch and no memory
 * index depends on d or k (tests/unit/test_ecdsa_ct.c checks it under
 * valgrind): the loops run over the limbs of n, which is public, the
 * reductions are done always and kept by mask (rsa_mont.h's limb helpers),
 * and k^-1 is Fermat's k^(n-2), whose exponent is public.
 *
 * Products are Montgomery's, R = 2^(64 L) for L limbs (6 for P-384, 9 for
 * P-521); the modulus set-up is RSA's (sotls_mont_init), whose own
 * multiplications come only in RSA's sizes, 16 limbs and up.
 */
#include "ecdsa_scalar.h"

#include <mbedtls/ecp.h>
#include <mbedtls/platform_util.h>
#include <string.h>

#include "ct_valgrind.h"
#include "mbedtls_internals.h"
#include "util.h"

_Static_assert(sizeof(mbedtls_mpi_uint) == sizeof(uint64_t), "mbedTLS limbs are 64-bit");

typedef unsigned __int128 u128;

/*
 * r = a b / R mod n, for a, b < n (r may be a or b): the whole product,
 * then Montgomery's reduction a limb at a time, each adding the multiple of
 * n that clears the limb and carrying up to the top.
 */
static void mont_mul(uint64_t *r, const uint64_t *a, const uint64_t *b,
		     const struct sotls_mont *mt)
{
	const size_t n = mt->n;
	uint64_t t[2 * SOTLS_ECDSA_MAX_LIMBS + 1] = {0};

	for (size_t i = 0; i < n; i++) {
		uint64_t carry = 0;
		for (size_t j = 0; j < n; j++) {
			const u128 p = (u128)a[j] * b[i] + t[i + j] + carry;
			t[i + j] = (uint64_t)p;
			carry = (uint64_t)(p >> 64);
		}
		t[i + n] = carry;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t q = t[i] * mt->m0inv;
		uint64_t carry = 0;
		for (size_t j = 0; j < n; j++) {
			const u128 p = (u128)q * mt->m[j] + t[i + j] + carry;
			t[i + j] = (uint64_t)p;
			carry = (uint64_t)(p >> 64);
		}
		for (size_t j = i + n; j <= 2 * n; j++) {
			const u128 s = (u128)t[j] + carry;
			t[j] = (uint64_t)s;
			carry = (uint64_t)(s >> 64);
		}
	}
	/* t / R = (a b + q n) / R < 2n: one subtraction at most. */
	sotls_mont_final_sub(r, t + n, t[2 * n], mt->m, n);
	sotls_wipe(t, sizeof(t));
}

/*
 * r = a^-1 R mod n for a in [1, n-1], as R a^(n-2) (n is prime): windows
 * of SOTLS_EXP_WINDOW bits over n - 2 from the top, each a run of squarings
 * and a multiplication by a^w R from a table. n - 2 is public, so are the
 * windows w, the table index and whether w = 0 skips the multiplication.
 */
static void inv_mont(const struct sotls_ecdsa_order *o, uint64_t *r, const uint64_t *a)
{
	static const uint64_t one[SOTLS_ECDSA_MAX_LIMBS] = {1};
	const struct sotls_mont *mt = &o->mt;
	uint64_t table[1u << SOTLS_EXP_WINDOW][SOTLS_ECDSA_MAX_LIMBS];

	mont_mul(table[0], mt->rr, one, mt);
	mont_mul(table[1], a, mt->rr, mt);
	for (size_t w = 2; w < (1u << SOTLS_EXP_WINDOW); w++)
		mont_mul(table[w], table[w - 1], table[1], mt);
	size_t pos = (o->bits - 1) / SOTLS_EXP_WINDOW * SOTLS_EXP_WINDOW;
	memcpy(r, table[sotls_exp_window(o->nm2, mt->n, pos)], mt->n * sizeof(uint64_t));
	while (pos > 0) {
		pos -= SOTLS_EXP_WINDOW;
		for (int i = 0; i < SOTLS_EXP_WINDOW; i++)
			mont_mul(r, r, r, mt);
		const uint64_t w = sotls_exp_window(o->nm2, mt->n, pos);
		if (w != 0)
			mont_mul(r, r, table[w], mt);
	}
	sotls_wipe(table, sizeof(table));
}

int sotls_ecdsa_order_init(struct sotls_ecdsa_order *o, const mbedtls_mpi *n)
{
	static const uint64_t two[SOTLS_ECDSA_MAX_LIMBS] = {2};
	const size_t bits = mbedtls_mpi_bitlen(n), limbs = (bits + 63) / 64;

	/* n > 2: n - 2 is Fermat's exponent. */
	if (limbs > SOTLS_ECDSA_MAX_LIMBS || mbedtls_mpi_cmp_int(n, 2) <= 0 ||
	    mbedtls_mpi_get_bit(n, 0) != 1)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	size_t n_limbs;
	sotls_mont_init(&o->mt, sotls_mbed_mpi_limbs(n, &n_limbs), limbs);
	o->bits = bits;
	sotls_limbs_sub(o->nm2, o->mt.m, two, limbs);
	return 0;
}

/* Whether 1 <= x < n for x of n's limbs and high, the OR of any limbs x
 * has above them; only the verdict is made public. */
static bool in_range(const struct sotls_ecdsa_order *o, const uint64_t *x, uint64_t high)
{
	uint64_t any = 0;

	for (size_t i = 0; i < o->mt.n; i++)
		any |= x[i];
	uint64_t ok = sotls_limb_nonzero_mask(any) & ~sotls_limb_nonzero_mask(high) &
		      sotls_limbs_lt_mask(x, o->mt.m, o->mt.n);
	SOTLS_CT_PUBLIC(&ok, sizeof(ok));
	return ok != 0;
}

bool sotls_ecdsa_scalar_load(const struct sotls_ecdsa_order *o, uint64_t *x,
			     const mbedtls_mpi *v)
{
	size_t limbs;
	const mbedtls_mpi_uint *p = sotls_mbed_mpi_limbs(v, &limbs);
	uint64_t high = 0;

	for (size_t i = 0; i < o->mt.n; i++)
		x[i] = i < limbs ? p[i] : 0;
	for (size_t i = o->mt.n; i < limbs; i++)
		high |= p[i];
	/* The sign is not a secret: mbedTLS sets it apart from the limbs. */
	return in_range(o, x, high) && sotls_mbed_mpi_sign(v) > 0;
}

int sotls_ecdsa_scalar_to_mpi(const struct sotls_ecdsa_order *o, mbedtls_mpi *dst,
			      const uint64_t *x)
{
	/* Through bytes and mbedTLS's public reader, which copies them without
	 * looking at their value. */
	uint8_t le[SOTLS_ECDSA_MAX_LIMBS * 8];
	for (size_t i = 0; i < o->mt.n * 8; i++)
		le[i] = (uint8_t)(x[i / 8] >> (8 * (i % 8)));
	int ret = mbedtls_mpi_read_binary_le(dst, le, o->mt.n * 8);
	mbedtls_platform_zeroize(le, sizeof(le));
	return ret;
}

/* mbedtls_mpi_random's limit: n's top bit is set, so a draw misses with
 * probability below 1/2. */
#define NONCE_TRIES 30

int sotls_ecdsa_nonce(const struct sotls_ecdsa_order *o, uint64_t *k,
		      int (*f_rng)(void *, unsigned char *, size_t), void *p_rng)
{
	const size_t n = o->mt.n, bytes = (o->bits + 7) / 8, shift = 8 * bytes - o->bits;
	uint8_t buf[8 * SOTLS_ECDSA_MAX_LIMBS] = {0};
	int ret = MBEDTLS_ERR_ECP_RANDOM_FAILED;

	if (f_rng == NULL)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	/* The bytes are a big-endian number, right-aligned in n's limbs. */
	for (int tries = 0; tries < NONCE_TRIES; tries++) {
		if (f_rng(p_rng, buf + 8 * n - bytes, bytes) != 0)
			break;
		for (size_t i = 0; i < n; i++)
			k[i] = sotls_load_be64(buf + 8 * (n - 1 - i));
		for (size_t i = 0; shift != 0 && i < n; i++)
			k[i] = (k[i] >> shift) | (i + 1 < n ? k[i + 1] << (64 - shift) : 0);
		if (in_range(o, k, 0)) {
			ret = 0;
			break;
		}
	}
	sotls_wipe(buf, sizeof(buf));
	return ret;
}

void sotls_ecdsa_s(const struct sotls_ecdsa_order *o, uint64_t *s, const uint64_t *k,
		   const uint64_t *d, const uint64_t *e, const uint64_t *r)
{
	const struct sotls_mont *mt = &o->mt;
	uint64_t t[SOTLS_ECDSA_MAX_LIMBS], kinv[SOTLS_ECDSA_MAX_LIMBS];

	/* (r R) d / R = r d, then + e, then (k^-1 R) (e + r d) / R. */
	mont_mul(t, r, mt->rr, mt);
	mont_mul(t, t, d, mt);
	const uint64_t carry = sotls_limbs_add(t, t, e, mt->n);
	sotls_mont_final_sub(t, t, carry, mt->m, mt->n);
	inv_mont(o, kinv, k);
	mont_mul(s, kinv, t, mt);
	SOTLS_CT_PUBLIC(s, mt->n * sizeof(uint64_t));
	sotls_wipe(t, sizeof(t));
	sotls_wipe(kinv, sizeof(kinv));
}

/*
 * Arithmetic mod the group order n for ECDSA signing on mbedTLS's generic
 * curves (P-384, P-521; ecdsa_scalar.c): the key's and the nonce's range
 * checks, the nonce's draw, and s = k^-1 (e + r d) mod n, constant time in
 * the key d and the nonce k. Scalars are arrays of ceil(bits(n) / 64)
 * little-endian 64-bit limbs.
 */
#ifndef SOTLS_CRYPTO_ECDSA_SCALAR_H
#define SOTLS_CRYPTO_ECDSA_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

#include <mbedtls/bignum.h>

#include "rsa_mont.h"

#define SOTLS_ECDSA_MAX_LIMBS 9 /* P-521's n */

/* n (public) as a Montgomery modulus, with n - 2 for Fermat's inverse. */
struct sotls_ecdsa_order {
	struct sotls_mont mt;
	size_t bits;
	uint64_t nm2[SOTLS_ECDSA_MAX_LIMBS];
};

/* Sets o up for n, an odd number of at most SOTLS_ECDSA_MAX_LIMBS limbs
 * (MBEDTLS_ERR_ECP_BAD_INPUT_DATA otherwise). */
int sotls_ecdsa_order_init(struct sotls_ecdsa_order *o, const mbedtls_mpi *n);

/*
 * x = v, whatever v's value (only its limb count steers the code). Returns
 * whether 1 <= v < n: that verdict alone is made public (SOTLS_CT_PUBLIC).
 * x is v mod 2^(64 limbs) even when it is false.
 */
bool sotls_ecdsa_scalar_load(const struct sotls_ecdsa_order *o, uint64_t *x,
			     const mbedtls_mpi *v);

/* dst = x, without the value steering the code (its limbs are copied). */
int sotls_ecdsa_scalar_to_mpi(const struct sotls_ecdsa_order *o, mbedtls_mpi *dst,
			      const uint64_t *x);

/*
 * k in [1, n-1] drawn from f_rng the way mbedtls_ecp_gen_privkey draws it
 * (RFC 6979 §3.2 step h: the leftmost bits(n) bits of ceil(bits(n) / 8)
 * bytes, drawn again while out of range), so that mbedTLS's deterministic
 * wrapper gives RFC 6979's k. MBEDTLS_ERR_ECP_RANDOM_FAILED if f_rng fails
 * or gives nothing in range.
 */
int sotls_ecdsa_nonce(const struct sotls_ecdsa_order *o, uint64_t *k,
		      int (*f_rng)(void *, unsigned char *, size_t), void *p_rng);

/*
 * SEC1 §4.1.3 step 6: s = k^-1 (e + r d) mod n, for k, d in [1, n-1] and
 * e, r < n. s, which is published, is made public (SOTLS_CT_PUBLIC).
 */
void sotls_ecdsa_s(const struct sotls_ecdsa_order *o, uint64_t *s, const uint64_t *k,
		   const uint64_t *d, const uint64_t *e, const uint64_t *r);

#endif

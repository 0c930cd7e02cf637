/*
 * Arithmetic mod n, the order of P-256's group (p256_scalar.c), for keys and
 * ECDSA. Values are plain integers (not Montgomery) in 4 little-endian limbs,
 * reduced below n unless said otherwise. Constant time.
 */
#ifndef SOTLS_CRYPTO_P256_SCALAR_H
#define SOTLS_CRYPTO_P256_SCALAR_H

#include "p256_internal.h"

#include <stddef.h>
#include <stdint.h>

/* All ones when 1 <= a < n (a private key or an ECDSA r or s), else 0. */
uint64_t p256_sc_in_range(const p256_fe a);
/* a mod n for any a < 2^256 (< 2n, so one masked subtraction). */
void p256_sc_reduce(p256_fe r, const p256_fe a);
/* A 384-bit big-endian value mod n: keys from random bytes with a bias
 * below 2^-128 (FIPS 186-5 A.2.1's "extra random bits"). */
void p256_sc_from_wide(const struct p256_impl *im, p256_fe r, const uint8_t in[48]);
/* bits2int(h) mod n (RFC 6979 §2.3.2 and §2.3.4, SEC1 §4.1.3 step 5). */
void p256_sc_from_hash(p256_fe r, const uint8_t *hash, size_t len);

void p256_sc_add(p256_fe r, const p256_fe a, const p256_fe b);
void p256_sc_mul(const struct p256_impl *im, p256_fe r, const p256_fe a, const p256_fe b);
/* a^-1 mod n by Fermat (a^(n-2)); 0 for 0. */
void p256_sc_inv(const struct p256_impl *im, p256_fe r, const p256_fe a);

#endif

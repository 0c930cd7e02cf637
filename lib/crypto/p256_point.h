/*
 * P-256 scalar multiplication and SEC1 point encoding (p256_point.c), over
 * one implementation level (p256_internal.h). Scalars are plain integers in
 * 4 little-endian limbs, below n (the window argument in p256_point.c needs
 * it); points in the Montgomery domain.
 */
#ifndef SOTLS_CRYPTO_P256_POINT_H
#define SOTLS_CRYPTO_P256_POINT_H

#include "p256_internal.h"

#include <stdint.h>

/* Fixed-base comb: P256_COMB_WINDOWS windows of P256_COMB_BITS bits, signed
 * digits, and for window i the multiples j·2^(6i)·G, j = 1..32, affine. */
#define P256_COMB_BITS 6
#define P256_COMB_WINDOWS 43
#define P256_COMB_POINTS 32
/* Generated at build time by p256_gen_table.c. */
extern const p256_aff p256_comb_table[P256_COMB_WINDOWS][P256_COMB_POINTS];

/*
 * The constant-time table lookup: r = entry idx (1..n) of n entries of `fes`
 * field elements each (an affine or a Jacobian point, contiguous limbs), all
 * zeros for idx = 0. Portable and AVX2 versions; p256_select gives the one
 * for this CPU (AVX2, unless SOTLS_CPU takes it away).
 */
typedef void p256_select_fn(uint64_t *r, const uint64_t *tab, int n, int fes, uint64_t idx);
p256_select_fn p256_select_generic, p256_select_avx2;
p256_select_fn *p256_select(void);

/* r = k·G, constant time; k < n. */
void p256_mul_base(const struct p256_impl *im, p256_jac *r, const p256_fe k);
/* r = k·P, constant time in k and P; k < n, P on the curve. */
void p256_mul_var(const struct p256_impl *im, p256_jac *r, const p256_fe k, const p256_aff *p);

/* r = k·P in variable time, for public k and P (verification): a width-5
 * NAF over 1P, 3P, .., 15P, no table scans. */
void p256_mul_var_public(const struct p256_impl *im, p256_jac *r, const p256_fe k,
			 const p256_aff *p);

/* Affine coordinates of a; all ones when a is the point at infinity (then r = 0). */
uint64_t p256_to_affine(const struct p256_impl *im, p256_aff *r, const p256_jac *a);

/* SEC1 §2.3.4 uncompressed point 0x04 || X || Y (the only form TLS uses,
 * RFC 8422 §5.1.2) to affine, validated: 0 on success, -1 when the encoding,
 * the coordinates (each must be < p) or the curve equation fail. */
int p256_point_decode(const struct p256_impl *im, p256_aff *r, const uint8_t in[65]);
void p256_point_encode(const struct p256_impl *im, uint8_t out[65], const p256_aff *a);

/* Leaving the Montgomery domain: a·2^-256 mod p. */
void p256_fe_from_mont(const struct p256_impl *im, p256_fe r, const p256_fe a);

#endif

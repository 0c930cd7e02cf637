/*
 * mbedTLS 3.6's ECDH and ECDSA ALT hooks (ec_mbedtls_alt.c; the macros are set
 * in subprojects/packagefiles/mbedtls/sotls_mbedtls_config.h). With them,
 * mbedtls_ecdh_gen_public, mbedtls_ecdh_compute_shared, mbedtls_ecdsa_sign
 * and mbedtls_ecdsa_verify are sotls's: P-256 goes to lib/crypto/p256*.c,
 * X25519 to libsodium, every other curve to mbedTLS's generic ECP through
 * the functions below, which do what mbedTLS's own (compiled out by the
 * macros) did; signing's arithmetic mod n is ecdsa_scalar.c's, constant
 * time. sotls-bench-pk calls them on P-256 to measure mbedTLS's ECP.
 */
#ifndef SOTLS_CRYPTO_EC_MBEDTLS_ALT_H
#define SOTLS_CRYPTO_EC_MBEDTLS_ALT_H

#include <mbedtls/ecdh.h>
#include <mbedtls/ecdsa.h>

int sotls_ecp_gen_public_generic(mbedtls_ecp_group *grp, mbedtls_mpi *d, mbedtls_ecp_point *Q,
				 int (*f_rng)(void *, unsigned char *, size_t), void *p_rng);
int sotls_ecp_compute_shared_generic(mbedtls_ecp_group *grp, mbedtls_mpi *z,
				     const mbedtls_ecp_point *Q, const mbedtls_mpi *d,
				     int (*f_rng)(void *, unsigned char *, size_t), void *p_rng);
int sotls_ecdsa_sign_generic(mbedtls_ecp_group *grp, mbedtls_mpi *r, mbedtls_mpi *s,
			     const mbedtls_mpi *d, const unsigned char *buf, size_t blen,
			     int (*f_rng)(void *, unsigned char *, size_t), void *p_rng);
int sotls_ecdsa_verify_generic(mbedtls_ecp_group *grp, const unsigned char *buf, size_t blen,
			       const mbedtls_ecp_point *Q, const mbedtls_mpi *r,
			       const mbedtls_mpi *s);

#endif

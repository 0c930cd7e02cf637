/*
 * P-256 (secp256r1) ECDH and ECDSA of our own (p256_ecdh.c, p256_ecdsa.c).
 * Byte strings are big endian; points are SEC1 uncompressed (0x04 || X || Y,
 * 65 bytes); signatures are r || s, 32 bytes each. Every function takes the
 * implementation level first: NULL means the one chosen for this CPU
 * (p256_impl_default); tests pass a given level (p256_impl_get).
 *
 * Constant time in the private key, the nonce and the shared secret.
 * Verification handles public data only.
 */
#ifndef SOTLS_CRYPTO_P256_H
#define SOTLS_CRYPTO_P256_H

#include <stddef.h>
#include <stdint.h>

struct p256_impl;

enum sotls_p256_status {
	SOTLS_P256_OK = 0,
	SOTLS_P256_ERR_KEY = -1,      /* private key not in [1, n-1] */
	SOTLS_P256_ERR_POINT = -2,    /* public key / peer share not a valid point */
	SOTLS_P256_ERR_INFINITY = -3, /* result at infinity */
	SOTLS_P256_ERR_SIG_RANGE = -4,	/* r or s not in [1, n-1] */
	SOTLS_P256_ERR_SIG = -5,      /* signature does not verify */
	SOTLS_P256_ERR_NONCE = -7,    /* nonce not in [1, n-1], or r or s zero: draw another */
};

#define SOTLS_P256_KEYGEN_RANDOM 48 /* random bytes a key is drawn from */

/* A private key from 48 random bytes, and its public key. */
int sotls_p256_keygen(const struct p256_impl *im, const uint8_t rnd[SOTLS_P256_KEYGEN_RANDOM],
		      uint8_t priv[32], uint8_t pub[65]);
/* pub = priv·G. */
int sotls_p256_public_key(const struct p256_impl *im, const uint8_t priv[32], uint8_t pub[65]);
/* The ECDH shared secret: the X coordinate of priv·peer (RFC 8422 §5.10),
 * after validating peer (on the curve, coordinates < p, not infinity). */
int sotls_p256_ecdh(const struct p256_impl *im, const uint8_t priv[32], const uint8_t peer[65],
		    uint8_t shared[32]);
/*
 * ECDSA over a message hash, nonce from RFC 6979 (HMAC-SHA-256) with the
 * optional additional data of §3.6 (extra, e.g. fresh randomness: a hedged
 * nonce; NULL/0 gives RFC 6979's deterministic one).
 */
int sotls_p256_sign(const struct p256_impl *im, const uint8_t priv[32], const uint8_t *hash,
		    size_t hash_len, const uint8_t *extra, size_t extra_len, uint8_t sig[64]);
/*
 * The same with the caller's nonce (32 bytes, big endian), for mbedTLS's
 * ALT hook, whose RNG is mbedTLS's RFC 6979 HMAC-DRBG when it signs
 * deterministically. SOTLS_P256_ERR_NONCE asks for the next candidate.
 */
int sotls_p256_sign_nonce(const struct p256_impl *im, const uint8_t priv[32],
			  const uint8_t *hash, size_t hash_len, const uint8_t nonce[32],
			  uint8_t sig[64]);
int sotls_p256_verify(const struct p256_impl *im, const uint8_t pub[65], const uint8_t *hash,
		      size_t hash_len, const uint8_t sig[64]);

#endif

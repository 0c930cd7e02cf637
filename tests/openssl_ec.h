/*
 * OpenSSL's side of ECDSA for the tests (tests/unit/test_p256*.c, test_ecdsa.c)
 * and the benchmark (bench/bench_pk.c): keys from raw bytes on any named
 * curve, r || s <-> DER, and verification; P-256 shorthands. Header-only,
 * like openssl_aead.h. Return 0 on success.
 */
#ifndef SOTLS_TESTS_OPENSSL_EC_H
#define SOTLS_TESTS_OPENSSL_EC_H

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <stddef.h>
#include <stdint.h>

/* An EC EVP key on OpenSSL's group (e.g. "secp384r1") from a public key
 * (SEC1 uncompressed) and, when priv is not NULL, its private key (big
 * endian); NULL if OpenSSL refuses them. */
static inline EVP_PKEY *openssl_ec_key(const char *group, const uint8_t *priv, size_t priv_len,
				       const uint8_t *pub, size_t pub_len)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *d = priv != NULL ? BN_bin2bn(priv, (int)priv_len, NULL) : NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *key = NULL;

	if (bld != NULL && ctx != NULL && (priv == NULL || d != NULL) &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, pub_len) &&
	    (d == NULL || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d)) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
	    EVP_PKEY_fromdata(ctx, &key, d != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
			      params) != 1)
		key = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_clear_free(d);
	return key;
}

/* A P-256 EVP key from a public key (65 bytes, uncompressed) and, when priv
 * is not NULL, its private key (32 bytes); NULL if OpenSSL refuses them. */
static inline EVP_PKEY *openssl_p256_key(const uint8_t *priv, const uint8_t pub[65])
{
	return openssl_ec_key("prime256v1", priv, 32, pub, 65);
}

/* r || s (len bytes each) as a DER ECDSA-Sig-Value in der (der_size
 * bytes); its length, or 0. */
static inline size_t openssl_ec_sig_to_der(const uint8_t *sig, size_t len, uint8_t *der,
					   size_t der_size)
{
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, (int)len, NULL), *ss = BN_bin2bn(sig + len, (int)len, NULL);
	unsigned char *p = der;
	int out = 0;

	if (s != NULL && r != NULL && ss != NULL && ECDSA_SIG_set0(s, r, ss) == 1) {
		r = ss = NULL; /* owned by s now */
		if ((size_t)i2d_ECDSA_SIG(s, NULL) <= der_size)
			out = i2d_ECDSA_SIG(s, &p);
	}
	BN_free(r);
	BN_free(ss);
	ECDSA_SIG_free(s);
	return out > 0 ? (size_t)out : 0;
}

/* r || s (32 bytes each) as a DER ECDSA-Sig-Value; its length, or 0. */
static inline size_t openssl_sig_to_der(const uint8_t sig[64], uint8_t der[80])
{
	return openssl_ec_sig_to_der(sig, 32, der, 80);
}

/* 0 when OpenSSL accepts the DER signature over hash for key. */
static inline int openssl_ec_verify_der(EVP_PKEY *key, const uint8_t *hash, size_t hash_len,
					const uint8_t *der, size_t der_len)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	int ok = 0;

	if (der_len > 0 && ctx != NULL && EVP_PKEY_verify_init(ctx) == 1)
		ok = EVP_PKEY_verify(ctx, der, der_len, hash, hash_len) == 1;
	EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* 0 when OpenSSL accepts r || s over hash for key. */
static inline int openssl_p256_verify(EVP_PKEY *key, const uint8_t *hash, size_t hash_len,
				      const uint8_t sig[64])
{
	uint8_t der[80];

	return openssl_ec_verify_der(key, hash, hash_len, der, openssl_sig_to_der(sig, der));
}

#endif

/*
 * OpenSSL's EVP cipher for each sotls AEAD: the reference in tests/unit and
 * the baseline in bench/. Header-only, so that neither needs a library.
 */
#ifndef SOTLS_TESTS_OPENSSL_AEAD_H
#define SOTLS_TESTS_OPENSSL_AEAD_H

#include <openssl/evp.h>

#include "aead.h"

/* NULL for a value that names no AEAD. */
static inline const EVP_CIPHER *openssl_aead_cipher(enum sotls_aead_alg alg)
{
	switch (alg) {
	case SOTLS_AEAD_ARIA_128_GCM:
		return EVP_aria_128_gcm();
	case SOTLS_AEAD_ARIA_256_GCM:
		return EVP_aria_256_gcm();
	case SOTLS_AEAD_AES_128_GCM:
		return EVP_aes_128_gcm();
	case SOTLS_AEAD_AES_256_GCM:
		return EVP_aes_256_gcm();
	}
	return NULL;
}

#endif

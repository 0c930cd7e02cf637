/*
 * The record ciphers sotls speaks, one row each: the AEAD, its key length,
 * and what the kernel's TLS calls it (TLS_CIPHER_* and its crypto_info
 * struct, the crypto API's algorithm, the Linux release that first knew
 * it). Every table of ciphers (the cipher-name groups of a suite list,
 * the kernel's crypto_info layouts and their compile-time checks) expands
 * these rows, so adding a cipher is one row here and a suite line per key
 * exchange in suites.c. The kernel names are macro text: only
 * lib/ktls/ktls.c, which has the kernel's definitions, expands them.
 *
 * X(alg, key bytes, TLS_CIPHER_*, crypto API name, since, crypto_info struct)
 */
#ifndef SOTLS_PROTO_CIPHERS_H
#define SOTLS_PROTO_CIPHERS_H

#define SOTLS_CIPHERS(X)                                                                      \
	X(SOTLS_AEAD_ARIA_128_GCM, 16, TLS_CIPHER_ARIA_GCM_128, "gcm(aria)", "6.1",           \
	  tls12_crypto_info_aria_gcm_128)                                                     \
	X(SOTLS_AEAD_ARIA_256_GCM, 32, TLS_CIPHER_ARIA_GCM_256, "gcm(aria)", "6.1",           \
	  tls12_crypto_info_aria_gcm_256)                                                     \
	X(SOTLS_AEAD_AES_128_GCM, 16, TLS_CIPHER_AES_GCM_128, "gcm(aes)", "4.13",             \
	  tls12_crypto_info_aes_gcm_128)                                                      \
	X(SOTLS_AEAD_AES_256_GCM, 32, TLS_CIPHER_AES_GCM_256, "gcm(aes)", "5.1",              \
	  tls12_crypto_info_aes_gcm_256)

#endif

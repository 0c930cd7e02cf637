/*
 * Seals one 16 KiB record (13-byte TLS AAD) ITER times with sotls or
 * OpenSSL, for insn-count.sh, which runs it under qemu-aarch64 with an
 * instruction-counting plugin at two values of ITER: the difference is the
 * cost of the seals alone, start-up, key set-up and the process's exit
 * cancelling out.
 *
 *   insn_seal sotls|openssl aes|aria ITER
 *
 * Prints the implementation used and a checksum of the last record and tag
 * (the same for both libraries: a wrong result would show).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "aead.h"

#define LEN 16384

static uint8_t in[LEN], out[LEN];

static uint32_t checksum(const uint8_t *p, size_t n, const uint8_t tag[16])
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	for (size_t i = 0; i < 16; i++)
		h = (h ^ tag[i]) * 16777619u;
	return h;
}

int main(int argc, char **argv)
{
	static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	uint8_t nonce[12] = {0xca, 0xfe}, aad[13] = {0}, tag[16];

	if (argc != 4 || (strcmp(argv[2], "aes") != 0 && strcmp(argv[2], "aria") != 0)) {
		fprintf(stderr, "usage: %s sotls|openssl aes|aria ITER\n", argv[0]);
		return 2;
	}
	const int aes = strcmp(argv[2], "aes") == 0;
	const long iter = atol(argv[3]);
	for (size_t i = 0; i < LEN; i++)
		in[i] = (uint8_t)(i * 31 + 7);

	if (strcmp(argv[1], "sotls") == 0) {
		struct sotls_aead a;

		if (sotls_aead_init(&a, aes ? SOTLS_AEAD_AES_128_GCM : SOTLS_AEAD_ARIA_128_GCM, key,
				    sizeof(key)) != 0)
			return 1;
		for (long i = 0; i < iter; i++) {
			nonce[11] = (uint8_t)i;
			if (sotls_aead_seal(&a, nonce, aad, sizeof(aad), in, LEN, out, tag) != 0)
				return 1;
		}
		printf("%s ", sotls_aead_impl_name(&a));
		sotls_aead_clear(&a);
	} else if (strcmp(argv[1], "openssl") == 0) {
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		const EVP_CIPHER *c = aes ? EVP_aes_128_gcm() : EVP_aria_128_gcm();
		int n;

		if (x == NULL || c == NULL || EVP_EncryptInit_ex(x, c, NULL, key, NULL) != 1)
			return 1;
		/* As a TLS record: the key stays, each record sets its nonce. */
		for (long i = 0; i < iter; i++) {
			nonce[11] = (uint8_t)i;
			if (EVP_EncryptInit_ex(x, NULL, NULL, NULL, nonce) != 1 ||
			    EVP_EncryptUpdate(x, NULL, &n, aad, sizeof(aad)) != 1 ||
			    EVP_EncryptUpdate(x, out, &n, in, LEN) != 1 ||
			    EVP_EncryptFinal_ex(x, out + n, &n) != 1 ||
			    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1)
				return 1;
		}
		printf("openssl-%s ", OpenSSL_version(OPENSSL_VERSION_STRING));
		EVP_CIPHER_CTX_free(x);
	} else {
		fprintf(stderr, "%s: unknown library %s\n", argv[0], argv[1]);
		return 2;
	}
	printf("%08x\n", iter > 0 ? checksum(out, LEN, tag) : 0);
	return 0;
}

#include "rsa_testkey.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>

static const char *const PART_NAMES[7] = {
	OSSL_PKEY_PARAM_RSA_N,	       OSSL_PKEY_PARAM_RSA_E,	      OSSL_PKEY_PARAM_RSA_FACTOR1,
	OSSL_PKEY_PARAM_RSA_FACTOR2,   OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_EXPONENT2,
	OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
};

static void take(struct rsa_testkey *tk, EVP_PKEY *pkey)
{
	struct sotls_rsa_be *be[7] = {&tk->params.n,  &tk->params.e,  &tk->params.p,
				      &tk->params.q,  &tk->params.dp, &tk->params.dq,
				      &tk->params.qinv};

	memset(tk, 0, sizeof(*tk));
	tk->pkey = pkey;
	tk->bits = EVP_PKEY_get_bits(pkey);
	for (int i = 0; i < 7; i++) {
		BIGNUM *bn = NULL;
		if (!EVP_PKEY_get_bn_param(pkey, PART_NAMES[i], &bn))
			fail_msg("OpenSSL key has no %s", PART_NAMES[i]);
		const int len = BN_num_bytes(bn);
		tk->part[i] = OPENSSL_malloc((size_t)len + 1);
		BN_bn2bin(bn, tk->part[i]);
		tk->part_len[i] = (size_t)len;
		be[i]->p = tk->part[i];
		be[i]->len = (size_t)len;
		BN_clear_free(bn);
	}
}

void rsa_testkey_generate(struct rsa_testkey *tk, int bits)
{
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
	if (pkey == NULL)
		fail_msg("OpenSSL could not generate an RSA-%d key", bits);
	take(tk, pkey);
}

void rsa_testkey_from_pem(struct rsa_testkey *tk, const char *pem, size_t len)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	BIO_free(bio);
	if (pkey == NULL)
		fail_msg("OpenSSL could not read the PEM key");
	take(tk, pkey);
}

void rsa_testkey_from_pem_file(struct rsa_testkey *tk, const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *pkey = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	if (pkey == NULL)
		fail_msg("could not read the key %s", path);
	take(tk, pkey);
}

void rsa_testkey_free(struct rsa_testkey *tk)
{
	for (int i = 0; i < 7; i++)
		OPENSSL_clear_free(tk->part[i], tk->part_len[i] + 1);
	EVP_PKEY_free(tk->pkey);
	memset(tk, 0, sizeof(*tk));
}

/*
 * RSA rows (bench_pk_rsa.h), measured by sotls-bench-pk's harness
 * (bench_pk_group) like the curves. The input of the private operations
 * is a PKCS #1 v1.5 signature of a SHA-256 hash, the key OpenSSL's
 * generator's.
 */
#include "bench_pk_rsa.h"

#include "bench_pk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "rsa.h"
#include "util.h"

#define MAX_CONTENDERS (SOTLS_RSA_IMPLS + 2)

static int mbed_random(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	return sotls_getrandom(out, len) == 0 ? 0 : -1;
}

/* One contender: one operation on its state; 0 on success. */
struct contender {
	char name[32];
	int (*op)(struct contender *c);
	EVP_PKEY_CTX *ossl;
	mbedtls_pk_context *mbed;
	struct sotls_rsa_key *ours;
	const unsigned char *digest;
	unsigned char out[512];
	size_t len;
};

static int op_openssl_sign(struct contender *c)
{
	size_t n = sizeof(c->out);
	return EVP_PKEY_sign(c->ossl, c->out, &n, c->digest, 32) == 1 ? 0 : -1;
}

static int op_openssl_verify(struct contender *c)
{
	return EVP_PKEY_verify(c->ossl, c->out, c->len, c->digest, 32) == 1 ? 0 : -1;
}

static int op_mbedtls_private(struct contender *c)
{
	/* The raw operation on the PKCS #1 block sotls signs, so both do the same. */
	return mbedtls_rsa_private(mbedtls_pk_rsa(*c->mbed), mbed_random, NULL, c->out, c->out);
}

static int op_mbedtls_verify(struct contender *c)
{
	return mbedtls_pk_verify(c->mbed, MBEDTLS_MD_SHA256, c->digest, 32, c->out, c->len);
}

static int op_sotls_sign(struct contender *c)
{
	return sotls_rsa_pkcs1_sign(c->ours, SOTLS_RSA_SHA256, c->digest, 32, c->out, c->len);
}

static int run_contender(void *p)
{
	struct contender *c = p;
	return c->op(c);
}

/* One group of rows; contender 0 is OpenSSL, the reference. */
static void measure(const struct bench_pk_opts *o, const char *op, struct contender *c, int n)
{
	struct bench_pk_impl impls[MAX_CONTENDERS];
	for (int i = 0; i < n; i++)
		impls[i] = (struct bench_pk_impl){c[i].name, run_contender, &c[i]};
	bench_pk_group(o, op, impls, (size_t)n);
}

/* sotls's parts of an OpenSSL key. */
static struct sotls_rsa_key *sotls_key(EVP_PKEY *pkey, enum sotls_rsa_impl impl)
{
	static const char *const NAMES[7] = {"n", "e", "rsa-factor1", "rsa-factor2",
					     "rsa-exponent1", "rsa-exponent2",
					     "rsa-coefficient1"};
	unsigned char buf[7][512];
	struct sotls_rsa_params pp;
	struct sotls_rsa_be *be[7] = {&pp.n, &pp.e, &pp.p, &pp.q, &pp.dp, &pp.dq, &pp.qinv};
	for (int i = 0; i < 7; i++) {
		BIGNUM *bn = NULL;
		if (!EVP_PKEY_get_bn_param(pkey, NAMES[i], &bn) || BN_num_bytes(bn) > 512)
			return NULL;
		*be[i] = (struct sotls_rsa_be){buf[i], (size_t)BN_bn2bin(bn, buf[i])};
		BN_clear_free(bn);
	}
	struct sotls_rsa_key *k = NULL;
	int rc = sotls_rsa_key_new(&k, &pp, impl);
	sotls_wipe(buf, sizeof(buf));
	return rc == 0 ? k : NULL;
}

/* mbedTLS's parse of the same key. */
static int mbed_key(EVP_PKEY *pkey, mbedtls_pk_context *pk)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *pem;
	if (b == NULL || PEM_write_bio_PrivateKey(b, pkey, NULL, NULL, 0, NULL, NULL) != 1)
		return -1;
	long n = BIO_get_mem_data(b, &pem);
	unsigned char *copy = malloc((size_t)n + 1);
	if (copy == NULL) {
		BIO_free(b);
		return -1;
	}
	memcpy(copy, pem, (size_t)n);
	copy[n] = '\0';
	BIO_free(b);
	mbedtls_pk_init(pk);
	int rc = mbedtls_pk_parse_key(pk, copy, (size_t)n + 1, NULL, 0, mbed_random, NULL);
	sotls_wipe(copy, (size_t)n);
	free(copy);
	return rc;
}

static EVP_PKEY_CTX *ossl_ctx(EVP_PKEY *pkey, int verify)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pkey, NULL);
	if (c == NULL || (verify ? EVP_PKEY_verify_init(c) : EVP_PKEY_sign_init(c)) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) <= 0)
		return NULL;
	return c;
}

static void fail(const char *what, int bits)
{
	fprintf(stderr, "bench_pk_rsa: RSA-%d: %s\n", bits, what);
	exit(1);
}

void bench_pk_rsa(const struct bench_pk_opts *o)
{
	static const unsigned char digest[32] = {0x42};
	for (int bits = 2048; bits <= 4096; bits += 1024) {
		EVP_PKEY *pkey = EVP_RSA_gen((unsigned)bits);
		mbedtls_pk_context mbed;
		if (pkey == NULL || mbed_key(pkey, &mbed) != 0)
			fail("key generation or mbedTLS's parse failed", bits);
		struct contender c[MAX_CONTENDERS];
		int n = 0;
		memset(c, 0, sizeof(c));
		c[n] = (struct contender){.name = "openssl", .op = op_openssl_sign,
					  .ossl = ossl_ctx(pkey, 0), .digest = digest};
		n++;
		c[n] = (struct contender){.name = "mbedtls", .op = op_mbedtls_private,
					  .mbed = &mbed, .digest = digest};
		n++;
		for (int impl = 0; impl < SOTLS_RSA_IMPLS; impl++) {
			if (!sotls_rsa_impl_supported((enum sotls_rsa_impl)impl))
				continue;
			c[n] = (struct contender){.op = op_sotls_sign, .digest = digest};
			snprintf(c[n].name, sizeof(c[n].name), "sotls-%s",
				 sotls_rsa_impl_name((enum sotls_rsa_impl)impl));
			c[n].ours = sotls_key(pkey, (enum sotls_rsa_impl)impl);
			if (c[n].ours == NULL)
				fail("sotls does not take the key", bits);
			n++;
		}
		if (c[0].ossl == NULL)
			fail("OpenSSL context set-up failed", bits);
		const size_t len = (size_t)bits / 8;
		for (int i = 0; i < n; i++)
			c[i].len = len;
		/* mbedTLS's raw operation starts from the encoded block. */
		if (op_sotls_sign(&c[2]) != 0 ||
		    mbedtls_rsa_public(mbedtls_pk_rsa(mbed), c[2].out, c[1].out) != 0)
			fail("the encoded block for mbedTLS", bits);

		char op[32];
		snprintf(op, sizeof(op), "RSA-%d sign", bits);
		measure(o, op, c, n);

		if (bits == 2048) {
			struct contender v[2] = {
				{.name = "openssl", .op = op_openssl_verify, .ossl = ossl_ctx(pkey, 1),
				 .digest = digest, .len = len},
				{.name = "mbedtls", .op = op_mbedtls_verify, .mbed = &mbed,
				 .digest = digest, .len = len},
			};
			memcpy(v[0].out, c[2].out, len);
			memcpy(v[1].out, c[2].out, len);
			if (v[0].ossl == NULL)
				fail("OpenSSL verify set-up failed", bits);
			measure(o, "RSA-2048 verify", v, 2);
			EVP_PKEY_CTX_free(v[0].ossl);
		}
		for (int i = 0; i < n; i++)
			sotls_rsa_key_free(c[i].ours);
		EVP_PKEY_CTX_free(c[0].ossl);
		mbedtls_pk_free(&mbed);
		EVP_PKEY_free(pkey);
	}
}

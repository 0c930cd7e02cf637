#include "rsa_testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "crypto_testutil.h"

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

/* What was written to b, NUL-terminated, into out; frees b. */
static void pem_out(BIO *b, char *out, size_t cap)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	if (n <= 0 || (size_t)n >= cap)
		fail_msg("PEM of %ld bytes for a buffer of %zu", n, cap);
	memcpy(out, data, (size_t)n);
	out[n] = '\0';
	BIO_free(b);
}

void rsa_testkey_self_signed(const struct rsa_testkey *tk, char *cert, size_t cert_cap,
			     char *key, size_t key_cap)
{
	X509 *x = X509_new();
	BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
	if (x == NULL || cb == NULL || kb == NULL)
		fail_msg("out of memory");
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 16);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24);
	X509_set_pubkey(x, tk->pkey);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost",
				   -1, -1, 0);
	X509_set_issuer_name(x, name);
	if (X509_sign(x, tk->pkey, EVP_sha256()) <= 0 || PEM_write_bio_X509(cb, x) != 1 ||
	    PEM_write_bio_PrivateKey(kb, tk->pkey, NULL, NULL, 0, NULL, NULL) != 1)
		fail_msg("OpenSSL could not make the certificate");
	pem_out(cb, cert, cert_cap);
	pem_out(kb, key, key_cap);
	X509_free(x);
}

static const EVP_MD *md_of(enum sotls_rsa_hash h)
{
	switch (h) {
	case SOTLS_RSA_SHA1:
		return EVP_sha1();
	case SOTLS_RSA_SHA224:
		return EVP_sha224();
	case SOTLS_RSA_SHA256:
		return EVP_sha256();
	case SOTLS_RSA_SHA384:
		return EVP_sha384();
	case SOTLS_RSA_SHA512:
		return EVP_sha512();
	}
	return NULL;
}

size_t rsa_digest(enum sotls_rsa_hash h, const uint8_t *msg, size_t len, uint8_t out[64])
{
	unsigned int n = 0;
	if (!EVP_Digest(msg, len, out, &n, md_of(h), NULL))
		fail_msg("EVP_Digest failed");
	return n;
}

json_t *wp_load(const char *file)
{
	const char *dir = getenv("SOTLS_VECTORS");
	char path[4096];
	json_error_t err;

	if (dir == NULL)
		fail_msg("SOTLS_VECTORS is not set (the Wycheproof directory)");
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	json_t *root = json_load_file(path, 0, &err);
	if (root == NULL)
		fail_msg("%s: %s (line %d)", path, err.text, err.line);
	return root;
}

enum sotls_rsa_hash wp_group_hash(json_t *group)
{
	static const struct {
		const char *name;
		enum sotls_rsa_hash h;
	} NAMES[] = {{"SHA-1", SOTLS_RSA_SHA1},
		     {"SHA-224", SOTLS_RSA_SHA224},
		     {"SHA-256", SOTLS_RSA_SHA256},
		     {"SHA-384", SOTLS_RSA_SHA384},
		     {"SHA-512", SOTLS_RSA_SHA512}};
	const char *name = json_string_value(json_object_get(group, "sha"));
	for (size_t i = 0; name != NULL && i < sizeof(NAMES) / sizeof(NAMES[0]); i++)
		if (strcmp(name, NAMES[i].name) == 0)
			return NAMES[i].h;
	fail_msg("test group with hash %s", name ? name : "(none)");
	return SOTLS_RSA_SHA256;
}

void wp_check_count(json_t *root, size_t cases, const char *file)
{
	const json_int_t declared = json_integer_value(json_object_get(root, "numberOfTests"));
	if ((json_int_t)cases != declared)
		fail_msg("%s: ran %zu cases, the file declares %lld", file, cases,
			 (long long)declared);
}

/* A hex string of a JSON object's member, decoded into a new buffer. */
static uint8_t *hex_member(json_t *obj, const char *key, size_t *len)
{
	const char *hex = json_string_value(json_object_get(obj, key));
	if (hex == NULL)
		fail_msg("vector without \"%s\"", key);
	const size_t cap = strlen(hex) / 2 + 1;
	uint8_t *buf = malloc(cap);
	if (buf == NULL)
		fail_msg("out of memory");
	*len = hex_decode(hex, buf, cap);
	return buf;
}

void wp_case_read(json_t *test, enum sotls_rsa_hash h, struct wp_case *c)
{
	c->id = (long)json_integer_value(json_object_get(test, "tcId"));
	c->result = json_string_value(json_object_get(test, "result"));
	if (c->result == NULL)
		fail_msg("tcId %ld without a result", c->id);
	c->msg = hex_member(test, "msg", &c->msg_len);
	c->sig = hex_member(test, "sig", &c->sig_len);
	c->digest_len = rsa_digest(h, c->msg, c->msg_len, c->digest);
}

void wp_case_free(struct wp_case *c)
{
	free(c->msg);
	free(c->sig);
}

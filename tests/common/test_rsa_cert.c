#include "test_rsa_cert.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

/* PEM of what was written to b, into out (NUL-terminated); frees b. */
static int bio_to(char *out, size_t cap, BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	int ok = n > 0 && (size_t)n < cap;
	if (ok) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(b);
	return ok ? 0 : -1;
}

int test_rsa_cert(char *cert_pem, size_t cert_size, char *key_pem, size_t key_size)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	X509 *x = X509_new();
	int rc = -1;
	if (key == NULL || x == NULL)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24 * 365);
	X509_set_pubkey(x, key);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost",
				   -1, -1, 0);
	X509_set_issuer_name(x, name);
	if (X509_sign(x, key, EVP_sha256()) <= 0)
		goto out;
	BIO *b = BIO_new(BIO_s_mem());
	if (b == NULL || PEM_write_bio_X509(b, x) != 1 || bio_to(cert_pem, cert_size, b) != 0)
		goto out;
	b = BIO_new(BIO_s_mem());
	if (b == NULL || PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) != 1 ||
	    bio_to(key_pem, key_size, b) != 0)
		goto out;
	rc = 0;
out:
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

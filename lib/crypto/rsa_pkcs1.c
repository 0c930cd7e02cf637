/* RSASSA-PKCS1-v1_5 signatures (RFC 8017 §8.2.1, EMSA-PKCS1-v1_5 §9.2). */
#include "rsa.h"

#include <string.h>

#include "crypto_err.h"
#include "util.h"

/* RFC 8017 §9.2 note 1: the DER of DigestInfo up to the hash value. */
static const struct {
	uint8_t len, hash_len;
	uint8_t der[19];
} DIGEST_INFO[] = {
	[SOTLS_RSA_SHA1] = {15, 20, {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02,
				     0x1a, 0x05, 0x00, 0x04, 0x14}},
	[SOTLS_RSA_SHA224] = {19, 28, {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
				       0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c}},
	[SOTLS_RSA_SHA256] = {19, 32, {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
				       0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}},
	[SOTLS_RSA_SHA384] = {19, 48, {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
				       0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30}},
	[SOTLS_RSA_SHA512] = {19, 64, {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
				       0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40}},
};

int sotls_rsa_pkcs1_sign(struct sotls_rsa_key *key, enum sotls_rsa_hash hash,
			 const uint8_t *digest, size_t digest_len, uint8_t *sig, size_t sig_len)
{
	if (key == NULL || digest == NULL || sig == NULL || (int)hash < 0 ||
	    (size_t)hash >= sizeof(DIGEST_INFO) / sizeof(DIGEST_INFO[0]) ||
	    digest_len != DIGEST_INFO[hash].hash_len || sig_len != sotls_rsa_key_bytes(key))
		return SOTLS_CRYPTO_BAD_ARG;
	const size_t t_len = DIGEST_INFO[hash].len + digest_len;
	/* RFC 8017 §9.2 step 3: "If emLen < tLen + 11, output 'intended
	 * encoded message length too short'" (no key sotls loads is that small). */
	if (sig_len < t_len + 11)
		return SOTLS_CRYPTO_BAD_ARG;

	/* EM = 0x00 || 0x01 || PS (0xff, at least 8) || 0x00 || T, built in sig. */
	const size_t ps_len = sig_len - t_len - 3;
	sig[0] = 0x00;
	sig[1] = 0x01;
	memset(sig + 2, 0xff, ps_len);
	sig[2 + ps_len] = 0x00;
	memcpy(sig + 3 + ps_len, DIGEST_INFO[hash].der, DIGEST_INFO[hash].len);
	memcpy(sig + 3 + ps_len + DIGEST_INFO[hash].len, digest, digest_len);
	return sotls_rsa_private(key, sig, sig_len, sig);
}

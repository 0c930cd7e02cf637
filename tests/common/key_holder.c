#include "key_holder.h"

#include <string.h>

#include "ephemeral_cert.h"

mbedtls_md_type_t key_holder_md(uint16_t sigalg)
{
	switch (sigalg >> 8) {
	case 4:
		return MBEDTLS_MD_SHA256;
	case 5:
		return MBEDTLS_MD_SHA384;
	case 6:
		return MBEDTLS_MD_SHA512;
	}
	return MBEDTLS_MD_NONE;
}

/* What an HSM does with the digest: PKCS#1 v1.5 with the DigestInfo of
 * the hash, or DER ECDSA (mbedtls_pk_sign does both). */
static int holder_sign(struct holder *h, uint8_t *out, size_t *out_len, size_t max_out)
{
	return mbedtls_pk_sign(&h->key, key_holder_md(h->sigalg), h->digest, h->digest_len, out, max_out,
			       out_len, ephemeral_cert_random, NULL) == 0
		       ? SOTLS_PRIVATE_KEY_SUCCESS
		       : SOTLS_PRIVATE_KEY_FAILURE;
}

static int m_sign(struct sotls_conn *c, void *arg, uint16_t sigalg, const uint8_t *digest,
		  size_t digest_len, uint8_t *out, size_t *out_len, size_t max_out)
{
	(void)c;
	struct holder *h = arg;
	h->sign_calls++;
	h->sigalg = sigalg;
	h->digest_len = digest_len;
	if (digest_len > sizeof(h->digest))
		return SOTLS_PRIVATE_KEY_FAILURE;
	memcpy(h->digest, digest, digest_len);
	switch (h->mode) {
	case SYNC:
		return holder_sign(h, out, out_len, max_out);
	case FAIL_SIGN:
		return SOTLS_PRIVATE_KEY_FAILURE;
	default:
		return SOTLS_PRIVATE_KEY_PENDING;
	}
}

static int m_complete(struct sotls_conn *c, void *arg, uint8_t *out, size_t *out_len,
		      size_t max_out)
{
	(void)c;
	struct holder *h = arg;
	h->complete_calls++;
	if (h->mode == FAIL_COMPLETE)
		return SOTLS_PRIVATE_KEY_FAILURE;
	if (h->rounds-- > 0)
		return SOTLS_PRIVATE_KEY_PENDING;
	return holder_sign(h, out, out_len, max_out);
}

static void m_cancel(struct sotls_conn *c, void *arg)
{
	(void)c;
	((struct holder *)arg)->cancel_calls++;
}

const struct sotls_private_key_method key_holder_method = {
	.sign = m_sign,
	.complete = m_complete,
	.cancel = m_cancel,
};

int key_holder_init(struct holder *h, const char *key_pem, enum mode mode, int rounds)
{
	memset(h, 0, sizeof(*h));
	mbedtls_pk_init(&h->key);
	h->mode = mode;
	h->rounds = rounds;
	return mbedtls_pk_parse_key(&h->key, (const unsigned char *)key_pem, strlen(key_pem) + 1,
				    NULL, 0, ephemeral_cert_random, NULL);
}

/*
 * The server's RSA key on sotls's own RSA code (lib/crypto/rsa.h), through
 * mbedTLS's documented external-RSA hook (MBEDTLS_PK_RSA_ALT_SUPPORT,
 * mbedtls_pk_setup_rsa_alt): the configuration's mbedtls_pk_context becomes
 * an "RSA alt" context whose sign callback is sotls_rsa_pkcs1_sign, so every
 * mbedTLS path that signs with the own key (the ServerKeyExchange) signs with
 * it, and nothing in mbedTLS is patched. The CRT parts are exported from
 * mbedTLS's parsed key once, copied, and that key freed (mbedTLS wipes it).
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include "handshake.h"
#include "rsa.h"
#include "util.h"

static size_t alt_key_len(void *ctx)
{
	return sotls_rsa_key_bytes(ctx);
}

/* TLS 1.2 signs with PKCS #1 v1.5 and the hash of the signature_algorithms
 * entry mbedTLS chose (RFC 5246 §7.4.1.4.1); only those mbedTLS has here. */
static int alt_sign(void *ctx, int (*f_rng)(void *, unsigned char *, size_t), void *p_rng,
		    mbedtls_md_type_t md_alg, unsigned int hashlen, const unsigned char *hash,
		    unsigned char *sig)
{
	(void)f_rng; /* blinding draws from getrandom itself */
	(void)p_rng;
	enum sotls_rsa_hash h;
	switch (md_alg) {
	case MBEDTLS_MD_SHA256:
		h = SOTLS_RSA_SHA256;
		break;
	case MBEDTLS_MD_SHA384:
		h = SOTLS_RSA_SHA384;
		break;
	case MBEDTLS_MD_SHA512:
		h = SOTLS_RSA_SHA512;
		break;
	default:
		return MBEDTLS_ERR_RSA_BAD_INPUT_DATA;
	}
	int rc = sotls_rsa_pkcs1_sign(ctx, h, hash, hashlen, sig, sotls_rsa_key_bytes(ctx));
	switch (rc) {
	case 0:
		return 0;
	case SOTLS_CRYPTO_FAULT:
		/* What mbedTLS's own RSA returns when its check with e fails. */
		return MBEDTLS_ERR_RSA_PRIVATE_FAILED;
	case SOTLS_CRYPTO_NO_RANDOM:
		return MBEDTLS_ERR_RSA_RNG_FAILED;
	default:
		return MBEDTLS_ERR_RSA_BAD_INPUT_DATA;
	}
}

/* No sotls suite uses RSA key transport (README: no RSA key exchange). */
static int alt_decrypt(void *ctx, size_t *olen, const unsigned char *input,
		       unsigned char *output, size_t output_max_len)
{
	(void)ctx;
	(void)olen;
	(void)input;
	(void)output;
	(void)output_max_len;
	return MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE;
}

/* The key's parts as big-endian bytes, in one buffer the caller wipes. */
static int export_parts(const mbedtls_rsa_context *rsa, struct sotls_rsa_params *pp,
			uint8_t **buf, size_t *buf_len)
{
	mbedtls_mpi m[7];
	struct sotls_rsa_be *be[7] = {&pp->n, &pp->e, &pp->p, &pp->q, &pp->dp, &pp->dq, &pp->qinv};
	int rc = SOTLS_CRYPTO_BAD_KEY; /* lib/crypto's terms, as sotls_rsa_key_new's */

	for (int i = 0; i < 7; i++)
		mbedtls_mpi_init(&m[i]);
	*buf = NULL;
	if (mbedtls_rsa_export(rsa, &m[0], &m[2], &m[3], NULL, &m[1]) != 0 ||
	    mbedtls_rsa_export_crt(rsa, &m[4], &m[5], &m[6]) != 0)
		goto out;
	size_t total = 0;
	for (int i = 0; i < 7; i++)
		total += mbedtls_mpi_size(&m[i]);
	*buf = malloc(total);
	*buf_len = total;
	if (*buf == NULL) {
		rc = SOTLS_CRYPTO_NO_MEMORY;
		goto out;
	}
	uint8_t *p = *buf;
	for (int i = 0; i < 7; i++) {
		const size_t len = mbedtls_mpi_size(&m[i]);
		if (mbedtls_mpi_write_binary(&m[i], p, len) != 0)
			goto out;
		*be[i] = (struct sotls_rsa_be){p, len};
		p += len;
	}
	rc = 0;
out:
	for (int i = 0; i < 7; i++)
		mbedtls_mpi_free(&m[i]);
	return rc;
}

int sotls_pk_own_rsa(mbedtls_pk_context *pk, struct sotls_rsa_key **own)
{
	*own = NULL;
	if (mbedtls_pk_get_type(pk) != MBEDTLS_PK_RSA)
		return 0;
	struct sotls_rsa_params pp;
	uint8_t *buf;
	size_t buf_len = 0;
	int rc = export_parts(mbedtls_pk_rsa(*pk), &pp, &buf, &buf_len);
	struct sotls_rsa_key *key = NULL;
	if (rc == 0)
		rc = sotls_rsa_key_new(&key, &pp, sotls_rsa_impl_best());
	if (buf != NULL) {
		sotls_wipe(buf, buf_len);
		free(buf);
	}
	if (rc == SOTLS_CRYPTO_UNSUPPORTED)
		return 0; /* a shape sotls's RSA leaves to mbedTLS's */
	if (rc == SOTLS_CRYPTO_NO_MEMORY)
		return SOTLS_ERR_OUT_OF_MEMORY;
	if (rc != 0)
		return SOTLS_ERR_KEY_LOAD;

	mbedtls_pk_context alt;
	mbedtls_pk_init(&alt);
	if (mbedtls_pk_setup_rsa_alt(&alt, key, alt_decrypt, alt_sign, alt_key_len) != 0) {
		sotls_rsa_key_free(key);
		return SOTLS_ERR_OUT_OF_MEMORY;
	}
	mbedtls_pk_free(pk);
	*pk = alt;
	*own = key;
	return 0;
}

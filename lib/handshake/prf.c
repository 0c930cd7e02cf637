/*
 * The TLS 1.2 PRF (RFC 5246 section 5) over mbedTLS's HMAC, and the AEAD key
 * block (section 6.3):
 *   P_hash(secret, seed) = HMAC(secret, A(1) + seed) + HMAC(secret, A(2) + seed) + ...
 *   A(0) = seed, A(i) = HMAC(secret, A(i-1)); PRF = P_hash(secret, label + seed).
 */
#include <string.h>

#include <mbedtls/md.h>

#include "hs_internal.h"
#include "util.h"

#define MAX_MD 64

int sotls_tls12_prf(enum sotls_prf_md md, const uint8_t *secret, size_t secret_len,
		    const char *label, const uint8_t *seed, size_t seed_len, uint8_t *out,
		    size_t out_len)
{
	const mbedtls_md_info_t *info =
		mbedtls_md_info_from_type(md == SOTLS_PRF_SHA384 ? MBEDTLS_MD_SHA384 : MBEDTLS_MD_SHA256);
	if (info == NULL || (md != SOTLS_PRF_SHA256 && md != SOTLS_PRF_SHA384))
		return SOTLS_ERR_INTERNAL;
	size_t hlen = mbedtls_md_get_size(info);
	size_t label_len = strlen(label);
	uint8_t a[MAX_MD], block[MAX_MD];
	mbedtls_md_context_t ctx;
	int rc = SOTLS_ERR_INTERNAL;

	mbedtls_md_init(&ctx);
	if (mbedtls_md_setup(&ctx, info, 1) != 0 ||
	    mbedtls_md_hmac_starts(&ctx, secret, secret_len) != 0)
		goto out;
	/* A(1) = HMAC(secret, label + seed) */
	if (mbedtls_md_hmac_update(&ctx, (const uint8_t *)label, label_len) != 0 ||
	    mbedtls_md_hmac_update(&ctx, seed, seed_len) != 0 ||
	    mbedtls_md_hmac_finish(&ctx, a) != 0)
		goto out;
	for (size_t done = 0; done < out_len;) {
		/* HMAC(secret, A(i) + label + seed) */
		if (mbedtls_md_hmac_reset(&ctx) != 0 || mbedtls_md_hmac_update(&ctx, a, hlen) != 0 ||
		    mbedtls_md_hmac_update(&ctx, (const uint8_t *)label, label_len) != 0 ||
		    mbedtls_md_hmac_update(&ctx, seed, seed_len) != 0 ||
		    mbedtls_md_hmac_finish(&ctx, block) != 0)
			goto out;
		size_t n = out_len - done < hlen ? out_len - done : hlen;
		memcpy(out + done, block, n);
		done += n;
		/* A(i+1) = HMAC(secret, A(i)) */
		if (mbedtls_md_hmac_reset(&ctx) != 0 || mbedtls_md_hmac_update(&ctx, a, hlen) != 0 ||
		    mbedtls_md_hmac_finish(&ctx, a) != 0)
			goto out;
	}
	rc = 0;
out:
	mbedtls_md_free(&ctx);
	sotls_wipe(a, sizeof(a));
	sotls_wipe(block, sizeof(block));
	if (rc != 0)
		sotls_wipe(out, out_len);
	return rc;
}

int sotls_derive_key_block(const struct sotls_suite *suite, const uint8_t master[48],
			   const uint8_t client_random[32], const uint8_t server_random[32],
			   struct sotls_key_block *kb)
{
	uint8_t seed[64];
	uint8_t block[2 * SOTLS_AEAD_MAX_KEY_LEN + 2 * SOTLS_REC_SALT];
	size_t klen = sotls_aead_key_len(suite->alg);

	if (klen == 0)
		return SOTLS_ERR_INTERNAL;
	memcpy(seed, server_random, 32);
	memcpy(seed + 32, client_random, 32);
	int rc = sotls_tls12_prf(suite->prf, master, 48, "key expansion", seed, sizeof(seed), block,
				 2 * klen + 2 * SOTLS_REC_SALT);
	if (rc == 0) {
		memset(kb, 0, sizeof(*kb));
		kb->key_len = klen;
		memcpy(kb->client_key, block, klen);
		memcpy(kb->server_key, block + klen, klen);
		memcpy(kb->client_salt, block + 2 * klen, SOTLS_REC_SALT);
		memcpy(kb->server_salt, block + 2 * klen + SOTLS_REC_SALT, SOTLS_REC_SALT);
	}
	sotls_wipe(block, sizeof(block));
	return rc;
}

int sotls_hs_key_block(struct sotls_hs *hs, const struct sotls_suite *suite)
{
	if (hs->have_kb)
		return 0;
	int rc = sotls_derive_key_block(suite, hs->master, hs->client_random, hs->server_random,
					&hs->kb);
	hs->have_kb = rc == 0;
	return rc;
}

/* See record_forge.h. RFC 5246 §6.2.3.3 and RFC 5288 §3: nonce = salt ||
 * explicit nonce (we send the sequence number there, as sotls does), AAD =
 * seq_num || type || version || plaintext length. */
#include "record_forge.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int forge_init(struct forge_keys *k, enum sotls_aead_alg alg, const uint8_t *key,
	       const uint8_t salt[4])
{
	memcpy(k->salt, salt, sizeof(k->salt));
	return sotls_aead_init(&k->aead, alg, key, sotls_aead_key_len(alg));
}

void forge_clear(struct forge_keys *k)
{
	sotls_aead_clear(&k->aead);
}

static void nonce_aad(const struct forge_keys *k, uint64_t seq, const uint8_t explicit_nonce[8],
		      uint8_t type, size_t len, uint8_t nonce[12], uint8_t aad[13])
{
	memcpy(nonce, k->salt, 4);
	memcpy(nonce + 4, explicit_nonce, 8);
	sotls_store_be64(aad, seq);
	aad[8] = type;
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(len >> 8);
	aad[12] = (uint8_t)len;
}

size_t forge_seal(const struct forge_keys *k, uint64_t seq, uint8_t type, const uint8_t *pt,
		  size_t len, uint8_t *out)
{
	if (len > FORGE_MAX_PLAINTEXT)
		abort();
	size_t frag = 8 + len + 16;
	out[0] = type;
	out[1] = 3;
	out[2] = 3;
	out[3] = (uint8_t)(frag >> 8);
	out[4] = (uint8_t)frag;
	sotls_store_be64(out + 5, seq);
	uint8_t nonce[12], aad[13];
	nonce_aad(k, seq, out + 5, type, len, nonce, aad);
	if (sotls_aead_seal(&k->aead, nonce, aad, sizeof(aad), pt, len, out + 13, out + 13 + len))
		abort();
	return FORGE_HEADER + frag;
}

ssize_t forge_open(const struct forge_keys *k, uint64_t seq, const uint8_t *rec, size_t n,
		   uint8_t *pt)
{
	if (n < FORGE_OVERHEAD || n != FORGE_HEADER + ((size_t)rec[3] << 8 | rec[4]))
		return -1;
	size_t len = n - FORGE_OVERHEAD;
	uint8_t nonce[12], aad[13];
	nonce_aad(k, seq, rec + 5, rec[0], len, nonce, aad);
	if (sotls_aead_open(&k->aead, nonce, aad, sizeof(aad), rec + 13, len, rec + 13 + len, pt))
		return -1;
	return (ssize_t)len;
}

/* ARIA key expansion (RFC 5794, section 2.2), encryption round keys only. */
#include <string.h>

#include "aria.h"
#include "aria_internal.h"
#include "crypto_err.h"
#include "util.h"

/* The first 384 bits of the fractional part of 1/pi, as C1, C2, C3. */
static const uint32_t ARIA_C[3][4] = {
	{ 0x517cc1b7, 0x27220a94, 0xfe13abe8, 0xfa9a6ee0 },
	{ 0x6db14acc, 0x9e21c820, 0xff28b1d5, 0xef5de2b0 },
	{ 0xdb92371d, 0x2126e970, 0x03249775, 0x04e8c90e },
};

/* Round key i is W[i % 4] ^ (W[(i + 1) % 4] >>> ROTR_BITS[i / 4]); the
 * left rotations of the RFC appear as right rotations by 128 - n. None is a
 * multiple of 32, which rotr128() relies on. */
static const unsigned ROTR_BITS[5] = { 19, 31, 128 - 61, 128 - 31, 128 - 19 };

static void rotr128(uint32_t out[4], const uint32_t in[4], unsigned n)
{
	unsigned q = n / 32, r = n % 32;

	for (unsigned i = 0; i < 4; i++)
		out[i] = (in[(i - q) % 4] >> r) | (in[(i - q + 3) % 4] << (32 - r));
}

static void xor128(uint32_t out[4], const uint32_t a[4], const uint32_t b[4])
{
	for (int i = 0; i < 4; i++)
		out[i] = a[i] ^ b[i];
}

/* W0..W3: the states of a 3-round Feistel encryption of KL || KR. */
static void compute_w(uint32_t w[4][4], const uint8_t *key, size_t key_len)
{
	uint8_t kr_bytes[16] = { 0 };
	uint32_t kr[4], t[4];
	/* The key length picks which constant starts the rotation C1, C2, C3. */
	unsigned c = (unsigned)(key_len - 16) / 8;

	memcpy(kr_bytes, key + 16, key_len - 16);
	for (int i = 0; i < 4; i++) {
		w[0][i] = sotls_load_be32(key + 4 * i);
		kr[i] = sotls_load_be32(kr_bytes + 4 * i);
	}

	memcpy(t, w[0], sizeof(t));
	sotls_aria_fo(t, ARIA_C[c]);
	xor128(w[1], t, kr);

	memcpy(t, w[1], sizeof(t));
	sotls_aria_fe(t, ARIA_C[(c + 1) % 3]);
	xor128(w[2], t, w[0]);

	memcpy(t, w[2], sizeof(t));
	sotls_aria_fo(t, ARIA_C[(c + 2) % 3]);
	xor128(w[3], t, w[1]);

	sotls_wipe(kr_bytes, sizeof(kr_bytes));
	sotls_wipe(kr, sizeof(kr));
	sotls_wipe(t, sizeof(t));
}

int sotls_aria_set_key(struct sotls_aria_key *k, const uint8_t *key, size_t key_len)
{
	uint32_t w[4][4], rot[4], ek[4];

	if (k == NULL || key == NULL || (key_len != 16 && key_len != 24 && key_len != 32))
		return SOTLS_CRYPTO_BAD_ARG;

	/* Unused slots are zeroed so no stale key material is left behind. */
	sotls_wipe(k, sizeof(*k));
	k->rounds = (unsigned)key_len / 4 + 8;
	compute_w(w, key, key_len);

	for (unsigned i = 0; i <= k->rounds; i++) {
		rotr128(rot, w[(i + 1) % 4], ROTR_BITS[i / 4]);
		xor128(ek, w[i % 4], rot);
		for (int j = 0; j < 4; j++)
			sotls_store_be32(k->rk[i] + 4 * j, ek[j]);
	}
	sotls_wipe(w, sizeof(w));
	sotls_wipe(rot, sizeof(rot));
	sotls_wipe(ek, sizeof(ek));
	return 0;
}

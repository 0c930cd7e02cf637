/*
 * AES key expansion (FIPS-197, section 5.2), encryption round keys only,
 * shared by every implementation. SubWord runs through the bitsliced S-box
 * circuit of aes_internal.h, so no key byte ever indexes a table.
 */
#include <string.h>

#include "aes.h"
#include "aes_internal.h"
#include "crypto_err.h"
#include "util.h"

/* S-box applied to each byte of a 32-bit word (constant time). */
static uint32_t sub_word(uint32_t w)
{
	uint64_t x[8];

	for (int b = 0; b < 8; b++) {
		x[b] = 0;
		for (int k = 0; k < 4; k++)
			x[b] |= (uint64_t)((w >> (8 * k + b)) & 1) << k;
	}
	aes_bs_sbox_no63(x);
	uint32_t r = 0;
	for (int b = 0; b < 8; b++)
		for (int k = 0; k < 4; k++)
			r |= (uint32_t)((x[b] >> k) & 1) << (8 * k + b);
	sotls_wipe(x, sizeof(x));
	return r ^ 0x63636363u;
}

int sotls_aes_set_key(struct sotls_aes_key *k, const uint8_t *key, size_t key_len)
{
	/* Words as big-endian integers: w[i] holds bytes 4i .. 4i+3. */
	uint32_t w[4 * (SOTLS_AES_MAX_ROUNDS + 1)];
	uint8_t four[64];

	if (k == NULL || key == NULL || (key_len != 16 && key_len != 24 && key_len != 32))
		return SOTLS_CRYPTO_BAD_ARG;

	sotls_wipe(k, sizeof(*k));
	const unsigned nk = (unsigned)key_len / 4;
	k->rounds = nk + 6;
	const unsigned total = 4 * (k->rounds + 1);
	for (unsigned i = 0; i < nk; i++)
		w[i] = sotls_load_be32(key + 4 * i);
	uint32_t rcon = 0x01;
	for (unsigned i = nk; i < total; i++) {
		uint32_t t = w[i - 1];

		if (i % nk == 0) {
			t = sub_word((t << 8) | (t >> 24)) ^ (rcon << 24);
			/* xtime: the next power of x in GF(2^8) (public data). */
			rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11b);
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		w[i] = w[i - nk] ^ t;
	}
	for (unsigned i = 0; i < total; i++)
		sotls_store_be32(k->rk[i / 4] + 4 * (i % 4), w[i]);

	/* The bitsliced copies: four times the same round key, and from round
	 * 1 on with 0x63 in every byte, the constant the circuit leaves out
	 * (it passes ShiftRows and MixColumns unchanged, as 2+3+1+1 = 1). */
	for (unsigned r = 0; r <= k->rounds; r++) {
		for (int j = 0; j < 4; j++)
			for (int i = 0; i < 16; i++)
				four[16 * j + i] = (uint8_t)(k->rk[r][i] ^ (r > 0 ? 0x63 : 0));
		aes_bs_load(k->bs[r], four);
	}
	sotls_wipe(w, sizeof(w));
	sotls_wipe(four, sizeof(four));
	return 0;
}

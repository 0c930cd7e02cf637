/*
 * Portable constant-time AES CTR: bitsliced, four blocks at a time in eight
 * 64-bit words (layout in aes_internal.h). No table lookups and no branches
 * on data: the S-box is a Boolean circuit, and the rest of the round is
 * shifts, rotations and XORs on whole words.
 */
#include <string.h>

#include "aes.h"
#include "aes_internal.h"
#include "util.h"

static inline uint64_t rotr64(uint64_t x, unsigned n)
{
	return (x >> n) | (x << (64 - n));
}

/* Row r (a 16-bit lane) rotates right by 4r bits: column c takes c + r. */
static inline uint64_t shift_rows_word(uint64_t x)
{
	return (x & 0x000000000000ffffull) |
	       ((x >> 4) & 0x000000000fff0000ull) | ((x << 12) & 0x00000000f0000000ull) |
	       ((x >> 8) & 0x000000ff00000000ull) | ((x << 8) & 0x0000ff0000000000ull) |
	       ((x >> 12) & 0x000f000000000000ull) | ((x << 4) & 0xfff0000000000000ull);
}

/*
 * b[r] = 2a[r] + 3a[r+1] + a[r+2] + a[r+3] = 2t + a[r+1] + t[r+2] with
 * t[r] = a[r] + a[r+1]; row r+j lands on row r by a rotation of 16j bits.
 */
static inline void mix_columns(uint64_t w[8])
{
	uint64_t a1[8], t[8];

	for (int i = 0; i < 8; i++) {
		a1[i] = rotr64(w[i], 16);
		t[i] = w[i] ^ a1[i];
	}
	/* 2t: a shift of the bit planes, with x^8 = x^4 + x^3 + x + 1. */
	w[0] = t[7] ^ a1[0] ^ rotr64(t[0], 32);
	w[1] = t[0] ^ t[7] ^ a1[1] ^ rotr64(t[1], 32);
	w[2] = t[1] ^ a1[2] ^ rotr64(t[2], 32);
	w[3] = t[2] ^ t[7] ^ a1[3] ^ rotr64(t[3], 32);
	w[4] = t[3] ^ t[7] ^ a1[4] ^ rotr64(t[4], 32);
	w[5] = t[4] ^ a1[5] ^ rotr64(t[5], 32);
	w[6] = t[5] ^ a1[6] ^ rotr64(t[6], 32);
	w[7] = t[6] ^ a1[7] ^ rotr64(t[7], 32);
}

static inline void add_round_key(uint64_t w[8], const uint64_t rk[8])
{
	for (int i = 0; i < 8; i++)
		w[i] ^= rk[i];
}

static void encrypt4(const struct sotls_aes_key *k, uint64_t w[8])
{
	add_round_key(w, k->bs[0]);
	for (unsigned r = 1; r < k->rounds; r++) {
		aes_bs_sbox_no63(w);
		for (int i = 0; i < 8; i++)
			w[i] = shift_rows_word(w[i]);
		mix_columns(w);
		add_round_key(w, k->bs[r]);
	}
	aes_bs_sbox_no63(w);
	for (int i = 0; i < 8; i++)
		w[i] = shift_rows_word(w[i]);
	add_round_key(w, k->bs[k->rounds]);
}

void sotls_aes_ctr32_ct64(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks)
{
	uint8_t buf[64];
	uint64_t w[8];
	uint32_t c;

	if (nblocks == 0)
		return;
	c = sotls_load_be32(ctr + 12);
	for (int j = 0; j < 4; j++)
		memcpy(buf + 16 * j, ctr, 12);
	while (nblocks > 0) {
		const size_t n = nblocks < 4 ? nblocks : 4;

		for (uint32_t j = 0; j < 4; j++)
			sotls_store_be32(buf + 16 * j + 12, c + j);
		aes_bs_load(w, buf);
		encrypt4(k, w);
		aes_bs_store(buf, w);
		for (size_t i = 0; i < 16 * n; i++)
			out[i] = in[i] ^ buf[i];
		for (int j = 0; j < 4; j++)
			memcpy(buf + 16 * j, ctr, 12);
		c += (uint32_t)n;
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(buf, sizeof(buf));
	sotls_wipe(w, sizeof(w));
}

/*
 * Pieces shared by the AES key schedule and the portable bitsliced cipher
 * (internal to lib/crypto): the S-box as a Boolean circuit, and the bitsliced
 * layout of four blocks in eight 64-bit words.
 *
 * Layout. Word x[b] holds bit b of 64 bytes: those of the state bytes
 * (row r, column c) of blocks k = 0..3, at bit 16r + 4c + k. A row is then a
 * 16-bit lane of each word, which makes ShiftRows a rotation inside lanes and
 * the row rotations of MixColumns rotations of whole words (aes_ct64.c).
 */
#ifndef SOTLS_CRYPTO_AES_INTERNAL_H
#define SOTLS_CRYPTO_AES_INTERNAL_H

#include <stdint.h>

/*
 * The S-box without its constant: returns S(v) XOR 0x63 for each of the 64
 * bytes held bit by bit in x[0..7] (bit 0 the least significant). There are
 * no table lookups and no branches: the time is independent of the data.
 *
 * Inversion in GF(2^8) goes through the tower field GF(16)[Y]/(Y^2 + Y + 8)
 * over GF(16) = GF(2)[z]/(z^4 + z^3 + 1) (elements as ah*Y + al). There
 *   (ah*Y + al)^-1 = (ah*Y + ah + al) * N^-1,  N = 8*ah^2 + ah*al + al^2,
 * which costs three GF(16) products and one GF(16) inversion. The three
 * linear maps were chosen by an exhaustive search (over both the GF(16)
 * modulus and the constant of Y, and the eight isomorphisms from the AES
 * field, which send x to a root of x^8 + x^4 + x^3 + x + 1 in the tower;
 * this one sends x to 0xc3) for the fewest XORs:
 *  - in: the AES-field bits to the tower bits (al = t0..t3, ah = t4..t7);
 *  - the linear part of N, 8*ah^2 + al^2, which squaring makes linear;
 *  - out: the tower bits of the inverse to the AES field, composed with the
 *    affine map's linear part.
 * The GF(16) inverse is its algebraic normal form (10 ANDs). The test checks
 * the whole circuit against the S-box's definition on all 256 inputs.
 */
static inline void gf16_mul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4])
{
	const uint64_t c0 = a[0] & b[0];
	const uint64_t c1 = (a[0] & b[1]) ^ (a[1] & b[0]);
	const uint64_t c2 = (a[0] & b[2]) ^ (a[1] & b[1]) ^ (a[2] & b[0]);
	const uint64_t c3 = (a[0] & b[3]) ^ (a[1] & b[2]) ^ (a[2] & b[1]) ^ (a[3] & b[0]);
	const uint64_t c4 = (a[1] & b[3]) ^ (a[2] & b[2]) ^ (a[3] & b[1]);
	const uint64_t c5 = (a[2] & b[3]) ^ (a[3] & b[2]);
	const uint64_t c6 = a[3] & b[3];
	/* z^4 = z^3 + 1, z^5 = z^3 + z + 1, z^6 = z^3 + z^2 + z + 1. */
	const uint64_t u = c5 ^ c6, v = c4 ^ u;

	r[0] = c0 ^ v;
	r[1] = c1 ^ u;
	r[2] = c2 ^ c6;
	r[3] = c3 ^ v;
}

static inline void aes_bs_sbox_no63(uint64_t x[8])
{
	uint64_t al[4], ah[4], s[4], n[4], ni[4], oh[4], ol[4];

	/* Into the tower field. */
	const uint64_t x67 = x[6] ^ x[7], x25 = x[2] ^ x[5], x23 = x[2] ^ x[3];
	al[0] = x[0] ^ x[1] ^ x[2] ^ x67;
	al[1] = x[1] ^ x25 ^ x67;
	al[2] = x25;
	al[3] = x[3];
	ah[0] = x[4] ^ x67;
	ah[1] = x23;
	ah[2] = x[1] ^ x23 ^ x[4] ^ x[5] ^ x[6];
	ah[3] = ah[0] ^ x[1];

	/* N = ah*al + (8*ah^2 + al^2), the latter over t0..t7 = al, ah. */
	gf16_mul(n, ah, al);
	const uint64_t t35 = al[3] ^ ah[1];
	n[0] ^= al[0] ^ al[2] ^ t35 ^ ah[2] ^ ah[3];
	n[1] ^= t35 ^ ah[2];
	n[2] ^= al[1] ^ al[3] ^ ah[2] ^ ah[3];
	n[3] ^= al[2] ^ al[3] ^ ah[0] ^ ah[1];

	/* N^-1 in GF(16), as its algebraic normal form. */
	const uint64_t a01 = n[0] & n[1], a02 = n[0] & n[2], a03 = n[0] & n[3];
	const uint64_t a12 = n[1] & n[2], a13 = n[1] & n[3], a23 = n[2] & n[3];
	const uint64_t a012 = a01 & n[2], a013 = a01 & n[3], a023 = a02 & n[3];
	const uint64_t a123 = a12 & n[3];
	ni[0] = n[0] ^ a01 ^ n[3] ^ a03 ^ a23 ^ a023 ^ a123;
	ni[1] = n[2] ^ a12 ^ a012 ^ n[3] ^ a03 ^ a013 ^ a23 ^ a123;
	ni[2] = n[1] ^ a01 ^ n[2] ^ a12 ^ a012 ^ a03 ^ a13 ^ a23 ^ a023;
	ni[3] = n[1] ^ a02 ^ a12 ^ a03 ^ a013 ^ a023;

	for (int i = 0; i < 4; i++)
		s[i] = ah[i] ^ al[i];
	gf16_mul(oh, ah, ni);
	gf16_mul(ol, s, ni);

	/* Back to the AES field, through the affine map's linear part. */
	const uint64_t o014 = ol[0] ^ ol[1] ^ oh[0];
	x[0] = o014;
	x[1] = ol[0] ^ ol[2];
	x[2] = ol[0];
	x[3] = o014 ^ oh[2];
	x[4] = ol[0] ^ ol[3] ^ oh[0];
	x[5] = ol[1] ^ ol[3] ^ oh[0];
	x[6] = oh[0] ^ oh[2] ^ oh[3];
	x[7] = ol[2] ^ oh[0] ^ oh[1];
}

/* Exchanges the bits of a at positions p + n with those of b at p, p in mask. */
static inline void aes_swapmove(uint64_t *a, uint64_t *b, uint64_t mask, unsigned n)
{
	const uint64_t t = ((*a >> n) ^ *b) & mask;

	*b ^= t;
	*a ^= t << n;
}

/* In every byte position m: bit j of byte m of w[i] <-> bit i of byte m of w[j]. */
static inline void aes_transpose8(uint64_t w[8])
{
	static const uint64_t MASK[3] = {0x5555555555555555ull, 0x3333333333333333ull,
					 0x0f0f0f0f0f0f0f0full};

	for (unsigned s = 0; s < 3; s++) {
		const unsigned d = 1u << s;

		for (unsigned j = 0; j < 8; j++)
			if ((j & d) == 0)
				aes_swapmove(&w[j], &w[j + d], MASK[s], d);
	}
}

static inline uint64_t aes_load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline void aes_store_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The four bytes of v at the even byte positions of the result. */
static inline uint64_t aes_spread32(uint64_t v)
{
	v &= 0xffffffffull;
	v = (v | (v << 16)) & 0x0000ffff0000ffffull;
	return (v | (v << 8)) & 0x00ff00ff00ff00ffull;
}

/* The inverse: the even bytes of v, packed into 32 bits. */
static inline uint64_t aes_gather32(uint64_t v)
{
	v &= 0x00ff00ff00ff00ffull;
	v = (v | (v >> 8)) & 0x0000ffff0000ffffull;
	return (v | (v >> 16)) & 0xffffffffull;
}

/*
 * Four 16-byte blocks (byte i of a block is row i % 4, column i / 4) into
 * the layout above. Bit 16r + 4c + k = 8m + j puts the byte in byte m of
 * word j before an 8x8 transpose: word k gathers columns 0 and 2 of block k
 * (bytes 0..3 and 8..11, interleaved), word 4 + k columns 1 and 3.
 */
static inline void aes_bs_load(uint64_t w[8], const uint8_t blocks[64])
{
	for (int k = 0; k < 4; k++) {
		const uint64_t lo = aes_load_le64(blocks + 16 * k);
		const uint64_t hi = aes_load_le64(blocks + 16 * k + 8);

		w[k] = aes_spread32(lo) | aes_spread32(hi) << 8;
		w[4 + k] = aes_spread32(lo >> 32) | aes_spread32(hi >> 32) << 8;
	}
	aes_transpose8(w);
}

/* The inverse of aes_bs_load (w is clobbered). */
static inline void aes_bs_store(uint8_t blocks[64], uint64_t w[8])
{
	aes_transpose8(w);
	for (int k = 0; k < 4; k++) {
		const uint64_t lo = aes_gather32(w[k]) | aes_gather32(w[4 + k]) << 32;
		const uint64_t hi = aes_gather32(w[k] >> 8) | aes_gather32(w[4 + k] >> 8) << 32;

		aes_store_le64(blocks + 16 * k, lo);
		aes_store_le64(blocks + 16 * k + 8, hi);
	}
}

#endif

/*
 * Portable ARIA, bitsliced and constant time: no table lookups and no
 * branches on data, for the CTR of CPUs without AES instructions and for the
 * key schedule on every CPU.
 *
 * Layout: four blocks in eight 64-bit planes, as AES's bitsliced code keeps
 * them (aes_internal.h, aes_bs_load): bit b of byte 4w + i of block k (word
 * w, byte i of the word) is bit 16i + 4w + k of plane b. A 16-bit lane of a
 * plane is then one byte position of every word, and a nibble of a lane one
 * word of the four blocks.
 *
 * S-boxes: affine maps around AES's inversion circuit (aria_internal.h):
 * the S^-1 lanes are mapped first, every byte goes through the circuit (it
 * gives L * x^-1, L AES's linear part), then S1 adds AES's constant, S2 maps
 * by (BF) * L^-1 and adds its own, and the S^-1 lanes undo L. The lanes that
 * take which S-box are fixed masks.
 *
 * Diffusion: A = M o W o P o W (aria_sliced.h), and here
 *   W (word w becomes the XOR of three words) is nibble arithmetic inside each
 *     lane: the XOR of all four nibbles, plus nibble 3 - w for w = 0, 3 and
 *     nibble w for w = 1, 2;
 *   P (bytes of word w permuted by index ^ w) exchanges nibble w between
 *     lanes;
 *   M (each byte becomes the XOR of the other three of its word) adds the
 *     XOR of the four lanes to each.
 */
#include <string.h>

#include "aes_internal.h"
#include "aria.h"
#include "aria_internal.h"
#include "util.h"

#define INLINE inline __attribute__((always_inline))

/* Byte i of every word, of every block. */
#define LANE(i) ((uint64_t)0xffff << (16 * (i)))

/* ARIA_GF_S2 * ARIA_GF_S1INV: S2's output map after the circuit's L. */
#define S2_AFTER_L 0x8312f396321aa0e7ull

/* All ones if bit j of row i of M (aria_internal.h's layout) is set. */
#define MBIT(m, i, j) (0 - (((m) >> (8 * (7 - (i)) + (j))) & 1))

/* An affine map of bytes, M * x ^ c. */
struct affine {
	uint64_t m;
	uint8_t c;
};

/*
 * Byte i of every word through its own affine map a[i]. The maps are
 * constants at every call, so once inlined and unrolled this is a fixed
 * network of ANDs and XORs over the planes, without a branch: output bit r
 * is the XOR of input bits s, each masked to the lanes whose map has (r, s).
 */
static INLINE void lanes_affine(uint64_t p[8], const struct affine a[4])
{
	uint64_t o[8];

	_Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)
	{
		o[r] = 0;
		_Pragma("GCC unroll 4") for (int l = 0; l < 4; l++) o[r] |=
			LANE(l) & (0 - (uint64_t)((a[l].c >> r) & 1));
		_Pragma("GCC unroll 8") for (int s = 0; s < 8; s++)
		{
			uint64_t mask = 0;

			_Pragma("GCC unroll 4") for (int l = 0; l < 4; l++) mask |=
				LANE(l) & MBIT(a[l].m, r, s);
			o[r] ^= p[s] & mask;
		}
	}
	_Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) p[r] = o[r];
}

/* Substitution layer type 1 (odd: S1, S2, S1^-1, S2^-1 on bytes 0..3 of
 * each word) or 2 (S1^-1, S2^-1, S1, S2). */
static INLINE void subst(uint64_t p[8], int odd)
{
	static const struct affine ID = {ARIA_GF_ID, 0};
	static const struct affine PRE_S1INV = {ARIA_GF_S1INV, ARIA_GF_S1INV_C};
	static const struct affine PRE_S2INV = {ARIA_GF_S2INV, ARIA_GF_S2INV_C};
	static const struct affine POST_S1 = {ARIA_GF_ID, ARIA_GF_S1_C};
	static const struct affine POST_S2 = {S2_AFTER_L, ARIA_GF_S2_C};
	static const struct affine POST_INV = {ARIA_GF_S1INV, 0};
	const struct affine pre_odd[4] = {ID, ID, PRE_S1INV, PRE_S2INV};
	const struct affine pre_even[4] = {PRE_S1INV, PRE_S2INV, ID, ID};
	const struct affine post_odd[4] = {POST_S1, POST_S2, POST_INV, POST_INV};
	const struct affine post_even[4] = {POST_INV, POST_INV, POST_S1, POST_S2};

	lanes_affine(p, odd ? pre_odd : pre_even);
	aes_bs_sbox_no63(p);
	lanes_affine(p, odd ? post_odd : post_even);
}

/* Each 16-bit lane rotated left by n bits (nibble w to w + n / 4). */
static INLINE uint64_t rot_lanes(uint64_t x, unsigned n)
{
	const uint64_t keep = 0x0001000100010001ull * ((0xffffu << n) & 0xffffu);

	return ((x << n) & keep) | ((x >> (16 - n)) & ~keep);
}

static INLINE uint64_t words_w(uint64_t x)
{
	const uint64_t mid = 0x0ff00ff00ff00ff0ull, n0 = 0x000f000f000f000full;
	uint64_t s = x ^ rot_lanes(x, 8);

	s ^= rot_lanes(s, 4);
	return s ^ (x & mid) ^ ((x >> 12) & n0) ^ ((x << 12) & (n0 << 12));
}

static INLINE uint64_t bytes_p(uint64_t x)
{
	uint64_t t;

	/* word 1: lanes 0 <-> 1, 2 <-> 3 */
	t = ((x >> 16) ^ x) & 0x000000f0000000f0ull;
	x ^= t | (t << 16);
	/* word 2: lanes 0 <-> 2, 1 <-> 3 */
	t = ((x >> 32) ^ x) & 0x000000000f000f00ull;
	x ^= t | (t << 32);
	/* word 3: lanes 0 <-> 3, 1 <-> 2 */
	t = ((x >> 48) ^ x) & 0x000000000000f000ull;
	x ^= t | (t << 48);
	t = ((x >> 16) ^ x) & 0x00000000f0000000ull;
	x ^= t | (t << 16);
	return x;
}

static INLINE uint64_t bytes_m(uint64_t x)
{
	uint64_t q = x ^ (x >> 32);

	q ^= q >> 16;
	return x ^ ((q & 0xffff) * 0x0001000100010001ull);
}

static INLINE void diffuse(uint64_t p[8])
{
	for (int b = 0; b < 8; b++)
		p[b] = bytes_m(words_w(bytes_p(words_w(p[b]))));
}

static INLINE void add_key(uint64_t p[8], const uint64_t k[8])
{
	for (int b = 0; b < 8; b++)
		p[b] ^= k[b];
}

/* One round key in every block. */
static void key_planes(uint64_t kp[8], const uint8_t key[16])
{
	uint8_t four[64];

	for (int k = 0; k < 4; k++)
		memcpy(four + 16 * k, key, 16);
	aes_bs_load(kp, four);
	sotls_wipe(four, sizeof(four));
}

static INLINE void round_ct(uint64_t p[8], const uint64_t rk[8], int odd)
{
	add_key(p, rk);
	subst(p, odd);
	diffuse(p);
}

/* Rounds 1 .. n of ARIA on four blocks, with the round keys as planes:
 * odd and even rounds in pairs, so that each has its masks as constants. */
static void encrypt4(uint64_t p[8], const uint64_t rk[][8], unsigned rounds)
{
	unsigned r = 0;

	for (; r + 2 < rounds; r += 2) {
		round_ct(p, rk[r], 1);
		round_ct(p, rk[r + 1], 0);
	}
	round_ct(p, rk[r], 1);
	add_key(p, rk[r + 1]);
	subst(p, 0);
	add_key(p, rk[r + 2]);
}

/* The key's round keys as planes; returns how many rk holds. */
static unsigned round_key_planes(uint64_t rk[][8], const struct sotls_aria_key *k)
{
	for (unsigned r = 0; r <= k->rounds; r++)
		key_planes(rk[r], k->rk[r]);
	return k->rounds + 1;
}

void sotls_aria_encrypt_block(const struct sotls_aria_key *k, const uint8_t in[16], uint8_t out[16])
{
	uint64_t rk[SOTLS_ARIA_MAX_ROUNDS + 1][8], p[8];
	uint8_t four[64] = {0};
	const unsigned n = round_key_planes(rk, k);

	memcpy(four, in, 16);
	aes_bs_load(p, four);
	encrypt4(p, (const uint64_t(*)[8])rk, k->rounds);
	aes_bs_store(four, p);
	memcpy(out, four, 16);
	sotls_wipe(four, sizeof(four));
	sotls_wipe(rk, n * sizeof(rk[0]));
}

void sotls_aria_ctr32_generic(const struct sotls_aria_key *k, uint8_t ctr[16],
			      const uint8_t *in, uint8_t *out, size_t nblocks)
{
	uint64_t rk[SOTLS_ARIA_MAX_ROUNDS + 1][8], p[8];
	uint8_t ks[64];
	uint32_t c = sotls_load_be32(ctr + 12);
	const unsigned n = round_key_planes(rk, k);

	while (nblocks > 0) {
		const size_t nb = nblocks < 4 ? nblocks : 4;

		for (int j = 0; j < 4; j++) {
			memcpy(ks + 16 * j, ctr, 12);
			sotls_store_be32(ks + 16 * j + 12, c + (uint32_t)j);
		}
		aes_bs_load(p, ks);
		encrypt4(p, (const uint64_t(*)[8])rk, k->rounds);
		aes_bs_store(ks, p);
		for (size_t i = 0; i < 16 * nb; i++)
			out[i] = in[i] ^ ks[i];
		c += (uint32_t)nb;
		in += 16 * nb;
		out += 16 * nb;
		nblocks -= nb;
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(ks, sizeof(ks));
	sotls_wipe(p, sizeof(p));
	sotls_wipe(rk, n * sizeof(rk[0]));
}

/* FO and FE, one state as big-endian words, in block 0 of the planes. */
static void round_words(uint32_t x[4], const uint32_t rk[4], int odd)
{
	uint8_t four[64] = {0}, key[16];
	uint64_t p[8], kp[8];

	for (int w = 0; w < 4; w++) {
		sotls_store_be32(four + 4 * w, x[w]);
		sotls_store_be32(key + 4 * w, rk[w]);
	}
	aes_bs_load(p, four);
	key_planes(kp, key);
	add_key(p, kp);
	subst(p, odd);
	diffuse(p);
	aes_bs_store(four, p);
	for (int w = 0; w < 4; w++)
		x[w] = sotls_load_be32(four + 4 * w);
	sotls_wipe(four, sizeof(four));
	sotls_wipe(key, sizeof(key));
	sotls_wipe(p, sizeof(p));
	sotls_wipe(kp, sizeof(kp));
}

void sotls_aria_fo(uint32_t x[4], const uint32_t rk[4])
{
	round_words(x, rk, 1);
}

void sotls_aria_fe(uint32_t x[4], const uint32_t rk[4])
{
	round_words(x, rk, 0);
}

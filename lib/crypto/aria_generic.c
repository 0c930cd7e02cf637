/*
 * Portable table-driven ARIA.
 *
 * With the state as four big-endian words and lane 0 the most significant
 * byte, the diffusion layer A factors as MIX o PERM o MIX o SPREAD:
 * SPREAD sends each byte to the three other lanes of its own word, which the
 * round tables fold into the S-box lookups; MIX is six word XORs; PERM
 * reorders the bytes inside words 1, 2 and 3. A round then costs 16 table
 * loads and about 50 ALU operations, and CTR runs two blocks at a time so
 * that one block's loads overlap the other's arithmetic; a lone block waits
 * on load latency instead.
 */
#include <string.h>

#include "aes_internal.h"
#include "aria.h"
#include "aria_internal.h"
#include "util.h"

#define FO_TAB (sotls_aria_round_tab[0])
#define FE_TAB (sotls_aria_round_tab[1])

/*
 * The speed depends on every state word living in a register, which needs
 * the round helpers inlined; at -O2 gcc declines for the larger ones.
 */
#if defined(__GNUC__)
#define ARIA_INLINE inline __attribute__((always_inline))
#else
#define ARIA_INLINE inline
#endif

typedef const uint32_t round_tab[4][256];

static ARIA_INLINE uint32_t lane(uint32_t x, unsigned j)
{
	return (x >> (24 - 8 * j)) & 0xff;
}

static ARIA_INLINE uint32_t lookup(round_tab t, uint32_t x)
{
	return t[0][x >> 24] ^ t[1][lane(x, 1)] ^ t[2][lane(x, 2)] ^ t[3][x & 0xff];
}

static ARIA_INLINE uint32_t rotl32(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static ARIA_INLINE uint32_t bswap32(uint32_t x)
{
	return (x >> 24) | ((x >> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24);
}

static ARIA_INLINE uint32_t load_native(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static ARIA_INLINE void mix(uint32_t s[4])
{
	s[1] ^= s[2];
	s[2] ^= s[3];
	s[0] ^= s[1];
	s[3] ^= s[1];
	s[2] ^= s[0];
	s[1] ^= s[2];
}

/* Lanes abcd of word 1 become badc, of word 2 cdab, of word 3 dcba. */
static ARIA_INLINE void permute(uint32_t s[4])
{
	s[1] = rotl32(bswap32(s[1]), 16);
	s[2] = rotl32(s[2], 16);
	s[3] = bswap32(s[3]);
}

static ARIA_INLINE void diffuse(uint32_t s[4])
{
	mix(s);
	permute(s);
	mix(s);
}

static ARIA_INLINE void round_fn(uint32_t s[4], const uint32_t rk[4], round_tab t)
{
	s[0] = lookup(t, s[0] ^ rk[0]);
	s[1] = lookup(t, s[1] ^ rk[1]);
	s[2] = lookup(t, s[2] ^ rk[2]);
	s[3] = lookup(t, s[3] ^ rk[3]);
	diffuse(s);
}

/*
 * FO and FE for the key schedule, where the input is the key itself: the
 * S-boxes through AES's bitsliced circuit (aes_internal.h), so that no key
 * byte indexes a table, as in AES's key expansion. The 16 state bytes are
 * bits 0..15 of eight bit planes, byte k = 4 * word + lane at bit k, and
 * the four S-boxes are affine maps around the one inversion
 * (aria_internal.h): S^-1 boxes map their input first, then every byte is
 * inverted (the circuit gives L * x^-1, L AES's linear part), then S1 adds
 * AES's constant, S2 maps by (BF) * L^-1 and adds its own, and the S^-1
 * boxes undo L. Masks and matrices are constants: nothing branches on data.
 */

/* The bytes of lane l of every word, as bits of a plane. */
#define LANE_MASK(l) ((uint64_t)0x1111 << (l))

/* y = M * x for the bytes selected by mask, M in aria_internal.h's layout. */
static void planes_affine(uint64_t p[8], uint64_t m, uint8_t c, uint64_t mask)
{
	uint64_t o[8];

	for (int i = 0; i < 8; i++) {
		const unsigned row = (unsigned)(m >> (8 * (7 - i))) & 0xff;

		o[i] = 0;
		for (int j = 0; j < 8; j++)
			o[i] ^= p[j] & (0 - (uint64_t)((row >> j) & 1));
		o[i] ^= mask & (0 - (uint64_t)((c >> i) & 1));
	}
	for (int i = 0; i < 8; i++)
		p[i] = (p[i] & ~mask) | (o[i] & mask);
}

/* The matrix of x -> a * (b * x). */
static uint64_t matrix_product(uint64_t a, uint64_t b)
{
	uint64_t r = 0;

	for (int i = 0; i < 8; i++) {
		const unsigned arow = (unsigned)(a >> (8 * (7 - i))) & 0xff;
		unsigned row = 0;

		for (int j = 0; j < 8; j++)
			if ((arow >> j) & 1)
				row ^= (unsigned)(b >> (8 * (7 - j))) & 0xff;
		r |= (uint64_t)row << (8 * (7 - i));
	}
	return r;
}

/* Substitution layer type 1 (odd = 1: S1, S2, S1^-1, S2^-1 on lanes 0..3)
 * or 2 (odd = 0: S1^-1, S2^-1, S1, S2), in place on the state words. */
static void subst_ct(uint32_t x[4], int odd)
{
	const uint64_t s1 = LANE_MASK(odd ? 0 : 2), s2 = LANE_MASK(odd ? 1 : 3);
	const uint64_t s1inv = LANE_MASK(odd ? 2 : 0), s2inv = LANE_MASK(odd ? 3 : 1);
	uint64_t p[8] = {0};

	for (int k = 0; k < 16; k++) {
		const uint32_t byte = (x[k / 4] >> (24 - 8 * (k % 4))) & 0xff;

		for (int b = 0; b < 8; b++)
			p[b] |= (uint64_t)((byte >> b) & 1) << k;
	}
	planes_affine(p, ARIA_GF_S1INV, ARIA_GF_S1INV_C, s1inv);
	planes_affine(p, ARIA_GF_S2INV, ARIA_GF_S2INV_C, s2inv);
	aes_bs_sbox_no63(p);
	planes_affine(p, ARIA_GF_ID, ARIA_GF_S1_C, s1);
	planes_affine(p, matrix_product(ARIA_GF_S2, ARIA_GF_S1INV), ARIA_GF_S2_C, s2);
	planes_affine(p, ARIA_GF_S1INV, 0, s1inv | s2inv);
	for (int w = 0; w < 4; w++) {
		uint32_t v = 0;

		for (int l = 0; l < 4; l++)
			for (int b = 0; b < 8; b++)
				v |= (uint32_t)((p[b] >> (4 * w + l)) & 1) << (24 - 8 * l + b);
		x[w] = v;
	}
	sotls_wipe(p, sizeof(p));
}

/* A after the substitution: SPREAD (each byte into the other three lanes of
 * its word, which the round tables fold in) then the rest of diffuse(). */
static void round_ct(uint32_t x[4], const uint32_t rk[4], int odd)
{
	for (int w = 0; w < 4; w++)
		x[w] ^= rk[w];
	subst_ct(x, odd);
	for (int w = 0; w < 4; w++) {
		uint32_t t = x[w] ^ (x[w] >> 16);

		t ^= t >> 8;
		x[w] ^= (t & 0xff) * 0x01010101u;
	}
	diffuse(x);
}

void sotls_aria_fo(uint32_t x[4], const uint32_t rk[4])
{
	round_ct(x, rk, 1);
}

void sotls_aria_fe(uint32_t x[4], const uint32_t rk[4])
{
	round_ct(x, rk, 0);
}

/*
 * The last round, substitution layer type 2 and the final key, produced in
 * memory byte order so that callers XOR and store it without byte swaps.
 */
static ARIA_INLINE uint32_t last_word(uint32_t x, const uint8_t rk[4])
{
	return load_native(sotls_aria_last_tab[0][x >> 24]) ^
	       load_native(sotls_aria_last_tab[1][lane(x, 1)]) ^
	       load_native(sotls_aria_last_tab[2][lane(x, 2)]) ^
	       load_native(sotls_aria_last_tab[3][x & 0xff]) ^ load_native(rk);
}

static ARIA_INLINE void last_round(uint32_t s[4], const uint32_t rk[4],
				   const uint8_t final_rk[16])
{
	s[0] = last_word(s[0] ^ rk[0], final_rk);
	s[1] = last_word(s[1] ^ rk[1], final_rk + 4);
	s[2] = last_word(s[2] ^ rk[2], final_rk + 8);
	s[3] = last_word(s[3] ^ rk[3], final_rk + 12);
}

/*
 * Runs n (1 or 2) states from 0-based round `first` to the end, the two
 * interleaved. On return the words hold the cipher output in memory byte
 * order, not as big-endian values.
 */
static ARIA_INLINE void rounds_from(const struct sotls_aria_key *k, uint32_t s[][4], int n,
				    unsigned first)
{
	unsigned last = k->rounds - 1;
	unsigned r = first;

	if (r % 2 == 1) {
		round_fn(s[0], k->rk32[r], FE_TAB);
		if (n == 2)
			round_fn(s[1], k->rk32[r], FE_TAB);
		r++;
	}
	for (; r + 1 < last; r += 2) {
		round_fn(s[0], k->rk32[r], FO_TAB);
		if (n == 2)
			round_fn(s[1], k->rk32[r], FO_TAB);
		round_fn(s[0], k->rk32[r + 1], FE_TAB);
		if (n == 2)
			round_fn(s[1], k->rk32[r + 1], FE_TAB);
	}
	round_fn(s[0], k->rk32[last - 1], FO_TAB);
	if (n == 2)
		round_fn(s[1], k->rk32[last - 1], FO_TAB);
	last_round(s[0], k->rk32[last], k->rk[last + 1]);
	if (n == 2)
		last_round(s[1], k->rk32[last], k->rk[last + 1]);
}

void sotls_aria_encrypt_block(const struct sotls_aria_key *k, const uint8_t in[16], uint8_t out[16])
{
	uint32_t s[1][4];

	for (int i = 0; i < 4; i++)
		s[0][i] = sotls_load_be32(in + 4 * i);
	rounds_from(k, s, 1, 0);
	memcpy(out, s[0], 16);
}

/*
 * While only the last counter byte changes, so does only the last byte of
 * the state entering round 1. Column 15 of A carries its S-box output v to
 * lanes 1, 2 of word 0, lanes 0, 1 of word 1, lanes 0, 2 of word 2 and lane
 * 3 of word 3; everything else in the first two rounds is worked out once
 * per run of up to 256 blocks, leaving seven lookups per block instead of 32.
 */
struct ctr_run {
	uint32_t fixed[4];   /* round-2 lookups of the nine unchanging bytes */
	uint32_t partial[7]; /* the seven changing bytes, before the XOR with v */
	uint32_t key_byte;   /* ek1's last byte, which meets the counter's */
};

/* head: round-1 lookups of the three counter words that never change. */
static void start_run(const struct sotls_aria_key *k, const uint32_t head[3], uint32_t c3,
		      struct ctr_run *run)
{
	uint32_t x3 = c3 ^ k->rk32[0][3];
	uint32_t y[4] = { head[0], head[1], head[2], lookup(FO_TAB, x3) ^ FO_TAB[3][x3 & 0xff] };

	diffuse(y);
	for (int i = 0; i < 4; i++)
		y[i] ^= k->rk32[1][i];

	run->fixed[0] = FE_TAB[0][lane(y[0], 0)] ^ FE_TAB[3][lane(y[0], 3)];
	run->fixed[1] = FE_TAB[2][lane(y[1], 2)] ^ FE_TAB[3][lane(y[1], 3)];
	run->fixed[2] = FE_TAB[1][lane(y[2], 1)] ^ FE_TAB[3][lane(y[2], 3)];
	run->fixed[3] = FE_TAB[0][lane(y[3], 0)] ^ FE_TAB[1][lane(y[3], 1)] ^ FE_TAB[2][lane(y[3], 2)];
	run->partial[0] = lane(y[0], 1);
	run->partial[1] = lane(y[0], 2);
	run->partial[2] = lane(y[1], 0);
	run->partial[3] = lane(y[1], 1);
	run->partial[4] = lane(y[2], 0);
	run->partial[5] = lane(y[2], 2);
	run->partial[6] = lane(y[3], 3);
	run->key_byte = k->rk32[0][3] & 0xff;
	sotls_wipe(y, sizeof(y));
}

/* Rounds 1 and 2 of the block whose counter ends in c3. */
static ARIA_INLINE void first_rounds(const struct ctr_run *run, uint32_t c3, uint32_t s[4])
{
	/* Lane 0 of an entry of this table is S2^-1 of the index. */
	uint32_t v = FO_TAB[3][(c3 & 0xff) ^ run->key_byte] >> 24;

	s[0] = run->fixed[0] ^ FE_TAB[1][run->partial[0] ^ v] ^ FE_TAB[2][run->partial[1] ^ v];
	s[1] = run->fixed[1] ^ FE_TAB[0][run->partial[2] ^ v] ^ FE_TAB[1][run->partial[3] ^ v];
	s[2] = run->fixed[2] ^ FE_TAB[0][run->partial[4] ^ v] ^ FE_TAB[2][run->partial[5] ^ v];
	s[3] = run->fixed[3] ^ FE_TAB[3][run->partial[6] ^ v];
	diffuse(s);
}

/* s is keystream in memory byte order. */
static ARIA_INLINE void xor_block(uint8_t *out, const uint8_t *in, const uint32_t s[4])
{
	uint32_t w[4] = {
		load_native(in) ^ s[0],
		load_native(in + 4) ^ s[1],
		load_native(in + 8) ^ s[2],
		load_native(in + 12) ^ s[3],
	};

	memcpy(out, w, 16);
}

/*
 * n (1 or 2) blocks with counters ending c3, c3 + 1, all inside the run.
 * Three blocks at a time would spill registers and run no faster.
 */
static ARIA_INLINE void ctr_blocks(const struct sotls_aria_key *k, const struct ctr_run *run,
				   uint32_t c3, const uint8_t *in, uint8_t *out, int n)
{
	uint32_t s[2][4];

	first_rounds(run, c3, s[0]);
	if (n == 2)
		first_rounds(run, c3 + 1, s[1]);
	rounds_from(k, s, n, 2);
	xor_block(out, in, s[0]);
	if (n == 2)
		xor_block(out + 16, in + 16, s[1]);
}

void sotls_aria_ctr32_generic(const struct sotls_aria_key *k, uint8_t ctr[16],
			      const uint8_t *in, uint8_t *out, size_t nblocks)
{
	uint32_t head[3];
	uint32_t c3 = sotls_load_be32(ctr + 12);
	struct ctr_run run;

	for (int i = 0; i < 3; i++)
		head[i] = lookup(FO_TAB, sotls_load_be32(ctr + 4 * i) ^ k->rk32[0][i]);

	while (nblocks > 0) {
		size_t left_in_run = 256 - (c3 & 0xff);
		size_t n = nblocks < left_in_run ? nblocks : left_in_run;

		start_run(k, head, c3, &run);
		nblocks -= n;
		for (; n >= 2; n -= 2) {
			ctr_blocks(k, &run, c3, in, out, 2);
			c3 += 2;
			in += 32;
			out += 32;
		}
		if (n > 0) {
			ctr_blocks(k, &run, c3, in, out, 1);
			c3++;
			in += 16;
			out += 16;
		}
	}
	sotls_store_be32(ctr + 12, c3);
	sotls_wipe(head, sizeof(head));
	sotls_wipe(&run, sizeof(run));
}

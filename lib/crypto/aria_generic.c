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

void sotls_aria_fo(uint32_t x[4], const uint32_t rk[4])
{
	round_fn(x, rk, FO_TAB);
}

void sotls_aria_fe(uint32_t x[4], const uint32_t rk[4])
{
	round_fn(x, rk, FE_TAB);
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

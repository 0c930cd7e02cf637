/*
 * ARIA-CTR for x86-64 with AES-NI and AVX but without GFNI.
 *
 * Sixteen blocks go through the cipher together, byte-sliced: register j holds
 * byte j of all sixteen blocks, lane l belonging to block l. The diffusion
 * layer is then plain register XORs, and each substitution is one 16-lane
 * operation on one register.
 *
 * S-boxes: AESENCLAST and AESDECLAST give S1 and S1^-1, S2 and S2^-1 add
 * an affine map of bytes (aria_aesni_sbox.h).
 *
 * Round keys: AESENCLAST / AESDECLAST add them for nothing, as the keys of
 * the next round pushed back through A (aria_aesni_sbox.h). Only ek1 is
 * added the ordinary way, to the counter.
 *
 * Lanes: the AES instructions permute the 16 lanes, which a shuffle of half
 * the registers after each substitution layer puts right again
 * (aria_aesni_sbox.h).
 *
 * Counters. Within a call only the last four counter bytes change, so bytes
 * 0..11 of ctr ^ ek1 are the same in all lanes and their round-1 S-box outputs
 * and share of the round-1 diffusion are computed once per call; each batch
 * runs round 1 on four registers only.
 *
 * That per-call set-up (and wiping it) costs about half a batch, so calls of
 * a few blocks take an unsliced path instead (aria_aesni_sbox.h).
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "aria.h"
#include "aria_aesni_sbox.h"
#include "util.h"

/* Per-call state: round keys broadcast to all lanes, ready for the S-box
 * instructions, and the constant part of round 1. */
struct aria_batch_keys {
	/* Round 1 output from bytes 0..11 of ctr ^ ek1 alone. */
	__m128i r1[16];
	/* Keys of round 1 for bytes 12..15, the only ones it substitutes. */
	__m128i r1_key[4];
	/* ek1 bytes 12..15 as a big-endian number, XORed into the counters. */
	uint32_t ek1_low;
	/* key[r - 2][j]: byte j of aria_aes_sbox_key() for round r = 2 .. rounds.
	 * Last, so that wiping can stop after the rounds in use. */
	__m128i key[SOTLS_ARIA_MAX_ROUNDS - 1][16];
};


#define X(a, b) _mm_xor_si128((a), (b))

/* The four S-boxes with a round key k added to the output; lanes permuted
 * by sigma (S1, S2) or sigma^-1 (S1^-1, S2^-1). For S2, k is pre-mapped. */
static inline __m128i sb1(__m128i x, __m128i k)
{
	return _mm_aesenclast_si128(x, k);
}

static inline __m128i sb2(__m128i x, __m128i k)
{
	return aria_aes_map_f(_mm_aesenclast_si128(x, k));
}

static inline __m128i sb3(__m128i x, __m128i k)
{
	return _mm_aesdeclast_si128(x, k);
}

static inline __m128i sb4(__m128i x, __m128i k)
{
	return _mm_aesdeclast_si128(aria_aes_map_g(x), k);
}

/* sigma^2 (aria_aesni_sbox.h). */
static inline __m128i lane_fix(__m128i x)
{
	return _mm_shuffle_epi8(x, ARIA_AES_VEC(ARIA_AES_LANE_FIX));
}

/* Substitution layers with the round key, leaving all lanes in one order. */
static inline void subst_odd(__m128i x[16], const __m128i k[16])
{
	for (int w = 0; w < 16; w += 4) {
		x[w] = sb1(x[w], k[w]);
		x[w + 1] = sb2(x[w + 1], k[w + 1]);
		x[w + 2] = lane_fix(sb3(x[w + 2], k[w + 2]));
		x[w + 3] = lane_fix(sb4(x[w + 3], k[w + 3]));
	}
}

static inline void subst_even(__m128i x[16], const __m128i k[16])
{
	for (int w = 0; w < 16; w += 4) {
		x[w] = sb3(x[w], k[w]);
		x[w + 1] = sb4(x[w + 1], k[w + 1]);
		x[w + 2] = lane_fix(sb1(x[w + 2], k[w + 2]));
		x[w + 3] = lane_fix(sb2(x[w + 3], k[w + 3]));
	}
}

/*
 * The diffusion layer A on byte-sliced registers. Each output is the XOR of
 * seven inputs (96 XORs as written in RFC 5794, 72 through ARIA's word-level
 * factorisation). This 48-XOR program was found by repeatedly naming the pair
 * of inputs shared by the most rows (Paar's greedy heuristic) and was checked
 * against A symbolically.
 */
static inline void diffuse(const __m128i x[16], __m128i y[16])
{
	__m128i t0 = X(x[1], x[10]);
	__m128i t1 = X(x[11], x[12]);
	__m128i t2 = X(x[8], x[13]);
	__m128i t3 = X(x[0], x[14]);
	__m128i t4 = X(x[4], x[9]);
	__m128i t5 = X(x[2], x[7]);
	__m128i t6 = X(x[15], t0);
	__m128i t7 = X(x[5], t3);
	__m128i t8 = X(x[6], t1);
	__m128i t9 = X(x[3], t4);
	__m128i t10 = X(x[6], t2);
	__m128i t11 = X(x[1], t8);
	__m128i t12 = X(x[12], t5);
	__m128i t13 = X(x[4], t6);
	__m128i t14 = X(x[14], t9);
	__m128i t15 = X(x[11], t7);
	__m128i t16 = X(x[7], x[10]);
	__m128i t17 = X(x[0], x[13]);
	__m128i t18 = X(x[9], t12);
	__m128i t19 = X(x[2], x[15]);
	__m128i t20 = X(x[3], t10);
	__m128i t21 = X(x[5], x[8]);

	y[0] = X(t10, t14);
	y[1] = X(X(x[15], t18), t21);
	y[2] = X(t8, t13);
	y[3] = X(X(x[13], t15), t16);
	y[4] = X(X(x[8], t15), t19);
	y[5] = X(t6, t14);
	y[6] = X(X(x[10], t17), t18);
	y[7] = X(X(x[3], t2), t11);
	y[8] = X(X(x[7], t13), t17);
	y[9] = X(t7, t11);
	y[10] = X(X(x[5], t19), t20);
	y[11] = X(t12, t14);
	y[12] = X(X(x[9], t5), t11);
	y[13] = X(X(x[0], t16), t20);
	y[14] = X(t9, t15);
	y[15] = X(X(x[2], t13), t21);
}

/* out[i] = byte first + i of v in all lanes. */
static inline void broadcast_bytes(__m128i v, __m128i *out, int first, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = _mm_shuffle_epi8(v, _mm_set1_epi8((char)(first + i)));
}

static void prepare(struct aria_batch_keys *bk, const struct sotls_aria_key *k, const uint8_t ctr[16])
{
	const unsigned n = k->rounds;
	__m128i a_ek2 = aria_aes_diffuse_block(_mm_loadu_si128((const __m128i *)k->rk[1]));

	broadcast_bytes(aria_aes_sbox_key(a_ek2, 1), bk->r1_key, 12, 4);
	for (unsigned r = 2; r <= n; r++) {
		__m128i ek = _mm_loadu_si128((const __m128i *)k->rk[r]);

		broadcast_bytes(aria_aes_sbox_key(r < n ? aria_aes_diffuse_block(ek) : ek, r), bk->key[r - 2], 0, 16);
	}

	/* Round 1 from bytes 0..11 only: bytes 12..15 are added per batch. */
	__m128i u = X(_mm_loadu_si128((const __m128i *)ctr), _mm_loadu_si128((const __m128i *)k->rk[0]));
	__m128i s = X(aria_aes_subst_block(u, 1), a_ek2);

	s = _mm_and_si128(s, _mm_setr_epi32(-1, -1, -1, 0));
	broadcast_bytes(aria_aes_diffuse_block(s), bk->r1, 0, 16);
	bk->ek1_low = sotls_load_be32(k->rk[0] + 12);
}

/*
 * Bytes 12..15 of the blocks (c + l) ^ ek1, l = 0..15, as four byte planes:
 * p[0] holds byte 12 of each block, p[3] byte 15.
 */
static inline void counter_planes(uint32_t c, uint32_t ek1_low, __m128i p[4])
{
	/* Gathers byte b (little-endian) of each of four words into word b. */
	const __m128i gather = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	const __m128i key = _mm_set1_epi32((int)ek1_low);
	__m128i ctr = _mm_add_epi32(_mm_set1_epi32((int)c), _mm_setr_epi32(0, 1, 2, 3));
	__m128i v[4];

	for (int i = 0; i < 4; i++) {
		v[i] = _mm_shuffle_epi8(X(ctr, key), gather);
		ctr = _mm_add_epi32(ctr, _mm_set1_epi32(4));
	}
	__m128i lo01 = _mm_unpacklo_epi32(v[0], v[1]);
	__m128i lo23 = _mm_unpacklo_epi32(v[2], v[3]);
	__m128i hi01 = _mm_unpackhi_epi32(v[0], v[1]);
	__m128i hi23 = _mm_unpackhi_epi32(v[2], v[3]);

	p[3] = _mm_unpacklo_epi64(lo01, lo23);
	p[2] = _mm_unpackhi_epi64(lo01, lo23);
	p[1] = _mm_unpacklo_epi64(hi01, hi23);
	p[0] = _mm_unpackhi_epi64(hi01, hi23);
}

/* Register j, lane l -> block l, byte j: four rounds of interleaving, each
 * doubling the size of the pieces that are already in place. */
static inline void transpose(const __m128i x[16], __m128i out[16])
{
	__m128i a[16], b[16], c[16];

	/* a[8h + j]: blocks 8h..8h+7, bytes 2j, 2j + 1. */
	for (int j = 0; j < 8; j++) {
		a[j] = _mm_unpacklo_epi8(x[2 * j], x[2 * j + 1]);
		a[8 + j] = _mm_unpackhi_epi8(x[2 * j], x[2 * j + 1]);
	}
	/* b[4q + m]: blocks 4q..4q+3, bytes 4m..4m+3. */
	for (int h = 0; h < 2; h++) {
		for (int m = 0; m < 4; m++) {
			b[8 * h + m] = _mm_unpacklo_epi16(a[8 * h + 2 * m], a[8 * h + 2 * m + 1]);
			b[8 * h + 4 + m] = _mm_unpackhi_epi16(a[8 * h + 2 * m], a[8 * h + 2 * m + 1]);
		}
	}
	/* c[4q + 2p + e]: blocks 4q+2p, 4q+2p+1, bytes 8e..8e+7. */
	for (int q = 0; q < 4; q++) {
		for (int e = 0; e < 2; e++) {
			c[4 * q + e] = _mm_unpacklo_epi32(b[4 * q + 2 * e], b[4 * q + 2 * e + 1]);
			c[4 * q + 2 + e] = _mm_unpackhi_epi32(b[4 * q + 2 * e], b[4 * q + 2 * e + 1]);
		}
	}
	for (int i = 0; i < 16; i += 2) {
		out[i] = _mm_unpacklo_epi64(c[i], c[i + 1]);
		out[i + 1] = _mm_unpackhi_epi64(c[i], c[i + 1]);
	}
}

/* Keystream for counters c .. c + 15, in block order. */
static inline void keystream16(const struct aria_batch_keys *bk, unsigned rounds, uint32_t c, __m128i ks[16])
{
	__m128i x[16], y[16], p[4];

	/* Round 1: S-boxes on the four varying bytes, then their share of A
	 * on top of the per-call constant. */
	counter_planes(c, bk->ek1_low, p);
	const __m128i *k1 = bk->r1_key;
	__m128i v12 = sb1(p[0], k1[0]);
	__m128i v13 = sb2(p[1], k1[1]);
	__m128i v14 = lane_fix(sb3(p[2], k1[2]));
	__m128i v15 = lane_fix(sb4(p[3], k1[3]));
	__m128i v12_13 = X(v12, v13), v12_14 = X(v12, v14), v12_15 = X(v12, v15);
	__m128i v13_14 = X(v13, v14), v13_15 = X(v13, v15), v14_15 = X(v14, v15);
	const __m128i *r1 = bk->r1;

	x[0] = X(r1[0], v13_14);
	x[1] = X(r1[1], v12_15);
	x[2] = X(r1[2], v12_15);
	x[3] = X(r1[3], v13_14);
	x[4] = X(r1[4], v14_15);
	x[5] = X(r1[5], v14_15);
	x[6] = X(r1[6], v12_13);
	x[7] = X(r1[7], v12_13);
	x[8] = X(r1[8], v13_15);
	x[9] = X(r1[9], v12_14);
	x[10] = X(r1[10], v13_15);
	x[11] = X(r1[11], v12_14);
	x[12] = X(r1[12], v12);
	x[13] = X(r1[13], v13);
	x[14] = X(r1[14], v14);
	x[15] = X(r1[15], v15);

	for (unsigned r = 2; r < rounds; r += 2) {
		subst_even(x, bk->key[r - 2]);
		diffuse(x, y);
		subst_odd(y, bk->key[r - 1]);
		diffuse(y, x);
	}
	subst_even(x, bk->key[rounds - 2]);
	transpose(x, ks);
}

void sotls_aria_ctr32_aesni_avx(const struct sotls_aria_key *k, uint8_t ctr[16],
				const uint8_t *in, uint8_t *out, size_t nblocks)
{
	struct aria_batch_keys bk;
	__m128i ks[16];
	uint32_t c = sotls_load_be32(ctr + 12);

	if (nblocks <= ARIA_AES_UNSLICED_MAX) {
		aria_aes_ctr_unsliced(k, ctr, in, out, nblocks);
		return;
	}
	prepare(&bk, k, ctr);

	while (nblocks > 0) {
		const size_t n = nblocks < 16 ? nblocks : 16;

		keystream16(&bk, k->rounds, c, ks);
		for (size_t i = 0; i < n; i++) {
			__m128i d = _mm_loadu_si128((const __m128i *)(in + 16 * i));
			_mm_storeu_si128((__m128i *)(out + 16 * i), X(d, ks[i]));
		}
		c += (uint32_t)n;
		in += 16 * n;
		out += 16 * n;
		nblocks -= n;
	}
	sotls_store_be32(ctr + 12, c);
	sotls_wipe(&bk, offsetof(struct aria_batch_keys, key) + (k->rounds - 1) * sizeof(bk.key[0]));
	sotls_wipe(ks, sizeof(ks));
}

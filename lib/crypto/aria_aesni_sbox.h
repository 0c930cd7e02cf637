/*
 * ARIA's S-boxes through the AES instructions: the constants shared by the
 * AES-NI implementations (aria_aesni_avx.c, and aria_sliced.h's AES-NI
 * S-boxes), whatever their vector width.
 *
 * S1 is the AES S-box. AESENCLAST(x, k) = ShiftRows(SubBytes(x)) ^ k and
 * AESDECLAST(x, k) = InvShiftRows(InvSubBytes(x)) ^ k, so they give S1 and
 * S1^-1 with the bytes of each 128-bit lane permuted. S2(x) = B.x^247 ^ 0xe2
 * and x^247 = (x^-1)^8; squaring is linear over GF(2), so S2(x) = M.x^-1 ^ 0xe2
 * for a bit matrix M. With x^-1 = A_aes^-1.(S1(x) ^ 0x63), F = S2 o S1^-1 is
 * an affine map of bytes and S2 = F o S1; likewise S2^-1 = S1^-1 o G with
 * G = F^-1. An affine byte map is the XOR of its values on the two nibbles
 * (the constant folded into the low one): two 16-entry PSHUFB lookups. The
 * tables were computed offline from the RFC 5794 definitions and checked on
 * all 256 inputs.
 *
 * Lanes. AESENCLAST moves byte sigma(l) to byte l (sigma = ShiftRows), and
 * AESDECLAST sigma^-1(l) to l. Byte-sliced code, where byte l of a lane is
 * one block, needs all its registers in one order before the diffusion XORs:
 * after each substitution layer the registers at byte positions 2 and 3 of
 * each word are shuffled by sigma^2 (= sigma^-2, ARIA_AES_LANE_FIX). In odd
 * rounds those hold S1^-1, S2^-1 and everything ends up permuted by sigma;
 * in even rounds they hold S1, S2 and everything returns to the identity.
 * ARIA has an even number of rounds, so the output is in block order.
 *
 * Round keys. A is linear and an involution, so A(s) ^ ek = A(s ^ A(ek)):
 * ek(r + 1), due at the start of round r + 1, can instead be added as
 * A(ek(r + 1)) to the S-box outputs of round r, where AESENCLAST / AESDECLAST
 * add it for nothing. Where F follows AESENCLAST (S2), the key k must enter
 * before F as L^-1(k), L being F's linear part: L^-1(k) = G(k) ^ G(0).
 *
 * Includers are compiled with AES-NI, SSSE3 and SSE4.1 at least.
 */
#ifndef SOTLS_CRYPTO_ARIA_AESNI_SBOX_H
#define SOTLS_CRYPTO_ARIA_AESNI_SBOX_H

#include <immintrin.h>
#include <stdint.h>

#include "aria.h"
#include "aria_aes_affine.h"
#include "util.h"

#define ARIA_AES_VEC(t) _mm_load_si128((const __m128i *)(t))

/* An affine map of bytes is the XOR of its values on the two nibbles (the
 * constant folded into lo): two 16-entry lookups, in every lane. */
static inline __m128i aria_aes_affine(__m128i x, __m128i lo, __m128i hi)
{
	const __m128i m = _mm_set1_epi8(0x0f);

	return _mm_xor_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, m)),
			     _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), m)));
}

/* F = S2 o S1^-1. */
static inline __m128i aria_aes_map_f(__m128i x)
{
	return aria_aes_affine(x, ARIA_AES_VEC(ARIA_AES_F_LO), ARIA_AES_VEC(ARIA_AES_F_HI));
}

/* G = F^-1 = S1 o S2^-1. */
static inline __m128i aria_aes_map_g(__m128i x)
{
	return aria_aes_affine(x, ARIA_AES_VEC(ARIA_AES_G_LO), ARIA_AES_VEC(ARIA_AES_G_HI));
}

/* A on one unsliced block: A is the sum of these seven byte permutations. */
static inline __m128i aria_aes_diffuse_block(__m128i v)
{
	__m128i p0 = _mm_shuffle_epi8(v, _mm_setr_epi8(8, 7, 4, 11, 14, 10, 9, 13, 15, 6, 3, 2, 12, 0, 5, 1));
	__m128i p1 = _mm_shuffle_epi8(v, _mm_setr_epi8(14, 12, 10, 7, 15, 1, 0, 11, 4, 5, 13, 9, 6, 8, 3, 2));
	__m128i p2 = _mm_shuffle_epi8(v, _mm_setr_epi8(3, 5, 11, 10, 0, 15, 7, 1, 13, 14, 8, 12, 2, 6, 9, 4));
	__m128i p3 = _mm_shuffle_epi8(v, _mm_setr_epi8(13, 9, 1, 0, 8, 14, 2, 6, 7, 12, 15, 3, 11, 10, 4, 5));
	__m128i p4 = _mm_shuffle_epi8(v, _mm_setr_epi8(6, 2, 15, 13, 11, 9, 10, 12, 1, 0, 5, 4, 7, 3, 14, 8));
	__m128i p5 = _mm_shuffle_epi8(v, _mm_setr_epi8(4, 15, 12, 5, 2, 3, 13, 8, 0, 1, 6, 14, 9, 7, 11, 10));
	__m128i p6 = _mm_shuffle_epi8(v, _mm_setr_epi8(9, 8, 6, 14, 5, 4, 12, 3, 10, 11, 2, 7, 1, 13, 0, 15));

	/* As a tree, for the latency of the unsliced path. */
	return _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(p0, p1), _mm_xor_si128(p2, p3)),
			     _mm_xor_si128(_mm_xor_si128(p4, p5), p6));
}

/*
 * A substitution layer on one unsliced block, each byte in place: the
 * pre-shuffles cancel the (Inv)ShiftRows of the AES instructions. S2 = F o S1
 * takes F after AESENCLAST, S2^-1 = S1^-1 o G takes G before AESDECLAST; the
 * two paths are independent, which keeps the latency of a round short.
 */
static inline __m128i aria_aes_subst_block(__m128i v, int odd)
{
	const __m128i zero = _mm_setzero_si128();
	const __m128i inv_sr = _mm_setr_epi8(0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3);
	const __m128i sr = _mm_setr_epi8(0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11);
	/* Masks of byte 1, byte 3 and bytes 0-1 or 2-3 of each word. */
	const __m128i b1 = _mm_set1_epi32(0x8000), b3 = _mm_set1_epi32((int)0x80000000);
	const __m128i inverse = odd ? _mm_set1_epi32((int)0x80800000) : _mm_set1_epi32(0x8080);
	__m128i e = _mm_aesenclast_si128(_mm_shuffle_epi8(v, inv_sr), zero);
	__m128i d = _mm_blendv_epi8(v, aria_aes_map_g(v), odd ? b3 : b1);

	d = _mm_aesdeclast_si128(_mm_shuffle_epi8(d, sr), zero);
	e = _mm_blendv_epi8(e, aria_aes_map_f(e), odd ? b1 : b3);
	return _mm_blendv_epi8(e, d, inverse);
}

/* Encrypts w blocks unsliced, interleaved, with the round keys as they are. */
static inline void aria_aes_encrypt_unsliced(const struct sotls_aria_key *k, __m128i *x, int w)
{
	const __m128i *rk = (const __m128i *)k->rk;
	unsigned r = 0;

	for (; r + 2 < k->rounds; r += 2) {
		for (int j = 0; j < w; j++)
			x[j] = aria_aes_diffuse_block(
				aria_aes_subst_block(_mm_xor_si128(x[j], rk[r]), 1));
		for (int j = 0; j < w; j++)
			x[j] = aria_aes_diffuse_block(
				aria_aes_subst_block(_mm_xor_si128(x[j], rk[r + 1]), 0));
	}
	for (int j = 0; j < w; j++) {
		x[j] = aria_aes_diffuse_block(aria_aes_subst_block(_mm_xor_si128(x[j], rk[r]), 1));
		x[j] = _mm_xor_si128(aria_aes_subst_block(_mm_xor_si128(x[j], rk[r + 1]), 0),
				     rk[r + 2]);
	}
}

/* Up to this many blocks, aria_aes_ctr_unsliced beats the set-up of a
 * byte-sliced call plus one batch. */
#define ARIA_AES_UNSLICED_MAX 4

/*
 * Few blocks: the per-call set-up of the sliced path would cost more than
 * the blocks themselves. Two blocks at a time hide most of the latency of
 * the AES instructions; a lone block goes alone so as not to pay for two.
 */
static inline void aria_aes_ctr_unsliced(const struct sotls_aria_key *k, uint8_t ctr[16],
					 const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const __m128i base = _mm_loadu_si128((const __m128i *)ctr);
	uint32_t c = sotls_load_be32(ctr + 12);

	for (size_t i = 0; i < nblocks; i += 2) {
		const int w = nblocks - i >= 2 ? 2 : 1;
		__m128i x[2];

		for (int j = 0; j < w; j++)
			x[j] = _mm_insert_epi32(base, (int)__builtin_bswap32(c++), 3);
		if (w == 2)
			aria_aes_encrypt_unsliced(k, x, 2);
		else
			aria_aes_encrypt_unsliced(k, x, 1);
		for (int j = 0; j < w; j++) {
			const uint8_t *src = in + 16 * (i + (size_t)j);

			_mm_storeu_si128((__m128i *)(out + 16 * (i + (size_t)j)),
					 _mm_xor_si128(_mm_loadu_si128((const __m128i *)src), x[j]));
		}
	}
	sotls_store_be32(ctr + 12, c);
}

/*
 * kv is the key round r's S-box instructions add: A(ek(r + 1)), or ek(n + 1)
 * in the last round. Its S2 bytes (1 of each word in odd rounds, 3 in even
 * ones) go in before F, as L^-1(k) = G(k) ^ G(0).
 */
static inline __m128i aria_aes_sbox_key(__m128i kv, unsigned r)
{
	const __m128i s2 = (r & 1) ? _mm_set1_epi32(0x8000) : _mm_set1_epi32((int)0x80000000);

	return _mm_blendv_epi8(kv, _mm_xor_si128(aria_aes_map_g(kv), _mm_set1_epi8(0x04)), s2);
}

/* The keys of rounds 2 .. n's S-box instructions, sk[r - 2] for round r:
 * aria_aes_sbox_key of A(ek(r + 1)), or of ek(n + 1) for the last round. */
static inline void aria_aes_sbox_keys(uint8_t sk[][16], const struct sotls_aria_key *k)
{
	for (unsigned r = 2; r <= k->rounds; r++) {
		const __m128i ek = _mm_loadu_si128((const __m128i *)k->rk[r]);

		_mm_storeu_si128((__m128i *)sk[r - 2],
				 aria_aes_sbox_key(r < k->rounds ? aria_aes_diffuse_block(ek) : ek, r));
	}
}

#endif

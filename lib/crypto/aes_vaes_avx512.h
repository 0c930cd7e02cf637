/*
 * VAES on 512-bit registers (internal to lib/crypto): four AES blocks a zmm
 * register, shared by the CTR routine (aes_vaes_avx512.c) and the stitched
 * AES-GCM loop (gcm_aes_vaes_avx512.c). The including file is compiled with
 * VAES and AVX-512 F/BW/VL.
 *
 * Counters are kept "swapped": bytes 12..15 of each block reversed, so the
 * 32-bit counter is a little-endian dword in lane 3, where VPADDD wraps it
 * mod 2^32 without touching the 12 fixed bytes; the same shuffle turns a
 * swapped block back into a counter block.
 */
#ifndef SOTLS_CRYPTO_AES_VAES_AVX512_H
#define SOTLS_CRYPTO_AES_VAES_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "aes.h"

#define VAES_INLINE inline __attribute__((always_inline))

/* Round keys broadcast to all four lanes; rk[0 .. rounds]. */
struct vaes_keys {
	__m512i rk[SOTLS_AES_MAX_ROUNDS + 1];
};

static VAES_INLINE __m512i vaes_swap_ctr(__m512i x)
{
	const __m512i m = _mm512_broadcast_i32x4(
		_mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

	return _mm512_shuffle_epi8(x, m);
}

static VAES_INLINE void vaes_load_keys(struct vaes_keys *v, const struct sotls_aes_key *k,
				       unsigned rounds)
{
	for (unsigned r = 0; r <= rounds; r++)
		v->rk[r] = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k->rk[r]));
}

/* The swapped counters of blocks 0..3 from a counter block. */
static VAES_INLINE __m512i vaes_ctr_base(const uint8_t ctr[16])
{
	const __m512i c = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ctr));

	return _mm512_add_epi32(vaes_swap_ctr(c), _mm512_set_epi32(3, 0, 0, 0, 2, 0, 0, 0, 1, 0,
								   0, 0, 0, 0, 0, 0));
}

/* Adds n to every lane's counter (swapped form). */
static VAES_INLINE __m512i vaes_ctr_add(__m512i c, int n)
{
	return _mm512_add_epi32(c, _mm512_set4_epi32(n, 0, 0, 0));
}

/* Writes the counter block of lane 0 of the swapped counters c. */
static VAES_INLINE void vaes_ctr_store(uint8_t ctr[16], __m512i c)
{
	_mm_storeu_si128((__m128i *)ctr, _mm512_castsi512_si128(vaes_swap_ctr(c)));
}

/* Qword mask of the first n (0..4, clamped) blocks of a register. */
static VAES_INLINE __mmask8 vaes_mask(ptrdiff_t n)
{
	return n >= 4 ? (__mmask8)0xff : n <= 0 ? (__mmask8)0 : (__mmask8)((1u << (2 * n)) - 1);
}

/*
 * nz registers of keystream XOR input, the counters of register j being
 * c + 4j, all rounds. in/out hold nblk blocks (nblk <= 4 * nz); lanes past
 * them are neither read nor written. nz is a constant at every call site.
 */
static VAES_INLINE void vaes_ctr_blocks(const struct vaes_keys *v, unsigned rounds, __m512i c,
					const uint8_t *in, uint8_t *out, unsigned nz, size_t nblk)
{
	__m512i b[8];

	for (unsigned j = 0; j < nz; j++)
		b[j] = vaes_swap_ctr(vaes_ctr_add(c, 4 * (int)j)) ^ v->rk[0];
	for (unsigned r = 1; r < rounds; r++)
		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm512_aesenc_epi128(b[j], v->rk[r]);
	if (nblk == 4 * (size_t)nz) {
		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm512_aesenclast_epi128(
				b[j], v->rk[rounds] ^ _mm512_loadu_si512(in + 64 * j));
		for (unsigned j = 0; j < nz; j++)
			_mm512_storeu_si512(out + 64 * j, b[j]);
	} else {
		for (unsigned j = 0; j < nz; j++) {
			const __mmask8 m = vaes_mask((ptrdiff_t)nblk - 4 * (ptrdiff_t)j);

			b[j] = _mm512_aesenclast_epi128(
				b[j], v->rk[rounds] ^ _mm512_maskz_loadu_epi64(m, in + 64 * j));
			_mm512_mask_storeu_epi64(out + 64 * j, m, b[j]);
		}
	}
}

#endif

/*
 * Byte-sliced ARIA in CTR mode with GFNI S-boxes, written once for every
 * vector width. aria_gfni_avx512.c and aria_gfni_avx2.c include this file
 * once per width and instruction set (see the template part below); each
 * inclusion defines static functions named through SL_FN.
 *
 * Layout: a batch of 16 * SL_LANES blocks lives in 16 vectors, vector j
 * holding byte j of every block. The S-boxes then act on whole vectors, and
 * the diffusion layer, a 16x16 binary matrix on bytes, is plain vector XOR.
 */

#ifndef SOTLS_CRYPTO_ARIA_GFNI_SLICED_ONCE
#define SOTLS_CRYPTO_ARIA_GFNI_SLICED_ONCE

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "aria.h"
#include "aria_internal.h"

/* The S-boxes as GF(2) affine maps: aria_internal.h (ARIA_GF_*). */

/*
 * The transpose back to blocks (SL_FN(transpose)) leaves byte column k of
 * each 128-bit lane in vector bitrev4(k), k with its 4 bits reversed. So
 * the counters number column k of lane l as block n * bitrev4(k) + l, for n
 * lanes: vector r then holds blocks n*r .. n*r + n-1, in memory order, and
 * goes to memory with a single store.
 */
#define ARIA_SL_IDX_LANE(n, l)                                                          \
	(n) * 0 + (l), (n) * 8 + (l), (n) * 4 + (l), (n) * 12 + (l), (n) * 2 + (l),     \
		(n) * 10 + (l), (n) * 6 + (l), (n) * 14 + (l), (n) * 1 + (l), (n) * 9 + (l), \
		(n) * 5 + (l), (n) * 13 + (l), (n) * 3 + (l), (n) * 11 + (l), (n) * 7 + (l), \
		(n) * 15 + (l)

/*
 * The template's arrays of vectors must become registers: that needs every
 * helper inlined and every loop over them fully unrolled, whatever the
 * optimisation level.
 */
#define ARIA_SL_INLINE inline __attribute__((always_inline))
#define ARIA_SL_UNROLL _Pragma("GCC unroll 16")

/*
 * What one CTR call shares between its batches. Round keys are read from the
 * key as bytes and broadcast where used: on Zen 4 that was faster than
 * XORing 32-bit broadcasts of a per-call table.
 */
struct aria_sl_ctx {
	const uint8_t (*rk)[16];
	unsigned rounds;
	/* Round 1's output restricted to the counter bytes 0..11, which are
	 * the same in every block of the call, with ek2 added. */
	uint8_t c1[16];
};

#endif /* SOTLS_CRYPTO_ARIA_GFNI_SLICED_ONCE */

/*
 * Template part, expanded once per inclusion. The includer defines SL_WIDTH,
 * 512 or 256, and for 256 also SL_TERNLOG: 1 where AVX-512VL's VPTERNLOGD
 * may be used, 0 for plain AVX2. The end of this file undefines both and
 * everything below that depends on them.
 *
 * The algorithm sees vectors of SL_LANES 128-bit lanes through:
 *   vzero() vbcast8(byte) vbcast128(const uint8_t *)
 *   vxor(a, b) vxor3(a, b, c) vand(a, b) vadd8 vsub8
 *   vcmpgt8 vcmpeq8 (signed compare: all-ones bytes where true)
 *   vaff(x, matrix, c) vaffinv(x, matrix, c): the GFNI instructions
 *   vunpack{lo,hi}{8,16,32,64}: in-lane interleaves
 *   vloadu(p) vstoreu(p, v) vlow8(v)
 *   SL_FN(xor_store_part)(out, in, v, nb): out = in ^ v for the first
 *     nb < SL_LANES blocks only, touching no byte beyond them
 */
#if SL_WIDTH == 512

#define SL_VEC __m512i
#define SL_LANES 4
#define SL_FN(name) aria_##name##_zmm
#define vzero() _mm512_setzero_si512()
#define vbcast8(b) _mm512_set1_epi8((char)(b))
#define vbcast128(p) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(p)))
#define vxor(a, b) _mm512_xor_si512((a), (b))
#define vxor3(a, b, c) _mm512_ternarylogic_epi32((a), (b), (c), 0x96)
#define vand(a, b) _mm512_and_si512((a), (b))
#define vadd8(a, b) _mm512_add_epi8((a), (b))
#define vsub8(a, b) _mm512_sub_epi8((a), (b))
#define vcmpgt8(a, b) _mm512_movm_epi8(_mm512_cmpgt_epi8_mask((a), (b)))
#define vcmpeq8(a, b) _mm512_movm_epi8(_mm512_cmpeq_epi8_mask((a), (b)))
#define vaff(x, m, c) _mm512_gf2p8affine_epi64_epi8((x), _mm512_set1_epi64((long long)(m)), (c))
#define vaffinv(x, m, c) \
	_mm512_gf2p8affineinv_epi64_epi8((x), _mm512_set1_epi64((long long)(m)), (c))
#define vunpacklo8 _mm512_unpacklo_epi8
#define vunpackhi8 _mm512_unpackhi_epi8
#define vunpacklo16 _mm512_unpacklo_epi16
#define vunpackhi16 _mm512_unpackhi_epi16
#define vunpacklo32 _mm512_unpacklo_epi32
#define vunpackhi32 _mm512_unpackhi_epi32
#define vunpacklo64 _mm512_unpacklo_epi64
#define vunpackhi64 _mm512_unpackhi_epi64
#define vloadu(p) _mm512_loadu_si512((const void *)(p))
#define vstoreu(p, v) _mm512_storeu_si512((void *)(p), (v))
#define vlow8(v) ((uint8_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(v)))

static inline void SL_FN(xor_store_part)(uint8_t *out, const uint8_t *in, SL_VEC v, size_t nb)
{
	const __mmask64 m = ((__mmask64)1 << (16 * nb)) - 1;

	_mm512_mask_storeu_epi8(out, m, _mm512_xor_si512(v, _mm512_maskz_loadu_epi8(m, in)));
}

#elif SL_WIDTH == 256

#define SL_VEC __m256i
#define SL_LANES 2
#define vzero() _mm256_setzero_si256()
#define vbcast8(b) _mm256_set1_epi8((char)(b))
#define vbcast128(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p)))
#define vxor(a, b) _mm256_xor_si256((a), (b))
#if SL_TERNLOG
#define SL_FN(name) aria_##name##_ymm_vl
#define vxor3(a, b, c) _mm256_ternarylogic_epi32((a), (b), (c), 0x96)
#else
#define SL_FN(name) aria_##name##_ymm
#define vxor3(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#endif
#define vand(a, b) _mm256_and_si256((a), (b))
#define vadd8(a, b) _mm256_add_epi8((a), (b))
#define vsub8(a, b) _mm256_sub_epi8((a), (b))
#define vcmpgt8(a, b) _mm256_cmpgt_epi8((a), (b))
#define vcmpeq8(a, b) _mm256_cmpeq_epi8((a), (b))
#define vaff(x, m, c) _mm256_gf2p8affine_epi64_epi8((x), _mm256_set1_epi64x((long long)(m)), (c))
#define vaffinv(x, m, c) \
	_mm256_gf2p8affineinv_epi64_epi8((x), _mm256_set1_epi64x((long long)(m)), (c))
#define vunpacklo8 _mm256_unpacklo_epi8
#define vunpackhi8 _mm256_unpackhi_epi8
#define vunpacklo16 _mm256_unpacklo_epi16
#define vunpackhi16 _mm256_unpackhi_epi16
#define vunpacklo32 _mm256_unpacklo_epi32
#define vunpackhi32 _mm256_unpackhi_epi32
#define vunpacklo64 _mm256_unpacklo_epi64
#define vunpackhi64 _mm256_unpackhi_epi64
#define vloadu(p) _mm256_loadu_si256((const void *)(p))
#define vstoreu(p, v) _mm256_storeu_si256((void *)(p), (v))
#define vlow8(v) ((uint8_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(v)))

/* A two-block vector can only have a single block left over. */
static inline void SL_FN(xor_store_part)(uint8_t *out, const uint8_t *in, SL_VEC v, size_t nb)
{
	(void)nb;
	_mm_storeu_si128((__m128i *)out,
			 _mm_xor_si128(_mm256_castsi256_si128(v), _mm_loadu_si128((const __m128i *)in)));
}

#else
#error "SL_WIDTH must be 512 or 256"
#endif

static ARIA_SL_INLINE SL_VEC SL_FN(s1)(SL_VEC x)
{
	return vaffinv(x, ARIA_GF_S1, ARIA_GF_S1_C);
}

static ARIA_SL_INLINE SL_VEC SL_FN(s2)(SL_VEC x)
{
	return vaffinv(x, ARIA_GF_S2, ARIA_GF_S2_C);
}

static ARIA_SL_INLINE SL_VEC SL_FN(s1inv)(SL_VEC x)
{
	return vaffinv(vaff(x, ARIA_GF_S1INV, ARIA_GF_S1INV_C), ARIA_GF_ID, 0);
}

static ARIA_SL_INLINE SL_VEC SL_FN(s2inv)(SL_VEC x)
{
	return vaffinv(vaff(x, ARIA_GF_S2INV, ARIA_GF_S2INV_C), ARIA_GF_ID, 0);
}

/* Substitution layer of the odd rounds: S1, S2, S1^-1, S2^-1 repeated. */
static ARIA_SL_INLINE void SL_FN(sl1)(SL_VEC x[16])
{
	ARIA_SL_UNROLL
	for (int j = 0; j < 16; j += 4) {
		x[j] = SL_FN(s1)(x[j]);
		x[j + 1] = SL_FN(s2)(x[j + 1]);
		x[j + 2] = SL_FN(s1inv)(x[j + 2]);
		x[j + 3] = SL_FN(s2inv)(x[j + 3]);
	}
}

/* Substitution layer of the even rounds: S1^-1, S2^-1, S1, S2 repeated. */
static ARIA_SL_INLINE void SL_FN(sl2)(SL_VEC x[16])
{
	ARIA_SL_UNROLL
	for (int j = 0; j < 16; j += 4) {
		x[j] = SL_FN(s1inv)(x[j]);
		x[j + 1] = SL_FN(s2inv)(x[j + 1]);
		x[j + 2] = SL_FN(s1)(x[j + 2]);
		x[j + 3] = SL_FN(s2)(x[j + 3]);
	}
}

/*
 * x = A(x) ^ key. Viewing the state as four 32-bit words of four bytes,
 * A = M o W o P o W (W applied first), where
 *   W: word w becomes the XOR of three words, (0,1,2), (0,2,3), (0,1,3) and
 *      (1,2,3) for w = 0..3, byte position by byte position;
 *   P: bytes permuted inside words 1, 2, 3 by index ^ 1, ^ 2, ^ 3, which
 *      costs nothing here: it only renames vectors;
 *   M: each byte becomes the XOR of the other three bytes of its word.
 * This is 4 three-input XORs per byte position for each W and 6 per word
 * for M with the round key, 56 in all, against 7*16 two-input XORs for the
 * rows of A taken one by one. W names a0^a1 and a2^a3 first, so that where
 * vxor3 is two XORs the compiler shares them: 6 XORs per byte position.
 */
static ARIA_SL_INLINE void SL_FN(diffuse_key)(SL_VEC x[16], const uint8_t key[16])
{
	SL_VEC t[16];

	ARIA_SL_UNROLL
	for (int b = 0; b < 4; b++) {
		const SL_VEC a0 = x[b], a1 = x[4 + b], a2 = x[8 + b], a3 = x[12 + b];

		t[b] = vxor3(a0, a1, a2);
		t[4 + b] = vxor3(a2, a3, a0);
		t[8 + b] = vxor3(a0, a1, a3);
		t[12 + b] = vxor3(a2, a3, a1);
	}
	ARIA_SL_UNROLL
	for (int b = 0; b < 4; b++) {
		const SL_VEC a0 = t[b], a1 = t[4 + (b ^ 1)], a2 = t[8 + (b ^ 2)],
			     a3 = t[12 + (b ^ 3)];

		x[b] = vxor3(a0, a1, a2);
		x[4 + b] = vxor3(a2, a3, a0);
		x[8 + b] = vxor3(a0, a1, a3);
		x[12 + b] = vxor3(a2, a3, a1);
	}
	ARIA_SL_UNROLL
	for (int w = 0; w < 16; w += 4) {
		const SL_VEC s01 = vxor(x[w], x[w + 1]), s23 = vxor(x[w + 2], x[w + 3]);
		const SL_VEC y0 = vxor3(x[w + 1], s23, vbcast8(key[w]));
		const SL_VEC y1 = vxor3(x[w], s23, vbcast8(key[w + 1]));
		const SL_VEC y2 = vxor3(x[w + 3], s01, vbcast8(key[w + 2]));
		const SL_VEC y3 = vxor3(x[w + 2], s01, vbcast8(key[w + 3]));

		x[w] = y0;
		x[w + 1] = y1;
		x[w + 2] = y2;
		x[w + 3] = y3;
	}
}

/*
 * Per call: round 1 on the counter bytes 0..11, which CTR never changes, with
 * the substituted bytes 12..15 taken as zero. A is linear, so round 1 of each
 * batch then only has to add the contribution of bytes 12..15
 * (SL_FN(round1)).
 */
static ARIA_SL_INLINE void SL_FN(prepare)(struct aria_sl_ctx *cx,
					   const struct sotls_aria_key *k, const uint8_t ctr[16])
{
	SL_VEC x[16];

	cx->rk = k->rk;
	cx->rounds = k->rounds;
	ARIA_SL_UNROLL
	for (int j = 0; j < 16; j++)
		x[j] = vbcast8(j < 12 ? ctr[j] ^ k->rk[0][j] : 0);
	SL_FN(sl1)(x);
	ARIA_SL_UNROLL
	for (int j = 12; j < 16; j++)
		x[j] = vzero();
	SL_FN(diffuse_key)(x, k->rk[1]);
	ARIA_SL_UNROLL
	for (int j = 0; j < 16; j++)
		cx->c1[j] = vlow8(x[j]);
}

static _Alignas(64) const uint8_t SL_FN(ctr_idx)[16 * SL_LANES] = {
#if SL_LANES == 4
	ARIA_SL_IDX_LANE(4, 0), ARIA_SL_IDX_LANE(4, 1), ARIA_SL_IDX_LANE(4, 2),
	ARIA_SL_IDX_LANE(4, 3),
#else
	ARIA_SL_IDX_LANE(2, 0), ARIA_SL_IDX_LANE(2, 1),
#endif
};

/*
 * Round 1 of a batch whose first block has counter c: builds bytes 12..15 of
 * the counters (a byte-wise add with carries, so the 32-bit wrap is exact),
 * substitutes them, and adds them into the rows of A that use them, on top
 * of the per-call part in c1. Columns 12..15 of A: rows 12..15 take their
 * own byte only, and rows {0,3} take 13^14, {1,2} 12^15, {4,5} 14^15,
 * {6,7} 12^13, {8,10} 13^15, {9,11} 12^14.
 */
static ARIA_SL_INLINE void SL_FN(round1)(SL_VEC x[16], const struct aria_sl_ctx *cx, uint32_t c)
{
	const SL_VEC idx = vloadu(SL_FN(ctr_idx));
	SL_VEC b12, b13, b14, b15, carry;

	b15 = vadd8(vbcast8(c), idx);
	/* The low byte c0 of c plus idx carries iff idx > 255 - c0 = c0 ^ 0xff,
	 * unsigned; flipping bit 7 of both sides turns that into a signed
	 * compare, which is what the instruction sets have. */
	carry = vcmpgt8(vxor(idx, vbcast8(0x80)), vbcast8((c & 0xff) ^ 0x7f));
	b14 = vsub8(vbcast8(c >> 8), carry);
	carry = vand(carry, vcmpeq8(b14, vzero()));
	b13 = vsub8(vbcast8(c >> 16), carry);
	carry = vand(carry, vcmpeq8(b13, vzero()));
	b12 = vsub8(vbcast8(c >> 24), carry);

	b12 = SL_FN(s1)(vxor(b12, vbcast8(cx->rk[0][12])));
	b13 = SL_FN(s2)(vxor(b13, vbcast8(cx->rk[0][13])));
	b14 = SL_FN(s1inv)(vxor(b14, vbcast8(cx->rk[0][14])));
	b15 = SL_FN(s2inv)(vxor(b15, vbcast8(cx->rk[0][15])));

	const SL_VEC u1314 = vxor(b13, b14), u1215 = vxor(b12, b15), u1415 = vxor(b14, b15),
		     u1213 = vxor(b12, b13), u1315 = vxor(b13, b15), u1214 = vxor(b12, b14);

	x[0] = vxor(u1314, vbcast8(cx->c1[0]));
	x[1] = vxor(u1215, vbcast8(cx->c1[1]));
	x[2] = vxor(u1215, vbcast8(cx->c1[2]));
	x[3] = vxor(u1314, vbcast8(cx->c1[3]));
	x[4] = vxor(u1415, vbcast8(cx->c1[4]));
	x[5] = vxor(u1415, vbcast8(cx->c1[5]));
	x[6] = vxor(u1213, vbcast8(cx->c1[6]));
	x[7] = vxor(u1213, vbcast8(cx->c1[7]));
	x[8] = vxor(u1315, vbcast8(cx->c1[8]));
	x[9] = vxor(u1214, vbcast8(cx->c1[9]));
	x[10] = vxor(u1315, vbcast8(cx->c1[10]));
	x[11] = vxor(u1214, vbcast8(cx->c1[11]));
	x[12] = vxor(b12, vbcast8(cx->c1[12]));
	x[13] = vxor(b13, vbcast8(cx->c1[13]));
	x[14] = vxor(b14, vbcast8(cx->c1[14]));
	x[15] = vxor(b15, vbcast8(cx->c1[15]));
}

/*
 * Byte planes back to blocks: four rounds of interleaving, each lane a 16x16
 * byte transpose. Vector r ends up holding column bitrev4(r) of every lane,
 * which the counter numbering (ARIA_SL_IDX_LANE) turns into blocks in order.
 */
static ARIA_SL_INLINE void SL_FN(transpose)(SL_VEC x[16])
{
	SL_VEC t[16];

	ARIA_SL_UNROLL
	for (int i = 0; i < 16; i += 2) {
		t[i] = vunpacklo8(x[i], x[i + 1]);
		t[i + 1] = vunpackhi8(x[i], x[i + 1]);
	}
	ARIA_SL_UNROLL
	for (int i = 0; i < 16; i += 4)
		ARIA_SL_UNROLL
		for (int m = 0; m < 2; m++) {
			x[i + m] = vunpacklo16(t[i + m], t[i + m + 2]);
			x[i + m + 2] = vunpackhi16(t[i + m], t[i + m + 2]);
		}
	ARIA_SL_UNROLL
	for (int i = 0; i < 16; i += 8)
		ARIA_SL_UNROLL
		for (int m = 0; m < 4; m++) {
			t[i + m] = vunpacklo32(x[i + m], x[i + m + 4]);
			t[i + m + 4] = vunpackhi32(x[i + m], x[i + m + 4]);
		}
	ARIA_SL_UNROLL
	for (int m = 0; m < 8; m++) {
		x[m] = vunpacklo64(t[m], t[m + 8]);
		x[m + 8] = vunpackhi64(t[m], t[m + 8]);
	}
}

/* CTR over nb blocks, 0 < nb <= 16 * SL_LANES, the first with counter c. */
static ARIA_SL_INLINE void SL_FN(blocks)(const struct aria_sl_ctx *cx, uint32_t c,
					  const uint8_t *in, uint8_t *out, size_t nb)
{
	const size_t vbytes = 16 * SL_LANES;
	SL_VEC x[16];

	SL_FN(round1)(x, cx, c);
	for (unsigned r = 2; r < cx->rounds; r += 2) {
		SL_FN(sl2)(x);
		SL_FN(diffuse_key)(x, cx->rk[r]);
		SL_FN(sl1)(x);
		SL_FN(diffuse_key)(x, cx->rk[r + 1]);
	}
	SL_FN(sl2)(x);
	SL_FN(transpose)(x);

	/* The last round key is the same for every block: add it after the
	 * transpose, in the same instruction as the data where vxor3 is one. */
	const SL_VEC klast = vbcast128(cx->rk[cx->rounds]);

	if (nb == 16 * SL_LANES) {
		ARIA_SL_UNROLL
		for (int r = 0; r < 16; r++)
			vstoreu(out + r * vbytes, vxor3(x[r], vloadu(in + r * vbytes), klast));
		return;
	}

	/* A partial batch indexes the keystream by a variable; copying it out
	 * keeps x itself in registers above. */
	SL_VEC ks[16];
	size_t r = 0;

	ARIA_SL_UNROLL
	for (int i = 0; i < 16; i++)
		ks[i] = x[i];
	for (; r < nb / SL_LANES; r++)
		vstoreu(out + r * vbytes, vxor3(ks[r], vloadu(in + r * vbytes), klast));
	if (nb % SL_LANES)
		SL_FN(xor_store_part)(out + r * vbytes, in + r * vbytes, vxor(ks[r], klast),
				      nb % SL_LANES);
}

#undef SL_WIDTH
#undef SL_TERNLOG
#undef SL_VEC
#undef SL_LANES
#undef SL_FN
#undef vzero
#undef vbcast8
#undef vbcast128
#undef vxor
#undef vxor3
#undef vand
#undef vadd8
#undef vsub8
#undef vcmpgt8
#undef vcmpeq8
#undef vaff
#undef vaffinv
#undef vunpacklo8
#undef vunpackhi8
#undef vunpacklo16
#undef vunpackhi16
#undef vunpacklo32
#undef vunpackhi32
#undef vunpacklo64
#undef vunpackhi64
#undef vloadu
#undef vstoreu
#undef vlow8

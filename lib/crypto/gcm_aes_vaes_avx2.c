/*
 * AES-GCM's bulk, stitched, for CPUs with VAES and VPCLMULQDQ but no AVX-512
 * (AMD Zen 3, Intel Alder Lake): CTR with VAES and GHASH with VPCLMULQDQ,
 * both on 256-bit registers (two blocks each), in one loop over batches of
 * 16 blocks (eight ymm registers: with the GHASH accumulators, a round key
 * and the data being hashed, about all of the 16 that AVX2 has).
 *
 * Two batches are hashed with one reduction: their blocks are multiplied by
 * H^32 .. H^1 (Karatsuba, three carry-less products a block) and summed,
 * the running Y added into the first block, with ghash_vpclmul_avx2.c's
 * table of powers (ghash_vpclmul_avx2.h); a batch left alone takes
 * H^16 .. H^1. The AES rounds and the products are independent, so the
 * products go between the rounds and the AES and CLMUL instructions issue
 * side by side; the reduction, which the next pair's first product waits
 * for, overlaps with the next batches' rounds.
 *  - opening, the batch being decrypted is hashed: its ciphertext is loaded
 *    for GHASH before any output of the batch is stored (so in == out is
 *    safe);
 *  - sealing, the batch encrypted one step before is hashed, from the
 *    output, where it was just stored; the last one is hashed after the loop.
 * The rest, under 256 bytes, is one more pass of four or eight registers,
 * whole ones straight from in to out and the last 1..31 bytes through a
 * stack buffer (AVX2 has no byte-masked loads and stores), hashed with the
 * matching tail of the powers, H^n .. H^1. The tag mask E(K, J0) is one
 * block on the side (xmm), which the out-of-order core overlaps with the
 * rest.
 *
 * On Zen 3 VAESENC and VPCLMULQDQ issue to the same two pipes (a ymm
 * VPCLMULQDQ takes one for about two cycles), so a batch costs at least its
 * AES instructions plus twice its 24 products, spread over two pipes (the
 * loop measures within 15-25% of that), and AES-256 pays for its four extra
 * rounds in full.
 */
#include <string.h>

#include "aes.h"
#include "aes_aesni.h"
#include "gcm.h"
#include "ghash_vpclmul_avx2.h"
#include "util.h"

#define INLINE inline __attribute__((always_inline))

#define BATCH 16 /* blocks */
#define BATCH_REGS (BATCH / 2)

_Static_assert(2 * BATCH == VPCLMUL256_POWERS, "two batches take all the powers of H");

/* Round keys broadcast to both lanes; rk[0 .. rounds]. */
struct keys256 {
	__m256i rk[SOTLS_AES_MAX_ROUNDS + 1];
};

/*
 * Counters are kept "swapped", bytes 12..15 of each block reversed, so that
 * the 32-bit counter is a little-endian dword in lane 3, where VPADDD wraps
 * it mod 2^32 without touching the 12 fixed bytes; the same shuffle turns a
 * swapped block back into a counter block.
 */
static INLINE __m256i swap_ctr(__m256i x)
{
	const __m256i m = _mm256_broadcastsi128_si256(
		_mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

	return _mm256_shuffle_epi8(x, m);
}

/* Adds n to both lanes' counters (swapped form). */
static INLINE __m256i ctr_add(__m256i c, int n)
{
	return _mm256_add_epi32(c, _mm256_set_epi32(n, 0, 0, 0, n, 0, 0, 0));
}

/*
 * nz registers of counter blocks, register j holding c + 2j, after round 0;
 * n is the counter of lane 0 of c. Unless the counter's last byte carries
 * within these blocks (one batch in 16), adding to that byte, the top one
 * of the dword in the unswapped block, gives the blocks with one shuffle
 * instead of one a register. The branch is on the counter, which is no
 * secret (it follows the public nonce).
 */
static INLINE void ctr_start(__m256i *b, const struct keys256 *v, __m256i c, uint32_t n,
			     unsigned nz)
{
	if ((n & 0xff) + 2 * nz - 1 <= 0xff) {
		const __m256i cb = swap_ctr(c);

		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm256_add_epi32(cb, _mm256_set_epi32((int)(2 * j) << 24, 0, 0, 0,
								     (int)(2 * j) << 24, 0, 0, 0)) ^
			       v->rk[0];
	} else {
		for (unsigned j = 0; j < nz; j++)
			b[j] = swap_ctr(ctr_add(c, 2 * (int)j)) ^ v->rk[0];
	}
}

/* The last round, the input folded into its key (AESENCLAST ends with the XOR). */
static INLINE void ctr_finish(__m256i *b, const struct keys256 *v, unsigned rounds,
			      const uint8_t *in, uint8_t *out, unsigned nz)
{
	for (unsigned j = 0; j < nz; j++)
		b[j] = _mm256_aesenclast_epi128(
			b[j], v->rk[rounds] ^ _mm256_loadu_si256((const __m256i *)(in + 32 * j)));
	for (unsigned j = 0; j < nz; j++)
		_mm256_storeu_si256((__m256i *)(out + 32 * j), b[j]);
}

/* nz registers (a constant at every call site) of CTR, without GHASH. */
static INLINE void ctr_blocks(const struct keys256 *v, unsigned rounds, __m256i c, uint32_t n,
			      const uint8_t *in, uint8_t *out, unsigned nz)
{
	__m256i b[BATCH_REGS];

	ctr_start(b, v, c, n, nz);
	for (unsigned r = 1; r < rounds; r++)
		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm256_aesenc_epi128(b[j], v->rk[r]);
	ctr_finish(b, v, rounds, in, out, nz);
}

/*
 * Adds the products of step i (0..7) of a batch's GHASH to a, with the keys
 * from key[koff]: register i + 1 of the blocks at h, and last register 0,
 * which in the first batch of a reduction carries Y (the reduction before,
 * the one thing that waits on the batches before).
 */
static INLINE void ghash_step(struct acc256 *a, const struct vpclmul256_tab *t,
			      const uint8_t *h, unsigned i, unsigned koff, bool first, __m128i y)
{
	const unsigned j = (i + 1) % BATCH_REGS;
	__m256i x = bswap2(_mm256_loadu_si256((const __m256i *)(h + 32 * j)));

	if (first && j == 0)
		x ^= _mm256_zextsi128_si256(y);
	acc256_mul(a, x, _mm256_loadu_si256((const __m256i *)&t->key[koff + 2 * j]),
		   _mm256_loadu_si256((const __m256i *)&t->mid[koff + 2 * j]));
	/* Summed here: left to itself GCC keeps every product apart until the
	 * end of the batch, in spill slots. */
	__asm__("" : "+x"(a->lo), "+x"(a->hi), "+x"(a->mid));
}

/*
 * Where the CTR stream stands: the next counters (swapped, and lane 0's
 * counter as a scalar) and the data left.
 */
struct run {
	__m256i c;
	uint32_t n;
	const uint8_t *in;
	uint8_t *out;
	size_t len;
};

static INLINE void run_next(struct run *s)
{
	s->c = ctr_add(s->c, BATCH);
	s->n += BATCH;
	s->in += 16 * BATCH;
	s->out += 16 * BATCH;
	s->len -= 16 * BATCH;
}

/*
 * One batch: encrypts the 16 counter blocks of s into s->out (XOR s->in),
 * and meanwhile adds the products of the 16 blocks at h with the keys from
 * key[koff] on to a, Y into the first block if first (h may be s->in: it is
 * read before anything is stored). Then steps s on.
 */
static INLINE void batch(const struct keys256 *v, const struct vpclmul256_tab *t,
			 unsigned rounds, struct run *s, const uint8_t *h, struct acc256 *a,
			 unsigned koff, bool first, __m128i y)
{
	__m256i b[BATCH_REGS];

	ctr_start(b, v, s->c, s->n, BATCH_REGS);
	/*
	 * The eight steps spread evenly over the rounds (all but the last),
	 * each before its round's AES instructions: measured on Zen 3, where
	 * VAESENC and VPCLMULQDQ share pipes, ahead of placing them after
	 * (AES-128 seal 16 KiB 0.29 against 0.30 TSC cycles a byte) or in the
	 * first eight rounds whatever the key (AES-256 0.33 against 0.34).
	 * Unrolled whole, so that the steps sit between fixed rounds.
	 */
#pragma GCC unroll 16
	for (unsigned r = 1; r < rounds; r++) {
		for (unsigned i = 0; i < BATCH_REGS; i++)
			if (1 + i * (rounds - 1) / BATCH_REGS == r)
				ghash_step(a, t, h, i, koff, first, y);
		for (unsigned j = 0; j < BATCH_REGS; j++)
			b[j] = _mm256_aesenc_epi128(b[j], v->rk[r]);
	}
	ctr_finish(b, v, rounds, s->in, s->out, BATCH_REGS);
	run_next(s);
}

/*
 * The last 1..255 bytes: CTR from c and GHASH of the ciphertext, zero-padded
 * to whole blocks. Whole registers go straight from in to out; only the
 * last 1..31 bytes pass through a 32-byte stack buffer (wiped afterwards).
 * A first version copied the whole tail through a buffer: the 32-byte
 * loads across the copy's smaller stores missed store forwarding, and a
 * 1500-byte record's 220-byte tail cost more than three full batches.
 * nz (four or eight registers) is a constant, so that the blocks stay in
 * registers; the branches are on the length, which is public.
 */
static INLINE __m128i tail_regs(const struct keys256 *v, const struct vpclmul256_tab *t,
				unsigned rounds, __m256i c, uint32_t ctr, bool open,
				const uint8_t *in, uint8_t *out, size_t n, __m128i y, unsigned nz)
{
	/* Loaded from KEEP + 32 - r: r bytes of ones, then zeros. */
	static const uint8_t KEEP[64] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	_Alignas(32) uint8_t last[32];
	const size_t nb = (n + 15) / 16, full = n / 32, r = n % 32;
	const size_t base = VPCLMUL256_POWERS - nb;
	struct acc256 a = acc256_zero();
	struct ghash_acc s = ghash_acc_zero();
	__m256i b[BATCH_REGS];

	ctr_start(b, v, c, ctr, nz);
	for (unsigned q = 1; q < rounds; q++)
		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm256_aesenc_epi128(b[j], v->rk[q]);
	if (r != 0) {
		memset(last, 0, sizeof(last));
		memcpy(last, in + 32 * full, r);
	}
	for (unsigned j = 0; j < nz && j < (n + 31) / 32; j++) {
		const __m256i d = j < full ? _mm256_loadu_si256((const __m256i *)(in + 32 * j))
					   : _mm256_load_si256((const __m256i *)last);
		__m256i o = _mm256_aesenclast_epi128(b[j], v->rk[rounds] ^ d);

		if (j < full) {
			_mm256_storeu_si256((__m256i *)(out + 32 * j), o);
		} else {
			_mm256_store_si256((__m256i *)last, o);
			memcpy(out + 32 * j, last, r);
			o &= _mm256_loadu_si256((const __m256i *)(KEEP + 32 - r));
		}
		__m256i x = bswap2(open ? d : o);
		if (j == 0)
			x ^= _mm256_zextsi128_si256(y);
		if (2 * j + 1 < nb) {
			acc256_mul(&a, x, _mm256_loadu_si256((const __m256i *)&t->key[base + 2 * j]),
				   _mm256_loadu_si256((const __m256i *)&t->mid[base + 2 * j]));
		} else {
			/* An odd last block: its lane alone, the table has no
			 * key past H. */
			ghash_acc_mul(&s, _mm256_castsi256_si128(x), t->key[base + 2 * j],
				      t->mid[base + 2 * j]);
		}
	}
	if (r != 0)
		sotls_wipe(last, sizeof(last));
	a.lo ^= _mm256_zextsi128_si256(s.lo);
	a.hi ^= _mm256_zextsi128_si256(s.hi);
	a.mid ^= _mm256_zextsi128_si256(s.mid);
	return acc256_reduce(&a);
}

static INLINE __m128i tail(const struct keys256 *v, const struct vpclmul256_tab *t,
			   unsigned rounds, __m256i c, uint32_t ctr, bool open,
			   const uint8_t *in, uint8_t *out, size_t n, __m128i y)
{
	if (n <= 16 * BATCH / 2)
		return tail_regs(v, t, rounds, c, ctr, open, in, out, n, y, BATCH_REGS / 2);
	return tail_regs(v, t, rounds, c, ctr, open, in, out, n, y, BATCH_REGS);
}

static INLINE void bulk(unsigned rounds, const struct sotls_aes_key *k,
			const struct vpclmul256_tab *t, bool open, const uint8_t j0[16],
			uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			uint8_t mask[16])
{
	struct keys256 v;
	__m128i acc = ghash_load(y);

	for (unsigned r = 0; r <= rounds; r++)
		v.rk[r] = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)k->rk[r]));
	/* E(K, J0): one block on the side (AES-NI's CTR of a zero block), nothing
	 * waits for it. */
	static const uint8_t ZERO[16];
	aesni_blocks(k, rounds, aesni_ctr_swap(_mm_loadu_si128((const __m128i *)j0)), ZERO, mask,
		     1);

	/* Blocks 1 and 2 after j0, swapped; n counts along in a scalar. */
	struct run s = {
		.c = _mm256_add_epi32(swap_ctr(_mm256_broadcastsi128_si256(
					      _mm_loadu_si128((const __m128i *)j0))),
				      _mm256_set_epi32(2, 0, 0, 0, 1, 0, 0, 0)),
		.n = sotls_load_be32(j0 + 12) + 1,
		.in = in,
		.out = out,
		.len = len,
	};
	struct acc256 a;
	/*
	 * Two batches a reduction, H^32 .. H^17 for the first, H^16 .. H^1 for
	 * the second (and for a batch alone).
	 */
	if (open) {
		for (; s.len >= 2 * 16 * BATCH; acc = acc256_reduce(&a)) {
			a = acc256_zero();
			batch(&v, t, rounds, &s, s.in, &a, 0, true, acc);
			batch(&v, t, rounds, &s, s.in, &a, BATCH, false, acc);
		}
		if (s.len >= 16 * BATCH) {
			a = acc256_zero();
			batch(&v, t, rounds, &s, s.in, &a, BATCH, true, acc);
			acc = acc256_reduce(&a);
		}
	} else if (s.len >= 16 * BATCH) {
		/* The first batch has nothing before it to hash. */
		ctr_blocks(&v, rounds, s.c, s.n, s.in, s.out, BATCH_REGS);
		const uint8_t *prev = s.out;
		run_next(&s);
		for (; s.len >= 2 * 16 * BATCH; acc = acc256_reduce(&a)) {
			const uint8_t *h = prev;

			a = acc256_zero();
			prev = s.out;
			batch(&v, t, rounds, &s, h, &a, 0, true, acc);
			h = prev;
			prev = s.out;
			batch(&v, t, rounds, &s, h, &a, BATCH, false, acc);
		}
		if (s.len >= 16 * BATCH) {
			const uint8_t *h = prev;

			a = acc256_zero();
			prev = s.out;
			batch(&v, t, rounds, &s, h, &a, BATCH, true, acc);
			acc = acc256_reduce(&a);
		}
		acc = vpclmul256_fold(t, acc, prev, BATCH);
	}
	if (s.len > 0)
		acc = tail(&v, t, rounds, s.c, s.n, open, s.in, s.out, s.len, acc);
	ghash_store(y, acc);
	/* The round keys, spilled to the stack, go with the call. */
	sotls_wipe(v.rk, (rounds + 1) * sizeof(v.rk[0]));
}

void sotls_gcm_aes_vaes_avx2(const union sotls_aead_cipher_key *k,
			     const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			     uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			     uint8_t mask[16])
{
	SOTLS_AES_WITH_ROUNDS(k->aes.rounds, bulk, &k->aes, vpclmul256_tab(gk), open, j0, y, in,
			      out, len, mask);
}

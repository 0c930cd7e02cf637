/*
 * AES-GCM's bulk, stitched: CTR with VAES and GHASH with VPCLMULQDQ, both on
 * 512-bit registers, in one loop over batches of 32 blocks (eight registers
 * of four blocks).
 *
 * Each batch is hashed with one reduction: its blocks are multiplied by
 * H^32 .. H^1 (Karatsuba, three carry-less products per block) and summed,
 * the running Y added into the first block, as in ghash_vpclmul_avx512.c,
 * whose table of powers and accumulator (ghash_vpclmul_avx512.h) this file
 * shares.
 * The AES rounds of a batch and the GHASH of a batch are independent, so
 * their instructions are interleaved round by round and the AES and CLMUL
 * units work side by side:
 *  - opening, the batch being decrypted is hashed: its ciphertext is loaded
 *    once, before anything is stored (so in == out is safe);
 *  - sealing, the batch encrypted one step before is hashed, from the
 *    output, where it was just stored; the last one is hashed after the loop.
 * The rest, under 512 bytes, is one more pass of as many registers as it
 * needs, under byte masks that neither read nor write past the data and
 * that zero the padding of a partial last block for GHASH, which takes the
 * matching tail of the powers, H^n .. H^1. The tag mask E(K, J0) is one
 * more block on the side (xmm), which the out-of-order core overlaps with
 * the rest: a short record is a single pass.
 */
#include "aes_vaes_avx512.h"
#include "gcm.h"
#include "ghash_vpclmul_avx512.h"
#include "util.h"

#define BATCH 32 /* blocks */
#define BATCH_REGS (BATCH / 4)

_Static_assert(BATCH == VPCLMUL_POWERS, "a batch is hashed with all the powers of H");

/* Adds the products of register j of a batch (data x, as stored) to a. */
static VAES_INLINE void ghash_step(struct acc512 *a, const struct vpclmul_tab *t, __m512i x,
				   unsigned j, __m128i y)
{
	x = bswap4(x);
	if (j == 0)
		x ^= _mm512_zextsi128_si512(y);
	acc512_mul(a, x, _mm512_load_si512(&t->key[4 * j]), _mm512_load_si512(&t->mid[4 * j]));
}

/*
 * One batch: encrypts the 32 counter blocks from c into out (XOR in), and
 * meanwhile hashes the eight registers h (as stored) into y. When hash_in,
 * h is the input itself, loaded here before anything is stored.
 */
static VAES_INLINE __m128i batch(const struct vaes_keys *v, const struct vpclmul_tab *t,
				 unsigned rounds, __m512i c, const uint8_t *in, uint8_t *out,
				 const uint8_t *h, bool hash_in, __m128i y)
{
	__m512i b[BATCH_REGS], d[BATCH_REGS], x[BATCH_REGS];
	struct acc512 a = acc512_zero();

	for (unsigned j = 0; j < BATCH_REGS; j++) {
		d[j] = _mm512_loadu_si512(in + 64 * j);
		x[j] = hash_in ? d[j] : _mm512_loadu_si512(h + 64 * j);
	}
	for (unsigned j = 0; j < BATCH_REGS; j++)
		b[j] = vaes_swap_ctr(vaes_ctr_add(c, 4 * (int)j)) ^ v->rk[0];
	for (unsigned r = 1; r < rounds; r++) {
		for (unsigned j = 0; j < BATCH_REGS; j++)
			b[j] = _mm512_aesenc_epi128(b[j], v->rk[r]);
		if (r <= BATCH_REGS)
			ghash_step(&a, t, x[r - 1], r - 1, y);
	}
	for (unsigned j = 0; j < BATCH_REGS; j++)
		b[j] = _mm512_aesenclast_epi128(b[j], v->rk[rounds] ^ d[j]);
	for (unsigned j = 0; j < BATCH_REGS; j++)
		_mm512_storeu_si512(out + 64 * j, b[j]);
	return acc512_reduce(&a);
}

/* GHASH alone of one batch (as stored). */
static VAES_INLINE __m128i hash_batch(const struct vpclmul_tab *t, const uint8_t *h, __m128i y)
{
	struct acc512 a = acc512_zero();

	for (unsigned j = 0; j < BATCH_REGS; j++)
		ghash_step(&a, t, _mm512_loadu_si512(h + 64 * j), j, y);
	return acc512_reduce(&a);
}

/*
 * The last 1..511 bytes: CTR from c, and GHASH of the ciphertext (zero-padded
 * to nb whole blocks) with the powers H^nb .. H^1.
 */
static VAES_INLINE __m128i tail(const struct vaes_keys *v, const struct vpclmul_tab *t,
				unsigned rounds, __m512i c, bool open, const uint8_t *in,
				uint8_t *out, size_t n, __m128i y)
{
	const size_t nb = (n + 15) / 16;
	const unsigned nz = (unsigned)(nb + 3) / 4;
	const __m128i *key = &t->key[BATCH - nb], *mid = &t->mid[BATCH - nb];
	struct acc512 a = acc512_zero();
	__m512i b[BATCH_REGS];

	for (unsigned j = 0; j < nz; j++)
		b[j] = vaes_swap_ctr(vaes_ctr_add(c, 4 * (int)j)) ^ v->rk[0];
	for (unsigned r = 1; r < rounds; r++)
		for (unsigned j = 0; j < nz; j++)
			b[j] = _mm512_aesenc_epi128(b[j], v->rk[r]);
	for (unsigned j = 0; j < nz; j++) {
		const size_t left = n - 64 * (size_t)j;
		const __mmask64 mb = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
		/* Key lanes past the nb blocks (past the table, at the end) are
		 * not loaded; their data lanes are zero anyway. */
		const __mmask8 mk = vaes_mask((ptrdiff_t)nb - 4 * (ptrdiff_t)j);
		const __m512i d = _mm512_maskz_loadu_epi8(mb, in + 64 * j);
		const __m512i o = _mm512_maskz_mov_epi8(
			mb, _mm512_aesenclast_epi128(b[j], v->rk[rounds] ^ d));
		__m512i x = bswap4(open ? d : o);

		_mm512_mask_storeu_epi8(out + 64 * j, mb, o);
		if (j == 0)
			x ^= _mm512_zextsi128_si512(y);
		acc512_mul(&a, x, _mm512_maskz_loadu_epi64(mk, key + 4 * j),
			   _mm512_maskz_loadu_epi64(mk, mid + 4 * j));
	}
	return acc512_reduce(&a);
}

static VAES_INLINE void bulk(unsigned rounds, const struct sotls_aes_key *k,
			     const struct vpclmul_tab *t, bool open, const uint8_t j0[16],
			     uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			     uint8_t mask[16])
{
	struct vaes_keys v;
	__m128i acc = ghash_load(y);

	vaes_load_keys(&v, k, rounds);
	/* E(K, J0): one block on the side, nothing waits for it. */
	__m128i m = _mm_loadu_si128((const __m128i *)j0) ^ _mm512_castsi512_si128(v.rk[0]);
	for (unsigned r = 1; r < rounds; r++)
		m = _mm_aesenc_si128(m, _mm512_castsi512_si128(v.rk[r]));
	_mm_storeu_si128((__m128i *)mask,
			 _mm_aesenclast_si128(m, _mm512_castsi512_si128(v.rk[rounds])));

	__m512i c = vaes_ctr_add(vaes_ctr_base(j0), 1);
	if (open) {
		for (; len >= 16 * BATCH; len -= 16 * BATCH, in += 16 * BATCH, out += 16 * BATCH) {
			acc = batch(&v, t, rounds, c, in, out, in, true, acc);
			c = vaes_ctr_add(c, BATCH);
		}
	} else if (len >= 16 * BATCH) {
		/* The first batch has nothing before it to hash. */
		vaes_ctr_blocks(&v, rounds, c, in, out, BATCH_REGS, BATCH);
		c = vaes_ctr_add(c, BATCH);
		const uint8_t *prev = out;
		for (len -= 16 * BATCH, in += 16 * BATCH, out += 16 * BATCH; len >= 16 * BATCH;
		     len -= 16 * BATCH, in += 16 * BATCH, out += 16 * BATCH) {
			acc = batch(&v, t, rounds, c, in, out, prev, false, acc);
			c = vaes_ctr_add(c, BATCH);
			prev = out;
		}
		acc = hash_batch(t, prev, acc);
	}
	if (len > 0)
		acc = tail(&v, t, rounds, c, open, in, out, len, acc);
	ghash_store(y, acc);
	/* The round keys, spilled to the stack, go with the call. */
	sotls_wipe(v.rk, (rounds + 1) * sizeof(v.rk[0]));
}

void sotls_gcm_aes_vaes_avx512(const union sotls_aead_cipher_key *k,
			       const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			       uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			       uint8_t mask[16])
{
	const struct vpclmul_tab *t = vpclmul_tab(gk);

	SOTLS_AES_WITH_ROUNDS(k->aes.rounds, bulk, &k->aes, t, open, j0, y, in, out, len, mask);
}

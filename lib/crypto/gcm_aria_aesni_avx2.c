/*
 * ARIA-GCM's bulk, stitched, for AVX2 CPUs without GFNI: the byte-sliced
 * ARIA of aria_aesni_avx2.c (32 blocks a batch in ymm registers, S-boxes
 * through AES-NI) with GHASH through PCLMULQDQ, 32 blocks a reduction
 * (ghash_pclmul.h's table). gcm_aria_vaes_avx2.c compiles this file again
 * for CPUs with VAES and VPCLMULQDQ (Zen 3): VAES S-boxes, and GHASH two
 * blocks a ymm register, 32 a reduction (ghash_vpclmul_avx2.h's table).
 *
 * Why stitch: apart, a 16 KiB record took five CTR calls (GCM's chunks, so
 * that each is hashed while in L1), each paying the per-call set-up, and
 * GHASH ran alone. Here the set-up is paid once a record and a batch's
 * GHASH runs inside another batch's round loop (SL_HASH_STEP in
 * aria_sliced.h): four blocks after each of the first eight diffusion
 * layers, where the products can take pipes the rounds leave idle. On Zen 3
 * that made the VAES loop 7% faster than hashing each batch after it, the
 * AES-NI one 0.6%: there AESENC and PCLMULQDQ share the pipes the split
 * ymm S-boxes already fill.
 *  - opening, the batch being decrypted is hashed: its ciphertext is read
 *    during the rounds, before any output of the batch is stored (so in ==
 *    out is safe);
 *  - sealing, the batch encrypted one step before is hashed, from the
 *    output; the last one is hashed after the loop.
 * Whole batches go straight from in to out. The tag mask E(K, J0) rides in
 * the first batch with up to 31 blocks of data, through a stack buffer,
 * unless the record is a whole number of batches (a full 16 KiB TLS record):
 * then the mask is one unsliced block on the side and every batch is whole.
 * What is left after the whole batches, under 32 blocks, goes through the
 * buffer too, hashed apart. Records of up to three batches (a 1500-byte
 * one) go whole through the buffer, unstitched (SMALL_BATCHES).
 */
#include <string.h>

#include "aria.h"
#include "gcm.h"
#include "util.h"

#ifdef GCM_ARIA_VAES
#include "ghash_vpclmul_avx2.h"
#define ARIA_AVX2_SBOX ARIA_SL_VAES
#define GCM_ARIA_FN sotls_gcm_aria_vaes_avx2
#define GH_POWERS VPCLMUL256_POWERS
#define GH_UPDATE sotls_ghash_update_vpclmul_avx2
#else
#include "ghash_pclmul.h"
#define ARIA_AVX2_SBOX ARIA_SL_AESNI
#define GCM_ARIA_FN sotls_gcm_aria_aesni_avx2
#define GH_POWERS PCLMUL_POWERS
#define GH_UPDATE sotls_ghash_update_pclmul
#endif

#define BATCH 32 /* blocks: one ymm batch of the byte-sliced ARIA */
#define STEP 4	 /* blocks hashed a slot */

_Static_assert(BATCH % GH_POWERS == 0 && GH_POWERS % STEP == 0,
	       "a batch is whole reductions, a reduction whole steps");
_Static_assert(BATCH / STEP <= 10, "ARIA-128's round loop has ten slots");

/* What the hook hashes: p (NULL: nothing) with the key table, the running
 * Y, and the unreduced products of the current reduction. */
struct aria_sl_hash {
	const uint8_t *p;
	const struct sotls_ghash_key *gk;
	__m128i y;
#ifdef GCM_ARIA_VAES
	struct acc256 a;
#else
	struct ghash_acc a;
#endif
};

/* Blocks STEP * slot .. + STEP - 1 of the batch at hs->p: the first block
 * of each reduction carries Y, the last ends it. */
static inline __attribute__((always_inline)) void hash_slot(struct aria_sl_hash *hs,
							    unsigned slot)
{
	if (hs == NULL || hs->p == NULL || slot >= BATCH / STEP)
		return;

	const size_t first = STEP * slot, k = first % GH_POWERS;
	const uint8_t *p = hs->p + 16 * first;
#ifdef GCM_ARIA_VAES
	const struct vpclmul256_tab *t = vpclmul256_tab(hs->gk);
	__m256i x0 = bswap2(_mm256_loadu_si256((const __m256i *)p));

	if (k == 0) {
		x0 ^= _mm256_zextsi128_si256(hs->y);
		hs->a = acc256_zero();
	}
	acc256_mul(&hs->a, x0, _mm256_loadu_si256((const __m256i *)&t->key[k]),
		   _mm256_loadu_si256((const __m256i *)&t->mid[k]));
	acc256_mul_at(&hs->a, t, p + 32, k + 2);
	if (k + STEP == GH_POWERS)
		hs->y = acc256_reduce(&hs->a);
#else
	const struct pclmul_tab *t = pclmul_tab(hs->gk);

	if (k == 0) {
		hs->a = ghash_acc_zero();
		ghash_acc_mul(&hs->a, ghash_load(p) ^ hs->y, t->key[0], t->mid[0]);
	} else {
		ghash_acc_mul(&hs->a, ghash_load(p), t->key[k], t->mid[k]);
	}
	for (size_t i = 1; i < STEP; i++)
		ghash_acc_mul(&hs->a, ghash_load(p + 16 * i), t->key[k + i], t->mid[k + i]);
	if (k + STEP == GH_POWERS)
		hs->y = ghash_acc_reduce(&hs->a);
#endif
}

#define SL_WIDTH 256
#define SL_TERNLOG 0
#define SL_SBOX ARIA_AVX2_SBOX
#define SL_HASH_STEP(hs, slot) hash_slot((hs), (slot))
#include "aria_sliced.h"

#define SL_WIDTH 128
#define SL_SBOX ARIA_SL_AESNI
#include "aria_sliced.h"

/* What a record shares: the sliced context with its S-box keys, the fixed
 * bytes of the counter block. */
struct record {
	struct aria_sl_ctx cx;
	uint8_t sk[SOTLS_ARIA_MAX_ROUNDS - 1][16];
	const struct sotls_aria_key *k;
	uint8_t ctr[16];
};

/* CTR over 0 < nb <= BATCH blocks in place from counter c, as
 * aria_aesni_avx2.c splits them: unsliced for a few, one xmm batch up to
 * 16, else one ymm batch. */
static void part(struct record *rec, uint32_t c, uint8_t *buf, size_t nb)
{
	if (nb <= ARIA_AES_UNSLICED_MAX) {
		uint8_t ctr[16];

		memcpy(ctr, rec->ctr, 12);
		sotls_store_be32(ctr + 12, c);
		aria_aes_ctr_unsliced(rec->k, ctr, buf, buf, nb);
	} else if (nb <= 16) {
		aria_blocks_xmm(&rec->cx, c, buf, buf, nb, NULL);
	} else {
		aria_blocks_ymm(&rec->cx, c, buf, buf, nb, NULL);
	}
}

/*
 * Records of up to this many batches go whole through the buffer, mask and
 * all, hashed in one pass after (or before) the plain batches: with so few
 * batches, stitching saves less than splitting the record into a buffered
 * head, whole batches and a buffered tail costs (measured at 1500 bytes).
 */
#define SMALL_BATCHES 3

/*
 * n bytes (no more than 16 * (SMALL_BATCHES * BATCH - 1)) from counter c
 * through a stack buffer, preceded by the zero block whose keystream goes
 * to mask if mask is not NULL; the ciphertext, zero-padded, hashed into y.
 * Returns the number of counters used.
 */
static size_t buffered(struct record *rec, const struct sotls_ghash_key *gk, bool open,
		       uint32_t c, uint8_t y[16], const uint8_t *in, uint8_t *out, size_t n,
		       uint8_t *mask)
{
	_Alignas(32) uint8_t buf[16 * BATCH * SMALL_BATCHES];
	const size_t lead = mask != NULL ? 16 : 0, nb = (lead + n + 15) / 16;

	/* The callers' bound, which GCC 12 cannot see through nb's rounding. */
	if (n > sizeof(buf) - lead)
		__builtin_unreachable();
	memset(buf, 0, 16 * nb);
	if (n > 0)
		memcpy(buf + lead, in, n);
	if (open)
		GH_UPDATE(gk, y, buf + lead, (n + 15) / 16);
	for (size_t i = 0; i < nb; i += BATCH)
		part(rec, c + (uint32_t)i, buf + 16 * i, nb - i < BATCH ? nb - i : BATCH);
	if (n > 0)
		memcpy(out, buf + lead, n);
	if (mask != NULL)
		memcpy(mask, buf, 16);
	if (!open) {
		memset(buf + lead + n, 0, 16 * nb - lead - n);
		GH_UPDATE(gk, y, buf + lead, (n + 15) / 16);
	}
	sotls_wipe(buf, 16 * nb);
	return nb;
}

void GCM_ARIA_FN(const union sotls_aead_cipher_key *k, const struct sotls_ghash_key *gk,
		 bool open, const uint8_t j0[16], uint8_t y[16], const uint8_t *in, uint8_t *out,
		 size_t len, uint8_t mask[16])
{
	struct record rec;
	uint32_t c = sotls_load_be32(j0 + 12);
	size_t done = 0;

	rec.k = &k->aria;
	memcpy(rec.ctr, j0, 16);
	/* A record of a few blocks, the mask's included, runs unsliced (part):
	 * the sliced set-up below would cost more than the blocks (an empty
	 * record took 205 ns with it, 141 without). */
	if (len <= 16 * (ARIA_AES_UNSLICED_MAX - 1)) {
		/* rec holds nothing secret yet: nothing to wipe. */
		buffered(&rec, gk, open, c, y, in, out, len, mask);
		return;
	}
	aria_prepare_xmm(&rec.cx, rec.k, j0);
	aria_aes_sbox_keys(rec.sk, rec.k);
	rec.cx.sk = (const uint8_t(*)[16])rec.sk;

	if (len <= 16 * (SMALL_BATCHES * BATCH - 1)) {
		buffered(&rec, gk, open, c, y, in, out, len, mask);
		sotls_wipe(&rec, sizeof(rec));
		return;
	}
	if (len % (16 * BATCH) == 0) {
		memset(mask, 0, 16);
		part(&rec, c++, mask, 1);
	} else {
		done = 16 * (BATCH - 1);
		c += (uint32_t)buffered(&rec, gk, open, c, y, in, out, done, mask);
	}

	struct aria_sl_hash hs = { .p = NULL, .gk = gk, .y = ghash_load(y) };
	const uint8_t *prev = NULL;

	for (; len - done >= 16 * BATCH; done += 16 * BATCH, c += BATCH) {
		hs.p = open ? in + done : prev;
		aria_blocks_ymm(&rec.cx, c, in + done, out + done, BATCH, &hs);
		prev = out + done;
	}
	ghash_store(y, hs.y);
	if (!open && prev != NULL)
		GH_UPDATE(gk, y, prev, BATCH);
	if (done < len)
		buffered(&rec, gk, open, c, y, in + done, out + done, len - done, NULL);
	sotls_wipe(&rec, sizeof(rec));
	sotls_wipe(&hs, sizeof(hs));
}

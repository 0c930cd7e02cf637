/*
 * GCM (NIST SP 800-38D) over ARIA or AES, for 12-byte nonces and 16-byte
 * tags: one engine, with the cipher, GHASH and stitched bulk code each
 * picked from its table by the CPU's features (cpu.h).
 *
 * CTR and GHASH run alternately over chunks of CHUNK_BLOCKS blocks, so each
 * chunk is hashed while it is still in L1, unless the implementation has a
 * bulk routine that does all of it (tag mask and partial block included) in
 * one pass. The byte-sliced ciphers (and the bitsliced AES) are cheapest per
 * block at full width, so for them two things never get a call of their own:
 * the tag mask E(K, J0) rides in the first chunk, and a partial last block
 * rides with the blocks before it (both through a stack buffer). For ciphers
 * whose single blocks are cheap ("narrow" implementations) the mask and the
 * partial block get calls of their own, and every whole block goes straight
 * from in to out.
 */
#include "aead.h"

#include <stdio.h>
#include <string.h>

#include "gcm.h"
#include "crypto_err.h"
#include "ct_valgrind.h"
#include "util.h"

#define BLOCK 16
#define CHUNK_BLOCKS 256
#define CHUNK_BYTES (CHUNK_BLOCKS * BLOCK)
#define FIRST_BYTES (32 * BLOCK)

/* Each cipher's CTR routine, taking the key union (compiles to a jump). */
#define ADAPT(member, fn)                                                                  \
	static void fn##_u(const union sotls_aead_cipher_key *k, uint8_t ctr[16],          \
			   const uint8_t *in, uint8_t *out, size_t nblocks)                \
	{                                                                                  \
		fn(&k->member, ctr, in, out, nblocks);                                     \
	}
ADAPT(aria, sotls_aria_ctr32_generic)
ADAPT(aes, sotls_aes_ctr32_ct64)
/* Each architecture's tables name only the files meson.build compiles for it. */
#if defined(__x86_64__)
ADAPT(aria, sotls_aria_ctr32_aesni_avx)
ADAPT(aria, sotls_aria_ctr32_aesni_avx2)
ADAPT(aria, sotls_aria_ctr32_vaes_avx2)
ADAPT(aria, sotls_aria_ctr32_gfni_avx2)
ADAPT(aria, sotls_aria_ctr32_gfni_avx512)
ADAPT(aes, sotls_aes_ctr32_aesni)
ADAPT(aes, sotls_aes_ctr32_vaes_avx512)
#elif defined(__aarch64__)
ADAPT(aria, sotls_aria_ctr32_neon)
ADAPT(aes, sotls_aes_ctr32_armv8ce)
#endif

enum family { FAMILY_ARIA, FAMILY_AES };

/* Each entry needs the instruction sets its file is compiled with (meson.build). */
#define NEEDS_AVX512_BASE (SOTLS_CPU_AVX512 | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX | SOTLS_CPU_SSSE3)
#define NEEDS_AVX2_VPCLMUL                                                                 \
	(SOTLS_CPU_VPCLMUL | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX_BASE)

/* The CTR routines, best first, per family. */
static const struct sotls_gcm_ctr CTRS_ARIA[] = {
#if defined(__x86_64__)
	{{"aria-gfni-avx512", NEEDS_AVX512_BASE | SOTLS_CPU_GFNI},
	 sotls_aria_ctr32_gfni_avx512_u, false},
	{{"aria-gfni-avx2", SOTLS_CPU_GFNI | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX | SOTLS_CPU_SSSE3},
	 sotls_aria_ctr32_gfni_avx2_u, false},
	{{"aria-vaes-avx2", SOTLS_CPU_VAES | SOTLS_CPU_AES | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX_BASE},
	 sotls_aria_ctr32_vaes_avx2_u, false},
	{{"aria-aesni-avx2", SOTLS_CPU_AES | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX_BASE},
	 sotls_aria_ctr32_aesni_avx2_u, false},
	{{"aria-aesni-avx", SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE},
	 sotls_aria_ctr32_aesni_avx_u, false},
#elif defined(__aarch64__)
	{{"aria-neon", SOTLS_CPU_AES | SOTLS_CPU_ASIMD}, sotls_aria_ctr32_neon_u, false},
#endif
	{{"aria-generic", 0}, sotls_aria_ctr32_generic_u, false},
};

static const struct sotls_gcm_ctr CTRS_AES[] = {
#if defined(__x86_64__)
	{{"aes-vaes-avx512", NEEDS_AVX512_BASE | SOTLS_CPU_VAES | SOTLS_CPU_AES},
	 sotls_aes_ctr32_vaes_avx512_u, true},
	{{"aes-aesni", SOTLS_CPU_AES | SOTLS_CPU_AVX_BASE}, sotls_aes_ctr32_aesni_u, true},
#elif defined(__aarch64__)
	{{"aes-armv8ce", SOTLS_CPU_AES | SOTLS_CPU_ASIMD}, sotls_aes_ctr32_armv8ce_u, true},
#endif
	/* Bitsliced, four blocks a pass: wide, like the ARIAs. */
	{{"aes-ct64", 0}, sotls_aes_ctr32_ct64_u, false},
};

static const struct sotls_gcm_ghash GHASHES[] = {
#if defined(__x86_64__)
	{{"ghash-vpclmul-avx512", NEEDS_AVX512_BASE | SOTLS_CPU_SSE41 | SOTLS_CPU_VPCLMUL |
					  SOTLS_CPU_PCLMUL},
	 sotls_ghash_init_vpclmul_avx512, sotls_ghash_update_vpclmul_avx512},
	{{"ghash-vpclmul-avx2", NEEDS_AVX2_VPCLMUL},
	 sotls_ghash_init_vpclmul_avx2, sotls_ghash_update_vpclmul_avx2},
	{{"ghash-pclmul", SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE}, sotls_ghash_init_pclmul,
	 sotls_ghash_update_pclmul},
#elif defined(__aarch64__)
	{{"ghash-pmull", SOTLS_CPU_PMULL | SOTLS_CPU_ASIMD}, sotls_ghash_init_pmull,
	 sotls_ghash_update_pmull},
#endif
	{{"ghash-generic", 0}, sotls_ghash_init_generic, sotls_ghash_update_generic},
};

/* AES-GCM's stitched loops; the last entry (none) leaves CTR and GHASH to take turns. */
static const struct sotls_gcm_bulk BULKS_AES[] = {
#if defined(__x86_64__)
	{{"gcm-aes-vaes-avx512", NEEDS_AVX512_BASE | SOTLS_CPU_SSE41 | SOTLS_CPU_VAES |
					 SOTLS_CPU_VPCLMUL | SOTLS_CPU_AES | SOTLS_CPU_PCLMUL},
	 sotls_gcm_aes_vaes_avx512, &GHASHES[0]},
	{{"gcm-aes-vaes-avx2", NEEDS_AVX2_VPCLMUL | SOTLS_CPU_VAES | SOTLS_CPU_AES},
	 sotls_gcm_aes_vaes_avx2, &GHASHES[1]},
	{{"gcm-aes-aesni-pclmul", SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE},
	 sotls_gcm_aes_aesni_pclmul, &GHASHES[2]},
#endif
	{{NULL, 0}, NULL, NULL},
};

/* ARIA-GCM's stitched loops, for AVX2 without GFNI: with GFNI the sliced
 * CTR and GHASH take turns (the entry without a routine). */
static const struct sotls_gcm_bulk BULKS_ARIA[] = {
#if defined(__x86_64__)
	{{"no-stitch-gfni", SOTLS_CPU_GFNI | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX | SOTLS_CPU_SSSE3},
	 NULL, NULL},
	{{"gcm-aria-vaes-avx2", NEEDS_AVX2_VPCLMUL | SOTLS_CPU_VAES | SOTLS_CPU_AES},
	 sotls_gcm_aria_vaes_avx2, &GHASHES[1]},
	{{"gcm-aria-aesni-avx2", SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX2 |
					 SOTLS_CPU_AVX_BASE},
	 sotls_gcm_aria_aesni_avx2, &GHASHES[2]},
#endif
	{{NULL, 0}, NULL, NULL},
};

#define N(t) (sizeof(t) / sizeof((t)[0]))

struct choice {
	const struct sotls_gcm_ctr *ctr;
	const struct sotls_gcm_ghash *gh;
	const struct sotls_gcm_bulk *bulk;
};

static struct choice choose(enum family fam, uint32_t have)
{
	struct choice c = {
		.ctr = fam == FAMILY_AES ? SOTLS_CPU_PICK(CTRS_AES, have)
					 : SOTLS_CPU_PICK(CTRS_ARIA, have),
		.bulk = fam == FAMILY_AES ? SOTLS_CPU_PICK(BULKS_AES, have)
					  : SOTLS_CPU_PICK(BULKS_ARIA, have),
	};

	if (c.bulk != NULL && c.bulk->bulk == NULL)
		c.bulk = NULL;
	c.gh = c.bulk != NULL ? c.bulk->ghash : SOTLS_CPU_PICK(GHASHES, have);
	return c;
}

static void name(struct choice c, char *buf, size_t len)
{
	if (c.bulk != NULL)
		snprintf(buf, len, "sotls-%s", c.bulk->impl.name);
	else
		snprintf(buf, len, "sotls-%s+%s", c.ctr->impl.name, c.gh->impl.name);
}

static enum family family(enum sotls_aead_alg alg)
{
	return alg == SOTLS_AEAD_AES_128_GCM || alg == SOTLS_AEAD_AES_256_GCM ? FAMILY_AES
									      : FAMILY_ARIA;
}

size_t sotls_aead_key_len(enum sotls_aead_alg alg)
{
	switch (alg) {
	case SOTLS_AEAD_ARIA_128_GCM:
		return 16;
	case SOTLS_AEAD_ARIA_256_GCM:
		return 32;
	case SOTLS_AEAD_AES_128_GCM:
		return 16;
	case SOTLS_AEAD_AES_256_GCM:
		return 32;
	}
	return 0;
}

const char *sotls_aead_alg_name(enum sotls_aead_alg alg)
{
	switch (alg) {
	case SOTLS_AEAD_ARIA_128_GCM:
		return "ARIA-128-GCM";
	case SOTLS_AEAD_ARIA_256_GCM:
		return "ARIA-256-GCM";
	case SOTLS_AEAD_AES_128_GCM:
		return "AES-128-GCM";
	case SOTLS_AEAD_AES_256_GCM:
		return "AES-256-GCM";
	}
	return NULL;
}

int sotls_aead_init_features(struct sotls_aead *a, enum sotls_aead_alg alg, const uint8_t *key,
			     size_t key_len, uint32_t features)
{
	static const uint8_t ZERO[BLOCK];
	uint8_t h[BLOCK], ctr[BLOCK];

	if (a == NULL || key == NULL || key_len == 0 || key_len != sotls_aead_key_len(alg) ||
	    (features & ~SOTLS_CPU_ALL) != 0)
		return SOTLS_CRYPTO_BAD_ARG;
	if ((features & ~sotls_cpu_detected()) != 0)
		return SOTLS_CRYPTO_UNSUPPORTED;

	const enum family fam = family(alg);
	const struct choice c = choose(fam, features);
	a->ctr = c.ctr;
	a->gh = c.gh;
	a->bulk = c.bulk;
	a->alg = alg;
	name(c, a->name, sizeof(a->name));
	/* The members differ in size: no bytes of an earlier key may remain. */
	sotls_wipe(&a->cipher, sizeof(a->cipher));
	int rc = fam == FAMILY_AES ? sotls_aes_set_key(&a->cipher.aes, key, key_len)
				   : sotls_aria_set_key(&a->cipher.aria, key, key_len);
	if (rc != 0)
		return rc;
	/* H = E(K, 0^128): the keystream of the all-zero counter block. */
	memset(ctr, 0, sizeof(ctr));
	a->ctr->ctr32(&a->cipher, ctr, ZERO, h, 1);
	a->gh->init(&a->ghash, h);
	sotls_wipe(h, sizeof(h));
	return 0;
}

int sotls_aead_init(struct sotls_aead *a, enum sotls_aead_alg alg, const uint8_t *key,
		    size_t key_len)
{
	return sotls_aead_init_features(a, alg, key, key_len, sotls_cpu_features());
}

void sotls_aead_describe(enum sotls_aead_alg alg, uint32_t features, char *buf, size_t len)
{
	name(choose(family(alg), features), buf, len);
}

size_t sotls_aead_variants(enum sotls_aead_alg alg, uint32_t have, uint32_t *sets, size_t max)
{
	const enum family fam = family(alg);
	_Static_assert(N(CTRS_AES) <= N(CTRS_ARIA) && N(BULKS_AES) <= N(BULKS_ARIA),
		       "heads has room for either family");
	const struct sotls_impl *heads[N(CTRS_ARIA) + N(GHASHES) + N(BULKS_ARIA)];
	struct choice seen[1 + N(heads)];
	uint32_t cand[1 + N(heads)];
	size_t nh = 0, nc = 0, n = 0;

	for (size_t i = 0; i < (fam == FAMILY_AES ? N(CTRS_AES) : N(CTRS_ARIA)); i++)
		heads[nh++] = fam == FAMILY_AES ? &CTRS_AES[i].impl : &CTRS_ARIA[i].impl;
	for (size_t i = 0; i < N(GHASHES); i++)
		heads[nh++] = &GHASHES[i].impl;
	for (size_t i = 0; i < (fam == FAMILY_AES ? N(BULKS_AES) : N(BULKS_ARIA)); i++)
		heads[nh++] = fam == FAMILY_AES ? &BULKS_AES[i].impl : &BULKS_ARIA[i].impl;
	/* have first, so that the best comes first; the portable code (0) last. */
	cand[nc++] = have;
	for (size_t i = 0; i < nh; i++)
		if ((heads[i]->needs & ~have) == 0 && heads[i]->needs != 0)
			cand[nc++] = heads[i]->needs;
	cand[nc++] = 0;
	for (size_t i = 0; i < nc && n < max; i++) {
		const struct choice c = choose(fam, cand[i]);
		bool dup = false;

		for (size_t j = 0; j < n; j++)
			dup |= seen[j].ctr == c.ctr && seen[j].gh == c.gh && seen[j].bulk == c.bulk;
		if (!dup) {
			seen[n] = c;
			sets[n++] = cand[i];
		}
	}
	return n;
}

const char *sotls_aead_impl_name(const struct sotls_aead *a)
{
	return a != NULL && a->ctr != NULL ? a->name : NULL;
}

uint32_t sotls_aead_impl_needs(const struct sotls_aead *a)
{
	if (a == NULL || a->ctr == NULL)
		return 0;
	return a->bulk != NULL ? a->bulk->impl.needs | a->ctr->impl.needs
			       : a->ctr->impl.needs | a->gh->impl.needs;
}

void sotls_aead_clear(struct sotls_aead *a)
{
	if (a != NULL)
		sotls_wipe(a, sizeof(*a));
}

/* GHASH over n bytes, the last partial block padded with zeros. */
static void ghash_bytes(const struct sotls_aead *a, uint8_t y[BLOCK], const uint8_t *p, size_t n)
{
	const size_t full = n / BLOCK;

	a->gh->update(&a->ghash, y, p, full);
	if (n % BLOCK != 0) {
		uint8_t last[BLOCK] = {0};

		memcpy(last, p + full * BLOCK, n % BLOCK);
		a->gh->update(&a->ghash, y, last, 1);
	}
}

enum direction { SEAL, OPEN };

/*
 * One chunk of CTR + GHASH. When sealing, the ciphertext is the output and is
 * hashed after encryption; when opening it is the input and is hashed first,
 * which also makes in-place operation safe.
 */
static void crypt_chunk(const struct sotls_aead *a, enum direction dir, uint8_t ctr[BLOCK],
			uint8_t y[BLOCK], const uint8_t *in, uint8_t *out, size_t n)
{
	if (dir == OPEN)
		ghash_bytes(a, y, in, n);
	a->ctr->ctr32(&a->cipher, ctr, in, out, n / BLOCK);
	if (dir == SEAL)
		ghash_bytes(a, y, out, n);
}

/*
 * Like crypt_chunk, for a piece that does not start or end on the fast path:
 * runs through buf, optionally preceded by one zero block whose keystream
 * (E(K, J0)) is returned in mask.
 */
static void crypt_buffered(const struct sotls_aead *a, enum direction dir, uint8_t ctr[BLOCK],
			   uint8_t y[BLOCK], const uint8_t *in, uint8_t *out, size_t n,
			   uint8_t *mask)
{
	_Alignas(64) uint8_t buf[CHUNK_BYTES + BLOCK];
	const size_t lead = mask != NULL ? BLOCK : 0;
	const size_t blocks = (lead + n + BLOCK - 1) / BLOCK;

	/* n may be 0 with in and out NULL, which memcpy must not be given. */
	memset(buf, 0, lead);
	if (n > 0)
		memcpy(buf + lead, in, n);
	memset(buf + lead + n, 0, blocks * BLOCK - lead - n);
	if (dir == OPEN)
		ghash_bytes(a, y, in, n);
	a->ctr->ctr32(&a->cipher, ctr, buf, buf, blocks);
	if (n > 0)
		memcpy(out, buf + lead, n);
	if (mask != NULL)
		memcpy(mask, buf, BLOCK);
	sotls_wipe(buf, blocks * BLOCK);
	if (dir == SEAL)
		ghash_bytes(a, y, out, n);
}

/* Encrypts or decrypts in into out and leaves the computed tag in tag. */
static int gcm(const struct sotls_aead *a, enum direction dir, const uint8_t *nonce,
	       const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len, uint8_t *out,
	       uint8_t tag[BLOCK])
{
	uint8_t ctr[BLOCK], y[BLOCK] = {0}, mask[BLOCK], lens[BLOCK];

	if (a == NULL || a->ctr == NULL || nonce == NULL || (aad == NULL && aad_len != 0) ||
	    ((in == NULL || out == NULL) && len != 0) || (uint64_t)len > SOTLS_AEAD_MAX_LEN ||
	    aad_len > SIZE_MAX / 8)
		return SOTLS_CRYPTO_BAD_ARG;

	memcpy(ctr, nonce, SOTLS_AEAD_NONCE_LEN);
	sotls_store_be32(ctr + SOTLS_AEAD_NONCE_LEN, 1);
	ghash_bytes(a, y, aad, aad_len);

	if (a->bulk != NULL) {
		a->bulk->bulk(&a->cipher, &a->ghash, dir == OPEN, ctr, y, in, out, len, mask);
	} else if (a->ctr->narrow) {
		static const uint8_t ZERO[BLOCK];
		const size_t whole = len / BLOCK * BLOCK;

		a->ctr->ctr32(&a->cipher, ctr, ZERO, mask, 1);
		for (size_t off = 0; off < whole; off += CHUNK_BYTES) {
			const size_t n = whole - off < CHUNK_BYTES ? whole - off : CHUNK_BYTES;

			crypt_chunk(a, dir, ctr, y, in + off, out + off, n);
		}
		if (whole != len)
			crypt_buffered(a, dir, ctr, y, in + whole, out + whole, len - whole, NULL);
	} else {
		/* The first piece carries J0; it ends on a block boundary unless it
		 * is all. A record that fits one chunk goes whole; of a longer one
		 * only a batch of the widest implementations goes through the
		 * buffer, which saves copying most of a chunk twice. */
		size_t off = len < CHUNK_BYTES - BLOCK ? len : FIRST_BYTES - BLOCK;
		crypt_buffered(a, dir, ctr, y, in, out, off, mask);
		while (len - off >= CHUNK_BYTES) {
			crypt_chunk(a, dir, ctr, y, in + off, out + off, CHUNK_BYTES);
			off += CHUNK_BYTES;
		}
		const size_t whole = (len - off) / BLOCK * BLOCK;
		if (whole == len - off) {
			crypt_chunk(a, dir, ctr, y, in + off, out + off, whole);
		} else {
			crypt_buffered(a, dir, ctr, y, in + off, out + off, len - off, NULL);
		}
	}

	sotls_store_be64(lens, (uint64_t)aad_len * 8);
	sotls_store_be64(lens + 8, (uint64_t)len * 8);
	a->gh->update(&a->ghash, y, lens, 1);
	for (int i = 0; i < BLOCK; i++)
		tag[i] = y[i] ^ mask[i];
	sotls_wipe(mask, sizeof(mask));
	sotls_wipe(y, sizeof(y));
	return 0;
}

int sotls_aead_seal(const struct sotls_aead *a, const uint8_t nonce[SOTLS_AEAD_NONCE_LEN],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    uint8_t *out, uint8_t tag[SOTLS_AEAD_TAG_LEN])
{
	if (tag == NULL)
		return SOTLS_CRYPTO_BAD_ARG;
	return gcm(a, SEAL, nonce, aad, aad_len, in, len, out, tag);
}

int sotls_aead_open(const struct sotls_aead *a, const uint8_t nonce[SOTLS_AEAD_NONCE_LEN],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    const uint8_t tag[SOTLS_AEAD_TAG_LEN], uint8_t *out)
{
	uint8_t computed[SOTLS_AEAD_TAG_LEN];

	if (tag == NULL)
		return SOTLS_CRYPTO_BAD_ARG;
	int rc = gcm(a, OPEN, nonce, aad, aad_len, in, len, out, computed);
	if (rc == 0) {
		int bad = sotls_ct_memcmp(computed, tag, sizeof(computed)) != 0;

		/* The verdict is public: the record layer answers it with an alert. */
		SOTLS_CT_PUBLIC(&bad, sizeof(bad));
		if (bad) {
			sotls_wipe(out, len);
			rc = SOTLS_CRYPTO_BAD_TAG;
		}
	}
	sotls_wipe(computed, sizeof(computed));
	return rc;
}

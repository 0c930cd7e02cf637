/*
 * GHASH with PCLMULQDQ (internal to lib/crypto): the table of powers of H
 * that sotls_ghash_init_pclmul fills, and the fold of up to 32 blocks with
 * one reduction, shared by
 * the GHASH routine (ghash_pclmul.c) and the stitched AES-NI AES-GCM loop
 * (gcm_aes_aesni_pclmul.c). The including file is compiled with what
 * ghash_clmul.h needs (PCLMUL, SSSE3, AVX).
 */
#ifndef SOTLS_CRYPTO_GHASH_PCLMUL_H
#define SOTLS_CRYPTO_GHASH_PCLMUL_H

#include <stddef.h>

#include "ghash.h"
#include "ghash_clmul.h"

/*
 * 32 powers: one reduction for a whole batch of the stitched ARIA loop
 * (gcm_aria_aesni_avx2.c), and for every 32 blocks of GHASH alone; the
 * stitched AES-NI AES loop hashes its batches of 8 with the last 8.
 */
#define PCLMUL_POWERS 32

/* Highest power first, so that the n blocks of a short run use the last n. */
/* Overlays the opaque byte table, hence may_alias. */
struct __attribute__((may_alias)) pclmul_tab {
	__m128i key[PCLMUL_POWERS];	/* key[i]: H^(PCLMUL_POWERS-i)*x^-1 */
	__m128i mid[PCLMUL_POWERS];	/* ghash_mid(key[i]) */
};

_Static_assert(sizeof(struct pclmul_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "PCLMUL GHASH table too large");

static inline const struct pclmul_tab *pclmul_tab(const struct sotls_ghash_key *gk)
{
	return (const struct pclmul_tab *)gk->tab;
}

/* (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= PCLMUL_POWERS. */
static inline __m128i pclmul_fold(const struct pclmul_tab *t, __m128i y, const uint8_t *in,
				  size_t n)
{
	const __m128i *key = &t->key[PCLMUL_POWERS - n], *mid = &t->mid[PCLMUL_POWERS - n];
	struct ghash_acc a = ghash_acc_zero();

	/* The block carrying Y goes last, off the critical path until the end. */
	for (size_t i = 1; i < n; i++)
		ghash_acc_mul(&a, ghash_load(in + 16 * i), key[i], mid[i]);
	ghash_acc_mul(&a, ghash_load(in) ^ y, key[0], mid[0]);
	return ghash_acc_reduce(&a);
}

#endif

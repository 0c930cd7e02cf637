/* The GCM engine's view of one implementation (internal to lib/crypto). */
#ifndef SOTLS_CRYPTO_GCM_H
#define SOTLS_CRYPTO_GCM_H

#include <stdbool.h>

#include "aead.h"
#include "cpu.h"
#include "ghash.h"

/*
 * CTR over the key union, with the contract of sotls_aria_ctr32_fn and
 * sotls_aes_ctr32_fn (gcm.c adapts each cipher's routine to it).
 */
typedef void (*sotls_gcm_ctr32_fn)(const union sotls_aead_cipher_key *k, uint8_t ctr[16],
				   const uint8_t *in, uint8_t *out, size_t nblocks);

/*
 * All of GCM's per-byte work in one pass, for any len: mask = E(K, j0);
 * out = in XOR the keystream from counter block j0 + 1 on; the ciphertext
 * (in when opening, out when sealing), zero-padded to whole blocks, folded
 * into y. in == out is allowed. Only the length block is left to do.
 */
typedef void (*sotls_gcm_bulk_fn)(const union sotls_aead_cipher_key *k,
				  const struct sotls_ghash_key *gk, bool open,
				  const uint8_t j0[16], uint8_t y[16], const uint8_t *in,
				  uint8_t *out, size_t len, uint8_t mask[16]);

/* The entries of the implementation tables, best first, in gcm.c. */
struct sotls_gcm_ctr {
	struct sotls_impl impl;
	sotls_gcm_ctr32_fn ctr32;
	/*
	 * Whether one block costs about a block's worth of a ctr32 call. If so
	 * the tag mask E(K, J0) and a partial last block get calls of their
	 * own and whole blocks go straight from in to out; if not (the
	 * byte-sliced ciphers, cheapest per block at full width) both ride in
	 * full-width calls through a stack buffer.
	 */
	bool narrow;
};

struct sotls_gcm_ghash {
	struct sotls_impl impl;
	sotls_ghash_init_fn init;
	sotls_ghash_update_fn update;
};

struct sotls_gcm_bulk {
	struct sotls_impl impl;
	sotls_gcm_bulk_fn bulk;
	/* The GHASH whose key table the bulk routine reads (its needs are
	 * among the bulk's). */
	const struct sotls_gcm_ghash *ghash;
};

/* The stitched VAES + VPCLMULQDQ AES-GCM loop (gcm_aes_vaes_avx512.c). */
void sotls_gcm_aes_vaes_avx512(const union sotls_aead_cipher_key *k,
			       const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			       uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			       uint8_t mask[16]);

/* The stitched VAES + VPCLMULQDQ AES-GCM loop on ymm, without AVX-512 (gcm_aes_vaes_avx2.c). */
void sotls_gcm_aes_vaes_avx2(const union sotls_aead_cipher_key *k,
			     const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			     uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			     uint8_t mask[16]);

/* The stitched AES-NI + PCLMULQDQ AES-GCM loop (gcm_aes_aesni_pclmul.c). */
void sotls_gcm_aes_aesni_pclmul(const union sotls_aead_cipher_key *k,
				const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
				uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
				uint8_t mask[16]);

/* ARIA-GCM's bulk: byte-sliced ARIA through AES-NI with PCLMULQDQ GHASH
 * between its rounds (gcm_aria_aesni_avx2.c), and through VAES with
 * VPCLMULQDQ (gcm_aria_vaes_avx2.c). */
void sotls_gcm_aria_aesni_avx2(const union sotls_aead_cipher_key *k,
			       const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			       uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			       uint8_t mask[16]);
void sotls_gcm_aria_vaes_avx2(const union sotls_aead_cipher_key *k,
			      const struct sotls_ghash_key *gk, bool open, const uint8_t j0[16],
			      uint8_t y[16], const uint8_t *in, uint8_t *out, size_t len,
			      uint8_t mask[16]);

#endif

/*
 * ARIA (RFC 5794), encryption direction only: GCM never runs the block cipher
 * backwards. The key schedule is shared; each implementation provides a CTR
 * routine over any number of whole blocks.
 */
#ifndef SOTLS_CRYPTO_ARIA_H
#define SOTLS_CRYPTO_ARIA_H

#include <stddef.h>
#include <stdint.h>

#include "crypto_err.h"

#define SOTLS_ARIA_BLOCK 16
#define SOTLS_ARIA_MAX_ROUNDS 16

struct sotls_aria_key {
	/* Encryption round keys ek1 .. ek(rounds+1), bytes in the order of
	 * the 128-bit state (byte 0 is the most significant). */
	_Alignas(64) uint8_t rk[SOTLS_ARIA_MAX_ROUNDS + 1][16];
	unsigned rounds; /* 12, 14 or 16 */
};

/* key_len is 16, 24 or 32. Returns 0, or SOTLS_CRYPTO_BAD_ARG. */
int sotls_aria_set_key(struct sotls_aria_key *k, const uint8_t *key, size_t key_len);

/* One block, portable code. */
void sotls_aria_encrypt_block(const struct sotls_aria_key *k, const uint8_t in[16], uint8_t out[16]);

/*
 * CTR mode as GCM uses it: for i in 0..nblocks-1,
 *   out[i] = in[i] XOR E(K, ctr), then ctr's last 4 bytes += 1 (big endian,
 *   wrapping mod 2^32; the first 12 bytes never change).
 * On return ctr holds the next counter block. in == out is allowed; any other
 * overlap is not. No alignment is required. Handles any nblocks, including 0,
 * efficiently for counts below the implementation's natural width.
 */
typedef void (*sotls_aria_ctr32_fn)(const struct sotls_aria_key *k, uint8_t ctr[16],
				    const uint8_t *in, uint8_t *out, size_t nblocks);

void sotls_aria_ctr32_generic(const struct sotls_aria_key *k, uint8_t ctr[16],
			      const uint8_t *in, uint8_t *out, size_t nblocks);
void sotls_aria_ctr32_aesni_avx(const struct sotls_aria_key *k, uint8_t ctr[16],
				const uint8_t *in, uint8_t *out, size_t nblocks);
void sotls_aria_ctr32_aesni_avx2(const struct sotls_aria_key *k, uint8_t ctr[16],
				 const uint8_t *in, uint8_t *out, size_t nblocks);
void sotls_aria_ctr32_vaes_avx2(const struct sotls_aria_key *k, uint8_t ctr[16],
				const uint8_t *in, uint8_t *out, size_t nblocks);
void sotls_aria_ctr32_gfni_avx2(const struct sotls_aria_key *k, uint8_t ctr[16],
				const uint8_t *in, uint8_t *out, size_t nblocks);
/* Byte-sliced on NEON, S-boxes through AESE/AESD, 16 blocks a batch (aarch64). */
void sotls_aria_ctr32_neon(const struct sotls_aria_key *k, uint8_t ctr[16], const uint8_t *in,
			   uint8_t *out, size_t nblocks);
void sotls_aria_ctr32_gfni_avx512(const struct sotls_aria_key *k, uint8_t ctr[16],
				  const uint8_t *in, uint8_t *out, size_t nblocks);

#endif

/*
 * AES (FIPS-197), encryption direction only: GCM never runs the block cipher
 * backwards. The key schedule (aes_key.c) is shared; each implementation
 * provides a CTR routine over any number of whole blocks, with the contract
 * of aria.h's sotls_aria_ctr32_fn.
 */
#ifndef SOTLS_CRYPTO_AES_H
#define SOTLS_CRYPTO_AES_H

#include <stddef.h>
#include <stdint.h>

#include "crypto_err.h"

#define SOTLS_AES_BLOCK 16
#define SOTLS_AES_MAX_ROUNDS 14

struct sotls_aes_key {
	/* Round keys 0 .. rounds, bytes in the order of the state in memory
	 * (FIPS-197 w[4r] .. w[4r+3]): what AESENC takes as is. */
	_Alignas(64) uint8_t rk[SOTLS_AES_MAX_ROUNDS + 1][16];
	/* The same round keys in the bitsliced layout of aes_ct64.c, four
	 * copies side by side; from round 1 on with the S-box constant 0x63
	 * folded in (aes_internal.h). */
	uint64_t bs[SOTLS_AES_MAX_ROUNDS + 1][8];
	unsigned rounds; /* 10, 12 or 14 */
};

/* key_len is 16, 24 or 32. Returns 0, or SOTLS_CRYPTO_BAD_ARG. */
int sotls_aes_set_key(struct sotls_aes_key *k, const uint8_t *key, size_t key_len);

/*
 * CTR mode as GCM uses it: for i in 0..nblocks-1,
 *   out[i] = in[i] XOR E(K, ctr), then ctr's last 4 bytes += 1 (big endian,
 *   wrapping mod 2^32; the first 12 bytes never change).
 * On return ctr holds the next counter block. in == out is allowed; any other
 * overlap is not. No alignment is required. Any nblocks, including 0.
 */
typedef void (*sotls_aes_ctr32_fn)(const struct sotls_aes_key *k, uint8_t ctr[16],
				   const uint8_t *in, uint8_t *out, size_t nblocks);

/*
 * Calls f(R, ...) with R the constant 10, 12 or 14 that rounds holds (a
 * key's rounds field), so that an always-inline f is specialised for each
 * key size and its round loops unroll completely.
 */
#define SOTLS_AES_WITH_ROUNDS(rounds, f, ...)                                              \
	do {                                                                               \
		switch (rounds) {                                                          \
		case 10:                                                                   \
			f(10, __VA_ARGS__);                                                \
			break;                                                             \
		case 12:                                                                   \
			f(12, __VA_ARGS__);                                                \
			break;                                                             \
		default:                                                                   \
			f(14, __VA_ARGS__);                                                \
			break;                                                             \
		}                                                                          \
	} while (0)

/* Portable, constant time: bitsliced, four blocks in 64-bit words. */
void sotls_aes_ctr32_ct64(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks);
/* AES-NI (with AVX encodings), eight blocks interleaved. */
void sotls_aes_ctr32_aesni(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			   uint8_t *out, size_t nblocks);
/* ARMv8 AESE/AESMC, eight blocks interleaved (aarch64). */
void sotls_aes_ctr32_armv8ce(const struct sotls_aes_key *k, uint8_t ctr[16], const uint8_t *in,
			     uint8_t *out, size_t nblocks);
/* VAES on 512-bit registers, four blocks a register, 32 blocks in flight. */
void sotls_aes_ctr32_vaes_avx512(const struct sotls_aes_key *k, uint8_t ctr[16],
				 const uint8_t *in, uint8_t *out, size_t nblocks);

#endif

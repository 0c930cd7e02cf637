/*
 * SHA-256 (FIPS 180-4) for RFC 6979's HMAC in p256_ecdsa.c, with the
 * compression function in portable C (sha256.c) or with the SHA extensions
 * (sha256_shani.c on x86-64, sha256_armv8.c on aarch64), chosen once from the CPU. mbedTLS's SHA-256 has no x86
 * acceleration: in software it was a sixth of a P-256 signature.
 */
#ifndef SOTLS_CRYPTO_SHA256_H
#define SOTLS_CRYPTO_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

/* FIPS 180-4 §4.2.2's constants, for both compressions. */
extern const uint32_t sotls_sha256_k[64];

/* h = the compression of `blocks` 64-byte blocks into h. */
typedef void sotls_sha256_blocks_fn(uint32_t h[8], const uint8_t *p, size_t blocks);
sotls_sha256_blocks_fn sotls_sha256_blocks_generic, sotls_sha256_blocks_shani,
	sotls_sha256_blocks_armv8;
/* The compressions, best first, with the CPU features each needs. */
struct sotls_sha256_impl {
	struct sotls_impl impl;
	sotls_sha256_blocks_fn *blocks;
};
#if defined(__x86_64__) || defined(__aarch64__)
#define SOTLS_SHA256_N_IMPLS 2
#else
#define SOTLS_SHA256_N_IMPLS 1
#endif
extern const struct sotls_sha256_impl SOTLS_SHA256_IMPLS[SOTLS_SHA256_N_IMPLS];
/* The first of them this process's features (cpu.h) run, chosen once. */
sotls_sha256_blocks_fn *sotls_sha256_blocks(void);

struct sotls_sha256 {
	uint32_t h[8];
	uint64_t bytes; /* hashed so far, buffered ones included */
	uint8_t buf[64];
	sotls_sha256_blocks_fn *blocks;
};

/* blocks NULL: sotls_sha256_blocks(). A context copied by assignment carries on. */
void sotls_sha256_init(struct sotls_sha256 *c, sotls_sha256_blocks_fn *blocks);
void sotls_sha256_update(struct sotls_sha256 *c, const uint8_t *p, size_t n);
/* The digest; c is wiped. */
void sotls_sha256_final(struct sotls_sha256 *c, uint8_t out[32]);

#endif

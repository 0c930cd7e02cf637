/*
 * GHASH (NIST SP 800-38D). Each implementation precomputes what it needs from
 * H once per key into the opaque table, then folds whole 16-byte blocks into
 * the running value Y (kept in the byte order of the specification).
 */
#ifndef SOTLS_CRYPTO_GHASH_H
#define SOTLS_CRYPTO_GHASH_H

#include <stddef.h>
#include <stdint.h>

struct sotls_ghash_key {
	/* Layout private to the implementation that filled it. */
	_Alignas(64) uint8_t tab[1024];
};

typedef void (*sotls_ghash_init_fn)(struct sotls_ghash_key *gk, const uint8_t h[16]);
/* Y = (...((Y ^ X1)·H ^ X2)·H ... ^ Xn)·H over nblocks whole blocks. */
typedef void (*sotls_ghash_update_fn)(const struct sotls_ghash_key *gk, uint8_t y[16],
				      const uint8_t *in, size_t nblocks);

void sotls_ghash_init_generic(struct sotls_ghash_key *gk, const uint8_t h[16]);
void sotls_ghash_update_generic(const struct sotls_ghash_key *gk, uint8_t y[16],
				const uint8_t *in, size_t nblocks);
void sotls_ghash_init_pclmul(struct sotls_ghash_key *gk, const uint8_t h[16]);
void sotls_ghash_update_pclmul(const struct sotls_ghash_key *gk, uint8_t y[16],
			       const uint8_t *in, size_t nblocks);
void sotls_ghash_init_pmull(struct sotls_ghash_key *gk, const uint8_t h[16]);
void sotls_ghash_update_pmull(const struct sotls_ghash_key *gk, uint8_t y[16],
			      const uint8_t *in, size_t nblocks);
void sotls_ghash_init_vpclmul_avx2(struct sotls_ghash_key *gk, const uint8_t h[16]);
void sotls_ghash_update_vpclmul_avx2(const struct sotls_ghash_key *gk, uint8_t y[16],
				     const uint8_t *in, size_t nblocks);
void sotls_ghash_init_vpclmul_avx512(struct sotls_ghash_key *gk, const uint8_t h[16]);
void sotls_ghash_update_vpclmul_avx512(const struct sotls_ghash_key *gk, uint8_t y[16],
				       const uint8_t *in, size_t nblocks);

#endif

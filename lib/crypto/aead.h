/*
 * The one interface the record layer sees: an AEAD with a 12-byte nonce and a
 * 16-byte tag. No TLS knowledge here. seal/open never allocate; the key
 * schedule and the GHASH key powers are computed once, in sotls_aead_init.
 */
#ifndef SOTLS_CRYPTO_AEAD_H
#define SOTLS_CRYPTO_AEAD_H

#include <stddef.h>
#include <stdint.h>

#include "aes.h"
#include "aria.h"
#include "cpu.h"
#include "ghash.h"

#define SOTLS_AEAD_NONCE_LEN 12
#define SOTLS_AEAD_TAG_LEN 16
#define SOTLS_AEAD_MAX_KEY_LEN 32
/* GCM's limit for one message under one nonce: 2^32 - 2 blocks. */
#define SOTLS_AEAD_MAX_LEN ((((uint64_t)1) << 36) - 32)

enum sotls_aead_alg {
	SOTLS_AEAD_ARIA_128_GCM = 1,
	SOTLS_AEAD_ARIA_256_GCM = 2,
	SOTLS_AEAD_AES_128_GCM = 3,
	SOTLS_AEAD_AES_256_GCM = 4,
};

/* The block cipher's round keys: alg says which member is in use. */
union sotls_aead_cipher_key {
	struct sotls_aria_key aria;
	struct sotls_aes_key aes;
};

/* The implementation tables' entries (gcm.h). */
struct sotls_gcm_ctr;
struct sotls_gcm_ghash;
struct sotls_gcm_bulk;

struct sotls_aead {
	const struct sotls_gcm_ctr *ctr;
	const struct sotls_gcm_ghash *gh;
	const struct sotls_gcm_bulk *bulk; /* NULL: ctr and gh take turns */
	enum sotls_aead_alg alg;
	char name[64]; /* sotls_aead_impl_name's */
	union sotls_aead_cipher_key cipher;
	struct sotls_ghash_key ghash;
};

/* Key length in bytes for alg, or 0 if alg is unknown. */
size_t sotls_aead_key_len(enum sotls_aead_alg alg);
/* "ARIA-128-GCM", "ARIA-256-GCM", "AES-128-GCM", "AES-256-GCM"; NULL if unknown. */
const char *sotls_aead_alg_name(enum sotls_aead_alg alg);

/* Sets the key with the implementations this process's features (cpu.h) pick. */
int sotls_aead_init(struct sotls_aead *a, enum sotls_aead_alg alg, const uint8_t *key,
		    size_t key_len);
/*
 * The same with the implementations the feature set `features` picks;
 * SOTLS_CRYPTO_UNSUPPORTED if it has a feature this CPU lacks.
 */
int sotls_aead_init_features(struct sotls_aead *a, enum sotls_aead_alg alg, const uint8_t *key,
			     size_t key_len, uint32_t features);
/*
 * Feature sets (at most max, into sets; returns how many) under which
 * sotls_aead_init_features picks each distinct implementation of alg that
 * the features `have` allow, best first: `have` itself, then one per table
 * entry it runs, down to the portable code (0). For tests and benchmarks.
 */
size_t sotls_aead_variants(enum sotls_aead_alg alg, uint32_t have, uint32_t *sets, size_t max);
/* The name of what sotls_aead_init_features would pick (whatever this CPU is). */
void sotls_aead_describe(enum sotls_aead_alg alg, uint32_t features, char *buf, size_t len);
/* Name of the implementation in use, e.g. "sotls-aria-gfni-avx2+ghash-pclmul". */
const char *sotls_aead_impl_name(const struct sotls_aead *a);
/* The CPU features it uses (cpu.h). */
uint32_t sotls_aead_impl_needs(const struct sotls_aead *a);

/*
 * out = ENC(in), tag = TAG(aad, out). in == out is allowed, other overlap is
 * not. Returns 0 or SOTLS_CRYPTO_BAD_ARG.
 */
int sotls_aead_seal(const struct sotls_aead *a, const uint8_t nonce[SOTLS_AEAD_NONCE_LEN],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    uint8_t *out, uint8_t tag[SOTLS_AEAD_TAG_LEN]);

/*
 * Checks tag over (aad, in) in constant time and writes out = DEC(in).
 * Returns 0, SOTLS_CRYPTO_BAD_ARG (nothing decrypted, out untouched), or
 * SOTLS_CRYPTO_BAD_TAG: then all len bytes of out are zero (with in == out
 * the ciphertext is gone too), so no unauthenticated plaintext is left behind.
 */
int sotls_aead_open(const struct sotls_aead *a, const uint8_t nonce[SOTLS_AEAD_NONCE_LEN],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    const uint8_t tag[SOTLS_AEAD_TAG_LEN], uint8_t *out);

/* Wipes the key material. */
void sotls_aead_clear(struct sotls_aead *a);

#endif

/*
 * Helpers shared by the crypto unit tests (test_aria, test_aes, test_gcm):
 * reproducible random data, hex vectors, byte comparisons, big-endian
 * counter words, and buffers flush against an unmapped page with a SIGSEGV
 * handler that names the case being run. Failures go through cmocka.
 */
#ifndef SOTLS_TESTS_CRYPTO_TESTUTIL_H
#define SOTLS_TESTS_CRYPTO_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------ random test data */

/*
 * Seeds the generator from SOTLS_TEST_SEED, or dflt when unset, and prints
 * "<prog>: seed 0x..." so that any failure can be replayed.
 */
void rng_seed_from_env(const char *prog, uint64_t dflt);
/* splitmix64: tiny, good enough for test data, identical on every machine. */
uint64_t rng_next(void);
size_t rng_below(size_t n);
void rng_fill(uint8_t *p, size_t n);

/* ---------------------------------------------------------------- bytes */

/* Decodes an even-length hex string of at most cap bytes; returns its length. */
size_t hex_decode(const char *hex, uint8_t *out, size_t cap);
/* Index of the first differing byte, or -1. */
long first_diff(const uint8_t *a, const uint8_t *b, size_t n);
uint32_t load_be32(const uint8_t *p);
void store_be32(uint8_t *p, uint32_t v);
/* Adds delta to the counter word (the last 4 bytes, big endian), mod 2^32. */
void ctr32_add(uint8_t ctr[16], uint32_t delta);

/* -------------------------------------------------- buffers at page edges */

/*
 * A readable, writable area with an unmapped (PROT_NONE) page on each side:
 * a buffer placed flush against either end turns any access out of bounds,
 * even a read of one byte, into a SIGSEGV.
 */
struct fence {
	uint8_t *map, *lo, *end;
	size_t map_len;
};

/* Room for cap bytes at either edge. */
void fence_init(struct fence *f, size_t cap);
void fence_free(struct fence *f);
/* n bytes at the low edge (left) or the high edge (right) of the area. */
uint8_t *fence_at(const struct fence *f, int right, size_t n);

/*
 * cmocka reports a SIGSEGV but not where it came from, so the case being
 * run is kept in fault_desc and printed ("<prog>: SIGSEGV ... while running:
 * <fault_desc>") by a handler chained in front of cmocka's, installed by
 * fault_catch_begin and removed (fault_desc cleared) by fault_catch_end.
 */
extern char fault_desc[192];
void fault_catch_begin(const char *prog);
void fault_catch_end(void);

#endif

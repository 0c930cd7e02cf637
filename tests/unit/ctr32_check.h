/*
 * The ctr32 checks test_aria and test_aes share: each block cipher plugs in
 * its key schedule, its CTR implementations and a reference, and every
 * implementation this CPU can run is checked against the reference with
 * known answers in every lane position, many block counts around every
 * natural width, all key sizes, unaligned and in-place buffers, guard bytes
 * around the output, the 32-bit counter wrap in every position, zero blocks,
 * and buffers flush against an unmapped page (any out-of-bounds access
 * crashes). The contract checked is aria.h's sotls_aria_ctr32_fn, which
 * aes.h's sotls_aes_ctr32_fn shares.
 */
#ifndef SOTLS_TESTS_CTR32_CHECK_H
#define SOTLS_TESTS_CTR32_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

#define CTR32_MAX_BLOCKS 1100

struct ctr32_impl {
	uint32_t needs; /* the CPU features it needs (cpu.h) */
	const char *name;
	/* The cipher's own ctr32 function, which the suite's run() casts back. */
	void (*fn)(void);
};

struct ctr32_suite {
	const char *prog; /* "test_aria": prefixes the lines printed */
	const char *ref;  /* the reference, as failure messages name it */
	const struct ctr32_impl *impls;
	size_t n_impls;
	/* Makes key (16, 24 or 32 bytes) the key of the next run() and reference() calls. */
	void (*set_key)(const uint8_t *key, size_t key_len);
	void (*run)(const struct ctr32_impl *impl, uint8_t ctr[16], const uint8_t *in,
		    uint8_t *out, size_t nblocks);
	/* out[i] = in[i] ^ E(K, ctr + i) for i < nblocks; advances ctr by nblocks. */
	void (*reference)(uint8_t ctr[16], const uint8_t *in, uint8_t *out, size_t nblocks);
	/* The block counts of test_ctr32_vs_reference, around the natural widths. */
	const size_t *counts;
	size_t n_counts;
};

/* "<prog>: ctr32 implementations run: ...; skipped (CPU lacks them): ..." */
void ctr32_print_impls(const struct ctr32_suite *s);

/*
 * A published block (E(key, pt) = ct) through every implementation: with the
 * counter block equal to pt and an all-zero input, output block j is ct when
 * the counter starts j blocks earlier. j runs over every lane of the wide
 * code (a lane mixed up with another shows up only there), the call length
 * varies, and the counter left behind is checked too.
 */
void ctr32_check_kat(const struct ctr32_suite *s, const char *name, const uint8_t *key,
		     size_t key_len, const uint8_t pt[16], const uint8_t ct[16]);

/*
 * The cmocka tests, to be listed with cmocka_unit_test_prestate(test, &suite)
 * (the suite is the test's state).
 */
/* Each of the suite's counts (at most CTR32_MAX_BLOCKS), all key sizes,
 * buffer offsets 0..3, out of place and in place. */
void test_ctr32_vs_reference(void **state);
/* The 32-bit counter wraps without carrying into byte 11, at every position. */
void test_ctr32_counter_wrap(void **state);
/* Zero blocks: nothing read (in is NULL) or written, the counter unchanged. */
void test_ctr32_zero_blocks(void **state);
/* Buffers that start or end at an unmapped page. */
void test_ctr32_page_edges(void **state);

#endif

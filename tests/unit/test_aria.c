/*
 * ARIA block cipher tests.
 *
 *  - RFC 5794 Appendix A known answers (128/192/256-bit keys) through the
 *    portable one-block function, and through every CTR implementation this
 *    CPU can run (the counter block is set to the RFC plaintext and the input
 *    to zeros, so the keystream block must equal the RFC ciphertext), in every
 *    lane position of the wide implementations.
 *  - Each ctr32 implementation against a reference built from
 *    sotls_aria_encrypt_block: many block counts, all key sizes, unaligned and
 *    in-place buffers, the 32-bit counter wrap, guard bytes around the output.
 *  - The same with buffers flush against an unmapped page, so that any read
 *    or write out of bounds, even of one byte, crashes.
 *    These checks are shared with test_aes (ctr32_check.c).
 *  - The two round-key layouts in struct sotls_aria_key agree.
 *  - sotls_aria_set_key argument errors.
 *
 * Random inputs come from a fixed seed (printed; override with
 * SOTLS_TEST_SEED=<number>) so any failure can be replayed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aria.h"
#include "cpu.h"
#include "crypto_testutil.h"
#include "ctr32_check.h"
#include "sotls.h"

/* ---------------------------------------------------------------- helpers */

/* The key of the ctr32 checks (ctr32_check.c), and the portable reference. */
static struct sotls_aria_key cur_key;

static void aria_set_key(const uint8_t *key, size_t key_len)
{
	assert_int_equal(sotls_aria_set_key(&cur_key, key, key_len), 0);
}

static void aria_run(const struct ctr32_impl *impl, uint8_t ctr[16], const uint8_t *in,
		     uint8_t *out, size_t nblocks)
{
	((sotls_aria_ctr32_fn)impl->fn)(&cur_key, ctr, in, out, nblocks);
}

/* out[i] = in[i] ^ E(K, ctr + i), using the portable block code. */
static void aria_reference(uint8_t ctr[16], const uint8_t *in, uint8_t *out, size_t nblocks)
{
	for (size_t b = 0; b < nblocks; b++) {
		uint8_t ks[16];

		sotls_aria_encrypt_block(&cur_key, ctr, ks);
		for (int i = 0; i < 16; i++)
			out[16 * b + i] = in[16 * b + i] ^ ks[i];
		ctr32_add(ctr, 1);
	}
}

#define CTR_FN(f) ((void (*)(void))(f))

/* Every CTR implementation, with the CPU features it needs. */
static const struct ctr32_impl CTR_IMPLS[] = {
	{0, "ctr32_generic", CTR_FN(sotls_aria_ctr32_generic)},
#if defined(__x86_64__) /* what lib/crypto/meson.build builds for the host */
	{SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE, "ctr32_aesni_avx",
	 CTR_FN(sotls_aria_ctr32_aesni_avx)},
	{SOTLS_CPU_AES | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX_BASE, "ctr32_aesni_avx2",
	 CTR_FN(sotls_aria_ctr32_aesni_avx2)},
	{SOTLS_CPU_VAES | SOTLS_CPU_AES | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX_BASE, "ctr32_vaes_avx2", CTR_FN(sotls_aria_ctr32_vaes_avx2)},
	{SOTLS_CPU_GFNI | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX | SOTLS_CPU_SSSE3, "ctr32_gfni_avx2",
	 CTR_FN(sotls_aria_ctr32_gfni_avx2)},
	{SOTLS_CPU_GFNI | SOTLS_CPU_AVX512 | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX | SOTLS_CPU_SSSE3,
	 "ctr32_gfni_avx512", CTR_FN(sotls_aria_ctr32_gfni_avx512)},
#elif defined(__aarch64__)
	{SOTLS_CPU_AES | SOTLS_CPU_ASIMD, "ctr32_neon", CTR_FN(sotls_aria_ctr32_neon)},
#endif
};

/* Block counts around every natural width (1, 2, 4, 8, 16, 32, 64 lanes). */
static const size_t BLOCK_COUNTS[] = {
	0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,
	17,  18,  23,  24,  25,  31,  32,  33,  40,  47,  48,  49,  63,  64,  65,  66,  79,
	80,  95,  96,  97,  127, 128, 129, 130, 191, 192, 193, 255, 256, 257, 511, 513, 1024,
	CTR32_MAX_BLOCKS,
};

static struct ctr32_suite SUITE = {
	.prog = "test_aria",
	.ref = "encrypt_block",
	.impls = CTR_IMPLS,
	.n_impls = sizeof(CTR_IMPLS) / sizeof(CTR_IMPLS[0]),
	.set_key = aria_set_key,
	.run = aria_run,
	.reference = aria_reference,
	.counts = BLOCK_COUNTS,
	.n_counts = sizeof(BLOCK_COUNTS) / sizeof(BLOCK_COUNTS[0]),
};

/* RFC 5794, Appendix A: one plaintext block under three keys. */
static const struct {
	const char *key, *pt, *ct;
	unsigned rounds;
} RFC5794[] = {
	{"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
	 "d718fbd6ab644c739da95f3be6451778", 12},
	{"000102030405060708090a0b0c0d0e0f1011121314151617", "00112233445566778899aabbccddeeff",
	 "26449c1805dbe7aa25a468ce263a9e79", 14},
	{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	 "00112233445566778899aabbccddeeff", "f92bd7c79fb72e2f2b8f80c1972d24fc", 16},
};
#define N_RFC5794 (sizeof(RFC5794) / sizeof(RFC5794[0]))

struct kat {
	uint8_t key[32], pt[16], ct[16];
	size_t key_len;
};

static void load_kat(size_t i, struct kat *v)
{
	v->key_len = hex_decode(RFC5794[i].key, v->key, sizeof(v->key));
	assert_int_equal(hex_decode(RFC5794[i].pt, v->pt, 16), 16);
	assert_int_equal(hex_decode(RFC5794[i].ct, v->ct, 16), 16);
}

/* ------------------------------------------------------------------ tests */

static void test_rfc5794_encrypt_block(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_RFC5794; i++) {
		struct kat v;
		struct sotls_aria_key k;
		uint8_t out[16];

		load_kat(i, &v);
		memset(&k, 0xee, sizeof(k));
		assert_int_equal(sotls_aria_set_key(&k, v.key, v.key_len), 0);
		if (k.rounds != RFC5794[i].rounds)
			fail_msg("%zu-bit key: rounds = %u, RFC 5794 says %u", v.key_len * 8,
				 k.rounds, RFC5794[i].rounds);
		sotls_aria_encrypt_block(&k, v.pt, out);
		if (memcmp(out, v.ct, 16) != 0)
			fail_msg("RFC 5794 A.%zu (%zu-bit key): encrypt_block gives the wrong "
				 "ciphertext", i + 1, v.key_len * 8);
	}
}

/* The same answers through every CTR implementation, in every lane. */
static void test_rfc5794_ctr32(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_RFC5794; i++) {
		struct kat v;
		char name[64];

		load_kat(i, &v);
		snprintf(name, sizeof(name), "RFC 5794 A.%zu (%zu-bit key)", i + 1, v.key_len * 8);
		ctr32_check_kat(&SUITE, name, v.key, v.key_len, v.pt, v.ct);
	}
}

static void test_set_key_errors(void **state)
{
	static const size_t bad_lens[] = {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64, SIZE_MAX};
	uint8_t key[64] = {0};
	struct sotls_aria_key k;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]); i++)
		if (sotls_aria_set_key(&k, key, bad_lens[i]) != SOTLS_CRYPTO_BAD_ARG)
			fail_msg("set_key accepted key_len %zu", bad_lens[i]);
	assert_int_equal(sotls_aria_set_key(NULL, key, 16), SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_aria_set_key(&k, NULL, 16), SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_aria_set_key(&k, NULL, 32), SOTLS_CRYPTO_BAD_ARG);
	/* And the good lengths are accepted (so the loop above is not vacuous). */
	assert_int_equal(sotls_aria_set_key(&k, key, 16), 0);
	assert_int_equal(sotls_aria_set_key(&k, key, 24), 0);
	assert_int_equal(sotls_aria_set_key(&k, key, 32), 0);
}

int main(void)
{
	rng_seed_from_env("test_aria", 0x5eed0a41a5eedull);
	ctr32_print_impls(&SUITE);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc5794_encrypt_block),
		cmocka_unit_test(test_rfc5794_ctr32),
		cmocka_unit_test_prestate(test_ctr32_vs_reference, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_page_edges, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_counter_wrap, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_zero_blocks, &SUITE),
		cmocka_unit_test(test_set_key_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

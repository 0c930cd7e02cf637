/*
 * AES block cipher tests (lib/crypto/aes*.c).
 *
 *  - The bitsliced S-box circuit against the S-box's definition (inverse in
 *    GF(2^8) mod x^8 + x^4 + x^3 + x + 1, then the affine map) on all 256
 *    inputs.
 *  - FIPS-197 known answers (Appendix A: the last expanded key words;
 *    Appendix B and C.1-C.3: one block under 128/192/256-bit keys) through
 *    every CTR implementation this CPU can run, with the vector at every
 *    block position of calls of up to 74 blocks, so that each lane of the
 *    wide code produces it.
 *  - Each ctr32 implementation against OpenSSL's AES-ECB applied to the
 *    counter blocks: many block counts around every natural width, all key
 *    sizes, unaligned and in-place buffers, guard bytes around the output,
 *    the 32-bit counter wrap in every position, zero blocks, and buffers
 *    flush against an unmapped page (any out-of-bounds access crashes).
 *    These checks are shared with test_aria (ctr32_check.c).
 *  - sotls_aes_set_key argument errors.
 *
 * Random inputs come from a fixed seed (printed; override with
 * SOTLS_TEST_SEED=<number>) so that any failure can be replayed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "aes.h"
#include "aes_internal.h"
#include "cpu.h"
#include "crypto_testutil.h"
#include "ctr32_check.h"
#include "sotls.h"

/* ---------------------------------------------------------------- helpers */

/* The key of the ctr32 checks (ctr32_check.c): expanded, and raw for OpenSSL. */
static struct sotls_aes_key cur_key;
static uint8_t cur_raw[32];
static size_t cur_raw_len;

static void aes_set_key(const uint8_t *key, size_t key_len)
{
	assert_int_equal(sotls_aes_set_key(&cur_key, key, key_len), 0);
	memcpy(cur_raw, key, key_len);
	cur_raw_len = key_len;
}

static void aes_run(const struct ctr32_impl *impl, uint8_t ctr[16], const uint8_t *in,
		    uint8_t *out, size_t nblocks)
{
	((sotls_aes_ctr32_fn)impl->fn)(&cur_key, ctr, in, out, nblocks);
}

/* out[i] = in[i] ^ AES-ECB(K, ctr + i) with OpenSSL; advances ctr. */
static void aes_reference(uint8_t ctr[16], const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const EVP_CIPHER *c = cur_raw_len == 16 ? EVP_aes_128_ecb()
			      : cur_raw_len == 24 ? EVP_aes_192_ecb()
						  : EVP_aes_256_ecb();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

	assert_non_null(x);
	assert_int_equal(EVP_EncryptInit_ex(x, c, NULL, cur_raw, NULL), 1);
	EVP_CIPHER_CTX_set_padding(x, 0);
	for (size_t b = 0; b < nblocks; b++) {
		uint8_t ks[16];
		int outl = 0;

		assert_int_equal(EVP_EncryptUpdate(x, ks, &outl, ctr, 16), 1);
		assert_int_equal(outl, 16);
		for (int i = 0; i < 16; i++)
			out[16 * b + i] = in[16 * b + i] ^ ks[i];
		ctr32_add(ctr, 1);
	}
	EVP_CIPHER_CTX_free(x);
}

#define CTR_FN(f) ((void (*)(void))(f))

static const struct ctr32_impl IMPLS[] = {
	{0, "ctr32_ct64", CTR_FN(sotls_aes_ctr32_ct64)},
#if defined(__x86_64__) /* what lib/crypto/meson.build builds for the host */
	{SOTLS_CPU_AES | SOTLS_CPU_AVX_BASE, "ctr32_aesni", CTR_FN(sotls_aes_ctr32_aesni)},
	{SOTLS_CPU_VAES | SOTLS_CPU_AES | SOTLS_CPU_AVX512 | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX |
		 SOTLS_CPU_SSSE3,
	 "ctr32_vaes_avx512", CTR_FN(sotls_aes_ctr32_vaes_avx512)},
#elif defined(__aarch64__)
	{SOTLS_CPU_AES | SOTLS_CPU_ASIMD, "ctr32_armv8ce", CTR_FN(sotls_aes_ctr32_armv8ce)},
#endif
};

/* Around every natural width: 1, 4 (ct64, a zmm), 8, 16, 32 blocks. */
static const size_t COUNTS[] = {
	0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,  12,  13,  14,  15,  16,  17,  18,
	19, 20, 23, 24, 25, 27, 28, 29, 31, 32, 33, 35, 36,  39,  40,  47,  48,  49,  63,
	64, 65, 79, 80, 95, 96, 97, 127, 128, 129, 255, 256, 257, 511, 513, 1024, CTR32_MAX_BLOCKS,
};

static struct ctr32_suite SUITE = {
	.prog = "test_aes",
	.ref = "OpenSSL's AES-ECB",
	.impls = IMPLS,
	.n_impls = sizeof(IMPLS) / sizeof(IMPLS[0]),
	.set_key = aes_set_key,
	.run = aes_run,
	.reference = aes_reference,
	.counts = COUNTS,
	.n_counts = sizeof(COUNTS) / sizeof(COUNTS[0]),
};

static const size_t KEY_LENS[] = {16, 24, 32};

/* ------------------------------------------------------- the S-box circuit */

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	for (int i = 0; i < 8; i++) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
		b >>= 1;
	}
	return r;
}

/* FIPS-197 section 5.1.1, from the definition. */
static uint8_t sbox_reference(uint8_t v)
{
	uint8_t inv = 0;

	for (unsigned c = 1; c < 256 && v != 0; c++)
		if (gf_mul(v, (uint8_t)c) == 1)
			inv = (uint8_t)c;
	uint8_t r = 0;
	for (int i = 0; i < 8; i++) {
		unsigned bit = (unsigned)(inv >> i) ^ (0x63u >> i);

		for (int j = 4; j < 8; j++)
			bit ^= (unsigned)inv >> ((i + j) % 8);
		bit &= 1;
		r |= (uint8_t)(bit << i);
	}
	return r;
}

static void test_sbox_circuit(void **state)
{
	(void)state;
	/* Four passes of 64 bytes each cover all 256 inputs; every bit
	 * position of the words is used. */
	for (unsigned pass = 0; pass < 4; pass++) {
		uint64_t x[8] = {0};

		for (unsigned p = 0; p < 64; p++)
			for (int b = 0; b < 8; b++)
				x[b] |= (uint64_t)(((64 * pass + p) >> b) & 1) << p;
		aes_bs_sbox_no63(x);
		for (unsigned p = 0; p < 64; p++) {
			const unsigned v = 64 * pass + p;
			unsigned got = 0;

			for (int b = 0; b < 8; b++)
				got |= (unsigned)((x[b] >> p) & 1) << b;
			got ^= 0x63;
			if (got != sbox_reference((uint8_t)v))
				fail_msg("S-box circuit: S(%02x) = %02x, expected %02x", v, got,
					 sbox_reference((uint8_t)v));
		}
	}
	/* Spot checks of the reference itself (FIPS-197 Figure 7). */
	assert_int_equal(sbox_reference(0x00), 0x63);
	assert_int_equal(sbox_reference(0x53), 0xed);
	assert_int_equal(sbox_reference(0xff), 0x16);
}

/* The bitsliced load and store are inverse permutations. */
static void test_bitslice_layout(void **state)
{
	uint8_t in[64], out[64];
	uint64_t w[8];

	(void)state;
	for (int i = 0; i < 64; i++)
		in[i] = (uint8_t)(i * 37 + 11);
	aes_bs_load(w, in);
	/* Bit b of byte (row r, column c) of block k is bit 16r + 4c + k of w[b]. */
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 16; i++)
			for (int b = 0; b < 8; b++) {
				const int q = 16 * (i % 4) + 4 * (i / 4) + k;

				if (((w[b] >> q) & 1) != (uint64_t)((in[16 * k + i] >> b) & 1))
					fail_msg("layout: block %d byte %d bit %d not at %d", k, i,
						 b, q);
			}
	aes_bs_store(out, w);
	assert_memory_equal(in, out, 64);
}

/* ------------------------------------------------------ FIPS-197 answers */

/*
 * FIPS-197 ("Advanced Encryption Standard", NIST, 2001; updated 2023):
 * Appendix B (the cipher example) and Appendix C.1-C.3 (example vectors),
 * and from Appendix A the last four words w[Nb(Nr+1)-4 ..] of each key
 * expansion example.
 */
static const struct {
	const char *name, *key, *pt, *ct;
} FIPS197[] = {
	{"FIPS-197 Appendix B", "2b7e151628aed2a6abf7158809cf4f3c",
	 "3243f6a8885a308d313198a2e0370734", "3925841d02dc09fbdc118597196a0b32"},
	{"FIPS-197 C.1 AES-128", "000102030405060708090a0b0c0d0e0f",
	 "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"},
	{"FIPS-197 C.2 AES-192", "000102030405060708090a0b0c0d0e0f1011121314151617",
	 "00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"},
	{"FIPS-197 C.3 AES-256", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	 "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
};

static const struct {
	const char *name, *key, *last_round_key;
} FIPS197_EXPANSION[] = {
	{"FIPS-197 A.1", "2b7e151628aed2a6abf7158809cf4f3c", "d014f9a8c9ee2589e13f0cc8b6630ca6"},
	{"FIPS-197 A.2", "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
	 "e98ba06f448c773c8ecc720401002202"},
	{"FIPS-197 A.3", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
	 "fe4890d1e6188d0b046df344706c631e"},
};

static void test_fips197_key_expansion(void **state)
{
	(void)state;
	for (size_t v = 0; v < sizeof(FIPS197_EXPANSION) / sizeof(FIPS197_EXPANSION[0]); v++) {
		uint8_t key[32], want[16];
		struct sotls_aes_key k;
		const size_t len = hex_decode(FIPS197_EXPANSION[v].key, key, sizeof(key));

		hex_decode(FIPS197_EXPANSION[v].last_round_key, want, sizeof(want));
		assert_int_equal(sotls_aes_set_key(&k, key, len), 0);
		assert_int_equal(k.rounds, len / 4 + 6);
		if (memcmp(k.rk[k.rounds], want, 16) != 0)
			fail_msg("%s: last round key wrong", FIPS197_EXPANSION[v].name);
		/* The first round key is the key itself. */
		assert_memory_equal(k.rk[0], key, 16);
	}
}

static void test_fips197_ctr32(void **state)
{
	(void)state;
	for (size_t v = 0; v < sizeof(FIPS197) / sizeof(FIPS197[0]); v++) {
		uint8_t key[32], pt[16], ct[16];
		const size_t len = hex_decode(FIPS197[v].key, key, sizeof(key));

		assert_int_equal(hex_decode(FIPS197[v].pt, pt, sizeof(pt)), 16);
		assert_int_equal(hex_decode(FIPS197[v].ct, ct, sizeof(ct)), 16);
		ctr32_check_kat(&SUITE, FIPS197[v].name, key, len, pt, ct);
	}
}

/* ------------------------------------------------------- argument errors */

static void test_set_key_errors(void **state)
{
	static const size_t bad[] = {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64, SIZE_MAX};
	uint8_t key[64] = {0};
	struct sotls_aes_key k;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sotls_aes_set_key(&k, key, bad[i]) != SOTLS_CRYPTO_BAD_ARG)
			fail_msg("sotls_aes_set_key accepted a %zu-byte key", bad[i]);
	assert_int_equal(sotls_aes_set_key(NULL, key, 16), SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_aes_set_key(&k, NULL, 16), SOTLS_CRYPTO_BAD_ARG);
	for (size_t l = 0; l < 3; l++) {
		assert_int_equal(sotls_aes_set_key(&k, key, KEY_LENS[l]), 0);
		assert_int_equal(k.rounds, KEY_LENS[l] / 4 + 6);
	}
}

int main(void)
{
	rng_seed_from_env("test_aes", 0xae5c7a64ull);
	ctr32_print_impls(&SUITE);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbox_circuit),
		cmocka_unit_test(test_bitslice_layout),
		cmocka_unit_test(test_fips197_key_expansion),
		cmocka_unit_test(test_fips197_ctr32),
		cmocka_unit_test_prestate(test_ctr32_vs_reference, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_counter_wrap, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_zero_blocks, &SUITE),
		cmocka_unit_test_prestate(test_ctr32_page_edges, &SUITE),
		cmocka_unit_test(test_set_key_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

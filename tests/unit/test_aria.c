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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aria.h"
#include "cpu.h"
#include "sotls.h"

/* ---------------------------------------------------------------- helpers */

static uint64_t rng_state;

/* splitmix64: tiny, good enough for test data, identical on every machine. */
static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng_next();
}

static void hex_decode(const char *hex, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(hex), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static uint32_t load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Index of the first differing byte, or -1. */
static long first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* Every CTR implementation, with the CPU level it needs. */
static const struct ctr_impl {
	enum sotls_cpu_level level;
	const char *name;
	sotls_aria_ctr32_fn fn;
} CTR_IMPLS[] = {
	{SOTLS_CPU_GENERIC, "ctr32_generic", sotls_aria_ctr32_generic},
	{SOTLS_CPU_AESNI, "ctr32_aesni_avx", sotls_aria_ctr32_aesni_avx},
	{SOTLS_CPU_AVX2, "ctr32_gfni_avx2", sotls_aria_ctr32_gfni_avx2},
	{SOTLS_CPU_AVX512, "ctr32_gfni_avx512", sotls_aria_ctr32_gfni_avx512},
};
#define N_CTR_IMPLS (sizeof(CTR_IMPLS) / sizeof(CTR_IMPLS[0]))

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
	v->key_len = strlen(RFC5794[i].key) / 2;
	hex_decode(RFC5794[i].key, v->key, v->key_len);
	hex_decode(RFC5794[i].pt, v->pt, 16);
	hex_decode(RFC5794[i].ct, v->ct, 16);
}

/* Adds delta to the last 32-bit word of a counter block, mod 2^32. */
static void ctr_add(uint8_t ctr[16], uint32_t delta)
{
	store_be32(ctr + 12, load_be32(ctr + 12) + delta);
}

static void print_impls(void)
{
	char run[128] = "", skipped[128] = "";

	for (size_t i = 0; i < N_CTR_IMPLS; i++) {
		char *dst = sotls_cpu_supports(CTR_IMPLS[i].level) ? run : skipped;

		strncat(dst, " ", sizeof(run) - strlen(dst) - 1);
		strncat(dst, CTR_IMPLS[i].name, sizeof(run) - strlen(dst) - 1);
	}
	printf("test_aria: ctr32 implementations run:%s; skipped (CPU lacks them):%s\n", run,
	       skipped[0] ? skipped : " none");
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

/*
 * The same answers through every CTR implementation: with the counter block
 * equal to the RFC plaintext and an all-zero input, the output block is
 * E(K, plaintext). The counter is started j blocks earlier so the RFC block
 * lands in lane j: wide code computes each lane separately, and a lane mixed
 * up with another would only show up there.
 */
static void test_rfc5794_ctr32(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_CTR_IMPLS; m++) {
		const struct ctr_impl *impl = &CTR_IMPLS[m];

		if (!sotls_cpu_supports(impl->level))
			continue;
		for (size_t i = 0; i < N_RFC5794; i++) {
			struct kat v;
			struct sotls_aria_key k;

			load_kat(i, &v);
			assert_int_equal(sotls_aria_set_key(&k, v.key, v.key_len), 0);
			for (uint32_t j = 0; j < 70; j++) {
				const size_t nblocks = j + 1 + j % 5;
				uint8_t zeros[75 * 16] = {0}, out[75 * 16], ctr[16], want_ctr[16];

				memcpy(ctr, v.pt, 16);
				ctr_add(ctr, (uint32_t)-j);
				memcpy(want_ctr, ctr, 16);
				ctr_add(want_ctr, (uint32_t)nblocks);
				impl->fn(&k, ctr, zeros, out, nblocks);
				if (memcmp(out + 16 * j, v.ct, 16) != 0)
					fail_msg("%s: RFC 5794 A.%zu (%zu-bit key) wrong in block %u "
						 "of %zu", impl->name, i + 1, v.key_len * 8, j,
						 nblocks);
				if (memcmp(ctr, want_ctr, 16) != 0)
					fail_msg("%s: counter after %zu blocks is wrong", impl->name,
						 nblocks);
			}
		}
	}
}

/* Both layouts of the round keys hold the same values (table code reads rk32,
 * byte-sliced code reads rk; a mismatch would split the implementations). */
static void test_round_key_layouts(void **state)
{
	static const size_t lens[] = {16, 24, 32};

	(void)state;
	for (int trial = 0; trial < 30; trial++) {
		uint8_t key[32];
		struct sotls_aria_key k;
		const size_t len = lens[trial % 3];

		rng_fill(key, sizeof(key));
		assert_int_equal(sotls_aria_set_key(&k, key, len), 0);
		assert_int_equal(k.rounds, 12 + 2 * (len - 16) / 8);
		for (unsigned r = 0; r <= k.rounds; r++)
			for (int w = 0; w < 4; w++)
				if (k.rk32[r][w] != load_be32(k.rk[r] + 4 * w))
					fail_msg("%zu-bit key: rk32[%u][%d] = %08x but rk[%u] "
						 "holds %08x", len * 8, r, w, k.rk32[r][w], r,
						 load_be32(k.rk[r] + 4 * w));
	}
}

#define MAX_BLOCKS 1100
#define GUARD 32
#define GUARD_BYTE 0xc5

/* The reference: out[i] = in[i] ^ E(K, ctr + i), using the portable block code. */
static void ctr_reference(const struct sotls_aria_key *k, uint8_t ctr[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks)
{
	for (size_t b = 0; b < nblocks; b++) {
		uint8_t ks[16];

		sotls_aria_encrypt_block(k, ctr, ks);
		for (int i = 0; i < 16; i++)
			out[16 * b + i] = in[16 * b + i] ^ ks[i];
		ctr_add(ctr, 1);
	}
}

/*
 * One ctr32 call checked against the reference: output bytes, the counter
 * left behind, the input untouched (out of place), and the guard bytes on both
 * sides of the output untouched (wide code must not write past the end).
 */
static void check_ctr_case(const struct ctr_impl *impl, const struct sotls_aria_key *k,
			   size_t key_len, const uint8_t ctr0[16], size_t nblocks, size_t in_off,
			   size_t out_off, int in_place)
{
	static uint8_t src[MAX_BLOCKS * 16 + 2 * GUARD], dst[MAX_BLOCKS * 16 + 2 * GUARD];
	static uint8_t input[MAX_BLOCKS * 16], want[MAX_BLOCKS * 16];
	const size_t n = nblocks * 16;
	uint8_t ctr[16], want_ctr[16];

	rng_fill(input, n);
	memcpy(want_ctr, ctr0, 16);
	ctr_reference(k, want_ctr, input, want, nblocks);

	memset(dst, GUARD_BYTE, sizeof(dst));
	uint8_t *out = dst + GUARD + out_off;
	const uint8_t *in;
	if (in_place) {
		memcpy(out, input, n);
		in = out;
	} else {
		memcpy(src + GUARD + in_off, input, n);
		in = src + GUARD + in_off;
	}
	memcpy(ctr, ctr0, 16);
	impl->fn(k, ctr, in, out, nblocks);

	const char *mode = in_place ? "in place" : "out of place";
	long d = first_diff(out, want, n);
	if (d >= 0)
		fail_msg("%s: %zu-bit key, %zu blocks, %s, in+%zu out+%zu, counter word %08x: "
			 "output differs from encrypt_block at byte %ld (block %ld)",
			 impl->name, key_len * 8, nblocks, mode, in_off, out_off,
			 load_be32(ctr0 + 12), d, d / 16);
	if (memcmp(ctr, want_ctr, 16) != 0)
		fail_msg("%s: %zu-bit key, %zu blocks, %s, counter word %08x: counter left "
			 "as %08x, expected %08x (first 12 bytes %s)",
			 impl->name, key_len * 8, nblocks, mode, load_be32(ctr0 + 12),
			 load_be32(ctr + 12), load_be32(want_ctr + 12),
			 memcmp(ctr, want_ctr, 12) == 0 ? "intact" : "CHANGED");
	for (size_t i = 0; i < GUARD + out_off; i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s, out+%zu: wrote %zu bytes before the output",
				 impl->name, nblocks, mode, out_off, GUARD + out_off - i);
	for (size_t i = GUARD + out_off + n; i < sizeof(dst); i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s, out+%zu: wrote byte %zu past the end of "
				 "the output",
				 impl->name, nblocks, mode, out_off, i - (GUARD + out_off + n));
	if (!in_place && memcmp(in, input, n) != 0)
		fail_msg("%s: %zu blocks, out of place: the input was modified", impl->name,
			 nblocks);
}

/* Block counts around every natural width (1, 2, 4, 8, 16, 32, 64 lanes). */
static const size_t BLOCK_COUNTS[] = {
	0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,
	17,  18,  23,  24,  25,  31,  32,  33,  40,  47,  48,  49,  63,  64,  65,  66,  79,
	80,  95,  96,  97,  127, 128, 129, 130, 191, 192, 193, 255, 256, 257, 511, 513, 1024,
	MAX_BLOCKS,
};
#define N_BLOCK_COUNTS (sizeof(BLOCK_COUNTS) / sizeof(BLOCK_COUNTS[0]))

static void test_ctr32_vs_encrypt_block(void **state)
{
	static const size_t lens[] = {16, 24, 32};

	(void)state;
	for (size_t m = 0; m < N_CTR_IMPLS; m++) {
		const struct ctr_impl *impl = &CTR_IMPLS[m];

		if (!sotls_cpu_supports(impl->level))
			continue;
		for (size_t c = 0; c < N_BLOCK_COUNTS; c++) {
			for (size_t l = 0; l < 3; l++) {
				uint8_t key[32], ctr0[16];
				struct sotls_aria_key k;
				const size_t nblocks = BLOCK_COUNTS[c];

				rng_fill(key, sizeof(key));
				rng_fill(ctr0, sizeof(ctr0));
				assert_int_equal(sotls_aria_set_key(&k, key, lens[l]), 0);
				/* Offsets 0..3 on both sides, in a pattern that varies
				 * with the count so that all pairs turn up. */
				const size_t in_off = (c + l) % 4, out_off = (c / 4 + 2 * l) % 4;
				check_ctr_case(impl, &k, lens[l], ctr0, nblocks, in_off, out_off, 0);
				check_ctr_case(impl, &k, lens[l], ctr0, nblocks, 0, out_off, 1);
			}
		}
	}
}

/*
 * A readable, writable area with an unmapped (PROT_NONE) page on each side:
 * a buffer placed flush against either end turns any access out of bounds
 * into a SIGSEGV. cmocka reports the signal but not where it came from, so
 * the case being run is kept in fault_desc and printed by a handler chained
 * in front of cmocka's.
 */
struct fence {
	uint8_t *map, *lo, *end;
	size_t map_len;
};

static void fence_init(struct fence *f, size_t cap)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t area = (cap + pg - 1) / pg * pg;

	f->map_len = area + 2 * pg;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	assert_true(f->map != MAP_FAILED);
	assert_int_equal(mprotect(f->map, pg, PROT_NONE), 0);
	assert_int_equal(mprotect(f->map + pg + area, pg, PROT_NONE), 0);
	f->lo = f->map + pg;
	f->end = f->map + pg + area;
}

static char fault_desc[160];
static struct sigaction cmocka_segv;

static void on_segv(int sig)
{
	static const char msg[] = "test_aria: SIGSEGV (out-of-bounds access?) while running: ";

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0 ||
	    write(STDERR_FILENO, fault_desc, strlen(fault_desc)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0) {
		/* nothing more to do */
	}
	if (cmocka_segv.sa_handler != SIG_DFL && cmocka_segv.sa_handler != SIG_IGN)
		cmocka_segv.sa_handler(sig);
	_exit(1);
}

static void test_ctr32_page_edges(void **state)
{
	static const size_t lens[] = {16, 24, 32};
	static uint8_t input[300 * 16], want[300 * 16];
	struct fence fin, fout;
	struct sigaction sa;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &cmocka_segv), 0);
	fence_init(&fin, sizeof(input));
	fence_init(&fout, sizeof(input));
	for (size_t m = 0; m < N_CTR_IMPLS; m++) {
		const struct ctr_impl *impl = &CTR_IMPLS[m];

		if (!sotls_cpu_supports(impl->level))
			continue;
		for (size_t nblocks = 0; nblocks <= 300; nblocks += nblocks < 70 ? 1 : 23) {
			const size_t n = nblocks * 16, key_len = lens[nblocks % 3];
			uint8_t key[32], ctr0[16], want_ctr[16];
			struct sotls_aria_key k;

			rng_fill(key, sizeof(key));
			rng_fill(ctr0, sizeof(ctr0));
			rng_fill(input, n);
			assert_int_equal(sotls_aria_set_key(&k, key, key_len), 0);
			memcpy(want_ctr, ctr0, 16);
			ctr_reference(&k, want_ctr, input, want, nblocks);
			for (int c = 0; c < 4; c++) {
				const int right = c & 1, in_place = c >> 1;
				uint8_t *in = right ? fin.end - n : fin.lo;
				uint8_t *out = in_place ? in : right ? fout.end - n : fout.lo;
				uint8_t ctr[16];

				snprintf(fault_desc, sizeof(fault_desc),
					 "%s, %zu blocks, buffers %s a page edge, %s", impl->name,
					 nblocks, right ? "end at" : "start at",
					 in_place ? "in place" : "out of place");
				memcpy(in, input, n);
				memcpy(ctr, ctr0, 16);
				impl->fn(&k, ctr, in, out, nblocks);
				if (memcmp(out, want, n) != 0 || memcmp(ctr, want_ctr, 16) != 0)
					fail_msg("%s: wrong output or counter", fault_desc);
			}
		}
	}
	munmap(fin.map, fin.map_len);
	munmap(fout.map, fout.map_len);
	fault_desc[0] = '\0';
	assert_int_equal(sigaction(SIGSEGV, &cmocka_segv, NULL), 0);
}

/*
 * The counter is 32 bits wide and wraps without carrying into byte 11.
 * The wrap is placed at every position of a 70-block call, so it crosses
 * each lane of every vector width; the reference knows nothing about lanes.
 */
static void test_ctr32_counter_wrap(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_CTR_IMPLS; m++) {
		const struct ctr_impl *impl = &CTR_IMPLS[m];

		if (!sotls_cpu_supports(impl->level))
			continue;
		uint8_t key[32];
		struct sotls_aria_key k;

		rng_fill(key, sizeof(key));
		assert_int_equal(sotls_aria_set_key(&k, key, 16), 0);
		for (uint32_t j = 0; j < 70; j++) {
			uint8_t ctr0[16];

			/* Byte 11 = 0xff: a carry out of the last word would change it. */
			rng_fill(ctr0, 12);
			ctr0[11] = 0xff;
			store_be32(ctr0 + 12, 0xffffffffu - j);
			check_ctr_case(impl, &k, 16, ctr0, 70, j % 4, (j / 4) % 4, 0);
			check_ctr_case(impl, &k, 16, ctr0, 70, 0, 1, 1);
		}
		/* A long call that wraps too. */
		uint8_t ctr0[16];
		memset(ctr0, 0xff, 16);
		store_be32(ctr0 + 12, 0xfffffff0u);
		check_ctr_case(impl, &k, 16, ctr0, MAX_BLOCKS, 3, 1, 0);
	}
}

/* Zero blocks: nothing written, counter unchanged. */
static void test_ctr32_zero_blocks(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_CTR_IMPLS; m++) {
		const struct ctr_impl *impl = &CTR_IMPLS[m];

		if (!sotls_cpu_supports(impl->level))
			continue;
		uint8_t key[16], ctr[16], ctr0[16], in[64], out[64], out0[64];
		struct sotls_aria_key k;

		rng_fill(key, sizeof(key));
		rng_fill(ctr0, sizeof(ctr0));
		rng_fill(in, sizeof(in));
		rng_fill(out0, sizeof(out0));
		memcpy(out, out0, sizeof(out));
		memcpy(ctr, ctr0, sizeof(ctr));
		assert_int_equal(sotls_aria_set_key(&k, key, 16), 0);
		impl->fn(&k, ctr, in, out, 0);
		if (memcmp(ctr, ctr0, 16) != 0)
			fail_msg("%s: zero blocks changed the counter", impl->name);
		if (memcmp(out, out0, sizeof(out)) != 0)
			fail_msg("%s: zero blocks wrote to the output", impl->name);
	}
}

static void test_set_key_errors(void **state)
{
	static const size_t bad_lens[] = {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64, SIZE_MAX};
	uint8_t key[64] = {0};
	struct sotls_aria_key k;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]); i++)
		if (sotls_aria_set_key(&k, key, bad_lens[i]) != SOTLS_ERR_INVALID_ARGUMENT)
			fail_msg("set_key accepted key_len %zu", bad_lens[i]);
	assert_int_equal(sotls_aria_set_key(NULL, key, 16), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_aria_set_key(&k, NULL, 16), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_aria_set_key(&k, NULL, 32), SOTLS_ERR_INVALID_ARGUMENT);
	/* And the good lengths are accepted (so the loop above is not vacuous). */
	assert_int_equal(sotls_aria_set_key(&k, key, 16), 0);
	assert_int_equal(sotls_aria_set_key(&k, key, 24), 0);
	assert_int_equal(sotls_aria_set_key(&k, key, 32), 0);
}

int main(void)
{
	const char *s = getenv("SOTLS_TEST_SEED");
	const uint64_t seed = s != NULL ? strtoull(s, NULL, 0) : 0x5eed0a41a5eedull;

	rng_state = seed;
	printf("test_aria: seed 0x%llx (set SOTLS_TEST_SEED to replay another)\n",
	       (unsigned long long)seed);
	print_impls();

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc5794_encrypt_block),
		cmocka_unit_test(test_rfc5794_ctr32),
		cmocka_unit_test(test_round_key_layouts),
		cmocka_unit_test(test_ctr32_vs_encrypt_block),
		cmocka_unit_test(test_ctr32_page_edges),
		cmocka_unit_test(test_ctr32_counter_wrap),
		cmocka_unit_test(test_ctr32_zero_blocks),
		cmocka_unit_test(test_set_key_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * AES block cipher tests (lib/crypto/aes*.c).
 *
 *  - The bitsliced S-box circuit against the S-box's definition (inverse in
 *    GF(2^8) mod x^8 + x^4 + x^3 + x + 1, then the affine map) on all 256
 *    inputs.
 *  - FIPS-197 known answers (Appendix A: the last expanded key words;
 *    Appendix B and C.1-C.3: one block under 128/192/256-bit keys) through
 *    every CTR implementation this CPU can run, with the vector at every
 *    block position of a 40-block call, so that each lane of the wide code
 *    produces it.
 *  - Each ctr32 implementation against OpenSSL's AES-ECB applied to the
 *    counter blocks: many block counts around every natural width, all key
 *    sizes, unaligned and in-place buffers, guard bytes around the output,
 *    the 32-bit counter wrap in every position, zero blocks, and buffers
 *    flush against an unmapped page (any out-of-bounds access crashes).
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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aes.h"
#include "aes_internal.h"
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

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	const size_t n = strlen(hex) / 2;

	assert_true(n <= cap && strlen(hex) % 2 == 0);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Adds delta to the counter word (the last 4 bytes, big endian), mod 2^32. */
static void ctr_add(uint8_t ctr[16], uint32_t delta)
{
	const uint32_t v = be32(ctr + 12) + delta;

	ctr[12] = (uint8_t)(v >> 24);
	ctr[13] = (uint8_t)(v >> 16);
	ctr[14] = (uint8_t)(v >> 8);
	ctr[15] = (uint8_t)v;
}

static long first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

static const struct ctr_impl {
	enum sotls_cpu_level level;
	const char *name;
	sotls_aes_ctr32_fn fn;
} IMPLS[] = {
	{SOTLS_CPU_GENERIC, "ctr32_ct64", sotls_aes_ctr32_ct64},
	{SOTLS_CPU_AESNI, "ctr32_aesni", sotls_aes_ctr32_aesni},
	{SOTLS_CPU_AVX512, "ctr32_vaes_avx512", sotls_aes_ctr32_vaes_avx512},
};
#define N_IMPLS (sizeof(IMPLS) / sizeof(IMPLS[0]))

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
		const size_t len = unhex(FIPS197_EXPANSION[v].key, key, sizeof(key));

		unhex(FIPS197_EXPANSION[v].last_round_key, want, sizeof(want));
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
		struct sotls_aes_key k;
		const size_t len = unhex(FIPS197[v].key, key, sizeof(key));

		unhex(FIPS197[v].pt, pt, sizeof(pt));
		unhex(FIPS197[v].ct, ct, sizeof(ct));
		assert_int_equal(sotls_aes_set_key(&k, key, len), 0);
		for (size_t m = 0; m < N_IMPLS; m++) {
			if (!sotls_cpu_supports(IMPLS[m].level))
				continue;
			/* Counter block = the plaintext at position j, input zeros:
			 * block j of the output must be the ciphertext. */
			for (uint32_t j = 0; j < 40; j++) {
				static const uint8_t zeros[40 * 16];
				uint8_t ctr[16], out[40 * 16];

				memcpy(ctr, pt, 16);
				ctr_add(ctr, 0u - j);
				IMPLS[m].fn(&k, ctr, zeros, out, 40);
				if (memcmp(out + 16 * j, ct, 16) != 0)
					fail_msg("%s: %s wrong at block %u of 40", FIPS197[v].name,
						 IMPLS[m].name, j);
			}
		}
	}
}

/* ------------------------------------------------- ctr32 against OpenSSL */

#define MAX_BLOCKS 1100
#define GUARD 32
#define GUARD_BYTE 0xc5

/* out[i] = in[i] ^ AES-ECB(K, ctr + i) with OpenSSL; advances ctr. */
static void ctr_reference(const uint8_t *key, size_t key_len, uint8_t ctr[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks)
{
	const EVP_CIPHER *c = key_len == 16 ? EVP_aes_128_ecb()
			      : key_len == 24 ? EVP_aes_192_ecb()
					      : EVP_aes_256_ecb();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

	assert_non_null(x);
	assert_int_equal(EVP_EncryptInit_ex(x, c, NULL, key, NULL), 1);
	EVP_CIPHER_CTX_set_padding(x, 0);
	for (size_t b = 0; b < nblocks; b++) {
		uint8_t ks[16];
		int outl = 0;

		assert_int_equal(EVP_EncryptUpdate(x, ks, &outl, ctr, 16), 1);
		assert_int_equal(outl, 16);
		for (int i = 0; i < 16; i++)
			out[16 * b + i] = in[16 * b + i] ^ ks[i];
		ctr_add(ctr, 1);
	}
	EVP_CIPHER_CTX_free(x);
}

static size_t n_cases;

/*
 * One call checked against the reference: the output, the counter left
 * behind, the input untouched (out of place), and the guard bytes around
 * the output untouched.
 */
static void ctr_case(const struct ctr_impl *impl, const uint8_t *key, size_t key_len,
		     const uint8_t ctr0[16], size_t nblocks, size_t in_off, size_t out_off,
		     int in_place)
{
	static uint8_t src[MAX_BLOCKS * 16 + 2 * GUARD], dst[MAX_BLOCKS * 16 + 2 * GUARD];
	static uint8_t input[MAX_BLOCKS * 16], want[MAX_BLOCKS * 16];
	const size_t n = nblocks * 16;
	uint8_t ctr[16], want_ctr[16];
	struct sotls_aes_key k;

	assert_int_equal(sotls_aes_set_key(&k, key, key_len), 0);
	rng_fill(input, n);
	memcpy(want_ctr, ctr0, 16);
	ctr_reference(key, key_len, want_ctr, input, want, nblocks);

	memset(dst, GUARD_BYTE, sizeof(dst));
	uint8_t *out = dst + GUARD + out_off;
	const uint8_t *in = out;
	if (in_place) {
		memcpy(out, input, n);
	} else {
		memcpy(src + GUARD + in_off, input, n);
		in = src + GUARD + in_off;
	}
	memcpy(ctr, ctr0, 16);
	impl->fn(&k, ctr, in, out, nblocks);

	const char *mode = in_place ? "in place" : "out of place";
	const long d = first_diff(out, want, n);
	if (d >= 0)
		fail_msg("%s: %zu-bit key, %zu blocks, %s, in+%zu out+%zu, counter word %08x: "
			 "output differs from OpenSSL's at byte %ld (block %ld)",
			 impl->name, key_len * 8, nblocks, mode, in_off, out_off, be32(ctr0 + 12),
			 d, d / 16);
	if (memcmp(ctr, want_ctr, 16) != 0)
		fail_msg("%s: %zu blocks, %s, counter word %08x: counter left as %08x, expected "
			 "%08x (first 12 bytes %s)",
			 impl->name, nblocks, mode, be32(ctr0 + 12), be32(ctr + 12),
			 be32(want_ctr + 12),
			 memcmp(ctr, want_ctr, 12) == 0 ? "intact" : "CHANGED");
	for (size_t i = 0; i < GUARD + out_off; i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s: wrote before the output", impl->name, nblocks,
				 mode);
	for (size_t i = GUARD + out_off + n; i < sizeof(dst); i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s: wrote byte %zu past the end of the output",
				 impl->name, nblocks, mode, i - (GUARD + out_off + n));
	if (!in_place && memcmp(in, input, n) != 0)
		fail_msg("%s: %zu blocks, out of place: the input was modified", impl->name,
			 nblocks);
	n_cases++;
}

/* Around every natural width: 1, 4 (ct64, a zmm), 8, 16, 32 blocks. */
static const size_t COUNTS[] = {
	0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,  12,  13,  14,  15,  16,  17,  18,
	19, 20, 23, 24, 25, 27, 28, 29, 31, 32, 33, 35, 36,  39,  40,  47,  48,  49,  63,
	64, 65, 79, 80, 95, 96, 97, 127, 128, 129, 255, 256, 257, 511, 513, 1024, MAX_BLOCKS,
};

static void test_ctr32_vs_openssl(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_IMPLS; m++) {
		if (!sotls_cpu_supports(IMPLS[m].level))
			continue;
		for (size_t c = 0; c < sizeof(COUNTS) / sizeof(COUNTS[0]); c++)
			for (size_t l = 0; l < 3; l++) {
				uint8_t key[32], ctr0[16];

				rng_fill(key, sizeof(key));
				rng_fill(ctr0, sizeof(ctr0));
				const size_t in_off = (c + l) % 4, out_off = (c / 4 + 2 * l) % 4;
				ctr_case(&IMPLS[m], key, KEY_LENS[l], ctr0, COUNTS[c], in_off,
					 out_off, 0);
				ctr_case(&IMPLS[m], key, KEY_LENS[l], ctr0, COUNTS[c], 0, out_off,
					 1);
			}
	}
	printf("test_aes: %zu ctr32 cases against OpenSSL so far\n", n_cases);
}

/*
 * The counter is 32 bits wide and wraps without carrying into byte 11: the
 * wrap is put at every block position of a 70-block call (crossing every
 * lane and register of the wide code), and a long call wraps too.
 */
static void test_ctr32_counter_wrap(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_IMPLS; m++) {
		uint8_t key[32], ctr0[16];

		if (!sotls_cpu_supports(IMPLS[m].level))
			continue;
		rng_fill(key, sizeof(key));
		for (uint32_t j = 0; j < 70; j++) {
			rng_fill(ctr0, 12);
			ctr0[11] = 0xff;
			memset(ctr0 + 12, 0, 4);
			ctr_add(ctr0, 0u - 1 - j);
			ctr_case(&IMPLS[m], key, KEY_LENS[j % 3], ctr0, 70, j % 4, (j / 4) % 4, 0);
			ctr_case(&IMPLS[m], key, 16, ctr0, 70, 0, 1, 1);
		}
		memset(ctr0, 0xff, 16);
		ctr_add(ctr0, 0u - 0x10);
		ctr_case(&IMPLS[m], key, 32, ctr0, MAX_BLOCKS, 3, 1, 0);
	}
}

/* Zero blocks: nothing read or written, the counter unchanged. */
static void test_ctr32_zero_blocks(void **state)
{
	(void)state;
	for (size_t m = 0; m < N_IMPLS; m++) {
		uint8_t key[16], ctr[16], ctr0[16], out[64], out0[64];
		struct sotls_aes_key k;

		if (!sotls_cpu_supports(IMPLS[m].level))
			continue;
		rng_fill(key, sizeof(key));
		rng_fill(ctr0, sizeof(ctr0));
		rng_fill(out0, sizeof(out0));
		memcpy(out, out0, sizeof(out));
		memcpy(ctr, ctr0, sizeof(ctr));
		assert_int_equal(sotls_aes_set_key(&k, key, 16), 0);
		IMPLS[m].fn(&k, ctr, NULL, out, 0);
		if (memcmp(ctr, ctr0, 16) != 0 || memcmp(out, out0, sizeof(out)) != 0)
			fail_msg("%s: zero blocks changed the counter or the output",
				 IMPLS[m].name);
	}
}

/* -------------------------------------------------- buffers at page edges */

struct fence {
	uint8_t *map, *lo, *end;
	size_t map_len;
};

/* A read-write area with an unmapped page on each side. */
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
	static const char msg[] = "test_aes: SIGSEGV (out-of-bounds access?) while running: ";

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
	for (size_t m = 0; m < N_IMPLS; m++) {
		if (!sotls_cpu_supports(IMPLS[m].level))
			continue;
		for (size_t nblocks = 0; nblocks <= 300; nblocks += nblocks < 70 ? 1 : 23) {
			const size_t n = nblocks * 16, key_len = KEY_LENS[nblocks % 3];
			uint8_t key[32], ctr0[16], want_ctr[16];
			struct sotls_aes_key k;

			rng_fill(key, sizeof(key));
			rng_fill(ctr0, sizeof(ctr0));
			rng_fill(input, n);
			assert_int_equal(sotls_aes_set_key(&k, key, key_len), 0);
			memcpy(want_ctr, ctr0, 16);
			ctr_reference(key, key_len, want_ctr, input, want, nblocks);
			for (int c = 0; c < 4; c++) {
				const int right = c & 1, in_place = c >> 1;
				uint8_t *in = right ? fin.end - n : fin.lo;
				uint8_t *out = in_place ? in : right ? fout.end - n : fout.lo;
				uint8_t ctr[16];

				snprintf(fault_desc, sizeof(fault_desc),
					 "%s, %zu blocks, buffers %s a page edge, %s",
					 IMPLS[m].name, nblocks, right ? "end at" : "start at",
					 in_place ? "in place" : "out of place");
				memcpy(in, input, n);
				memcpy(ctr, ctr0, 16);
				IMPLS[m].fn(&k, ctr, in, out, nblocks);
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

/* ------------------------------------------------------- argument errors */

static void test_set_key_errors(void **state)
{
	static const size_t bad[] = {0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64, SIZE_MAX};
	uint8_t key[64] = {0};
	struct sotls_aes_key k;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sotls_aes_set_key(&k, key, bad[i]) != SOTLS_ERR_INVALID_ARGUMENT)
			fail_msg("sotls_aes_set_key accepted a %zu-byte key", bad[i]);
	assert_int_equal(sotls_aes_set_key(NULL, key, 16), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_aes_set_key(&k, NULL, 16), SOTLS_ERR_INVALID_ARGUMENT);
	for (size_t l = 0; l < 3; l++) {
		assert_int_equal(sotls_aes_set_key(&k, key, KEY_LENS[l]), 0);
		assert_int_equal(k.rounds, KEY_LENS[l] / 4 + 6);
	}
}

int main(void)
{
	const char *s = getenv("SOTLS_TEST_SEED");
	const uint64_t seed = s != NULL ? strtoull(s, NULL, 0) : 0xae5c7a64ull;
	char run[128] = "", skipped[128] = "";

	rng_state = seed;
	printf("test_aes: seed 0x%llx (set SOTLS_TEST_SEED to replay another)\n",
	       (unsigned long long)seed);
	for (size_t i = 0; i < N_IMPLS; i++) {
		char *dst = sotls_cpu_supports(IMPLS[i].level) ? run : skipped;

		strncat(dst, " ", sizeof(run) - strlen(dst) - 1);
		strncat(dst, IMPLS[i].name, sizeof(run) - strlen(dst) - 1);
	}
	printf("test_aes: ctr32 implementations run:%s; skipped (CPU lacks them):%s\n", run,
	       skipped[0] ? skipped : " none");

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbox_circuit),
		cmocka_unit_test(test_bitslice_layout),
		cmocka_unit_test(test_fips197_key_expansion),
		cmocka_unit_test(test_fips197_ctr32),
		cmocka_unit_test(test_ctr32_vs_openssl),
		cmocka_unit_test(test_ctr32_counter_wrap),
		cmocka_unit_test(test_ctr32_zero_blocks),
		cmocka_unit_test(test_ctr32_page_edges),
		cmocka_unit_test(test_set_key_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * ARIA-GCM and AES-GCM AEAD tests (lib/crypto/aead.h), run for every
 * algorithm and every implementation this CPU runs (sotls_aead_variants):
 *
 *  (a) published known answers (RFC 8269 for ARIA, the McGrew-Viega GCM test
 *      cases for AES), checked against OpenSSL too so the differential oracle
 *      below is itself known to be right;
 *  (b) differential tests against OpenSSL's EVP_aria_{128,256}_gcm and
 *      EVP_aes_{128,256}_gcm: every plaintext length 0..1100 (up to two
 *      batches of the 32-block stitched AES loop, with every tail), every
 *      AAD length 0..40 with every plaintext length 0..300, long AADs, large
 *      records (up to 65543 bytes), buffers at offsets 0..3, in place and out
 *      of place, seal, open of OpenSSL's output, and seal→open round trips;
 *      guard bytes around every output, the input and the context never
 *      modified;
 *      the same with buffers that end (or start) at an unmapped page, so
 *      that reading or writing even one byte out of bounds crashes;
 *  (c) every single-bit flip of tag, ciphertext, AAD and nonce is rejected
 *      with SOTLS_CRYPTO_BAD_TAG and leaves the output all zeros;
 *  (d) argument errors;
 *  (e) the implementations agree with each other on random inputs, and
 *      every AES-GCM one with the portable one at every length 0..4096 and
 *      around 16 KiB.
 *
 * Random inputs come from a fixed seed (printed; override with
 * SOTLS_TEST_SEED=<number>) so that a failure can be replayed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "aead.h"
#include "cpu.h"
#include "crypto_testutil.h"
#include "openssl_aead.h"
#include "sotls.h"

/* ---------------------------------------------------------------- helpers */

/* Index of the first nonzero byte, or -1. */
static long first_nonzero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return (long)i;
	return -1;
}

/* Every test runs over all of them (where a loop picks one, it rotates). */
static const enum sotls_aead_alg ALGS[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_ARIA_256_GCM,
					   SOTLS_AEAD_AES_128_GCM, SOTLS_AEAD_AES_256_GCM};
#define N_ALGS (sizeof(ALGS) / sizeof(ALGS[0]))

/*
 * The implementations this CPU runs (whatever SOTLS_CPU says), per cipher
 * family, as the feature sets that pick them (sotls_aead_variants), best
 * first, the portable one last; filled in by main(). Tests loop over
 * variant indexes below n_impls; a family with fewer variants runs its
 * portable one again for the indexes past its own.
 */
#define MAX_VARIANTS 16
static uint32_t variants[2][MAX_VARIANTS];
static size_t n_variants[2];
static size_t n_impls;

static int fam(enum sotls_aead_alg alg)
{
	return alg == SOTLS_AEAD_AES_128_GCM || alg == SOTLS_AEAD_AES_256_GCM;
}

static uint32_t vset(size_t lv, enum sotls_aead_alg alg)
{
	const int f = fam(alg);

	return variants[f][lv < n_variants[f] ? lv : n_variants[f] - 1];
}

/* The implementation's name, for messages (a few calls may share a line). */
static const char *lname(size_t lv, enum sotls_aead_alg alg)
{
	static char buf[4][64];
	static unsigned next;
	char *b = buf[next++ % 4];

	sotls_aead_describe(alg, vset(lv, alg), b, sizeof(buf[0]));
	return b;
}

static void init_or_fail(struct sotls_aead *a, enum sotls_aead_alg alg, const uint8_t *key,
			 size_t lv)
{
	int rc = sotls_aead_init_features(a, alg, key, sotls_aead_key_len(alg), vset(lv, alg));

	if (rc != 0)
		fail_msg("%s %s: init_features returned %d", lname(lv, alg),
			 sotls_aead_alg_name(alg), rc);
}

/* ---------------------------------------------------------------- OpenSSL */

static const EVP_CIPHER *ossl_cipher(enum sotls_aead_alg alg)
{
	const EVP_CIPHER *c = openssl_aead_cipher(alg);
	if (c == NULL)
		fail_msg("no OpenSSL cipher for alg %d", (int)alg);
	return c;
}

/* OpenSSL's default GCM IV length is 12, the same as ours. */
static void ossl_seal(enum sotls_aead_alg alg, const uint8_t *key, const uint8_t *nonce,
		      const uint8_t *aad, size_t aad_len, const uint8_t *pt, size_t len,
		      uint8_t *ct, uint8_t tag[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int outl = 0;

	assert_non_null(c);
	assert_int_equal(EVP_EncryptInit_ex(c, ossl_cipher(alg), NULL, key, nonce), 1);
	if (aad_len > 0)
		assert_int_equal(EVP_EncryptUpdate(c, NULL, &outl, aad, (int)aad_len), 1);
	if (len > 0) {
		assert_int_equal(EVP_EncryptUpdate(c, ct, &outl, pt, (int)len), 1);
		assert_int_equal(outl, (int)len);
	}
	assert_int_equal(EVP_EncryptFinal_ex(c, ct + len, &outl), 1);
	assert_int_equal(outl, 0);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag), 1);
	EVP_CIPHER_CTX_free(c);
}

/* 1 if OpenSSL accepts (ct, tag) and writes the plaintext to pt, else 0. */
static int ossl_open(enum sotls_aead_alg alg, const uint8_t *key, const uint8_t *nonce,
		     const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t len,
		     const uint8_t tag[16], uint8_t *pt)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t t[16];
	int outl = 0;

	memcpy(t, tag, 16);
	assert_non_null(c);
	assert_int_equal(EVP_DecryptInit_ex(c, ossl_cipher(alg), NULL, key, nonce), 1);
	if (aad_len > 0)
		assert_int_equal(EVP_DecryptUpdate(c, NULL, &outl, aad, (int)aad_len), 1);
	if (len > 0)
		assert_int_equal(EVP_DecryptUpdate(c, pt, &outl, ct, (int)len), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, t), 1);
	const int ok = EVP_DecryptFinal_ex(c, pt + len, &outl) > 0;
	EVP_CIPHER_CTX_free(c);
	return ok;
}

/* -------------------------------------------- (a) published known answers */

/*
 * RFC 8269 ("The ARIA Algorithm and Its Use with the Secure Real-time
 * Transport Protocol (SRTP)"), Appendix A.2: the AEAD_ARIA_128_GCM and
 * AEAD_ARIA_256_GCM vectors. Same 12-byte IV, 12-byte AAD (the RTP header)
 * and 160-byte plaintext under both keys; ciphertext and tag as published.
 */
static const char RFC8269_PT[] =
	"f57af5fd4ae19562976ec57a5a7ad55a5af5c5e5c5fdf5c55ad57a4a7272d572"
	"62e9729566ed66e97ac54a4a5a7ad5e15ae5fdd5fd5ac5d56ae56ad5c572d54a"
	"e54ac55a956afd6aed5a4ac562957a9516991691d572fd14e97ae962ed7a9f4a"
	"955af572e162f57a956666e17ae1f54a95f566d54a66e16e4afd6a9f7ae1c5c5"
	"5ae5d56afde916c5e94a6ec56695e14afde1148416e94ad57ac5146ed59d1cc5";
static const char RFC8269_IV[] = "000020e8f5eb00000000315e";
static const char RFC8269_AAD[] = "8008315ebf2e6fe020e8f5eb";

/*
 * "The Galois/Counter Mode of Operation (GCM)", D. McGrew and J. Viega
 * (revised submission to NIST, 2005), Appendix B: the AES test cases with a
 * 96-bit IV. Test Cases 1-4 use AES-128, 13-16 AES-256 (5, 6, 11, 12, 17
 * and 18 use other IV lengths, which this AEAD does not take; 7-12 AES-192).
 */
#define MV_K "feffe9928665731c6d6a8f9467308308"
#define MV_IV "cafebabefacedbaddecaf888"
#define MV_AAD "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define MV_P60                                                                             \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                 \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define MV_C3_60                                                                           \
	"42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"                 \
	"21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
#define MV_C15_60                                                                          \
	"522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"                 \
	"8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
#define MV_K256 "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
#define Z16 "00000000000000000000000000000000"

/* Every published vector: hex strings, "" for empty. */
static const struct kat {
	const char *name;
	enum sotls_aead_alg alg;
	const char *key, *iv, *aad, *pt, *ct, *tag;
} KATS[] = {
	{"RFC 8269 A.2.1 ARIA-128-GCM", SOTLS_AEAD_ARIA_128_GCM,
	 "e91e5e75da65554a48181f3846349562", RFC8269_IV, RFC8269_AAD, RFC8269_PT,
	 "4d8a9a0675550c704b17d8c9ddc81a5cd6f7da34f2fe1b3db7cb3dfb9697102e"
	 "a0f3c1fc2dbc873d44bceeae8e4442974ba21ff6789d3272613fb9631a7cf3f1"
	 "4bacbeb421633a90ffbe58c2fa6bdca534f10d0de0502ce1d531b6336e588782"
	 "78531e5c22bc6c85bbd784d78d9e680aa19031aaf89101d669d7a3965c1f7e16"
	 "229d7463e0535f4e253f5d18187d40b8ae0f564bd970b5e7e2adfb211e89a953",
	 "5abace3f37f5a736f4be984bbffbedc1"},
	{"RFC 8269 A.2.2 ARIA-256-GCM", SOTLS_AEAD_ARIA_256_GCM,
	 "0c5ffd37a11edc42c325287fc0604f2e3e8cd5671a00fe3216aa5eb105783b54", RFC8269_IV,
	 RFC8269_AAD, RFC8269_PT,
	 "6f9e4bcbc8c85fc0128fb1e4a0a20cb9932ff74581f54fc013dd054b19f99371"
	 "425b352d97d3f337b90b63d1b082adeeea9d2d7391897d591b985e55fb50cb53"
	 "50cf7d38dc27dda127c078a149c8eb98083d66363a46e3726af217d3a00275ad"
	 "5bf772c7610ea4c23006878f0ee69a8397703169a419303f40b72e4573714d19"
	 "e2697df61e7c7252e5abc6bade876ac4961bfac4d5e867afca351a48aed52822",
	 "e210d6ced2cf430ff841472915e7ef48"},
	{"McGrew-Viega Test Case 1 (AES-128)", SOTLS_AEAD_AES_128_GCM, Z16,
	 "000000000000000000000000", "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"},
	{"McGrew-Viega Test Case 2 (AES-128)", SOTLS_AEAD_AES_128_GCM, Z16,
	 "000000000000000000000000", "", Z16, "0388dace60b6a392f328c2b971b2fe78",
	 "ab6e47d42cec13bdf53a67b21257bddf"},
	{"McGrew-Viega Test Case 3 (AES-128)", SOTLS_AEAD_AES_128_GCM, MV_K, MV_IV, "",
	 MV_P60 "1aafd255", MV_C3_60 "473f5985", "4d5c2af327cd64a62cf35abd2ba6fab4"},
	{"McGrew-Viega Test Case 4 (AES-128)", SOTLS_AEAD_AES_128_GCM, MV_K, MV_IV, MV_AAD,
	 MV_P60, MV_C3_60, "5bc94fbc3221a5db94fae95ae7121a47"},
	{"McGrew-Viega Test Case 13 (AES-256)", SOTLS_AEAD_AES_256_GCM, Z16 Z16,
	 "000000000000000000000000", "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
	{"McGrew-Viega Test Case 14 (AES-256)", SOTLS_AEAD_AES_256_GCM, Z16 Z16,
	 "000000000000000000000000", "", Z16, "cea7403d4d606b6e074ec5d3baf39d18",
	 "d0d1c8a799996bf0265b98b5d48ab919"},
	{"McGrew-Viega Test Case 15 (AES-256)", SOTLS_AEAD_AES_256_GCM, MV_K256, MV_IV, "",
	 MV_P60 "1aafd255", MV_C15_60 "898015ad", "b094dac5d93471bdec1a502270e3cc6c"},
	{"McGrew-Viega Test Case 16 (AES-256)", SOTLS_AEAD_AES_256_GCM, MV_K256, MV_IV,
	 MV_AAD, MV_P60, MV_C15_60, "76fc6ece0f4e1768cddf8853bb2d551b"},
};

static void test_known_answers(void **state)
{
	(void)state;
	for (size_t v = 0; v < sizeof(KATS) / sizeof(KATS[0]); v++) {
		uint8_t key[32], iv[12], aad[64], pt[160], ct[160], tag[16];
		uint8_t out[160], buf[160], otag[16];
		const enum sotls_aead_alg alg = KATS[v].alg;
		const char *name = KATS[v].name;

		assert_int_equal(hex_decode(KATS[v].key, key, sizeof(key)),
				 sotls_aead_key_len(alg));
		assert_int_equal(hex_decode(KATS[v].iv, iv, sizeof(iv)), 12);
		const size_t aad_len = hex_decode(KATS[v].aad, aad, sizeof(aad));
		const size_t len = hex_decode(KATS[v].pt, pt, sizeof(pt));
		assert_int_equal(hex_decode(KATS[v].ct, ct, sizeof(ct)), len);
		assert_int_equal(hex_decode(KATS[v].tag, tag, sizeof(tag)), 16);

		/* The oracle of the differential tests agrees with the source. */
		ossl_seal(alg, key, iv, aad, aad_len, pt, len, out, otag);
		if (memcmp(out, ct, len) != 0 || memcmp(otag, tag, 16) != 0)
			fail_msg("%s: OpenSSL disagrees with the published vector (bad "
				 "transcription?)", name);

		for (size_t i = 0; i < n_impls; i++) {
			const size_t lv = i;
			struct sotls_aead a;
			long d;

			init_or_fail(&a, alg, key, lv);
			memset(out, 0, sizeof(out));
			assert_int_equal(sotls_aead_seal(&a, iv, aad, aad_len, pt, len, out, otag),
					 0);
			if ((d = first_diff(out, ct, len)) >= 0)
				fail_msg("%s, %s: ciphertext wrong from byte %ld", name,
					 lname(lv, alg), d);
			if (memcmp(otag, tag, 16) != 0)
				fail_msg("%s, %s: tag wrong", name, lname(lv, alg));

			memcpy(buf, pt, len);
			assert_int_equal(sotls_aead_seal(&a, iv, aad, aad_len, buf, len, buf, otag),
					 0);
			if (memcmp(buf, ct, len) != 0 || memcmp(otag, tag, 16) != 0)
				fail_msg("%s, %s: in-place seal wrong", name, lname(lv, alg));

			memset(out, 0, sizeof(out));
			int rc = sotls_aead_open(&a, iv, aad, aad_len, ct, len, tag, out);
			if (rc != 0 || memcmp(out, pt, len) != 0)
				fail_msg("%s, %s: open returned %d / wrong plaintext", name,
					 lname(lv, alg), rc);

			memcpy(buf, ct, len);
			rc = sotls_aead_open(&a, iv, aad, aad_len, buf, len, tag, buf);
			if (rc != 0 || memcmp(buf, pt, len) != 0)
				fail_msg("%s, %s: in-place open returned %d / wrong "
					 "plaintext", name, lname(lv, alg), rc);
			sotls_aead_clear(&a);
		}
	}
}

/* ------------------------------------------ (b) differential vs. OpenSSL */

#define MAX_LEN 65543
#define MAX_AAD 4100
#define GUARD 32
#define GUARD_BYTE 0xc5
#define SRC_GUARD_BYTE 0x3c
#define BUF_LEN (MAX_LEN + 2 * GUARD + 8)

/* Big buffers live here, not on the stack. */
static uint8_t pt_buf[MAX_LEN], ref_ct[MAX_LEN], aad_buf[MAX_AAD + 8];
static uint8_t src_buf[BUF_LEN], dst_buf[BUF_LEN], inp_buf[BUF_LEN];
static size_t diff_cases;

/* Nothing was written in the GUARD bytes before buf+off and after buf+off+len. */
static void check_guards(const char *desc, const char *step, const uint8_t *buf, size_t off,
			 size_t len)
{
	for (size_t i = 0; i < GUARD + off; i++)
		if (buf[i] != GUARD_BYTE)
			fail_msg("%s: %s wrote %zu byte(s) before its output", desc, step,
				 GUARD + off - i);
	for (size_t i = 0; i < GUARD; i++)
		if (buf[GUARD + off + len + i] != GUARD_BYTE)
			fail_msg("%s: %s wrote byte %zu past the end of its output", desc, step, i);
}

/*
 * Puts len bytes of data at GUARD + off in buf, guard bytes around. Inputs
 * get a different guard byte from outputs, so that code copying bytes past
 * the end of its input to past the end of its output is caught too.
 */
static uint8_t *place(uint8_t *buf, size_t off, const uint8_t *data, size_t len, uint8_t guard)
{
	memset(buf, guard, GUARD + off + len + GUARD);
	if (len > 0)
		memcpy(buf + GUARD + off, data, len);
	return buf + GUARD + off;
}

/*
 * One differential case on one implementation: fresh random key, nonce, AAD and
 * plaintext; OpenSSL's seal is the reference.
 */
static void diff_case(size_t lv, enum sotls_aead_alg alg, size_t len,
		      size_t aad_len, size_t in_off, size_t out_off)
{
	uint8_t key[32], nonce[12], ref_tag[16], tag_buf[16 + 4];
	struct sotls_aead a, snapshot;
	char desc[160];
	long d;
	int rc;

	snprintf(desc, sizeof(desc), "%s %s len %zu aad %zu in+%zu out+%zu", lname(lv, alg),
		 sotls_aead_alg_name(alg), len, aad_len, in_off, out_off);
	assert_true(len <= MAX_LEN && aad_len <= MAX_AAD && in_off < 8 && out_off < 8);
	rng_fill(key, sizeof(key));
	rng_fill(nonce, sizeof(nonce));
	/* The AAD is unaligned too (offset in_off), like the payload. */
	uint8_t *aad = aad_buf + in_off;
	rng_fill(aad, aad_len);
	rng_fill(pt_buf, len);
	ossl_seal(alg, key, nonce, aad, aad_len, pt_buf, len, ref_ct, ref_tag);

	init_or_fail(&a, alg, key, lv);
	memcpy(&snapshot, &a, sizeof(a));
	/* An unaligned tag pointer as well. */
	uint8_t *tag = tag_buf + 1 + out_off % 4;

	/* 1. Seal out of place. */
	const uint8_t *in = place(src_buf, in_off, pt_buf, len, SRC_GUARD_BYTE);
	uint8_t *out = dst_buf + GUARD + out_off;
	memset(dst_buf, GUARD_BYTE, GUARD + out_off + len + GUARD);
	rc = sotls_aead_seal(&a, nonce, aad, aad_len, in, len, out, tag);
	if (rc != 0)
		fail_msg("%s: seal returned %d", desc, rc);
	if ((d = first_diff(out, ref_ct, len)) >= 0)
		fail_msg("%s: seal: ciphertext differs from OpenSSL's at byte %ld", desc, d);
	if (memcmp(tag, ref_tag, 16) != 0)
		fail_msg("%s: seal: tag differs from OpenSSL's", desc);
	check_guards(desc, "seal", dst_buf, out_off, len);
	if (len > 0 && memcmp(in, pt_buf, len) != 0)
		fail_msg("%s: seal modified its input", desc);

	/* 2. Seal in place. */
	uint8_t *io = place(inp_buf, in_off, pt_buf, len, GUARD_BYTE);
	memset(tag, 0, 16);
	rc = sotls_aead_seal(&a, nonce, aad, aad_len, io, len, io, tag);
	if (rc != 0)
		fail_msg("%s: in-place seal returned %d", desc, rc);
	if ((d = first_diff(io, ref_ct, len)) >= 0)
		fail_msg("%s: in-place seal: ciphertext differs from OpenSSL's at byte %ld", desc,
			 d);
	if (memcmp(tag, ref_tag, 16) != 0)
		fail_msg("%s: in-place seal: tag differs from OpenSSL's", desc);
	check_guards(desc, "in-place seal", inp_buf, in_off, len);

	/* 3. Open OpenSSL's output, out of place. */
	in = place(src_buf, in_off, ref_ct, len, SRC_GUARD_BYTE);
	memset(dst_buf, GUARD_BYTE, GUARD + out_off + len + GUARD);
	memcpy(tag, ref_tag, 16);
	rc = sotls_aead_open(&a, nonce, aad, aad_len, in, len, tag, out);
	if (rc != 0)
		fail_msg("%s: open of OpenSSL's output returned %d", desc, rc);
	if ((d = first_diff(out, pt_buf, len)) >= 0)
		fail_msg("%s: open: plaintext wrong at byte %ld", desc, d);
	check_guards(desc, "open", dst_buf, out_off, len);
	if (len > 0 && memcmp(in, ref_ct, len) != 0)
		fail_msg("%s: open modified its input", desc);

	/* 4. Round trip: open our own in-place seal output, in place. */
	rc = sotls_aead_open(&a, nonce, aad, aad_len, io, len, tag, io);
	if (rc != 0)
		fail_msg("%s: in-place open of our own seal returned %d", desc, rc);
	if ((d = first_diff(io, pt_buf, len)) >= 0)
		fail_msg("%s: in-place open: plaintext wrong at byte %ld", desc, d);
	check_guards(desc, "in-place open", inp_buf, in_off, len);

	/* seal/open take a const context: it must really stay unchanged. */
	if (memcmp(&a, &snapshot, sizeof(a)) != 0)
		fail_msg("%s: seal/open modified the context", desc);
	sotls_aead_clear(&a);
	diff_cases++;
}

/* Every length 0..1100 (one record plus GCM's internal 1 KiB chunk edge). */
static void test_vs_openssl_lengths(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_impls; i++)
		for (size_t g = 0; g < N_ALGS; g++)
			for (size_t len = 0; len <= 1100; len++)
				diff_case(i, ALGS[g], len, (len * 7 + g) % 41, len % 4,
					  (len / 4 + g) % 4);
}

/*
 * Every AAD length 0..40 against every plaintext length 0..300 (the cipher
 * and the offsets vary along), then long AADs, which take the wide GHASH
 * paths on their own.
 */
static void test_vs_openssl_aad(void **state)
{
	static const size_t long_aads[] = {41, 63, 64, 65, 127, 128, 129, 200, 255, 256,
					   257, 511, 512, 1000, 1024, 4095, 4099};
	static const size_t long_aad_lens[] = {0, 1, 50, 1024};

	(void)state;
	for (size_t i = 0; i < n_impls; i++) {
		for (size_t aad = 0; aad <= 40; aad++)
			for (size_t len = 0; len <= 300; len++)
				diff_case(i, ALGS[(aad + len) % N_ALGS], len, aad,
					  (aad + len) % 4, (aad / 4 + len / 2) % 4);
		for (size_t g = 0; g < N_ALGS; g++)
			for (size_t x = 0; x < sizeof(long_aads) / sizeof(long_aads[0]); x++)
				for (size_t l = 0; l < 4; l++)
					diff_case(i, ALGS[g], long_aad_lens[l], long_aads[x],
						  (x + l) % 4, l);
	}
}

/* Large records, including a TLS maximum (16384) and odd sizes above it. */
static void test_vs_openssl_large(void **state)
{
	static const size_t lens[] = {2047, 2048, 2049, 4111, 16383, 16384, 16385, 16400, 65543};

	(void)state;
	for (size_t i = 0; i < n_impls; i++)
		for (size_t g = 0; g < N_ALGS; g++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
				for (size_t off = 1; off <= 3; off++)
					diff_case(i, ALGS[g], lens[l], 13, off, 4 - off);
	printf("test_gcm: %zu differential cases against OpenSSL so far\n", diff_cases);
}

/* ------------------------------------------- (b) buffers at page edges */

/*
 * Every buffer (input, output, AAD, tag) flush against an unmapped page
 * (crypto_testutil.h's fence), at the start and at the end of its area, so
 * that reading or writing even one byte out of bounds crashes; fault_desc
 * names the case for the SIGSEGV handler.
 */
static void page_edge_case(size_t lv, enum sotls_aead_alg alg, size_t len,
			   size_t aad_len, struct fence *fin, struct fence *fout,
			   struct fence *faad, struct fence *ftag)
{
	uint8_t key[32], nonce[12], ref_tag[16];
	struct sotls_aead a;
	int rc;

	rng_fill(key, sizeof(key));
	rng_fill(nonce, sizeof(nonce));
	rng_fill(pt_buf, len);
	init_or_fail(&a, alg, key, lv);
	for (int right = 0; right <= 1; right++) {
		const char *edge = right ? "end at" : "start at";
		uint8_t *aad = fence_at(faad, right, aad_len);
		uint8_t *tag = fence_at(ftag, right, 16);
		uint8_t *in = fence_at(fin, right, len), *out = fence_at(fout, right, len);

		rng_fill(aad, aad_len);
		ossl_seal(alg, key, nonce, aad, aad_len, pt_buf, len, ref_ct, ref_tag);
		for (int in_place = 0; in_place <= 1; in_place++) {
			uint8_t *dst = in_place ? in : out;

			snprintf(fault_desc, sizeof(fault_desc),
				 "%s %s len %zu aad %zu, buffers %s a page edge, %s", lname(lv, alg),
				 sotls_aead_alg_name(alg), len, aad_len, edge,
				 in_place ? "in place" : "out of place");
			if (len > 0)
				memcpy(in, pt_buf, len);
			rc = sotls_aead_seal(&a, nonce, aad, aad_len, in, len, dst, tag);
			if (rc != 0 || first_diff(dst, ref_ct, len) >= 0 ||
			    memcmp(tag, ref_tag, 16) != 0)
				fail_msg("%s: seal rc %d, wrong ciphertext or tag", fault_desc, rc);

			if (len > 0)
				memcpy(in, ref_ct, len);
			rc = sotls_aead_open(&a, nonce, aad, aad_len, in, len, tag, dst);
			if (rc != 0 || first_diff(dst, pt_buf, len) >= 0)
				fail_msg("%s: open rc %d, wrong plaintext", fault_desc, rc);

			/* A rejected record: the wipe must stay in bounds too. */
			if (len > 0)
				memcpy(in, ref_ct, len);
			tag[15] ^= 0x80;
			rc = sotls_aead_open(&a, nonce, aad, aad_len, in, len, tag, dst);
			tag[15] ^= 0x80;
			if (rc != SOTLS_CRYPTO_BAD_TAG || first_nonzero(dst, len) >= 0)
				fail_msg("%s: forged open rc %d or output not wiped", fault_desc, rc);
		}
	}
	sotls_aead_clear(&a);
	fault_desc[0] = '\0';
}

static void test_page_edges(void **state)
{
	static const size_t big[] = {511, 1007, 1008, 1009, 1024, 1025, 2047, 4096, 16384, 16385};
	struct fence fin, fout, faad, ftag;

	(void)state;
	fault_catch_begin("test_gcm");
	fence_init(&fin, 16385);
	fence_init(&fout, 16385);
	fence_init(&faad, 64);
	fence_init(&ftag, 16);
	for (size_t i = 0; i < n_impls; i++) {
		for (size_t len = 0; len <= 300; len++)
			page_edge_case(i, ALGS[len % N_ALGS], len, (len * 3) % 41, &fin, &fout,
				       &faad, &ftag);
		for (size_t b = 0; b < sizeof(big) / sizeof(big[0]); b++)
			page_edge_case(i, ALGS[b % N_ALGS], big[b], 13, &fin, &fout, &faad,
				       &ftag);
	}
	fence_free(&fin);
	fence_free(&fout);
	fence_free(&faad);
	fence_free(&ftag);
	fault_catch_end();
}

/* ---------------------------------------------- (c) forgeries are rejected */

#define MAX_FLIP_LEN 300
#define FLIP_AAD 13

struct flip_ctx {
	const struct sotls_aead *a;
	char desc[128];
	size_t len, aad_len;
	const uint8_t *pt;
	size_t rejected;
};

/*
 * Open of a forgery must return SOTLS_CRYPTO_BAD_TAG and leave all len
 * output bytes zero, both out of place (output pre-filled with a pattern)
 * and in place (where the ciphertext must be gone too).
 */
static void expect_reject(struct flip_ctx *f, const char *what, const uint8_t nonce[12],
			  const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t len,
			  const uint8_t tag[16])
{
	uint8_t out[MAX_FLIP_LEN + GUARD], io[MAX_FLIP_LEN + GUARD];
	long z;
	int rc;

	memset(out, 0xa5, sizeof(out));
	rc = sotls_aead_open(f->a, nonce, aad, aad_len, ct, len, tag, out);
	if (rc != SOTLS_CRYPTO_BAD_TAG)
		fail_msg("%s: %s: open returned %d, expected SOTLS_CRYPTO_BAD_TAG (%d)",
			 f->desc, what, rc, SOTLS_CRYPTO_BAD_TAG);
	if ((z = first_nonzero(out, len)) >= 0)
		fail_msg("%s: %s: rejected, but output byte %ld is not zero (plaintext "
			 "released)", f->desc, what, z);
	for (size_t i = len; i < sizeof(out); i++)
		if (out[i] != 0xa5)
			fail_msg("%s: %s: wrote byte %zu past the output", f->desc, what, i - len);

	memset(io, 0xa5, sizeof(io));
	memcpy(io, ct, len);
	rc = sotls_aead_open(f->a, nonce, aad, aad_len, io, len, tag, io);
	if (rc != SOTLS_CRYPTO_BAD_TAG)
		fail_msg("%s: %s: in-place open returned %d, expected "
			 "SOTLS_CRYPTO_BAD_TAG", f->desc, what, rc);
	if ((z = first_nonzero(io, len)) >= 0)
		fail_msg("%s: %s: in-place open rejected, but byte %ld is not zero", f->desc,
			 what, z);
	for (size_t i = len; i < sizeof(io); i++)
		if (io[i] != 0xa5)
			fail_msg("%s: %s: in-place open wrote byte %zu past the buffer", f->desc,
				 what, i - len);
	f->rejected++;
}

static void flip_case(size_t lv, enum sotls_aead_alg alg, size_t len,
		      struct flip_ctx *f)
{
	uint8_t key[32], nonce[12], aad[FLIP_AAD], pt[MAX_FLIP_LEN], ct[MAX_FLIP_LEN], tag[16];
	uint8_t out[MAX_FLIP_LEN];
	struct sotls_aead a;
	char what[96];

	assert_true(len <= MAX_FLIP_LEN);
	rng_fill(key, sizeof(key));
	rng_fill(nonce, sizeof(nonce));
	rng_fill(aad, sizeof(aad));
	rng_fill(pt, len);
	init_or_fail(&a, alg, key, lv);
	f->a = &a;
	f->len = len;
	snprintf(f->desc, sizeof(f->desc), "%s %s len %zu aad %d", lname(lv, alg),
		 sotls_aead_alg_name(alg), len, FLIP_AAD);

	assert_int_equal(sotls_aead_seal(&a, nonce, aad, FLIP_AAD, pt, len, ct, tag), 0);
	/* Control: the untouched record opens, here and in OpenSSL. */
	if (sotls_aead_open(&a, nonce, aad, FLIP_AAD, ct, len, tag, out) != 0 ||
	    (len > 0 && memcmp(out, pt, len) != 0))
		fail_msg("%s: the unmodified record does not open", f->desc);
	if (!ossl_open(alg, key, nonce, aad, FLIP_AAD, ct, len, tag, out))
		fail_msg("%s: OpenSSL rejects our record", f->desc);

	for (size_t bit = 0; bit < 128; bit++) {
		tag[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(what, sizeof(what), "tag bit %zu flipped", bit);
		expect_reject(f, what, nonce, aad, FLIP_AAD, ct, len, tag);
		tag[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (size_t bit = 0; bit < 8 * len; bit++) {
		ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(what, sizeof(what), "ciphertext bit %zu (byte %zu) flipped", bit, bit / 8);
		expect_reject(f, what, nonce, aad, FLIP_AAD, ct, len, tag);
		ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (size_t bit = 0; bit < 8 * FLIP_AAD; bit++) {
		aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(what, sizeof(what), "AAD bit %zu flipped", bit);
		expect_reject(f, what, nonce, aad, FLIP_AAD, ct, len, tag);
		aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	for (size_t bit = 0; bit < 96; bit++) {
		nonce[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(what, sizeof(what), "nonce bit %zu flipped", bit);
		expect_reject(f, what, nonce, aad, FLIP_AAD, ct, len, tag);
		nonce[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* Truncations: the lengths are authenticated too. */
	if (len > 0)
		expect_reject(f, "ciphertext one byte short", nonce, aad, FLIP_AAD, ct, len - 1,
			      tag);
	expect_reject(f, "AAD one byte short", nonce, aad, FLIP_AAD - 1, ct, len, tag);
	expect_reject(f, "AAD empty", nonce, aad, 0, ct, len, tag);
	sotls_aead_clear(&a);
}

static void test_forgeries_rejected(void **state)
{
	static const size_t lens[] = {0, 1, 17, 300};
	struct flip_ctx f = {0};

	(void)state;
	for (size_t i = 0; i < n_impls; i++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			for (size_t g = 0; g < N_ALGS; g++)
				flip_case(i, ALGS[g], lens[l], &f);
	}
	printf("test_gcm: %zu forgeries rejected (x2: out of place and in place)\n", f.rejected);
}

/* ----------------------------------------------------- (d) argument errors */

static void test_init_errors(void **state)
{
	uint8_t key[64];
	struct sotls_aead a;
	const enum sotls_aead_alg A128 = SOTLS_AEAD_ARIA_128_GCM, A256 = SOTLS_AEAD_ARIA_256_GCM;
	const int INVAL = SOTLS_CRYPTO_BAD_ARG;

	(void)state;
	rng_fill(key, sizeof(key));
	assert_int_equal(sotls_aead_key_len(A128), 16);
	assert_int_equal(sotls_aead_key_len(A256), 32);
	assert_int_equal(sotls_aead_key_len(SOTLS_AEAD_AES_128_GCM), 16);
	assert_int_equal(sotls_aead_key_len(SOTLS_AEAD_AES_256_GCM), 32);
	assert_int_equal(sotls_aead_key_len((enum sotls_aead_alg)0), 0);
	assert_int_equal(sotls_aead_key_len((enum sotls_aead_alg)5), 0);
	assert_string_equal(sotls_aead_alg_name(A128), "ARIA-128-GCM");
	assert_string_equal(sotls_aead_alg_name(A256), "ARIA-256-GCM");
	assert_string_equal(sotls_aead_alg_name(SOTLS_AEAD_AES_128_GCM), "AES-128-GCM");
	assert_string_equal(sotls_aead_alg_name(SOTLS_AEAD_AES_256_GCM), "AES-256-GCM");
	assert_null(sotls_aead_alg_name((enum sotls_aead_alg)0));
	assert_null(sotls_aead_alg_name((enum sotls_aead_alg)5));

	assert_int_equal(sotls_aead_init_features(NULL, A128, key, 16, 0), INVAL);
	assert_int_equal(sotls_aead_init_features(&a, A128, NULL, 16, 0), INVAL);
	static const size_t bad128[] = {0, 15, 17, 24, 32}, bad256[] = {0, 16, 24, 31, 33, 64};
	for (size_t g = 0; g < N_ALGS; g++) {
		const size_t *bad = sotls_aead_key_len(ALGS[g]) == 16 ? bad128 : bad256;
		const size_t n_bad = sotls_aead_key_len(ALGS[g]) == 16 ? 5 : 6;

		for (size_t i = 0; i < n_bad; i++)
			if (sotls_aead_init_features(&a, ALGS[g], key, bad[i], 0) != INVAL)
				fail_msg("%s accepted a %zu-byte key", sotls_aead_alg_name(ALGS[g]),
					 bad[i]);
		/* ARIA-192 and AES-192 exist as ciphers but not as our AEADs. */
		assert_int_equal(sotls_aead_init(&a, ALGS[g], key, 24), INVAL);
	}
	assert_int_equal(sotls_aead_init(&a, (enum sotls_aead_alg)0, key, 16), INVAL);
	assert_int_equal(sotls_aead_init(&a, (enum sotls_aead_alg)5, key, 16), INVAL);
	/* Not a feature at all. */
	assert_int_equal(sotls_aead_init_features(&a, A128, key, 16, ~SOTLS_CPU_ALL), INVAL);

	/* A feature the CPU lacks is refused, not silently dropped (test_cpu
	 * tries them one by one); the variants name what they pick. */
	for (size_t l = 0; l < n_impls * N_ALGS; l++) {
		const size_t lv = l / N_ALGS;
		const enum sotls_aead_alg alg = ALGS[l % N_ALGS];

		init_or_fail(&a, alg, key, lv);
		assert_string_equal(sotls_aead_impl_name(&a), lname(lv, alg));
		assert_int_equal(sotls_aead_impl_needs(&a) & ~vset(lv, alg), 0);
	}
	if (sotls_cpu_detected() != SOTLS_CPU_ALL)
		assert_int_equal(sotls_aead_init_features(&a, A128, key, 16, SOTLS_CPU_ALL),
				 SOTLS_CRYPTO_UNSUPPORTED);

	/* sotls_aead_init uses the process's features. */
	for (size_t g = 0; g < N_ALGS; g++) {
		char want[64];

		sotls_aead_describe(ALGS[g], sotls_cpu_features(), want, sizeof(want));
		assert_int_equal(sotls_aead_init(&a, ALGS[g], key, sotls_aead_key_len(ALGS[g])), 0);
		assert_string_equal(sotls_aead_impl_name(&a), want);
	}
	assert_null(sotls_aead_impl_name(NULL));
}

static void test_seal_open_errors(void **state)
{
	uint8_t key[32], nonce[12], aad[13], pt[64], ct[64], buf[64], tag[16], ref_tag[16];
	struct sotls_aead a;
	const int INVAL = SOTLS_CRYPTO_BAD_ARG;

	(void)state;
	rng_fill(key, sizeof(key));
	rng_fill(nonce, sizeof(nonce));
	rng_fill(aad, sizeof(aad));
	rng_fill(pt, sizeof(pt));
	for (size_t i = 0; i < n_impls * N_ALGS; i++) {
		const size_t lv = i / N_ALGS;
		const enum sotls_aead_alg alg = ALGS[i % N_ALGS];

		init_or_fail(&a, alg, key, lv);
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, 64, ct, tag), 0);

		assert_int_equal(sotls_aead_seal(NULL, nonce, aad, 13, pt, 64, buf, tag), INVAL);
		assert_int_equal(sotls_aead_seal(&a, NULL, aad, 13, pt, 64, buf, tag), INVAL);
		assert_int_equal(sotls_aead_seal(&a, nonce, NULL, 13, pt, 64, buf, tag), INVAL);
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, NULL, 64, buf, tag), INVAL);
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, 64, NULL, tag), INVAL);
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, 64, buf, NULL), INVAL);
		/* Over GCM's per-nonce limit: refused before any byte is touched. */
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt,
						 (size_t)SOTLS_AEAD_MAX_LEN + 1, buf, tag),
				 INVAL);
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, SIZE_MAX, buf, tag), INVAL);

		assert_int_equal(sotls_aead_open(NULL, nonce, aad, 13, ct, 64, tag, buf), INVAL);
		assert_int_equal(sotls_aead_open(&a, NULL, aad, 13, ct, 64, tag, buf), INVAL);
		assert_int_equal(sotls_aead_open(&a, nonce, NULL, 13, ct, 64, tag, buf), INVAL);
		assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, NULL, 64, tag, buf), INVAL);
		assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, ct, 64, tag, NULL), INVAL);
		assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, ct,
						 (size_t)SOTLS_AEAD_MAX_LEN + 1, tag, buf),
				 INVAL);
		/* No tag: refused, and no plaintext may appear in the buffer. */
		memcpy(buf, ct, 64);
		assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, buf, 64, NULL, buf), INVAL);
		if (memcmp(buf, pt, 64) == 0 || (first_nonzero(buf, 64) >= 0 &&
						 memcmp(buf, ct, 64) != 0))
			fail_msg("%s: open without a tag left neither the ciphertext nor "
				 "zeros in the buffer", lname(lv, alg));

		/* NULL with zero length is fine, and means the empty string. */
		uint8_t empty_tag[16];
		assert_int_equal(sotls_aead_seal(&a, nonce, NULL, 0, NULL, 0, NULL, tag), 0);
		ossl_seal(alg, key, nonce, NULL, 0, NULL, 0, buf, ref_tag);
		if (memcmp(tag, ref_tag, 16) != 0)
			fail_msg("%s: tag of the empty message differs from OpenSSL's",
				 lname(lv, alg));
		assert_int_equal(sotls_aead_open(&a, nonce, NULL, 0, NULL, 0, tag, NULL), 0);
		memcpy(empty_tag, tag, 16);
		empty_tag[0] ^= 1;
		assert_int_equal(sotls_aead_open(&a, nonce, NULL, 0, NULL, 0, empty_tag, NULL),
				 SOTLS_CRYPTO_BAD_TAG);

		/* A cleared context holds no key material and refuses to work. */
		sotls_aead_clear(&a);
		if (first_nonzero((const uint8_t *)&a.cipher, sizeof(a.cipher)) >= 0 ||
		    first_nonzero((const uint8_t *)&a.ghash, sizeof(a.ghash)) >= 0)
			fail_msg("%s: sotls_aead_clear left key material behind",
				 lname(lv, alg));
		assert_null(sotls_aead_impl_name(&a));
		assert_int_equal(sotls_aead_seal(&a, nonce, aad, 13, pt, 64, buf, tag), INVAL);
		assert_int_equal(sotls_aead_open(&a, nonce, aad, 13, ct, 64, tag, buf), INVAL);
	}
	sotls_aead_clear(NULL); /* must not crash */
}

/* -------------------------------------- (e) implementations agree (random) */

/*
 * Random key, nonce, AAD and plaintext, and their record sealed by the
 * portable implementation, the reference of the tests below.
 */
static void random_reference(enum sotls_aead_alg alg, uint8_t key[32], uint8_t nonce[12],
			     uint8_t *aad, size_t aad_len, uint8_t *pt, size_t len, uint8_t *ref,
			     uint8_t ref_tag[16])
{
	struct sotls_aead a;

	rng_fill(key, 32);
	rng_fill(nonce, 12);
	rng_fill(aad, aad_len);
	rng_fill(pt, len);
	assert_int_equal(sotls_aead_init_features(&a, alg, key, sotls_aead_key_len(alg), 0), 0);
	assert_int_equal(sotls_aead_seal(&a, nonce, aad, aad_len, pt, len, ref, ref_tag), 0);
	sotls_aead_clear(&a);
}

static void test_impls_agree(void **state)
{
	static uint8_t ref[20000 + 16], out[20000 + 16], io[20000 + 16], pt[20000];
	static uint8_t aad[600];
	const int iterations = 1000;

	(void)state;
	if (n_impls < 2)
		printf("test_gcm: only one implementation here; comparing it with itself\n");
	for (int it = 0; it < iterations; it++) {
		const enum sotls_aead_alg alg = ALGS[rng_below(N_ALGS)];
		/* Mostly record-sized, sometimes up to 20000 bytes. */
		const size_t len = it % 5 == 0 ? rng_below(20000) : rng_below(2100);
		const size_t aad_len = it % 7 == 0 ? rng_below(600) : rng_below(41);
		uint8_t key[32], nonce[12], ref_tag[16], tag[16];
		struct sotls_aead a;

		random_reference(alg, key, nonce, aad, aad_len, pt, len, ref, ref_tag);

		for (size_t i = 0; i < n_impls; i++) {
			const size_t lv = i;
			const size_t off = rng_below(4);
			long d;

			init_or_fail(&a, alg, key, lv);
			assert_int_equal(
				sotls_aead_seal(&a, nonce, aad, aad_len, pt, len, out + off, tag), 0);
			if ((d = first_diff(out + off, ref, len)) >= 0 ||
			    memcmp(tag, ref_tag, 16) != 0)
				fail_msg("iteration %d: %s and generic disagree (%s len %zu "
					 "aad %zu out+%zu): %s",
					 it, lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len, off,
					 d >= 0 ? "ciphertext" : "tag");
			/* Each implementation opens the portable one's record in place. */
			if (len > 0)
				memcpy(io + off, ref, len);
			int rc = sotls_aead_open(&a, nonce, aad, aad_len, io + off, len, ref_tag,
						 io + off);
			if (rc != 0 || (len > 0 && memcmp(io + off, pt, len) != 0))
				fail_msg("iteration %d: %s cannot open generic's record "
					 "(%s len %zu aad %zu): rc %d",
					 it, lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len, rc);
			sotls_aead_clear(&a);
		}
	}
}

/*
 * Every length 0..4096 and around 16 KiB (the stitched loops' batches of 8,
 * 16 and 32 blocks, with every tail length many times over; for ARIA also
 * the records that go whole through the buffer, up to 1520 bytes, and those
 * of whole batches, whose mask goes on the side) against the portable
 * implementation, the four ciphers in turn: random key, nonce, AAD (0..40
 * bytes) and offsets; seal and open, out of place and in place; a flipped
 * tag bit is rejected and leaves the output all zeros.
 */
static void test_bulk_lengths_vs_portable(void **state)
{
	enum { MAX = 16896 + 33 };
	static uint8_t pt[MAX], ref[MAX], out[MAX + 3], io[MAX + 3];
	static const size_t big[] = {15887, 15888, 15889, 16351, 16352, 16367, 16383, 16384,
				     16385, 16400, 16895, 16896, 16897, MAX};
	static const enum sotls_aead_alg BULK[] = {SOTLS_AEAD_AES_128_GCM, SOTLS_AEAD_ARIA_128_GCM,
						   SOTLS_AEAD_AES_256_GCM,
						   SOTLS_AEAD_ARIA_256_GCM};
	size_t cases = 0;

	(void)state;
	for (size_t x = 0; x <= 4096 + 2 * sizeof(big) / sizeof(big[0]); x++) {
		const size_t len = x <= 4096 ? x : big[(x - 4097) / 2];
		const enum sotls_aead_alg alg = BULK[x % 4];
		const size_t aad_len = rng_below(41);
		uint8_t key[32], nonce[12], aad[40], ref_tag[16], tag[16];
		struct sotls_aead a;

		random_reference(alg, key, nonce, aad, aad_len, pt, len, ref, ref_tag);
		for (size_t lv = 0; lv < n_variants[fam(alg)]; lv++) {
			const size_t off = rng_below(4);
			int rc;

			init_or_fail(&a, alg, key, lv);
			/* Seal, out of place and in place. */
			assert_int_equal(
				sotls_aead_seal(&a, nonce, aad, aad_len, pt, len, out + off, tag), 0);
			if (first_diff(out + off, ref, len) >= 0 || memcmp(tag, ref_tag, 16) != 0)
				fail_msg("%s %s len %zu aad %zu: seal differs from generic",
					 lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len);
			if (len > 0)
				memcpy(io + off, pt, len);
			assert_int_equal(
				sotls_aead_seal(&a, nonce, aad, aad_len, io + off, len, io + off, tag),
				0);
			if (first_diff(io + off, ref, len) >= 0 || memcmp(tag, ref_tag, 16) != 0)
				fail_msg("%s %s len %zu aad %zu: in-place seal differs from generic",
					 lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len);
			/* Open, in place (io holds the ciphertext), then out of place. */
			rc = sotls_aead_open(&a, nonce, aad, aad_len, io + off, len, ref_tag,
					     io + off);
			if (rc != 0 || first_diff(io + off, pt, len) >= 0)
				fail_msg("%s %s len %zu aad %zu: in-place open: rc %d",
					 lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len, rc);
			rc = sotls_aead_open(&a, nonce, aad, aad_len, ref, len, ref_tag, out + off);
			if (rc != 0 || first_diff(out + off, pt, len) >= 0)
				fail_msg("%s %s len %zu aad %zu: open: rc %d", lname(lv, alg),
					 sotls_aead_alg_name(alg), len, aad_len, rc);
			/* A flipped tag bit: rejected, nothing of the plaintext left. */
			memcpy(tag, ref_tag, 16);
			tag[x % 16] ^= (uint8_t)(1u << (x % 8));
			rc = sotls_aead_open(&a, nonce, aad, aad_len, ref, len, tag, out + off);
			if (rc != SOTLS_CRYPTO_BAD_TAG || first_nonzero(out + off, len) >= 0)
				fail_msg("%s %s len %zu aad %zu: flipped tag: rc %d, output %s",
					 lname(lv, alg), sotls_aead_alg_name(alg), len, aad_len, rc,
					 first_nonzero(out + off, len) >= 0 ? "left" : "wiped");
			sotls_aead_clear(&a);
			cases++;
		}
	}
	printf("test_gcm: %zu length cases against the portable implementation\n", cases);
}

int main(void)
{
	rng_seed_from_env("test_gcm", 0x5eed06c3a5eedull);
	for (int f = 0; f < 2; f++) {
		const enum sotls_aead_alg alg = f ? SOTLS_AEAD_AES_128_GCM : SOTLS_AEAD_ARIA_128_GCM;

		n_variants[f] = sotls_aead_variants(alg, sotls_cpu_detected(), variants[f],
						    MAX_VARIANTS);
		if (n_variants[f] > n_impls)
			n_impls = n_variants[f];
		printf("test_gcm: %s runs on", f ? "AES-GCM" : "ARIA-GCM");
		for (size_t v = 0; v < n_variants[f]; v++)
			printf(" %s", lname(v, alg));
		printf("\n");
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_vs_openssl_lengths),
		cmocka_unit_test(test_vs_openssl_aad),
		cmocka_unit_test(test_vs_openssl_large),
		cmocka_unit_test(test_page_edges),
		cmocka_unit_test(test_forgeries_rejected),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_seal_open_errors),
		cmocka_unit_test(test_impls_agree),
		cmocka_unit_test(test_bulk_lengths_vs_portable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

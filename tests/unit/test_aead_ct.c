/*
 * Constant-time check of ARIA-GCM and AES-GCM, run under valgrind memcheck
 * (tests/unit/meson.build, suite ct), as test_p256_ct.c does for P-256: the
 * key and the plaintext are marked undefined, so memcheck reports every
 * branch and every memory address computed from them, through the key
 * schedules, H and its powers, sealing and opening (in place too), on every
 * implementation this CPU runs that valgrind can execute. The GCM engine is
 * built for this test with SOTLS_CT_VALGRIND, which declassifies the one
 * public result, the tag verdict (gcm.c).
 *
 * Valgrind 3.19 decodes AES-NI, PCLMULQDQ and AVX2 but neither VAES,
 * VPCLMULQDQ on ymm nor GFNI and AVX-512, so the features are cut to the
 * first set: what runs is the AES-NI and AVX2 code (the stitched loops
 * gcm-aria-aesni-avx2 and gcm-aes-aesni-pclmul among them), the byte-sliced
 * AVX ARIA, the bitsliced ARIA and AES, and the PCLMULQDQ and portable
 * GHASH. The VAES, VPCLMULQDQ and GFNI files share their code paths with
 * these (aria_sliced.h; the same shapes of loop on wider registers), not
 * their instructions.
 *
 *   test_aead_ct            exit 0 when every implementation agreed
 *   test_aead_ct --canary   also branches on a key byte and indexes a table
 *                           with one: memcheck must report it (meson expects
 *                           the run to fail), which shows the marking
 *                           reaches the code under test.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ct_check.h"

#include "aead.h"
#include "cpu.h"

/* What valgrind decodes (see above). */
#define VALGRIND_FEATURES (SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE | SOTLS_CPU_AVX2)

/* Record lengths around each implementation's edges: one block, a partial
 * one, a 1500-byte record (the stitched ARIA loop's buffered path), whole
 * 512-byte batches (its mask on the side), a partial last batch, 16 KiB. */
static const size_t LENS[] = {0, 1, 16, 100, 1500, 2048, 2055, 16384};
#define N_LENS (sizeof(LENS) / sizeof(LENS[0]))
#define MAX_LEN 16384

static const enum sotls_aead_alg ALGS[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_ARIA_256_GCM,
					   SOTLS_AEAD_AES_128_GCM, SOTLS_AEAD_AES_256_GCM};

static uint8_t pt[MAX_LEN], ct[MAX_LEN], back[MAX_LEN];
/* The first implementation's records, by length, and their tags. */
static uint8_t ref_ct[N_LENS][MAX_LEN], ref_tags[N_LENS][16];
static int failures;

/*
 * Seals and opens every length with the implementation the feature set picks,
 * key and plaintext secret. The first implementation of a cipher records its
 * records (record), the others are compared with them.
 */
static void run(enum sotls_aead_alg alg, uint32_t set, const char *name, bool record,
		bool canary)
{
	uint8_t key[32], nonce[12], aad[13], tag[16];
	struct sotls_aead a;

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x5a ^ (i * 29));
	memset(nonce, 0xc3, sizeof(nonce));
	memset(aad, 0x17, sizeof(aad));
	secret(key, sizeof(key));
	if (canary)
		(void)leaky(key);
	if (sotls_aead_init_features(&a, alg, key, sotls_aead_key_len(alg), set) != 0) {
		printf("test_aead_ct: %s %s: init failed\n", sotls_aead_alg_name(alg), name);
		failures++;
		return;
	}
	for (size_t l = 0; l < N_LENS; l++) {
		const size_t len = LENS[l];

		for (size_t i = 0; i < len; i++)
			pt[i] = (uint8_t)(i * 7 + l);
		secret(pt, len);
		sotls_aead_seal(&a, nonce, aad, sizeof(aad), pt, len, ct, tag);
		/* The record goes to the peer: public from here on. */
		public(ct, len);
		public(tag, sizeof(tag));
		if (record) {
			memcpy(ref_ct[l], ct, len);
			memcpy(ref_tags[l], tag, 16);
		} else if (memcmp(ct, ref_ct[l], len) != 0 || memcmp(tag, ref_tags[l], 16) != 0) {
			printf("test_aead_ct: %s %s len %zu: differs from the first implementation\n",
			       sotls_aead_alg_name(alg), name, len);
			failures++;
		}
		/* Open out of place, then in place; the plaintext is secret again. */
		int rc = sotls_aead_open(&a, nonce, aad, sizeof(aad), ct, len, tag, back);
		public(back, len);
		public(pt, len);
		if (rc != 0 || memcmp(back, pt, len) != 0) {
			printf("test_aead_ct: %s %s len %zu: open failed (%d)\n",
			       sotls_aead_alg_name(alg), name, len, rc);
			failures++;
		}
		rc = sotls_aead_open(&a, nonce, aad, sizeof(aad), ct, len, tag, ct);
		public(ct, len);
		if (rc != 0 || memcmp(ct, pt, len) != 0) {
			printf("test_aead_ct: %s %s len %zu: in-place open failed (%d)\n",
			       sotls_aead_alg_name(alg), name, len, rc);
			failures++;
		}
	}
	/* A forged tag: rejected (the verdict is the one public result). */
	memcpy(tag, ref_tags[N_LENS - 1], 16);
	tag[0] ^= 1;
	if (sotls_aead_open(&a, nonce, aad, sizeof(aad), ref_ct[N_LENS - 1], LENS[N_LENS - 1], tag,
			    back) != SOTLS_CRYPTO_BAD_TAG) {
		printf("test_aead_ct: %s %s: forged tag accepted\n", sotls_aead_alg_name(alg), name);
		failures++;
	}
	sotls_aead_clear(&a);
}

int main(int argc, char **argv)
{
	const bool canary = argc > 1 && strcmp(argv[1], "--canary") == 0;
	const uint32_t have = sotls_cpu_detected() & VALGRIND_FEATURES;
	size_t runs = 0;

	for (size_t g = 0; g < sizeof(ALGS) / sizeof(ALGS[0]); g++) {
		uint32_t sets[16];
		const size_t n = sotls_aead_variants(ALGS[g], have, sets, 16);
		bool first = true;

		for (size_t v = 0; v < n; v++) {
			char name[64];

			sotls_aead_describe(ALGS[g], sets[v], name, sizeof(name));
			run(ALGS[g], sets[v], name, first, canary);
			first = false;
			runs++;
			printf("test_aead_ct: %s %s\n", sotls_aead_alg_name(ALGS[g]), name);
		}
	}
	if (runs == 0) {
		printf("test_aead_ct: nothing ran\n");
		return 1;
	}
	return failures != 0;
}

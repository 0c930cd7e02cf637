/*
 * Project Wycheproof's AES-GCM and ARIA-GCM vectors, read in place from
 * ../shared/vectors/wycheproof (meson passes the directory), through the AEAD
 * the record layer uses (lib/crypto/aead.h), on every implementation this
 * CPU runs (each that sotls_aead_variants finds, whatever SOTLS_CPU says;
 * a failure names the implementation):
 *
 *   test_aead_wycheproof VECTOR_DIR
 *
 *  - valid: seal gives exactly ct || tag and open gives msg back, each both
 *    out of place and in place;
 *  - invalid (the files' are modified tags and empty IVs): open fails with
 *    SOTLS_CRYPTO_BAD_TAG and leaves only zeros where the plaintext
 *    would go, and seal does not give ct || tag;
 *  - acceptable: the files have none, and no policy for one is decided, so
 *    one is a failure until it is.
 *
 * sotls's AEAD is TLS's: 128- and 256-bit keys, 96-bit nonces, 128-bit tags.
 * Vectors outside that (192-bit keys, other IV sizes, other tag sizes) are
 * counted as skipped by reason and printed, and the number run is checked
 * against a fixed count so a parsing slip cannot quietly skip more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "aead.h"
#include "cpu.h"
#include "crypto_testutil.h"
#include "sotls.h"
#include "wycheproof_util.h"

static const char *vector_dir;
/* The implementation under test, for failure messages. */
static char impl_now[64] = "-";

/* At most this many implementations of one cipher (sotls_aead_variants). */
#define MAX_VARIANTS 16

/* The names of the implementations run, for the summary line. */
static char run_names[512];

static void note_impl(const char *name)
{
	if (strstr(run_names, name) != NULL)
		return;
	if (run_names[0] != '\0')
		strncat(run_names, ", ", sizeof(run_names) - strlen(run_names) - 1);
	strncat(run_names, name, sizeof(run_names) - strlen(run_names) - 1);
}

/* Longer than any field of the two files (513 bytes). */
#define FIELD_MAX 4096

enum skip_reason { SKIP_KEY, SKIP_IV, SKIP_TAG, SKIP_REASONS };

static const char *const SKIP_NAMES[SKIP_REASONS] = {
	"key size not 128 or 256 bits",
	"IV not 96 bits",
	"tag not 128 bits",
};

struct tally {
	int valid, invalid, skipped[SKIP_REASONS];
};

static int integer(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("no integer \"%s\"", key);
	return (int)json_integer_value(v);
}

static const char *at(int id, const char *what)
{
	static char s[160];

	snprintf(s, sizeof(s), "tcId %d on %s: %s", id, impl_now, what);
	return s;
}

static void check_valid(const struct sotls_aead *a, int id, const uint8_t *iv,
			const uint8_t *aad, size_t aad_len, const uint8_t *msg, const uint8_t *ct,
			size_t len, const uint8_t *tag)
{
	static uint8_t out[FIELD_MAX];
	uint8_t t[SOTLS_AEAD_TAG_LEN];

	/* Out of place, then in place (the record layer opens in place). */
	for (int inplace = 0; inplace < 2; inplace++) {
		const char *how = inplace ? "in place" : "out of place";
		if (inplace)
			memcpy(out, msg, len);
		int rc = sotls_aead_seal(a, iv, aad, aad_len, inplace ? out : msg, len, out, t);
		if (rc != 0)
			fail_msg("%s, seal %s returned %d", at(id, "valid"), how, rc);
		if (memcmp(out, ct, len) != 0 || memcmp(t, tag, sizeof(t)) != 0)
			fail_msg("%s, seal %s: %s differs", at(id, "valid"), how,
				 memcmp(out, ct, len) != 0 ? "ciphertext" : "tag");

		if (inplace)
			memcpy(out, ct, len);
		rc = sotls_aead_open(a, iv, aad, aad_len, inplace ? out : ct, len, tag, out);
		if (rc != 0)
			fail_msg("%s, open %s returned %d", at(id, "valid"), how, rc);
		if (memcmp(out, msg, len) != 0)
			fail_msg("%s, open %s: plaintext differs at byte %ld", at(id, "valid"),
				 how, first_diff(out, msg, len));
	}
}

static void check_invalid(const struct sotls_aead *a, int id, const uint8_t *iv,
			  const uint8_t *aad, size_t aad_len, const uint8_t *msg,
			  const uint8_t *ct, size_t len, const uint8_t *tag)
{
	static uint8_t out[FIELD_MAX];
	static const uint8_t zero[FIELD_MAX];
	uint8_t t[SOTLS_AEAD_TAG_LEN];

	for (int inplace = 0; inplace < 2; inplace++) {
		const char *how = inplace ? "in place" : "out of place";
		/* Out of place, the output starts as the plaintext so that "left
		 * untouched" and "written" both show. */
		memcpy(out, inplace ? ct : msg, len);
		int rc = sotls_aead_open(a, iv, aad, aad_len, inplace ? out : ct, len, tag, out);
		if (rc != SOTLS_CRYPTO_BAD_TAG)
			fail_msg("%s, open %s returned %d, not SOTLS_CRYPTO_BAD_TAG",
				 at(id, "invalid"), how, rc);
		if (memcmp(out, zero, len) != 0)
			fail_msg("%s, open %s failed but left a nonzero byte at %ld of %zu",
				 at(id, "invalid"), how, first_diff(out, zero, len), len);
	}
	/* The vector is invalid for what seal makes too. */
	if (sotls_aead_seal(a, iv, aad, aad_len, msg, len, out, t) == 0 &&
	    memcmp(out, ct, len) == 0 && memcmp(t, tag, sizeof(t)) == 0)
		fail_msg("%s, seal gives exactly ct || tag", at(id, "invalid"));
}

/*
 * Every case of one file; family is "AES" or "ARIA". run_want is how many
 * cases sotls's AEAD can take (the rest are skipped by reason).
 */
static void run_file(const char *file, const char *algorithm, enum sotls_aead_alg alg128,
		     enum sotls_aead_alg alg256, int run_want)
{
	json_t *root = wp_read_file(vector_dir, file), *g, *t;
	struct tally tl = {0, 0, {0}};
	size_t gi, ti;
	int seen = 0;

	run_names[0] = '\0';

	const char *named = wp_string(root, "algorithm");
	if (strcmp(named, algorithm) != 0)
		fail_msg("%s: algorithm \"%s\", expected \"%s\"", file, named, algorithm);
	json_array_foreach(json_object_get(root, "testGroups"), gi, g)
	{
		const int key_bits = integer(g, "keySize"), iv_bits = integer(g, "ivSize");
		const int tag_bits = integer(g, "tagSize");
		const enum sotls_aead_alg alg = key_bits == 128 ? alg128 : alg256;
		int skip = -1;

		if (key_bits != 128 && key_bits != 256)
			skip = SKIP_KEY;
		else if (iv_bits != 8 * SOTLS_AEAD_NONCE_LEN)
			skip = SKIP_IV;
		else if (tag_bits != 8 * SOTLS_AEAD_TAG_LEN)
			skip = SKIP_TAG;
		json_array_foreach(json_object_get(g, "tests"), ti, t)
		{
			static uint8_t key[FIELD_MAX], iv[FIELD_MAX], aad[FIELD_MAX];
			static uint8_t msg[FIELD_MAX], ct[FIELD_MAX], tag[FIELD_MAX];
			const int id = integer(t, "tcId");
			const char *result = wp_string(t, "result");

			seen++;
			if (skip >= 0) {
				tl.skipped[skip]++;
				continue;
			}
			/* The group's sizes must be the case's, or the skip above
			 * decided on the wrong numbers. */
			if (wp_hex(t, "key", key, FIELD_MAX) * 8 != (size_t)key_bits ||
			    wp_hex(t, "iv", iv, FIELD_MAX) != SOTLS_AEAD_NONCE_LEN ||
			    wp_hex(t, "tag", tag, FIELD_MAX) != SOTLS_AEAD_TAG_LEN)
				fail_msg("%s tcId %d: key, IV or tag size not its group's", file,
					 id);
			const size_t aad_len = wp_hex(t, "aad", aad, FIELD_MAX);
			const size_t len = wp_hex(t, "msg", msg, FIELD_MAX);
			if (wp_hex(t, "ct", ct, FIELD_MAX) != len)
				fail_msg("%s tcId %d: msg and ct lengths differ", file, id);

			/* Every implementation this CPU runs (SOTLS_CPU aside). */
			uint32_t sets[MAX_VARIANTS];
			const size_t nv = sotls_aead_variants(alg, sotls_cpu_detected(), sets,
							      MAX_VARIANTS);
			for (size_t v = 0; v < nv; v++) {
				struct sotls_aead a;

				if (sotls_aead_init_features(&a, alg, key, sotls_aead_key_len(alg),
							     sets[v]) != 0)
					fail_msg("tcId %d: sotls_aead_init_features failed", id);
				snprintf(impl_now, sizeof(impl_now), "%s", sotls_aead_impl_name(&a));
				note_impl(impl_now);
				if (strcmp(result, "valid") == 0) {
					check_valid(&a, id, iv, aad, aad_len, msg, ct, len, tag);
				} else if (strcmp(result, "invalid") == 0) {
					check_invalid(&a, id, iv, aad, aad_len, msg, ct, len, tag);
				} else {
					fail_msg("%s tcId %d: result \"%s\" (no policy for it)",
						 file, id, result);
				}
				sotls_aead_clear(&a);
			}
			if (strcmp(result, "valid") == 0)
				tl.valid++;
			else
				tl.invalid++;
		}
	}
	const int skipped = tl.skipped[SKIP_KEY] + tl.skipped[SKIP_IV] + tl.skipped[SKIP_TAG];
	printf("test_aead_wycheproof: %s: %d run (%d valid, %d invalid) on each of %s; %d skipped",
	       file, tl.valid + tl.invalid, tl.valid, tl.invalid, run_names, skipped);
	for (int r = 0; r < SKIP_REASONS; r++)
		if (tl.skipped[r] != 0)
			printf("; %d %s", tl.skipped[r], SKIP_NAMES[r]);
	printf("\n");
	if (seen != integer(root, "numberOfTests"))
		fail_msg("%s: %d cases seen, the file says %d", file, seen,
			 integer(root, "numberOfTests"));
	if (tl.valid == 0 || tl.invalid == 0)
		fail_msg("%s: %d valid and %d invalid cases run; both must be some", file,
			 tl.valid, tl.invalid);
	if (tl.valid + tl.invalid != run_want)
		fail_msg("%s: %d cases run, expected %d", file, tl.valid + tl.invalid, run_want);
	json_decref(root);
}

/* The counts: the 96-bit-IV groups of 128- and 256-bit keys (67 + 66 for
 * AES, 65 + 65 for ARIA, at commit dac1dd47 of the vectors). */
static void test_aes_gcm(void **state)
{
	(void)state;
	run_file("aes_gcm_test.json", "AES-GCM", SOTLS_AEAD_AES_128_GCM, SOTLS_AEAD_AES_256_GCM,
		 133);
}

static void test_aria_gcm(void **state)
{
	(void)state;
	run_file("aria_gcm_test.json", "ARIA-GCM", SOTLS_AEAD_ARIA_128_GCM,
		 SOTLS_AEAD_ARIA_256_GCM, 130);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s VECTOR_DIR\n", argv[0]);
		return 2;
	}
	vector_dir = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aes_gcm),
		cmocka_unit_test(test_aria_gcm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

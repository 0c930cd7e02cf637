/*
 * SHA-256 (lib/crypto/sha256.h), each compression this CPU runs (portable,
 * SHA-NI): FIPS 180-2 appendix B's "abc" and two-block messages and the
 * million 'a's, then OpenSSL's SHA-256 as the reference on every length
 * from 0 to 300 bytes and on random messages fed in random pieces (the
 * buffering across block edges); and mbedTLS's SHA-256, whose compression
 * is this one (MBEDTLS_SHA256_PROCESS_ALT), against OpenSSL's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/sha256.h>
#include <openssl/sha.h>

#include "cpu.h"
#include "crypto_testutil.h"
#include "sha256.h"

static sotls_sha256_blocks_fn *impls[SOTLS_SHA256_N_IMPLS];
static const char *names[SOTLS_SHA256_N_IMPLS];
static size_t n_impls;

static void digest(sotls_sha256_blocks_fn *fn, const uint8_t *m, size_t len, uint8_t out[32])
{
	struct sotls_sha256 c;

	sotls_sha256_init(&c, fn);
	sotls_sha256_update(&c, m, len);
	sotls_sha256_final(&c, out);
}

static void test_known_answers(void **state)
{
	static const char *const msgs[] = {
		"abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"};
	static const char *const want[] = {
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"};
	static const char million_a[] =
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	uint8_t w[32], got[32], block[1000];

	(void)state;
	memset(block, 'a', sizeof(block));
	for (size_t i = 0; i < n_impls; i++) {
		for (size_t m = 0; m < 2; m++) {
			hex_decode(want[m], w, sizeof(w));
			digest(impls[i], (const uint8_t *)msgs[m], strlen(msgs[m]), got);
			if (memcmp(got, w, 32) != 0)
				fail_msg("%s: FIPS 180-2 message %zu", names[i], m + 1);
		}
		struct sotls_sha256 c;

		sotls_sha256_init(&c, impls[i]);
		for (int k = 0; k < 1000; k++)
			sotls_sha256_update(&c, block, sizeof(block));
		sotls_sha256_final(&c, got);
		hex_decode(million_a, w, sizeof(w));
		if (memcmp(got, w, 32) != 0)
			fail_msg("%s: a million 'a's", names[i]);
	}
}

static void test_vs_openssl(void **state)
{
	uint8_t m[1200], want[32], got[32];

	(void)state;
	rng_fill(m, sizeof(m));
	for (size_t i = 0; i < n_impls; i++) {
		for (size_t len = 0; len <= 300; len++) {
			SHA256(m, len, want);
			digest(impls[i], m, len, got);
			if (memcmp(got, want, 32) != 0)
				fail_msg("%s: length %zu", names[i], len);
		}
		for (int r = 0; r < 500; r++) {
			const size_t len = rng_below(sizeof(m) + 1);
			struct sotls_sha256 c;
			size_t done = 0;

			sotls_sha256_init(&c, impls[i]);
			while (done < len) {
				const size_t piece = rng_below(len - done + 1);

				sotls_sha256_update(&c, m + done, piece);
				done += piece;
			}
			/* a copied context carries on (the HMAC key states) */
			struct sotls_sha256 copy = c;
			sotls_sha256_final(&copy, got);
			SHA256(m, len, want);
			if (memcmp(got, want, 32) != 0)
				fail_msg("%s: random message %d of %zu bytes", names[i], r, len);
		}
	}
}

static void test_mbedtls_on_ours(void **state)
{
	uint8_t m[700], want[32], got[32];

	(void)state;
	rng_fill(m, sizeof(m));
	for (size_t len = 0; len <= sizeof(m); len += 7) {
		SHA256(m, len, want);
		assert_int_equal(mbedtls_sha256(m, len, got, 0), 0);
		if (memcmp(got, want, 32) != 0)
			fail_msg("mbedtls_sha256: length %zu", len);
#if defined(MBEDTLS_SHA224_C)
		SHA224(m, len, want);
		assert_int_equal(mbedtls_sha256(m, len, got, 1), 0);
		if (memcmp(got, want, 28) != 0)
			fail_msg("mbedtls_sha256 (SHA-224): length %zu", len);
#endif
	}
}

int main(void)
{
	rng_seed_from_env("test_sha256", 0x5ba256ull);
	/* Every compression this process's features (SOTLS_CPU included) run. */
	for (size_t i = 0; i < SOTLS_SHA256_N_IMPLS; i++) {
		const struct sotls_sha256_impl *e = &SOTLS_SHA256_IMPLS[i];

		if ((e->impl.needs & ~sotls_cpu_features()) != 0)
			continue;
		impls[n_impls] = e->blocks;
		names[n_impls++] = e->impl.name;
		printf("test_sha256: runs %s%s\n", e->impl.name,
		       sotls_sha256_blocks() == e->blocks ? " (the default)" : "");
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_vs_openssl),
		cmocka_unit_test(test_mbedtls_on_ours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

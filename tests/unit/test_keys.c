/*
 * Key derivation (lib/handshake): the TLS 1.2 PRF against the published test
 * vectors (IETF TLS list, P_SHA256 and P_SHA384 with "test label"), the key
 * block of every ARIA and AES suite against OpenSSL's TLS1-PRF, and the
 * suite-name parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "handshake.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void check_vector(enum sotls_prf_md md, const char *secret_hex, const char *seed_hex,
			 const char *out_hex)
{
	uint8_t secret[64], seed[64], expect[256], got[256];
	size_t sl = unhex(secret_hex, secret), dl = unhex(seed_hex, seed);
	size_t ol = unhex(out_hex, expect);
	assert_int_equal(sotls_tls12_prf(md, secret, sl, "test label", seed, dl, got, ol), 0);
	assert_memory_equal(got, expect, ol);
	/* Every shorter length is a prefix. */
	for (size_t n = 1; n < ol; n += 13) {
		uint8_t part[256];
		assert_int_equal(sotls_tls12_prf(md, secret, sl, "test label", seed, dl, part, n), 0);
		assert_memory_equal(part, expect, n);
	}
}

static void test_prf_sha256_vector(void **state)
{
	(void)state;
	check_vector(SOTLS_PRF_SHA256, "9bbe436ba940f017b17652849a71db35",
		     "a0ba9f936cda311827a6f796ffd5198c",
		     "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a"
		     "6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab"
		     "4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701"
		     "87347b66");
}

static void test_prf_sha384_vector(void **state)
{
	(void)state;
	check_vector(SOTLS_PRF_SHA384, "b80b733d6ceefcdc71566ea48e5567df",
		     "cd665cf6a8447dd6ff8b27555edb7465",
		     "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cd"
		     "e9ca0faa60be9fe34f82b1233c9146a0e534cb400fed2700884f9dc236f80edd"
		     "8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425"
		     "9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee6"
		     "91c8f3a26854308d5eaa3be85e0990703d73e56f");
}

/* OpenSSL's TLS1-PRF: label + seed go in as the seed. */
static void openssl_prf(const char *digest, const uint8_t *secret, size_t sl, const uint8_t *seed,
			size_t dl, uint8_t *out, size_t ol)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS1-PRF", NULL);
	assert_non_null(kdf);
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, (void *)secret, sl),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, (void *)seed, dl),
		OSSL_PARAM_construct_end(),
	};
	assert_int_equal(EVP_KDF_derive(ctx, out, ol, params), 1);
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
}

static void test_key_block_vs_openssl(void **state)
{
	(void)state;
	static const uint16_t ids[] = {0xC05C, 0xC060, 0xC05D, 0xC061,
				       0xC02B, 0xC02F, 0xC02C, 0xC030};
	/* Expected AEAD, key length and PRF hash of each, stated here rather
	 * than read from the table under test. */
	static const struct {
		enum sotls_aead_alg alg;
		size_t key_len;
		enum sotls_prf_md prf;
	} want[] = {
		{SOTLS_AEAD_ARIA_128_GCM, 16, SOTLS_PRF_SHA256},
		{SOTLS_AEAD_ARIA_128_GCM, 16, SOTLS_PRF_SHA256},
		{SOTLS_AEAD_ARIA_256_GCM, 32, SOTLS_PRF_SHA384},
		{SOTLS_AEAD_ARIA_256_GCM, 32, SOTLS_PRF_SHA384},
		{SOTLS_AEAD_AES_128_GCM, 16, SOTLS_PRF_SHA256},
		{SOTLS_AEAD_AES_128_GCM, 16, SOTLS_PRF_SHA256},
		{SOTLS_AEAD_AES_256_GCM, 32, SOTLS_PRF_SHA384},
		{SOTLS_AEAD_AES_256_GCM, 32, SOTLS_PRF_SHA384},
	};
	uint8_t master[48], cr[32], sr[32];
	for (int i = 0; i < 48; i++)
		master[i] = (uint8_t)(i * 7 + 1);
	for (int i = 0; i < 32; i++) {
		cr[i] = (uint8_t)(0xc0 + i);
		sr[i] = (uint8_t)(0x50 ^ i);
	}
	for (size_t s = 0; s < sizeof(ids) / sizeof(ids[0]); s++) {
		const struct sotls_suite *suite = sotls_suite_by_id(ids[s]);
		assert_non_null(suite);
		assert_int_equal(suite->alg, want[s].alg);
		assert_int_equal(suite->prf, want[s].prf);
		struct sotls_key_block kb;
		assert_int_equal(sotls_derive_key_block(suite, master, cr, sr, &kb), 0);
		size_t k = want[s].key_len;
		assert_int_equal(kb.key_len, k);
		assert_int_equal(sotls_aead_key_len(suite->alg), k);
		/* Nothing past the key is written. */
		for (size_t i = k; i < SOTLS_AEAD_MAX_KEY_LEN; i++) {
			assert_int_equal(kb.client_key[i], 0);
			assert_int_equal(kb.server_key[i], 0);
		}

		/* seed = "key expansion" + server_random + client_random */
		uint8_t seed[13 + 64], ref[2 * 32 + 8];
		memcpy(seed, "key expansion", 13);
		memcpy(seed + 13, sr, 32);
		memcpy(seed + 45, cr, 32);
		openssl_prf(suite->prf == SOTLS_PRF_SHA384 ? "SHA384" : "SHA256", master, 48, seed,
			    sizeof(seed), ref, 2 * k + 8);
		assert_memory_equal(kb.client_key, ref, k);
		assert_memory_equal(kb.server_key, ref + k, k);
		assert_memory_equal(kb.client_salt, ref + 2 * k, 4);
		assert_memory_equal(kb.server_salt, ref + 2 * k + 4, 4);
	}
}

static void test_suite_names(void **state)
{
	(void)state;
	int ids[SOTLS_MAX_SUITES + 1];
	assert_int_equal(sotls_suites_parse("ARIA-128-GCM", ids), 0);
	assert_int_equal(ids[0], 0xC05C);
	assert_int_equal(ids[1], 0xC060);
	assert_int_equal(ids[2], 0);
	assert_int_equal(sotls_suites_parse("aria-256-gcm", ids), 0);
	assert_int_equal(ids[0], 0xC05D);
	assert_int_equal(ids[1], 0xC061);
	assert_int_equal(sotls_suites_parse("TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384", ids), 0);
	assert_int_equal(ids[0], 0xC061);
	assert_int_equal(ids[1], 0);
	assert_int_equal(sotls_suites_parse("ECDHE-ECDSA-ARIA128-GCM-SHA256:ECDHE-ARIA128-GCM-SHA256,"
					    " ECDHE-ARIA128-GCM-SHA256",
					    ids),
			 0);
	assert_int_equal(ids[0], 0xC05C);
	assert_int_equal(ids[1], 0xC060);
	assert_int_equal(ids[2], 0);
	int before = ids[0];
	assert_int_equal(sotls_suites_parse("ARIA-128-GCM:AES128-GCM-SHA256", ids),
			 SOTLS_ERR_UNKNOWN_SUITE);
	assert_int_equal(ids[0], before); /* unchanged on error */
	assert_int_equal(sotls_suites_parse("", ids), SOTLS_ERR_UNKNOWN_SUITE);
	assert_int_equal(sotls_suites_parse(":", ids), SOTLS_ERR_UNKNOWN_SUITE);
	assert_null(sotls_suite_by_id(0xC050)); /* RSA key exchange: not offered */
	const char *const *names = sotls_supported_suites();
	int n = 0;
	while (names[n] != NULL)
		n++;
	assert_int_equal(n, 8);
}

/* The AES-GCM suites by every kind of name, and mixed lists. */
static void test_aes_suite_names(void **state)
{
	(void)state;
	int ids[SOTLS_MAX_SUITES + 1];
	assert_int_equal(sotls_suites_parse("AES-128-GCM", ids), 0);
	assert_int_equal(ids[0], 0xC02B);
	assert_int_equal(ids[1], 0xC02F);
	assert_int_equal(ids[2], 0);
	assert_int_equal(sotls_suites_parse("aes-256-gcm", ids), 0);
	assert_int_equal(ids[0], 0xC02C);
	assert_int_equal(ids[1], 0xC030);
	assert_int_equal(ids[2], 0);

	static const struct {
		const char *iana, *openssl;
		int id;
	} names[] = {
		{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256",
		 0xC02B},
		{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", 0xC02F},
		{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384",
		 0xC02C},
		{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", 0xC030},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(sotls_suites_parse(names[i].iana, ids), 0);
		assert_int_equal(ids[0], names[i].id);
		assert_int_equal(ids[1], 0);
		assert_int_equal(sotls_suites_parse(names[i].openssl, ids), 0);
		assert_int_equal(ids[0], names[i].id);
		assert_int_equal(ids[1], 0);
		const struct sotls_suite *s = sotls_suite_by_id((uint16_t)names[i].id);
		assert_non_null(s);
		assert_string_equal(s->iana, names[i].iana);
		assert_string_equal(s->openssl, names[i].openssl);
	}

	/* Order kept, duplicates dropped, ARIA and AES mixed. */
	assert_int_equal(sotls_suites_parse("ECDHE-RSA-AES256-GCM-SHA384 ARIA-128-GCM,"
					    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:AES-128-GCM",
					    ids),
			 0);
	assert_int_equal(ids[0], 0xC030);
	assert_int_equal(ids[1], 0xC05C);
	assert_int_equal(ids[2], 0xC060);
	assert_int_equal(ids[3], 0xC02B);
	assert_int_equal(ids[4], 0xC02F);
	assert_int_equal(ids[5], 0);

	/* All four groups: all eight suites fit. */
	assert_int_equal(sotls_suites_parse("ARIA-128-GCM:ARIA-256-GCM:AES-128-GCM:AES-256-GCM",
					    ids),
			 0);
	static const int all[] = {0xC05C, 0xC060, 0xC05D, 0xC061, 0xC02B, 0xC02F, 0xC02C, 0xC030};
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(ids[i], all[i]);
	assert_int_equal(ids[8], 0);

	/* Still not offered: AES-GCM with RSA key exchange, CBC, and
	 * OpenSSL's group names. */
	assert_int_equal(sotls_suites_parse("AES128-GCM-SHA256", ids), SOTLS_ERR_UNKNOWN_SUITE);
	assert_int_equal(sotls_suites_parse("ECDHE-ECDSA-AES128-SHA256", ids),
			 SOTLS_ERR_UNKNOWN_SUITE);
	assert_int_equal(sotls_suites_parse("AESGCM", ids), SOTLS_ERR_UNKNOWN_SUITE);
	assert_null(sotls_suite_by_id(0x009C)); /* TLS_RSA_WITH_AES_128_GCM_SHA256 */
	assert_null(sotls_suite_by_id(0xC023)); /* ECDHE-ECDSA-AES128-SHA256 (CBC) */

	/* The supported list: ARIA first, then AES, each in the default order. */
	const char *const *sn = sotls_supported_suites();
	for (size_t i = 0; i < 8; i++) {
		const struct sotls_suite *s = sotls_suite_by_id((uint16_t)all[i]);
		assert_non_null(s);
		assert_string_equal(sn[i], s->iana);
	}
}

/* AES-256 key block against a vector computed independently: OpenSSL's
 * TLS1-PRF with SHA-384 over the same inputs, split 32+32+4+4. */
static void test_aes256_key_block_layout(void **state)
{
	(void)state;
	uint8_t master[48], cr[32], sr[32];
	memset(master, 0xab, sizeof(master));
	memset(cr, 0x01, sizeof(cr));
	memset(sr, 0x02, sizeof(sr));
	const struct sotls_suite *suite = sotls_suite_by_id(0xC030);
	assert_non_null(suite);
	struct sotls_key_block kb;
	assert_int_equal(sotls_derive_key_block(suite, master, cr, sr, &kb), 0);
	assert_int_equal(kb.key_len, 32);
	uint8_t seed[13 + 64], ref[72];
	memcpy(seed, "key expansion", 13);
	memcpy(seed + 13, sr, 32);
	memcpy(seed + 45, cr, 32);
	openssl_prf("SHA384", master, 48, seed, sizeof(seed), ref, sizeof(ref));
	assert_memory_equal(kb.client_key, ref, 32);
	assert_memory_equal(kb.server_key, ref + 32, 32);
	assert_memory_equal(kb.client_salt, ref + 64, 4);
	assert_memory_equal(kb.server_salt, ref + 68, 4);
	/* The same master under the AES-128 suite with SHA-256: a different
	 * PRF, a 16-byte key, so the salts start at byte 32. */
	suite = sotls_suite_by_id(0xC02F);
	assert_non_null(suite);
	assert_int_equal(sotls_derive_key_block(suite, master, cr, sr, &kb), 0);
	assert_int_equal(kb.key_len, 16);
	openssl_prf("SHA256", master, 48, seed, sizeof(seed), ref, 40);
	assert_memory_equal(kb.client_key, ref, 16);
	assert_memory_equal(kb.server_key, ref + 16, 16);
	assert_memory_equal(kb.client_salt, ref + 32, 4);
	assert_memory_equal(kb.server_salt, ref + 36, 4);
}

static const char *g_header; /* include/sotls.h, from meson */

/* Every code sotls.h declares (read from the header, so a code added
 * later is covered without touching this test) has its own text. */
static void test_strerror_covers_all(void **state)
{
	(void)state;
	FILE *f = fopen(g_header, "r");
	assert_non_null(f);
	char line[512], name[64];
	const char *seen[128];
	int codes = 0, value, lowest = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, " SOTLS_%63[A-Z_] = %d", name, &value) != 2 ||
		    !(strcmp(name, "OK") == 0 || strncmp(name, "ERR_", 4) == 0 ||
		      strncmp(name, "WANT_", 5) == 0))
			continue; /* another enum of the header */
		const char *text = sotls_strerror(value);
		print_message("%4d SOTLS_%s: %s\n", value, name, text);
		assert_string_not_equal(text, "unknown error code");
		for (int i = 0; i < codes; i++)
			assert_string_not_equal(text, seen[i]);
		assert_true(codes < (int)(sizeof(seen) / sizeof(seen[0])));
		seen[codes++] = text;
		lowest = value < lowest ? value : lowest;
	}
	fclose(f);
	/* The old loop stopped at -60; the header's codes go further. */
	assert_true(codes >= 40 && lowest < -60);
	assert_string_equal(sotls_strerror(-9999), "unknown error code");
	assert_string_equal(sotls_strerror(12), "success (byte count)");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_keys include/sotls.h\n");
		return 2;
	}
	g_header = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prf_sha256_vector),
		cmocka_unit_test(test_prf_sha384_vector),
		cmocka_unit_test(test_key_block_vs_openssl),
		cmocka_unit_test(test_suite_names),
		cmocka_unit_test(test_aes_suite_names),
		cmocka_unit_test(test_aes256_key_block_layout),
		cmocka_unit_test(test_strerror_covers_all),
	};
	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}

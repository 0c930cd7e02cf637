/*
 * The RSA private key operation (lib/crypto/rsa.h), every level this CPU
 * runs:
 *  - Wycheproof rsa_pkcs1_2048_sig_gen_test.json: every case signed with its
 *    key, byte for byte;
 *  - Wycheproof rsa_signature_{2048,3072}_sha256_test.json through the
 *    verifier the handshake uses (mbedTLS's pk layer), every case with the
 *    result it names;
 *  - differential against OpenSSL's EVP on keys OpenSSL generates now: raw
 *    x^d mod n of random x, PKCS #1 v1.5 signatures compared byte for byte
 *    with OpenSSL's and verified by OpenSSL;
 *  - inputs 0, 1, n - 1, n and above, wrong lengths; keys of other sizes,
 *    inconsistent keys; a faulted CRT half caught by the check with e;
 *    every level against the portable one; one key on four threads.
 *
 * SOTLS_VECTORS names the Wycheproof directory (meson sets it);
 * SOTLS_RSA_TEST_SCALE multiplies the number of random keys and messages.
 * An argument runs only the tests whose name matches it (cmocka's filter).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/pk.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "cpu.h"
#include "crypto_testutil.h"
#include "rsa.h"
#include "rsa_testutil.h"
#include "sotls.h"

static int scale = 1;

/* ------------------------------------------------------------ helpers */

static enum sotls_rsa_impl levels[SOTLS_RSA_IMPLS];
static size_t n_levels;

static void find_levels(void)
{
	for (int i = 0; i < SOTLS_RSA_IMPLS; i++)
		if (sotls_rsa_impl_supported((enum sotls_rsa_impl)i))
			levels[n_levels++] = (enum sotls_rsa_impl)i;
}

static struct sotls_rsa_key *new_key(const struct rsa_testkey *tk, enum sotls_rsa_impl impl)
{
	struct sotls_rsa_key *k = NULL;
	int rc = sotls_rsa_key_new(&k, &tk->params, impl);
	if (rc != 0)
		fail_msg("RSA-%d key, level %s: sotls_rsa_key_new returned %d", tk->bits,
			 sotls_rsa_impl_name(impl), rc);
	return k;
}

static EVP_PKEY_CTX *ossl_ctx(EVP_PKEY *pkey, int (*init)(EVP_PKEY_CTX *), int padding,
			      const EVP_MD *md)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pkey, NULL);
	if (c == NULL || init(c) <= 0 || EVP_PKEY_CTX_set_rsa_padding(c, padding) <= 0 ||
	    (md != NULL && EVP_PKEY_CTX_set_signature_md(c, md) <= 0))
		fail_msg("OpenSSL EVP_PKEY_CTX set-up failed");
	return c;
}

/* Random bytes below n (big endian, n's length). */
static void random_below_n(const struct rsa_testkey *tk, uint8_t *out)
{
	const size_t len = tk->params.n.len;
	do
		rng_fill(out, len);
	while (memcmp(out, tk->params.n.p, len) >= 0);
}

/* ------------------------------------------------- Wycheproof signing */

static void test_wycheproof_sign(void **state)
{
	(void)state;
	const char *file = "rsa_pkcs1_2048_sig_gen_test.json";
	json_t *root = wp_load(file);
	size_t cases = 0, unbalanced = 0, index;
	json_t *group;

	json_array_foreach(json_object_get(root, "testGroups"), index, group)
	{
		const enum sotls_rsa_hash h = wp_group_hash(group);
		const char *pem = json_string_value(json_object_get(group, "privateKeyPem"));
		if (pem == NULL)
			fail_msg("group %zu without privateKeyPem", index);
		struct rsa_testkey tk;
		rsa_testkey_from_pem(&tk, pem, strlen(pem));
		/* Three keys have primes of 1364 and 684 bits: sotls's RSA takes
		 * primes of half the modulus' size and leaves those keys to
		 * mbedTLS (test_rsa_server signs every case through the server's
		 * path). */
		if (tk.part_len[2] != tk.part_len[3]) {
			struct sotls_rsa_key *k = NULL;
			assert_int_equal(sotls_rsa_key_new(&k, &tk.params, SOTLS_RSA_GENERIC),
					 SOTLS_CRYPTO_UNSUPPORTED);
			unbalanced += json_array_size(json_object_get(group, "tests"));
			rsa_testkey_free(&tk);
			continue;
		}
		for (size_t l = 0; l < n_levels; l++) {
			struct sotls_rsa_key *k = new_key(&tk, levels[l]);
			size_t ti;
			json_t *t;
			json_array_foreach(json_object_get(group, "tests"), ti, t)
			{
				struct wp_case c;
				uint8_t sig[512];
				wp_case_read(t, h, &c);
				/* Every case carries the one signature the key makes:
				 * "valid", and "acceptable" ones (SHA-1, e = 3) that
				 * sotls signs all the same. */
				if (strcmp(c.result, "valid") != 0 && strcmp(c.result, "acceptable") != 0)
					fail_msg("tcId %ld: unexpected result %s", c.id, c.result);
				int rc = sotls_rsa_pkcs1_sign(k, h, c.digest, c.digest_len, sig,
							      c.sig_len);
				if (rc != 0 || memcmp(sig, c.sig, c.sig_len) != 0)
					fail_msg("tcId %ld (%s), level %s: wrong signature (rc %d)",
						 c.id, c.result, sotls_rsa_impl_name(levels[l]), rc);
				wp_case_free(&c);
				cases += l == 0;
			}
			sotls_rsa_key_free(k);
		}
		rsa_testkey_free(&tk);
	}
	wp_check_count(root, cases + unbalanced, file);
	printf("%s: %zu cases x %zu levels; %zu with unbalanced primes refused\n", file, cases,
	       n_levels, unbalanced);
	json_decref(root);
}

/* ----------------------------------------- Wycheproof verification */

static void wycheproof_verify(const char *file)
{
	json_t *root = wp_load(file);
	size_t cases = 0, index;
	json_t *group;

	json_array_foreach(json_object_get(root, "testGroups"), index, group)
	{
		const char *der_hex = json_string_value(json_object_get(group, "publicKeyDer"));
		uint8_t der[2048];
		const size_t der_len = der_hex ? hex_decode(der_hex, der, sizeof(der)) : 0;
		mbedtls_pk_context pk;
		mbedtls_pk_init(&pk);
		if (mbedtls_pk_parse_public_key(&pk, der, der_len) != 0)
			fail_msg("%s group %zu: mbedTLS cannot parse the public key", file, index);
		if (wp_group_hash(group) != SOTLS_RSA_SHA256)
			fail_msg("%s group %zu: not SHA-256", file, index);

		size_t ti;
		json_t *t;
		json_array_foreach(json_object_get(group, "tests"), ti, t)
		{
			struct wp_case c;
			wp_case_read(t, SOTLS_RSA_SHA256, &c);
			int rc = mbedtls_pk_verify(&pk, MBEDTLS_MD_SHA256, c.digest, c.digest_len,
						   c.sig, c.sig_len);
			if (strcmp(c.result, "valid") == 0 && rc != 0)
				fail_msg("%s tcId %ld: valid signature refused (-0x%04x)", file, c.id,
					 (unsigned)-rc);
			if (strcmp(c.result, "invalid") == 0 && rc == 0)
				fail_msg("%s tcId %ld: invalid signature accepted", file, c.id);
			/* "acceptable" (a legacy encoding): either answer. */
			wp_case_free(&c);
			cases++;
		}
		mbedtls_pk_free(&pk);
	}
	wp_check_count(root, cases, file);
	printf("%s: %zu cases\n", file, cases);
	json_decref(root);
}

static void test_wycheproof_verify(void **state)
{
	(void)state;
	wycheproof_verify("rsa_signature_2048_sha256_test.json");
	wycheproof_verify("rsa_signature_3072_sha256_test.json");
}

/* --------------------------------------------- differential vs OpenSSL */

/* One key, every level: raw x^d against OpenSSL's RSA_NO_PADDING decrypt,
 * then signatures both ways. */
static void differential_key(const struct rsa_testkey *tk, int msgs)
{
	const size_t len = tk->params.n.len;
	EVP_PKEY_CTX *raw = ossl_ctx(tk->pkey, EVP_PKEY_decrypt_init, RSA_NO_PADDING, NULL);
	EVP_PKEY_CTX *sign = ossl_ctx(tk->pkey, EVP_PKEY_sign_init, RSA_PKCS1_PADDING, EVP_sha256());
	EVP_PKEY_CTX *verify =
		ossl_ctx(tk->pkey, EVP_PKEY_verify_init, RSA_PKCS1_PADDING, EVP_sha256());
	struct sotls_rsa_key *k[SOTLS_RSA_IMPLS];

	for (size_t l = 0; l < n_levels; l++)
		k[l] = new_key(tk, levels[l]);
	for (int i = 0; i < msgs; i++) {
		uint8_t x[512], want[512], got[512], d[64], msg[64];
		size_t want_len = sizeof(want);

		random_below_n(tk, x);
		if (EVP_PKEY_decrypt(raw, want, &want_len, x, len) <= 0 || want_len != len)
			fail_msg("OpenSSL raw private operation failed");
		rng_fill(msg, sizeof(msg));
		rsa_digest(SOTLS_RSA_SHA256, msg, sizeof(msg), d);
		uint8_t osig[512];
		size_t osig_len = sizeof(osig);
		if (EVP_PKEY_sign(sign, osig, &osig_len, d, 32) <= 0 || osig_len != len)
			fail_msg("OpenSSL sign failed");

		for (size_t l = 0; l < n_levels; l++) {
			const char *name = sotls_rsa_impl_name(levels[l]);
			int rc = sotls_rsa_private(k[l], x, len, got);
			if (rc != 0 || memcmp(got, want, len) != 0)
				fail_msg("RSA-%d, level %s, input %d: x^d wrong (rc %d)", tk->bits,
					 name, i, rc);
			rc = sotls_rsa_pkcs1_sign(k[l], SOTLS_RSA_SHA256, d, 32, got, len);
			if (rc != 0 || memcmp(got, osig, len) != 0)
				fail_msg("RSA-%d, level %s, message %d: signature differs from "
					 "OpenSSL's (rc %d)",
					 tk->bits, name, i, rc);
			if (EVP_PKEY_verify(verify, got, len, d, 32) != 1)
				fail_msg("RSA-%d, level %s, message %d: OpenSSL refuses it",
					 tk->bits, name, i);
		}
	}
	for (size_t l = 0; l < n_levels; l++)
		sotls_rsa_key_free(k[l]);
	EVP_PKEY_CTX_free(raw);
	EVP_PKEY_CTX_free(sign);
	EVP_PKEY_CTX_free(verify);
}

static void test_differential(void **state)
{
	(void)state;
	static const struct {
		int bits, keys, msgs;
	} PLAN[] = {{2048, 6, 200}, {3072, 2, 100}, {4096, 1, 60}};
	size_t ops = 0;

	for (size_t p = 0; p < sizeof(PLAN) / sizeof(PLAN[0]); p++)
		for (int i = 0; i < PLAN[p].keys * scale; i++) {
			struct rsa_testkey tk;
			rsa_testkey_generate(&tk, PLAN[p].bits);
			differential_key(&tk, PLAN[p].msgs * scale);
			rsa_testkey_free(&tk);
			ops += (size_t)PLAN[p].msgs * (size_t)scale;
		}
	printf("differential: %zu inputs and %zu messages per level, %zu levels\n", ops, ops,
	       n_levels);
}

/* ------------------------------------------------------- edge cases */

static struct rsa_testkey edge_keys[3];

static int make_edge_keys(void **state)
{
	(void)state;
	rsa_testkey_generate(&edge_keys[0], 2048);
	rsa_testkey_generate(&edge_keys[1], 3072);
	rsa_testkey_generate(&edge_keys[2], 4096);
	return 0;
}

static int free_edge_keys(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		rsa_testkey_free(&edge_keys[i]);
	return 0;
}

/* big-endian a - 1 (a > 0) into out */
static void minus_one(uint8_t *out, const uint8_t *a, size_t len)
{
	memcpy(out, a, len);
	for (size_t i = len; i-- > 0;)
		if (out[i]-- != 0)
			break;
}

/* One edge key at one level, and the same key at the portable level. */
struct edge_case {
	const struct rsa_testkey *tk;
	struct sotls_rsa_key *k, *ref;
	const char *level;
};

static void each_edge_key(void (*check)(const struct edge_case *c))
{
	for (int e = 0; e < 3; e++) {
		struct edge_case c = {.tk = &edge_keys[e]};
		c.ref = new_key(c.tk, SOTLS_RSA_GENERIC);
		for (size_t l = 0; l < n_levels; l++) {
			c.k = new_key(c.tk, levels[l]);
			c.level = sotls_rsa_impl_name(levels[l]);
			check(&c);
			sotls_rsa_key_free(c.k);
		}
		sotls_rsa_key_free(c.ref);
	}
}

static void edge_inputs(const struct edge_case *c)
{
	const struct rsa_testkey *tk = c->tk;
	struct sotls_rsa_key *k = c->k;
	const size_t len = tk->params.n.len;
	uint8_t in[513], out[513], want[512];
	assert_int_equal(sotls_rsa_key_bytes(k), len);

	/* 0^d = 0, 1^d = 1, (n - 1)^d = n - 1 (d is odd). */
	memset(in, 0, len);
	assert_int_equal(sotls_rsa_private(k, in, len, out), 0);
	assert_memory_equal(out, in, len);
	in[len - 1] = 1;
	assert_int_equal(sotls_rsa_private(k, in, len, out), 0);
	assert_memory_equal(out, in, len);
	minus_one(in, tk->params.n.p, len);
	assert_int_equal(sotls_rsa_private(k, in, len, out), 0);
	assert_memory_equal(out, in, len);
	/* In place. */
	memcpy(want, in, len);
	assert_int_equal(sotls_rsa_private(k, in, len, in), 0);
	assert_memory_equal(in, want, len);

	/* n, n + 1, all ones: RFC 8017 §5.2.1 out of range. */
	memcpy(in, tk->params.n.p, len);
	assert_int_equal(sotls_rsa_private(k, in, len, out), SOTLS_CRYPTO_BAD_ARG);
	for (size_t i = len; i-- > 0;) /* n + 1 */
		if (++in[i] != 0)
			break;
	assert_int_equal(sotls_rsa_private(k, in, len, out), SOTLS_CRYPTO_BAD_ARG);
	memset(in, 0xff, len);
	assert_int_equal(sotls_rsa_private(k, in, len, out), SOTLS_CRYPTO_BAD_ARG);
	/* Lengths other than the modulus'. */
	memset(in, 0, sizeof(in));
	assert_int_equal(sotls_rsa_private(k, in, len - 1, out), SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_rsa_private(k, in, len + 1, out), SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_rsa_private(NULL, in, len, out), SOTLS_CRYPTO_BAD_ARG);
	/* A hash of the wrong size, an unknown hash, a short buffer. */
	uint8_t d[64] = {0};
	assert_int_equal(sotls_rsa_pkcs1_sign(k, SOTLS_RSA_SHA256, d, 31, out, len),
			 SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_rsa_pkcs1_sign(k, (enum sotls_rsa_hash)9, d, 32, out, len),
			 SOTLS_CRYPTO_BAD_ARG);
	assert_int_equal(sotls_rsa_pkcs1_sign(k, SOTLS_RSA_SHA256, d, 32, out, len - 1),
			 SOTLS_CRYPTO_BAD_ARG);
}

static void test_edge_inputs(void **state)
{
	(void)state;
	each_edge_key(edge_inputs);
}

/* A faulted CRT half is never handed out. */
static void fault_check(const struct edge_case *c)
{
	const size_t len = c->tk->params.n.len;
	struct sotls_rsa_key *k = c->k;
	uint8_t in[512], out[512], zero[512] = {0};
	for (int half = 1; half <= 2; half++) {
		random_below_n(c->tk, in);
		sotls_rsa_key_test_fault(k, half);
		memset(out, 0xa5, len);
		assert_int_equal(sotls_rsa_private(k, in, len, out), SOTLS_CRYPTO_FAULT);
		assert_memory_equal(out, zero, len);
		sotls_rsa_key_test_fault(k, 0);
		assert_int_equal(sotls_rsa_private(k, in, len, out), 0);
	}
}

static void test_fault_check(void **state)
{
	(void)state;
	each_edge_key(fault_check);
}

/* Every level gives the portable level's answers, blinding refreshes
 * included (more than 32 operations on one key). */
static void levels_agree(const struct edge_case *c)
{
	const size_t len = c->tk->params.n.len;
	for (int i = 0; i < 40; i++) {
		uint8_t in[512], a[512], b[512];
		random_below_n(c->tk, in);
		assert_int_equal(sotls_rsa_private(c->ref, in, len, a), 0);
		assert_int_equal(sotls_rsa_private(c->k, in, len, b), 0);
		if (memcmp(a, b, len) != 0)
			fail_msg("RSA-%d: level %s differs from generic, input %d", c->tk->bits,
				 c->level, i);
	}
}

static void test_levels_agree(void **state)
{
	(void)state;
	each_edge_key(levels_agree);
}

/* Keys sotls leaves to another implementation, and keys that are wrong. */
static void test_key_shapes(void **state)
{
	(void)state;
	struct rsa_testkey small;
	struct sotls_rsa_key *k = NULL;
	rsa_testkey_generate(&small, 1024);
	assert_int_equal(sotls_rsa_key_new(&k, &small.params, SOTLS_RSA_GENERIC),
			 SOTLS_CRYPTO_UNSUPPORTED);
	assert_null(k);
	rsa_testkey_free(&small);

	const struct rsa_testkey *tk = &edge_keys[0];
	struct sotls_rsa_params bad = tk->params;
	uint8_t buf[512];

	/* An even e, e wider than 64 bits. */
	static const uint8_t even_e[] = {0x01, 0x00, 0x00};
	static const uint8_t wide_e[] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0x01};
	bad.e = (struct sotls_rsa_be){even_e, sizeof(even_e)};
	assert_int_equal(sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC), SOTLS_CRYPTO_UNSUPPORTED);
	bad.e = (struct sotls_rsa_be){wide_e, sizeof(wide_e)};
	assert_int_equal(sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC), SOTLS_CRYPTO_UNSUPPORTED);
	/* qInv = p (not below p). */
	bad = tk->params;
	bad.qinv = tk->params.p;
	assert_int_equal(sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC), SOTLS_CRYPTO_UNSUPPORTED);
	/* p and q swapped: n = q p still, but qInv is q^-1 mod p, not p^-1 mod q:
	 * the check with e at load must refuse the key. */
	bad = tk->params;
	bad.p = tk->params.q;
	bad.q = tk->params.p;
	bad.dp = tk->params.dq;
	bad.dq = tk->params.dp;
	int rc = sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC);
	assert_true(rc == SOTLS_CRYPTO_BAD_KEY || rc == SOTLS_CRYPTO_UNSUPPORTED);
	/* dp off by two. */
	bad = tk->params;
	memcpy(buf, tk->params.dp.p, tk->params.dp.len);
	buf[tk->params.dp.len - 1] ^= 2;
	bad.dp = (struct sotls_rsa_be){buf, tk->params.dp.len};
	assert_int_equal(sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC), SOTLS_CRYPTO_BAD_KEY);
	/* n not p q. */
	bad = tk->params;
	memcpy(buf, tk->params.n.p, tk->params.n.len);
	buf[10] ^= 1;
	bad.n = (struct sotls_rsa_be){buf, tk->params.n.len};
	assert_int_equal(sotls_rsa_key_new(&k, &bad, SOTLS_RSA_GENERIC), SOTLS_CRYPTO_BAD_KEY);
	/* A level this CPU does not run, or none at all. */
	assert_int_equal(sotls_rsa_key_new(&k, &tk->params, SOTLS_RSA_IMPLS),
			 SOTLS_CRYPTO_BAD_ARG);
	assert_null(k);
	assert_int_equal(sotls_rsa_key_new(NULL, &tk->params, SOTLS_RSA_GENERIC),
			 SOTLS_CRYPTO_BAD_ARG);
}

/* ---------------------------------------------------------- threads */

struct thread_job {
	struct sotls_rsa_key *k;
	const uint8_t *in, *want;
	size_t len;
	int failures;
};

static void *thread_main(void *arg)
{
	struct thread_job *j = arg;
	uint8_t out[512];
	for (int i = 0; i < 50; i++)
		if (sotls_rsa_private(j->k, j->in, j->len, out) != 0 ||
		    memcmp(out, j->want, j->len) != 0)
			j->failures++;
	return NULL;
}

/* One key, four threads: the blinding state stays consistent (every
 * answer right, refreshes included). */
static void test_threads(void **state)
{
	(void)state;
	const struct rsa_testkey *tk = &edge_keys[0];
	const size_t len = tk->params.n.len;
	uint8_t in[4][512], want[4][512];
	struct sotls_rsa_key *k = new_key(tk, sotls_rsa_impl_best());
	struct sotls_rsa_key *ref = new_key(tk, SOTLS_RSA_GENERIC);
	struct thread_job jobs[4];
	pthread_t th[4];

	for (int i = 0; i < 4; i++) {
		random_below_n(tk, in[i]);
		assert_int_equal(sotls_rsa_private(ref, in[i], len, want[i]), 0);
		jobs[i] = (struct thread_job){k, in[i], want[i], len, 0};
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(jobs[i].failures, 0);
	}
	sotls_rsa_key_free(k);
	sotls_rsa_key_free(ref);
}

/* --------------------------------------------------- level selection */

/* The best level follows the CPU and SOTLS_CPU=generic. */
static void test_selection(void **state)
{
	(void)state;
	const char *cap = getenv("SOTLS_CPU");
	const enum sotls_rsa_impl best = sotls_rsa_impl_best();
	assert_true(sotls_rsa_impl_supported(SOTLS_RSA_GENERIC));
	assert_true(sotls_rsa_impl_supported(best));
	if (cap != NULL && strcmp(cap, "generic") == 0)
		assert_int_equal(best, SOTLS_RSA_GENERIC);
	if (best + 1 < SOTLS_RSA_IMPLS)
		assert_false(sotls_rsa_impl_supported(best + 1));
	assert_string_equal(sotls_rsa_impl_name(SOTLS_RSA_GENERIC), "generic");
	assert_null(sotls_rsa_impl_name(SOTLS_RSA_IMPLS));
	printf("best RSA level: %s\n", sotls_rsa_impl_name(best));
}

int main(int argc, char **argv)
{
	const char *s = getenv("SOTLS_RSA_TEST_SCALE");
	if (s != NULL && atoi(s) > 0)
		scale = atoi(s);
	rng_seed_from_env("test_rsa", 0x5250a16);
	find_levels();
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_wycheproof_sign),
		cmocka_unit_test(test_wycheproof_verify),
		cmocka_unit_test(test_edge_inputs),
		cmocka_unit_test(test_fault_check),
		cmocka_unit_test(test_levels_agree),
		cmocka_unit_test(test_key_shapes),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_differential),
	};
	return cmocka_run_group_tests(tests, make_edge_keys, free_edge_keys);
}

/*
 * Project Wycheproof's vectors, read in place from ../shared/vectors/wycheproof
 * (meson passes the directory), every test case with the result it names:
 *
 *   ecdh_secp256r1_test.json          sotls_p256_ecdh, each level
 *   ecdsa_secp256r1_sha256_test.json  sotls_p256_verify, each level, and
 *                                     mbedtls_pk_verify (the handshake's path:
 *                                     mbedTLS's DER parser, then the ALT hook)
 *   x25519_test.json                  mbedtls_ecdh_compute_shared on X25519
 *                                     (the ALT hook: libsodium)
 *
 * "valid" must succeed with the stated result, "invalid" must fail. What we
 * do with "acceptable" is our choice, fixed here and in docs/public-key.md:
 *  - ECDH: public keys come as DER SubjectPublicKeyInfo; only the named-curve
 *    P-256 form with an uncompressed point is taken (the one TLS's ECDHE
 *    share maps to); every other encoding (the "acceptable" InvalidAsn,
 *    UnusedParam, compressed, explicit-parameter ones) is refused.
 *  - X25519: a result of all zeros (a low-order peer point, RFC 7748 §6.1) is
 *    refused; every other acceptable case (twist points, non-canonical u,
 *    public keys with the top bit set) must give the stated shared secret.
 * Counts are printed per file and result.
 *
 *   test_p256_wycheproof VECTOR_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <mbedtls/ecdh.h>
#include <mbedtls/pk.h>
#include <openssl/evp.h>

#include "crypto_testutil.h"
#include "p256.h"
#include "p256_internal.h"
#include "wycheproof_util.h"

static const char *vector_dir;
static const struct p256_impl *levels[P256_LEVELS];
static size_t n_levels;

enum expect { VALID, INVALID, ACCEPTABLE };

struct tally {
	int n[3], accepted[3];
};

static enum expect result(json_t *t)
{
	const char *r = wp_string(t, "result");

	if (strcmp(r, "valid") == 0)
		return VALID;
	if (strcmp(r, "invalid") == 0)
		return INVALID;
	if (strcmp(r, "acceptable") == 0)
		return ACCEPTABLE;
	fail_msg("unknown result \"%s\"", r);
	return INVALID;
}

static int has_flag(json_t *t, const char *flag)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(t, "flags"), i, f)
		if (strcmp(json_string_value(f), flag) == 0)
			return 1;
	return 0;
}

static void report(const char *what, const struct tally *t)
{
	printf("test_p256_wycheproof: %s: %d valid, %d invalid, %d acceptable (%d of them "
	       "accepted)\n",
	       what, t->n[VALID], t->n[INVALID], t->n[ACCEPTABLE], t->accepted[ACCEPTABLE]);
}

/* ------------------------------------------------------------- ECDH */

/* SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 } with a 66-byte BIT
 * STRING (no unused bits, uncompressed point): the point, or NULL. */
static const uint8_t *spki_point(const uint8_t *der, size_t len)
{
	static const uint8_t prefix[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
					 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
					 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00};

	if (len != sizeof(prefix) + 65 || memcmp(der, prefix, sizeof(prefix)) != 0)
		return NULL;
	return der + sizeof(prefix);
}

static void test_ecdh(void **state)
{
	json_t *root = wp_read_file(vector_dir, "ecdh_secp256r1_test.json"), *g, *t;
	struct tally tl = {{0}, {0}};
	size_t gi, ti;

	(void)state;
	json_array_foreach(json_object_get(root, "testGroups"), gi, g)
		json_array_foreach(json_object_get(g, "tests"), ti, t)
	{
		static uint8_t der[8192];
		uint8_t priv_raw[64], priv[32] = {0}, shared[32], want[64];
		const size_t dl = wp_hex(t, "public", der, sizeof(der));
		size_t pl = wp_hex(t, "private", priv_raw, sizeof(priv_raw));
		const size_t wl = wp_hex(t, "shared", want, sizeof(want));
		const enum expect e = result(t);
		const int id = (int)json_integer_value(json_object_get(t, "tcId"));
		const uint8_t *p = priv_raw;

		/* The private key is a big-endian integer, possibly with a sign byte. */
		while (pl > 32 && *p == 0)
			p++, pl--;
		if (pl > 32)
			fail_msg("ECDH tcId %d: private key wider than 256 bits", id);
		memcpy(priv + 32 - pl, p, pl);
		const uint8_t *point = spki_point(der, dl);
		for (size_t l = 0; l < n_levels; l++) {
			const int rc = point != NULL ? sotls_p256_ecdh(levels[l], priv, point, shared)
						     : SOTLS_P256_ERR_POINT;
			if (rc == 0 && (wl != 32 || memcmp(shared, want, 32) != 0))
				fail_msg("ECDH tcId %d (%s): wrong shared secret", id, levels[l]->name);
			if (e == VALID && rc != 0)
				fail_msg("ECDH tcId %d (%s): valid case refused (%d)", id,
					 levels[l]->name, rc);
			if (e == INVALID && rc == 0)
				fail_msg("ECDH tcId %d (%s): invalid case accepted", id,
					 levels[l]->name);
			if (e == ACCEPTABLE && rc == 0)
				fail_msg("ECDH tcId %d: acceptable case accepted, but only the plain "
					 "named-curve encoding is taken",
					 id);
			if (l == 0) {
				tl.n[e]++;
				tl.accepted[e] += rc == 0;
			}
		}
	}
	json_decref(root);
	report("ecdh_secp256r1_test.json", &tl);
	assert_int_equal(tl.n[VALID] + tl.n[INVALID] + tl.n[ACCEPTABLE], 612);
}

/* ------------------------------------------------------------ ECDSA */

/* One DER INTEGER, positive and minimal, of at most 32 bytes of value. */
static int der_uint(const uint8_t **p, const uint8_t *end, uint8_t out[32])
{
	if (end - *p < 2 || (*p)[0] != 0x02)
		return -1;
	size_t len = (*p)[1];
	const uint8_t *v = *p + 2;
	if (len == 0 || len >= 0x80 || (size_t)(end - v) < len)
		return -1;
	/* X.690 §8.3.2: no redundant leading byte; and no negative value. */
	if (v[0] & 0x80)
		return -1;
	if (len > 1 && v[0] == 0 && !(v[1] & 0x80))
		return -1;
	*p = v + len;
	if (v[0] == 0)
		v++, len--;
	if (len > 32)
		return -1;
	memset(out, 0, 32);
	memcpy(out + 32 - len, v, len);
	return 0;
}

/* ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }, strict DER. */
static int der_sig(const uint8_t *der, size_t len, uint8_t sig[64])
{
	const uint8_t *p = der + 2, *end = der + len;

	if (len < 2 || der[0] != 0x30 || der[1] >= 0x80 || (size_t)der[1] != len - 2)
		return -1;
	if (der_uint(&p, end, sig) != 0 || der_uint(&p, end, sig + 32) != 0 || p != end)
		return -1;
	return 0;
}

static void test_ecdsa(void **state)
{
	json_t *root = wp_read_file(vector_dir, "ecdsa_secp256r1_sha256_test.json"), *g, *t;
	struct tally tl = {{0}, {0}}, tl_mbed = {{0}, {0}};
	size_t gi, ti;
	mbedtls_pk_context pk;

	(void)state;
	json_array_foreach(json_object_get(root, "testGroups"), gi, g)
	{
		json_t *key = json_object_get(g, "publicKey");
		uint8_t pub[65], key_der[256];

		assert_int_equal(wp_hex(key, "uncompressed", pub, sizeof(pub)), 65);
		const size_t kdl = wp_hex(g, "publicKeyDer", key_der, sizeof(key_der));
		mbedtls_pk_init(&pk);
		assert_int_equal(mbedtls_pk_parse_public_key(&pk, key_der, kdl), 0);
		json_array_foreach(json_object_get(g, "tests"), ti, t)
		{
			static uint8_t msg[8192], der[8192];
			uint8_t h[32], sig[64];
			unsigned int hl = 32;
			const size_t ml = wp_hex(t, "msg", msg, sizeof(msg));
			const size_t dl = wp_hex(t, "sig", der, sizeof(der));
			const enum expect e = result(t);
			const int id = (int)json_integer_value(json_object_get(t, "tcId"));

			assert_int_equal(EVP_Digest(msg, ml, h, &hl, EVP_sha256(), NULL), 1);
			const int parsed = der_sig(der, dl, sig) == 0;
			for (size_t l = 0; l < n_levels; l++) {
				const int ok = parsed &&
					       sotls_p256_verify(levels[l], pub, h, 32, sig) == 0;
				if (ok != (e == VALID))
					fail_msg("ECDSA tcId %d (%s, %s): %s", id, levels[l]->name,
						 wp_string(t, "comment"),
						 ok ? "invalid signature accepted"
						    : "valid signature refused");
				if (l == 0) {
					tl.n[e]++;
					tl.accepted[e] += ok;
				}
			}
			/* The handshake's path: mbedTLS parses the DER, the hook verifies.
			 * mbedTLS's ASN.1 reader takes some BER that DER forbids (a
			 * negative-looking INTEGER read as its magnitude, ...): it may
			 * accept an invalid case only where the strict parse above failed,
			 * i.e. the numbers themselves are a valid signature. */
			const int mok = mbedtls_pk_verify(&pk, MBEDTLS_MD_SHA256, h, 32, der, dl) == 0;
			if (e == VALID && !mok)
				fail_msg("ECDSA tcId %d via mbedtls_pk_verify (%s): valid signature "
					 "refused", id, wp_string(t, "comment"));
			if (e != VALID && mok && parsed)
				fail_msg("ECDSA tcId %d via mbedtls_pk_verify (%s): invalid signature "
					 "accepted", id, wp_string(t, "comment"));
			if (e != VALID && mok)
				printf("test_p256_wycheproof: tcId %d (%s): mbedTLS's DER reader "
				       "accepts this encoding\n", id, wp_string(t, "comment"));
			tl_mbed.n[e]++;
			tl_mbed.accepted[e] += mok;
		}
		mbedtls_pk_free(&pk);
	}
	json_decref(root);
	report("ecdsa_secp256r1_sha256_test.json (sotls_p256_verify)", &tl);
	report("ecdsa_secp256r1_sha256_test.json (mbedtls_pk_verify)", &tl_mbed);
	assert_int_equal(tl.n[VALID] + tl.n[INVALID] + tl.n[ACCEPTABLE], 484);
}

/* ----------------------------------------------------------- X25519 */

static void test_x25519(void **state)
{
	json_t *root = wp_read_file(vector_dir, "x25519_test.json"), *g, *t;
	struct tally tl = {{0}, {0}};
	size_t gi, ti;
	mbedtls_ecp_group grp;

	(void)state;
	mbedtls_ecp_group_init(&grp);
	assert_int_equal(mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_CURVE25519), 0);
	json_array_foreach(json_object_get(root, "testGroups"), gi, g)
		json_array_foreach(json_object_get(g, "tests"), ti, t)
	{
		uint8_t pub[32], priv[32], want[32], got[32];
		mbedtls_mpi d, z;
		mbedtls_ecp_point q;
		const enum expect e = result(t);
		const int id = (int)json_integer_value(json_object_get(t, "tcId"));

		assert_int_equal(wp_hex(t, "public", pub, sizeof(pub)), 32);
		assert_int_equal(wp_hex(t, "private", priv, sizeof(priv)), 32);
		assert_int_equal(wp_hex(t, "shared", want, sizeof(want)), 32);
		mbedtls_mpi_init(&d);
		mbedtls_mpi_init(&z);
		mbedtls_ecp_point_init(&q);
		assert_int_equal(mbedtls_mpi_read_binary_le(&d, priv, 32), 0);
		assert_int_equal(mbedtls_ecp_point_read_binary(&grp, &q, pub, 32), 0);
		const int ok = mbedtls_ecdh_compute_shared(&grp, &z, &q, &d, NULL, NULL) == 0;
		if (ok) {
			assert_int_equal(mbedtls_mpi_write_binary_le(&z, got, 32), 0);
			if (memcmp(got, want, 32) != 0)
				fail_msg("X25519 tcId %d: wrong shared secret", id);
		}
		const int zero = has_flag(t, "ZeroSharedSecret");
		if (e == VALID && !ok)
			fail_msg("X25519 tcId %d: valid case refused", id);
		if (e == INVALID && ok)
			fail_msg("X25519 tcId %d: invalid case accepted", id);
		if (e == ACCEPTABLE && ok == zero)
			fail_msg("X25519 tcId %d: acceptable case %s", id,
				 zero ? "with a zero secret accepted" : "refused");
		tl.n[e]++;
		tl.accepted[e] += ok;
		mbedtls_mpi_free(&d);
		mbedtls_mpi_free(&z);
		mbedtls_ecp_point_free(&q);
	}
	mbedtls_ecp_group_free(&grp);
	json_decref(root);
	report("x25519_test.json (mbedtls_ecdh_compute_shared -> libsodium)", &tl);
	assert_int_equal(tl.n[VALID] + tl.n[INVALID] + tl.n[ACCEPTABLE], 518);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s VECTOR_DIR\n", argv[0]);
		return 2;
	}
	vector_dir = argv[1];
	for (int l = 0; l < P256_LEVELS; l++) {
		const struct p256_impl *im = p256_impl_get((enum p256_level)l);

		if (im != NULL)
			levels[n_levels++] = im;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ecdh),
		cmocka_unit_test(test_ecdsa),
		cmocka_unit_test(test_x25519),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

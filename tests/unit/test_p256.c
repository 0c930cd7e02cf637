/*
 * P-256 ECDH and ECDSA (lib/crypto/p256.h), for every implementation level
 * this CPU runs:
 *
 *  (a) the field constants and the Montgomery arithmetic against OpenSSL's
 *      BIGNUM, and every level against the portable one on random inputs
 *      and on limb patterns that make the longest carries;
 *  (b) RFC 6979 A.2.5's known answers (P-256, SHA-256);
 *  (c) differential tests against OpenSSL with thousands of random keys and
 *      messages: public keys, ECDH shared secrets both ways, signatures made
 *      here verified by OpenSSL and the reverse;
 *  (d) edge cases: scalars 0, 1, 2.., n-2, n-1, n, above n; points at
 *      infinity, off the curve, compressed, with coordinates >= p; hashes
 *      shorter and longer than 32 bytes; r, s out of range.
 *
 * Random inputs come from a fixed seed (printed; override with
 * SOTLS_TEST_SEED=<number>). SOTLS_P256_TEST_KEYS=<n> replaces the 2000
 * random keys of (c): under qemu (scripts/check-aarch64.sh) the full count
 * alone would take a minute.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>

#include "crypto_testutil.h"
#include "openssl_ec.h"
#include "p256.h"
#include "p256_internal.h"
#include "p256_point.h"
#include "p256_scalar.h"

static int random_keys = 2000;

static const struct p256_impl *levels[P256_LEVELS];
static size_t n_levels;

static EC_GROUP *group;
static BN_CTX *bn_ctx;

static const uint8_t N_BYTES[32] = {
	0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51};

/* ------------------------------------------------------ OpenSSL helpers */

static void bn_to32(const BIGNUM *b, uint8_t out[32])
{
	assert_int_equal(BN_bn2binpad(b, out, 32), 32);
}

/* OpenSSL's k·P (P = NULL: the generator) as 65 bytes; 0 if at infinity. */
static int ref_mul(const uint8_t k[32], const uint8_t *p65, uint8_t out[65])
{
	BIGNUM *bk = BN_bin2bn(k, 32, NULL);
	EC_POINT *r = EC_POINT_new(group), *p = NULL;
	int ok;

	assert_non_null(bk);
	assert_non_null(r);
	if (p65 != NULL) {
		p = EC_POINT_new(group);
		assert_int_equal(EC_POINT_oct2point(group, p, p65, 65, bn_ctx), 1);
		ok = EC_POINT_mul(group, r, NULL, p, bk, bn_ctx);
	} else {
		ok = EC_POINT_mul(group, r, bk, NULL, NULL, bn_ctx);
	}
	assert_int_equal(ok, 1);
	int fin = !EC_POINT_is_at_infinity(group, r);
	if (fin)
		assert_int_equal(EC_POINT_point2oct(group, r, POINT_CONVERSION_UNCOMPRESSED, out, 65,
						    bn_ctx),
				 65);
	EC_POINT_free(p);
	EC_POINT_free(r);
	BN_free(bk);
	return fin;
}

/* An EVP key from a private key (with its public key) or a public key alone. */
static EVP_PKEY *evp_key(const uint8_t *priv, const uint8_t pub[65])
{
	EVP_PKEY *key = openssl_p256_key(priv, pub);

	assert_non_null(key);
	return key;
}

/* A fresh OpenSSL key pair, its private and public key. */
static EVP_PKEY *evp_gen(uint8_t priv[32], uint8_t pub[65])
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	BIGNUM *d = NULL;
	size_t len = 0;

	assert_non_null(key);
	assert_int_equal(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &d), 1);
	bn_to32(d, priv);
	BN_free(d);
	assert_int_equal(
		EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pub, 65, &len), 1);
	assert_int_equal(len, 65);
	return key;
}

static void evp_derive(EVP_PKEY *mine, EVP_PKEY *peer, uint8_t out[32])
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(mine, NULL);
	size_t len = 32;

	assert_non_null(ctx);
	assert_int_equal(EVP_PKEY_derive_init(ctx), 1);
	assert_int_equal(EVP_PKEY_derive_set_peer(ctx, peer), 1);
	assert_int_equal(EVP_PKEY_derive(ctx, out, &len), 1);
	assert_int_equal(len, 32);
	EVP_PKEY_CTX_free(ctx);
}

static void der_to_sig(const uint8_t *der, size_t len, uint8_t sig[64])
{
	const unsigned char *p = der;
	ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)len);

	assert_non_null(s);
	bn_to32(ECDSA_SIG_get0_r(s), sig);
	bn_to32(ECDSA_SIG_get0_s(s), sig + 32);
	ECDSA_SIG_free(s);
}

/* 1 when OpenSSL accepts the signature, 0 when it does not */
static int evp_verify(EVP_PKEY *key, const uint8_t *hash, size_t hlen, const uint8_t sig[64])
{
	return openssl_p256_verify(key, hash, hlen, sig) == 0;
}

static void evp_sign(EVP_PKEY *key, const uint8_t *hash, size_t hlen, uint8_t sig[64])
{
	uint8_t der[80];
	size_t dlen = sizeof(der);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);

	assert_non_null(ctx);
	assert_int_equal(EVP_PKEY_sign_init(ctx), 1);
	assert_int_equal(EVP_PKEY_sign(ctx, der, &dlen, hash, hlen), 1);
	der_to_sig(der, dlen, sig);
	EVP_PKEY_CTX_free(ctx);
}

/* n + delta (delta may be negative) as 32 bytes; the caller keeps it in range. */
static void n_plus(int delta, uint8_t out[32])
{
	BIGNUM *b = BN_bin2bn(N_BYTES, 32, NULL);

	assert_non_null(b);
	if (delta >= 0)
		assert_int_equal(BN_add_word(b, (BN_ULONG)delta), 1);
	else
		assert_int_equal(BN_sub_word(b, (BN_ULONG)-delta), 1);
	bn_to32(b, out);
	BN_free(b);
}

static void small_scalar(unsigned v, uint8_t out[32])
{
	memset(out, 0, 32);
	out[31] = (uint8_t)v;
	out[30] = (uint8_t)(v >> 8);
}

/* ------------------------------------------------ (a) field arithmetic */

static void fe_to_bn(const p256_fe a, BIGNUM *b)
{
	uint8_t buf[32];

	p256_store_be(buf, a);
	assert_non_null(BN_bin2bn(buf, 32, b));
}

static void random_below(p256_fe r, const BIGNUM *m)
{
	BIGNUM *b = BN_new();
	uint8_t buf[32];

	assert_non_null(b);
	rng_fill(buf, 32);
	BN_bin2bn(buf, 32, b);
	BN_mod(b, b, m, bn_ctx);
	bn_to32(b, buf);
	p256_load_be(r, buf);
	BN_free(b);
}

/* The constants of p256_internal.h, recomputed. */
static void test_constants(void **state)
{
	BIGNUM *p = BN_new(), *n = BN_new(), *b = BN_new(), *r = BN_new(), *t = BN_new(),
	       *v = BN_new();

	(void)state;
	assert_int_equal(EC_GROUP_get_curve(group, p, NULL, b, bn_ctx), 1);
	assert_int_equal(EC_GROUP_get_order(group, n, bn_ctx), 1);
	BN_one(r);
	BN_lshift(r, r, 256);
	fe_to_bn(P256_P, v);
	assert_int_equal(BN_cmp(v, p), 0);
	fe_to_bn(P256_N, v);
	assert_int_equal(BN_cmp(v, n), 0);
	BN_mod_mul(t, r, r, p, bn_ctx);
	fe_to_bn(P256_R2P, v);
	assert_int_equal(BN_cmp(v, t), 0);
	BN_mod_mul(t, r, r, n, bn_ctx);
	fe_to_bn(P256_R2N, v);
	assert_int_equal(BN_cmp(v, t), 0);
	BN_mod(t, r, p, bn_ctx);
	fe_to_bn(P256_ONE, v);
	assert_int_equal(BN_cmp(v, t), 0);
	BN_mod_mul(t, b, r, p, bn_ctx);
	fe_to_bn(P256_B, v);
	assert_int_equal(BN_cmp(v, t), 0);
	/* n0 = -n^-1 mod 2^64 */
	BN_one(t);
	BN_lshift(t, t, 64);
	BN_mod_inverse(v, n, t, bn_ctx);
	BN_sub(v, t, v);
	assert_true(BN_get_word(v) == P256_N0);
	BN_free(p), BN_free(n), BN_free(b), BN_free(r), BN_free(t), BN_free(v);
}

/* Montgomery products mod p and mod n, inversion, against BIGNUM. */
static void test_field_vs_bignum(void **state)
{
	BIGNUM *p = BN_new(), *n = BN_new(), *ri = BN_new(), *ba = BN_new(), *bb = BN_new(),
	       *want = BN_new(), *got = BN_new();

	(void)state;
	EC_GROUP_get_curve(group, p, NULL, NULL, bn_ctx);
	EC_GROUP_get_order(group, n, bn_ctx);
	for (size_t l = 0; l < n_levels; l++) {
		const struct p256_impl *im = levels[l];

		for (int i = 0; i < 3000; i++) {
			p256_fe a, b, r;
			const int mod_n = i & 1;
			const BIGNUM *m = mod_n ? n : p;

			random_below(a, m);
			random_below(b, m);
			/* edge values: 0, 1, m-1 */
			if (i < 9) {
				memset(a, 0, sizeof(a));
				if (i % 3 == 1)
					a[0] = 1;
				if (i % 3 == 2)
					p256_sub4(a, mod_n ? P256_N : P256_P, (p256_fe){1, 0, 0, 0});
				memcpy(b, a, sizeof(b));
				if (i >= 3)
					random_below(b, m);
			}
			fe_to_bn(a, ba);
			fe_to_bn(b, bb);
			/* want = a·b·2^-256 mod m */
			BN_one(ri);
			BN_lshift(ri, ri, 256);
			BN_mod_inverse(ri, ri, m, bn_ctx);
			BN_mod_mul(want, ba, bb, m, bn_ctx);
			BN_mod_mul(want, want, ri, m, bn_ctx);
			if (mod_n) {
				im->sc_mul(r, a, b);
				p256_fe sq, sq_want;

				im->sc_sqr(sq, a);
				im->sc_mul(sq_want, a, a);
				assert_memory_equal(sq, sq_want, sizeof(sq));
			} else
				im->fe_mul(r, a, b);
			fe_to_bn(r, got);
			if (BN_cmp(got, want) != 0)
				fail_msg("%s: Montgomery product mod %s wrong at case %d", im->name,
					 mod_n ? "n" : "p", i);
			if (!mod_n) {
				im->fe_sqr(r, a);
				BN_mod_mul(want, ba, ba, p, bn_ctx);
				BN_mod_mul(want, want, ri, p, bn_ctx);
				fe_to_bn(r, got);
				assert_int_equal(BN_cmp(got, want), 0);
				/* inverse in the Montgomery domain: (aR)^-1 R^2 ... checked as
				 * a·a^-1 = 1 (R mod p), or 0 for 0. */
				im->fe_inv(r, a);
				im->fe_mul(r, r, a);
				if (BN_is_zero(ba))
					assert_true(p256_fe_is_zero(r));
				else
					assert_true(p256_fe_eq(r, P256_ONE));
				p256_fe_add(r, a, b);
				BN_mod_add(want, ba, bb, p, bn_ctx);
				fe_to_bn(r, got);
				assert_int_equal(BN_cmp(got, want), 0);
				p256_fe_sub(r, a, b);
				BN_mod_sub(want, ba, bb, p, bn_ctx);
				fe_to_bn(r, got);
				assert_int_equal(BN_cmp(got, want), 0);
			} else {
				p256_sc_inv(im, r, a);
				if (BN_is_zero(ba)) {
					assert_true(p256_fe_is_zero(r));
				} else {
					BN_mod_inverse(want, ba, n, bn_ctx);
					fe_to_bn(r, got);
					assert_int_equal(BN_cmp(got, want), 0);
				}
			}
		}
	}
	BN_free(p), BN_free(n), BN_free(ri), BN_free(ba), BN_free(bb), BN_free(want),
		BN_free(got);
}

/*
 * Every level's field and scalar products, and its point formulas, against
 * the portable level's on inputs whose limbs are 0, 1, 2^32 - 1, 2^32, 2^63,
 * 2^64 - 2^32, 2^64 - 1 or random (reduced below the modulus): the limb
 * patterns of p and n, where the carries of an assembly schedule's chains
 * are longest, which uniform random inputs almost never reach.
 */
static void fe_structured(p256_fe r, const p256_fe m)
{
	static const uint64_t limbs[] = {0, 1, 0xffffffffULL, 0x100000000ULL, 1ULL << 63,
					 0xffffffff00000000ULL, ~0ULL};
	uint8_t pick[4];
	p256_fe t;

	rng_fill(pick, sizeof(pick));
	rng_fill((uint8_t *)r, sizeof(p256_fe));
	for (int k = 0; k < 4; k++)
		if (pick[k] % 9 < 7)
			r[k] = limbs[pick[k] % 9];
	if (!p256_sub4(t, r, m))
		memcpy(r, t, sizeof(t));
}

static void test_field_levels_carries(void **state)
{
	(void)state;
	if (n_levels < 2) {
		printf("test_p256: only the generic level runs here\n");
		skip();
	}
	for (int i = 0; i < 200000; i++) {
		const int mod_n = i & 1;
		p256_fe a, b, want, got;

		fe_structured(a, mod_n ? P256_N : P256_P);
		fe_structured(b, mod_n ? P256_N : P256_P);
		for (size_t l = 1; l < n_levels; l++) {
			if (mod_n) {
				levels[0]->sc_mul(want, a, b);
				levels[l]->sc_mul(got, a, b);
				assert_memory_equal(got, want, sizeof(want));
				levels[0]->sc_sqr(want, a);
				levels[l]->sc_sqr(got, a);
				assert_memory_equal(got, want, sizeof(want));
				continue;
			}
			levels[0]->fe_mul(want, a, b);
			levels[l]->fe_mul(got, a, b);
			assert_memory_equal(got, want, sizeof(want));
			levels[0]->fe_sqr(want, a);
			levels[l]->fe_sqr(got, a);
			assert_memory_equal(got, want, sizeof(want));
		}
		/* The formulas are polynomials: on any coordinates, curve or not,
		 * they exercise each level's additions and subtractions mod p. */
		if (i % 16 != 0)
			continue;
		p256_jac pa, pb, jw, jg;
		p256_aff ab;

		memcpy(pa.x, a, sizeof(a));
		memcpy(pa.y, b, sizeof(b));
		fe_structured(pa.z, P256_P);
		fe_structured(pb.x, P256_P);
		fe_structured(pb.y, P256_P);
		fe_structured(pb.z, P256_P);
		memcpy(ab.x, pb.x, sizeof(ab.x));
		memcpy(ab.y, pb.y, sizeof(ab.y));
		for (size_t l = 1; l < n_levels; l++) {
			levels[0]->dbl(&jw, &pa);
			levels[l]->dbl(&jg, &pa);
			assert_memory_equal(&jg, &jw, sizeof(jw));
			levels[0]->add(&jw, &pa, &pb);
			levels[l]->add(&jg, &pa, &pb);
			assert_memory_equal(&jg, &jw, sizeof(jw));
			levels[0]->madd(&jw, &pa, &ab, ~(uint64_t)0);
			levels[l]->madd(&jg, &pa, &ab, ~(uint64_t)0);
			assert_memory_equal(&jg, &jw, sizeof(jw));
		}
	}
}

/* Every level gives the generic level's bytes for the same inputs. */
static void test_levels_agree(void **state)
{
	(void)state;
	if (n_levels < 2) {
		printf("test_p256: only the generic level runs here\n");
		skip();
	}
	for (int i = 0; i < 300; i++) {
		uint8_t rnd[48], priv[32], pub0[65], pub[65], peer[65], ppriv[32], z0[32], z[32],
			h[32], s0[64], s[64];

		rng_fill(rnd, sizeof(rnd));
		rng_fill(h, sizeof(h));
		assert_int_equal(sotls_p256_keygen(levels[0], rnd, priv, pub0), 0);
		rng_fill(rnd, sizeof(rnd));
		assert_int_equal(sotls_p256_keygen(levels[0], rnd, ppriv, peer), 0);
		assert_int_equal(sotls_p256_ecdh(levels[0], priv, peer, z0), 0);
		assert_int_equal(sotls_p256_sign(levels[0], priv, h, 32, NULL, 0, s0), 0);
		for (size_t l = 1; l < n_levels; l++) {
			assert_int_equal(sotls_p256_public_key(levels[l], priv, pub), 0);
			assert_memory_equal(pub, pub0, 65);
			assert_int_equal(sotls_p256_ecdh(levels[l], priv, peer, z), 0);
			assert_memory_equal(z, z0, 32);
			assert_int_equal(sotls_p256_sign(levels[l], priv, h, 32, NULL, 0, s), 0);
			assert_memory_equal(s, s0, 64);
			assert_int_equal(sotls_p256_verify(levels[l], pub0, h, 32, s0), 0);
		}
	}
}

static int jac_same(const struct p256_impl *im, const p256_jac *a, const p256_jac *b)
{
	p256_aff x, y;
	const uint64_t ia = p256_to_affine(im, &x, a), ib = p256_to_affine(im, &y, b);

	if (ia || ib)
		return ia == ib;
	return p256_fe_eq(x.x, y.x) && p256_fe_eq(x.y, y.y);
}

/* The complete additions' exceptional cases: equal, opposite, at infinity. */
static void test_formulas(void **state)
{
	(void)state;
	for (size_t l = 0; l < n_levels; l++) {
		const struct p256_impl *im = levels[l];

		for (int i = 0; i < 50; i++) {
			uint8_t k[32];
			p256_jac p, q, r, want, inf;
			p256_aff pa;

			rng_fill(k, 32);
			k[0] &= 0x7f;
			p256_fe kk;
			p256_load_be(kk, k);
			p256_mul_base(im, &p, kk);
			/* a second representation of the same point: Z scaled by 2 */
			p256_fe two, t;
			p256_fe_add(two, P256_ONE, P256_ONE);
			im->fe_mul(q.z, p.z, two);
			im->fe_sqr(t, two);
			im->fe_mul(q.x, p.x, t);
			im->fe_mul(t, t, two);
			im->fe_mul(q.y, p.y, t);
			assert_false(p256_to_affine(im, &pa, &p));
			memset(&inf, 0, sizeof(inf));
			im->dbl(&want, &p);

			im->add(&r, &p, &q);
			assert_true(jac_same(im, &r, &want));
			im->madd(&r, &q, &pa, ~(uint64_t)0);
			assert_true(jac_same(im, &r, &want));
			im->add(&r, &inf, &q);
			assert_true(jac_same(im, &r, &p));
			im->add(&r, &q, &inf);
			assert_true(jac_same(im, &r, &p));
			im->madd(&r, &inf, &pa, ~(uint64_t)0);
			assert_true(jac_same(im, &r, &p));
			im->madd(&r, &q, &pa, 0);
			assert_true(jac_same(im, &r, &p));
			im->dbl(&r, &inf);
			assert_true(jac_same(im, &r, &inf));
			/* P + (-P) */
			p256_fe_cneg(q.y, q.y, ~(uint64_t)0);
			im->add(&r, &p, &q);
			assert_true(jac_same(im, &r, &inf));
			im->add_distinct(&r, &p, &q);
			assert_true(jac_same(im, &r, &inf));
			p256_fe_cneg(pa.y, pa.y, ~(uint64_t)0);
			im->madd(&r, &p, &pa, ~(uint64_t)0);
			assert_true(jac_same(im, &r, &inf));
			/* and the distinct ones do not double: P + P is not 2P there */
			p256_fe_cneg(pa.y, pa.y, ~(uint64_t)0);
			im->madd_distinct(&r, &p, &pa, ~(uint64_t)0);
			assert_false(jac_same(im, &r, &want));
		}
	}
}

/* ------------------------------------------------------ (b) RFC 6979 */

static void test_rfc6979(void **state)
{
	static const struct {
		const char *msg, *r, *s;
	} cases[] = {
		{"sample", "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
		 "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"},
		{"test", "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367",
		 "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"},
	};
	uint8_t priv[32], pub[65], want_pub[65], h[32], want[64], sig[64];

	(void)state;
	hex_decode("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", priv, 32);
	hex_decode("0460FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
		   "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299",
		   want_pub, 65);
	for (size_t l = 0; l < n_levels; l++) {
		assert_int_equal(sotls_p256_public_key(levels[l], priv, pub), 0);
		assert_memory_equal(pub, want_pub, 65);
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			unsigned int hl = 32;

			assert_int_equal(EVP_Digest(cases[c].msg, strlen(cases[c].msg), h, &hl,
						    EVP_sha256(), NULL),
					 1);
			hex_decode(cases[c].r, want, 32);
			hex_decode(cases[c].s, want + 32, 32);
			assert_int_equal(sotls_p256_sign(levels[l], priv, h, 32, NULL, 0, sig), 0);
			assert_memory_equal(sig, want, 64);
			assert_int_equal(sotls_p256_verify(levels[l], pub, h, 32, sig), 0);
			/* Hedged: a different, still valid signature. */
			assert_int_equal(sotls_p256_sign(levels[l], priv, h, 32, h, 32, sig), 0);
			assert_memory_not_equal(sig, want, 64);
			assert_int_equal(sotls_p256_verify(levels[l], pub, h, 32, sig), 0);
		}
	}
}

/* The handshake's path: mbedTLS's deterministic ECDSA through the ALT hook
 * (lib/crypto/ec_mbedtls_alt.c) gives RFC 6979's signature too; and P-384,
 * which the hook passes to mbedTLS's generic ECP, signs and verifies. */
static int test_rng(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	rng_fill(out, len);
	return 0;
}

static void test_via_mbedtls(void **state)
{
	uint8_t priv[32], h[32], want[64], got[64];
	unsigned int hl = 32;
	mbedtls_ecp_keypair kp;
	mbedtls_mpi r, s;

	(void)state;
	hex_decode("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", priv, 32);
	hex_decode("EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
		   "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8",
		   want, 64);
	assert_int_equal(EVP_Digest("sample", 6, h, &hl, EVP_sha256(), NULL), 1);
	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	mbedtls_ecp_keypair_init(&kp);
	assert_int_equal(mbedtls_ecp_read_key(MBEDTLS_ECP_DP_SECP256R1, &kp, priv, 32), 0);
	assert_int_equal(mbedtls_ecp_keypair_calc_public(&kp, test_rng, NULL), 0);
	mbedtls_ecp_group *grp = &kp.MBEDTLS_PRIVATE(grp);
	assert_int_equal(mbedtls_ecdsa_sign_det_ext(grp, &r, &s, &kp.MBEDTLS_PRIVATE(d), h, 32,
						    MBEDTLS_MD_SHA256, test_rng, NULL),
			 0);
	assert_int_equal(mbedtls_mpi_write_binary(&r, got, 32), 0);
	assert_int_equal(mbedtls_mpi_write_binary(&s, got + 32, 32), 0);
	assert_memory_equal(got, want, 64);
	assert_int_equal(mbedtls_ecdsa_verify(grp, h, 32, &kp.MBEDTLS_PRIVATE(Q), &r, &s), 0);
	mbedtls_ecp_keypair_free(&kp);

	mbedtls_ecp_keypair_init(&kp);
	assert_int_equal(mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP384R1, &kp, test_rng, NULL), 0);
	for (int i = 0; i < 20; i++) {
		rng_fill(h, 32);
		assert_int_equal(mbedtls_ecdsa_sign_det_ext(grp, &r, &s, &kp.MBEDTLS_PRIVATE(d), h,
							    32, MBEDTLS_MD_SHA256, test_rng, NULL),
				 0);
		assert_int_equal(mbedtls_ecdsa_verify(grp, h, 32, &kp.MBEDTLS_PRIVATE(Q), &r, &s),
				 0);
		h[0] ^= 1;
		assert_int_equal(mbedtls_ecdsa_verify(grp, h, 32, &kp.MBEDTLS_PRIVATE(Q), &r, &s),
				 MBEDTLS_ERR_ECP_VERIFY_FAILED);
	}
	mbedtls_ecp_keypair_free(&kp);
	mbedtls_mpi_free(&r);
	mbedtls_mpi_free(&s);
}

/* -------------------------------------------- (c) against OpenSSL */

static void test_keys_vs_openssl(void **state)
{
	(void)state;
	for (size_t l = 0; l < n_levels; l++)
		for (int i = 0; i < random_keys / 4; i++) {
			uint8_t priv[32], pub[65], mine[65];
			EVP_PKEY *k = evp_gen(priv, pub);

			assert_int_equal(sotls_p256_public_key(levels[l], priv, mine), 0);
			assert_memory_equal(mine, pub, 65);
			EVP_PKEY_free(k);
		}
}

static void test_ecdh_vs_openssl(void **state)
{
	(void)state;
	for (int i = 0; i < random_keys; i++) {
		const struct p256_impl *im = levels[(size_t)i % n_levels];
		uint8_t rnd[48], priv[32], pub[65], opriv[32], opub[65], z1[32], z2[32];

		rng_fill(rnd, sizeof(rnd));
		assert_int_equal(sotls_p256_keygen(im, rnd, priv, pub), 0);
		EVP_PKEY *theirs = evp_gen(opriv, opub);
		EVP_PKEY *ours = evp_key(priv, pub);
		EVP_PKEY *ours_pub = evp_key(NULL, pub);
		EVP_PKEY *theirs_pub = evp_key(NULL, opub);

		/* ours with their share; theirs with our share; and OpenSSL with our key */
		assert_int_equal(sotls_p256_ecdh(im, priv, opub, z1), 0);
		evp_derive(theirs, ours_pub, z2);
		assert_memory_equal(z1, z2, 32);
		evp_derive(ours, theirs_pub, z2);
		assert_memory_equal(z1, z2, 32);
		assert_int_equal(sotls_p256_ecdh(im, opriv, pub, z2), 0);
		assert_memory_equal(z1, z2, 32);
		EVP_PKEY_free(theirs), EVP_PKEY_free(ours), EVP_PKEY_free(ours_pub),
			EVP_PKEY_free(theirs_pub);
	}
}

static void test_ecdsa_vs_openssl(void **state)
{
	(void)state;
	for (int i = 0; i < random_keys; i++) {
		const struct p256_impl *im = levels[(size_t)i % n_levels];
		/* hash lengths: SHA-256's, and shorter and longer ones (bits2int) */
		static const size_t HLEN[] = {32, 32, 32, 20, 48, 64, 0, 1};
		const size_t hl = HLEN[i % 8];
		uint8_t priv[32], pub[65], h[64], sig[64], extra[32];

		rng_fill(h, sizeof(h));
		if (i % 16 == 1)
			memset(h, 0xff, sizeof(h)); /* e >= n: reduced */
		EVP_PKEY *key = evp_gen(priv, pub);

		/* ours -> OpenSSL, deterministic and hedged */
		rng_fill(extra, sizeof(extra));
		assert_int_equal(sotls_p256_sign(im, priv, h, hl, (i & 1) ? extra : NULL,
						 (i & 1) ? 32 : 0, sig),
				 0);
		if (evp_verify(key, h, hl, sig) != 1)
			fail_msg("%s: OpenSSL rejects our signature (case %d, hash %zu bytes)",
				 im->name, i, hl);
		assert_int_equal(sotls_p256_verify(im, pub, h, hl, sig), 0);
		/* OpenSSL -> ours */
		evp_sign(key, h, hl, sig);
		if (sotls_p256_verify(im, pub, h, hl, sig) != 0)
			fail_msg("%s: OpenSSL's signature rejected (case %d, hash %zu bytes)", im->name,
				 i, hl);
		/* A changed hash, r or s fails in both. */
		uint8_t bad[64];
		memcpy(bad, sig, 64);
		bad[rng_below(64)] ^= (uint8_t)(1u << rng_below(8));
		const int ours_bad = sotls_p256_verify(im, pub, h, hl, bad);
		assert_true(ours_bad != 0);
		if (hl > 0) {
			h[rng_below(hl < 32 ? hl : 32)] ^= 0x01;
			assert_int_equal(sotls_p256_verify(im, pub, h, hl, sig), SOTLS_P256_ERR_SIG);
			assert_int_equal(evp_verify(key, h, hl, sig), 0);
		}
		EVP_PKEY_free(key);
	}
}

/* ------------------------------------------------------ (d) edge cases */

/* k·G and k·P for k = 1..40, n-40..n-1 and random k, against OpenSSL. */
static void test_edge_scalars(void **state)
{
	uint8_t k[32], want[65], got[65], z[32], ppriv[32], peer[65];

	(void)state;
	EVP_PKEY_free(evp_gen(ppriv, peer));
	for (size_t l = 0; l < n_levels; l++) {
		const struct p256_impl *im = levels[l];

		for (int i = 0; i < 120; i++) {
			if (i < 40)
				small_scalar((unsigned)i + 1, k);
			else if (i < 80)
				n_plus(-(i - 39), k);
			else
				rng_fill(k, 32), k[0] &= 0x7f;
			assert_int_equal(ref_mul(k, NULL, want), 1);
			assert_int_equal(sotls_p256_public_key(im, k, got), 0);
			if (memcmp(got, want, 65) != 0)
				fail_msg("%s: k·G wrong for case %d", im->name, i);
			assert_int_equal(ref_mul(k, peer, want), 1);
			assert_int_equal(sotls_p256_ecdh(im, k, peer, z), 0);
			if (memcmp(z, want + 1, 32) != 0)
				fail_msg("%s: k·P wrong for case %d", im->name, i);
			/* verification's variable-time k·P, whole point */
			p256_aff pa, ra;
			p256_jac rj;
			p256_fe kl;

			assert_int_equal(p256_point_decode(im, &pa, peer), 0);
			p256_load_be(kl, k);
			p256_mul_var_public(im, &rj, kl, &pa);
			assert_false(p256_to_affine(im, &ra, &rj));
			p256_point_encode(im, got, &ra);
			if (memcmp(got, want, 65) != 0)
				fail_msg("%s: public k·P wrong for case %d", im->name, i);
		}
		p256_aff pa;
		p256_jac rj;
		const p256_fe zero = {0, 0, 0, 0};

		assert_int_equal(p256_point_decode(im, &pa, peer), 0);
		p256_mul_var_public(im, &rj, zero, &pa);
		assert_true(p256_fe_is_zero(rj.z));
		/* 0, n, n+1, 2^256-1: not private keys */
		const int bad[] = {0, 1, 2};
		for (size_t b = 0; b < 3; b++) {
			n_plus(bad[b], k);
			assert_int_equal(sotls_p256_public_key(im, k, got), SOTLS_P256_ERR_KEY);
			assert_int_equal(sotls_p256_ecdh(im, k, peer, z), SOTLS_P256_ERR_KEY);
			assert_int_equal(sotls_p256_sign(im, k, k, 32, NULL, 0, got),
					 SOTLS_P256_ERR_KEY);
		}
		memset(k, 0, 32);
		assert_int_equal(sotls_p256_public_key(im, k, got), SOTLS_P256_ERR_KEY);
		assert_int_equal(sotls_p256_ecdh(im, k, peer, z), SOTLS_P256_ERR_KEY);
		memset(k, 0xff, 32);
		assert_int_equal(sotls_p256_public_key(im, k, got), SOTLS_P256_ERR_KEY);
		/* keygen from all-zero and all-one random bytes still gives a valid key */
		uint8_t rnd[48], priv[32];
		memset(rnd, 0, sizeof(rnd));
		assert_int_equal(sotls_p256_keygen(im, rnd, priv, got), 0);
		small_scalar(1, k);
		assert_memory_equal(priv, k, 32);
		memset(rnd, 0xff, sizeof(rnd));
		assert_int_equal(sotls_p256_keygen(im, rnd, priv, got), 0);
		assert_int_equal(ref_mul(priv, NULL, want), 1);
		assert_memory_equal(got, want, 65);
	}
}

/* A point with a small x (x + p < 2^256), found with OpenSSL's square root. */
static int small_x_point(uint8_t out[65])
{
	EC_POINT *pt = EC_POINT_new(group);
	BIGNUM *x = BN_new();
	int found = 0;

	for (unsigned v = 1; v < 1000 && !found; v++) {
		BN_set_word(x, v);
		if (EC_POINT_set_compressed_coordinates(group, pt, x, 0, bn_ctx) == 1)
			found = EC_POINT_point2oct(group, pt, POINT_CONVERSION_UNCOMPRESSED, out, 65,
						   bn_ctx) == 65;
	}
	ERR_clear_error();
	EC_POINT_free(pt);
	BN_free(x);
	return found;
}

static void add_p(uint8_t coord[32])
{
	p256_fe a;
	p256_u128 c = 0;

	p256_load_be(a, coord);
	for (int i = 0; i < 4; i++) {
		c += (p256_u128)a[i] + P256_P[i];
		a[i] = (uint64_t)c;
		c >>= 64;
	}
	assert_true(c == 0);
	p256_store_be(coord, a);
}

static void test_edge_points(void **state)
{
	uint8_t priv[32], pub[65], pt[65], z[32], h[32] = {1}, sig[64];

	(void)state;
	EVP_PKEY_free(evp_gen(priv, pub));
	for (size_t l = 0; l < n_levels; l++) {
		const struct p256_impl *im = levels[l];

		assert_int_equal(sotls_p256_sign(im, priv, h, 32, NULL, 0, sig), 0);
		/* infinity, all zeros, and the encodings TLS does not use */
		memset(pt, 0, sizeof(pt));
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		assert_int_equal(sotls_p256_verify(im, pt, h, 32, sig), SOTLS_P256_ERR_POINT);
		pt[0] = 0x04;
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		memcpy(pt, pub, 65);
		for (int form = 0; form < 3; form++) {
			pt[0] = (uint8_t)(form == 0 ? 0x02 : form == 1 ? 0x03 : 0x06);
			assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		}
		/* off the curve: each coordinate nudged (y+1 has x on the curve but the
		 * wrong y; x+1 is as likely on the twist as not) */
		for (int c = 0; c < 64; c++) {
			memcpy(pt, pub, 65);
			pt[1 + (c % 64)] ^= (uint8_t)(1u << (c % 8));
			assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
			assert_int_equal(sotls_p256_verify(im, pt, h, 32, sig), SOTLS_P256_ERR_POINT);
		}
		/* coordinates >= p: x + p for a point with a small x; y = p, y = 2^256-1 */
		assert_true(small_x_point(pt));
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), 0);
		add_p(pt + 1);
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		memcpy(pt, pub, 65);
		p256_store_be(pt + 33, P256_P);
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		memset(pt + 33, 0xff, 32);
		assert_int_equal(sotls_p256_ecdh(im, priv, pt, z), SOTLS_P256_ERR_POINT);
		/* the generator and -G are valid peers */
		uint8_t one[32], g[65];
		small_scalar(1, one);
		assert_int_equal(sotls_p256_public_key(im, one, g), 0);
		assert_int_equal(sotls_p256_ecdh(im, priv, g, z), 0);
		assert_memory_equal(z, pub + 1, 32);
	}
}

static void test_edge_signatures(void **state)
{
	uint8_t priv[32], pub[65], h[32], sig[64], bad[64], n[32], n1[32];

	(void)state;
	EVP_PKEY_free(evp_gen(priv, pub));
	rng_fill(h, 32);
	n_plus(0, n);
	n_plus(-1, n1);
	for (size_t l = 0; l < n_levels; l++) {
		const struct p256_impl *im = levels[l];

		assert_int_equal(sotls_p256_sign(im, priv, h, 32, NULL, 0, sig), 0);
		/* SEC1 §4.1.4 step 1: r, s in [1, n-1] */
		const uint8_t *vals[] = {NULL, n, NULL};
		for (int which = 0; which < 2; which++)
			for (int v = 0; v < 3; v++) {
				memcpy(bad, sig, 64);
				if (v == 0)
					memset(bad + 32 * which, 0, 32);
				else if (v == 1)
					memcpy(bad + 32 * which, vals[1], 32);
				else
					memset(bad + 32 * which, 0xff, 32);
				assert_int_equal(sotls_p256_verify(im, pub, h, 32, bad),
						 SOTLS_P256_ERR_SIG_RANGE);
			}
		/* n-1 is in range (and wrong) */
		memcpy(bad, sig, 64);
		memcpy(bad + 32, n1, 32);
		assert_int_equal(sotls_p256_verify(im, pub, h, 32, bad), SOTLS_P256_ERR_SIG);
		/* r and s swapped; s replaced by n - s is valid (ECDSA's malleability,
		 * which verification accepts as OpenSSL does) */
		memcpy(bad, sig + 32, 32);
		memcpy(bad + 32, sig, 32);
		assert_int_equal(sotls_p256_verify(im, pub, h, 32, bad), SOTLS_P256_ERR_SIG);
		BIGNUM *s = BN_bin2bn(sig + 32, 32, NULL), *bn = BN_bin2bn(n, 32, NULL);
		BN_sub(s, bn, s);
		memcpy(bad, sig, 32);
		bn_to32(s, bad + 32);
		BN_free(s), BN_free(bn);
		assert_int_equal(sotls_p256_verify(im, pub, h, 32, bad), 0);
	}
}

int main(void)
{
	rng_seed_from_env("test_p256", 0x9256a11eull);
	const char *keys = getenv("SOTLS_P256_TEST_KEYS");
	if (keys != NULL && atoi(keys) >= 4)
		random_keys = atoi(keys);
	for (int l = 0; l < P256_LEVELS; l++) {
		const struct p256_impl *im = p256_impl_get((enum p256_level)l);

		if (im != NULL)
			levels[n_levels++] = im;
	}
	printf("test_p256: levels");
	for (size_t l = 0; l < n_levels; l++)
		printf(" %s", levels[l]->name);
	printf(" (default %s)\n", p256_impl_default()->name);
	group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	bn_ctx = BN_CTX_new();

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_field_vs_bignum),
		cmocka_unit_test(test_field_levels_carries),
		cmocka_unit_test(test_levels_agree),
		cmocka_unit_test(test_formulas),
		cmocka_unit_test(test_rfc6979),
		cmocka_unit_test(test_via_mbedtls),
		cmocka_unit_test(test_keys_vs_openssl),
		cmocka_unit_test(test_ecdh_vs_openssl),
		cmocka_unit_test(test_ecdsa_vs_openssl),
		cmocka_unit_test(test_edge_scalars),
		cmocka_unit_test(test_edge_points),
		cmocka_unit_test(test_edge_signatures),
	};
	const int rc = cmocka_run_group_tests(tests, NULL, NULL);
	BN_CTX_free(bn_ctx);
	EC_GROUP_free(group);
	return rc;
}

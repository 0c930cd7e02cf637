/*
 * ECDSA signing on P-384 and P-521: mbedTLS's ALT hook (lib/crypto/
 * ec_mbedtls_alt.c) with the arithmetic mod n in lib/crypto/ecdsa_scalar.c;
 * and the same generic path called directly on P-256, as sotls-bench-pk
 * does (all but RFC 6979's answers).
 *
 *   - RFC 6979's answers (A.2.6, A.2.7) through mbedTLS's deterministic
 *     wrapper, the handshake's path: the nonce's draw, P-521's 7-bit shift
 *     included, is RFC 6979's;
 *   - random keys, hashes of every length and nonces: the same (r, s) as
 *     SEC1 §4.1.3's formula in OpenSSL's arithmetic for the k that the old
 *     code drew (mbedtls_ecp_gen_privkey on the same RNG bytes), and OpenSSL
 *     verifies each signature;
 *   - the edge keys d = 1 and n - 1, and the edge hashes e = 0, e = n
 *     (reduced to 0), n - 1 and above n;
 *   - keys out of [1, n-1] refused; nonces out of range drawn again, and an
 *     RNG that gives none in range, or fails, refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <mbedtls/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>

#include "crypto_testutil.h"
#include "ec_mbedtls_alt.h"
#include "openssl_ec.h"

#define MAX_BYTES 66
#define RANDOM_KEYS 48

typedef int sign_fn(mbedtls_ecp_group *, mbedtls_mpi *, mbedtls_mpi *, const mbedtls_mpi *,
		    const unsigned char *, size_t, int (*)(void *, unsigned char *, size_t),
		    void *);

struct curve {
	mbedtls_ecp_group_id id;
	const char *group; /* OpenSSL's name */
	int nid;
	size_t bytes;
	int bits;
	sign_fn *sign;
};

/* The hook; and the generic path called directly on P-256, as
 * sotls-bench-pk measures it (the hook takes P-256 to sotls's own code). */
static const struct curve CURVES[] = {
	{MBEDTLS_ECP_DP_SECP384R1, "secp384r1", NID_secp384r1, 48, 384, mbedtls_ecdsa_sign},
	{MBEDTLS_ECP_DP_SECP521R1, "secp521r1", NID_secp521r1, 66, 521, mbedtls_ecdsa_sign},
	{MBEDTLS_ECP_DP_SECP256R1, "prime256v1", NID_X9_62_prime256v1, 32, 256,
	 sotls_ecdsa_sign_generic},
};
#define N_CURVES (sizeof(CURVES) / sizeof(CURVES[0]))

/* A replayable RNG: the bytes of buf in order, then failure. */
struct stream {
	uint8_t buf[4096];
	size_t pos, len;
};

static int stream_rng(void *ctx, unsigned char *out, size_t len)
{
	struct stream *st = ctx;

	if (st->len - st->pos < len)
		return -1;
	memcpy(out, st->buf + st->pos, len);
	st->pos += len;
	return 0;
}

static void stream_random(struct stream *st)
{
	rng_fill(st->buf, sizeof(st->buf));
	st->pos = 0;
	st->len = sizeof(st->buf);
}

static int test_rng(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	rng_fill(out, len);
	return 0;
}

/* A key pair on c: d and the public key (SEC1 uncompressed). */
struct key {
	mbedtls_ecp_keypair kp;
	uint8_t pub[1 + 2 * MAX_BYTES];
	size_t pub_len;
};

static void key_from_d(struct key *k, const struct curve *c, const uint8_t *d)
{
	mbedtls_ecp_keypair_init(&k->kp);
	assert_int_equal(mbedtls_ecp_read_key(c->id, &k->kp, d, c->bytes), 0);
	assert_int_equal(mbedtls_ecp_keypair_calc_public(&k->kp, test_rng, NULL), 0);
	assert_int_equal(mbedtls_ecp_point_write_binary(&k->kp.MBEDTLS_PRIVATE(grp),
							&k->kp.MBEDTLS_PRIVATE(Q),
							MBEDTLS_ECP_PF_UNCOMPRESSED, &k->pub_len,
							k->pub, sizeof(k->pub)),
			 0);
}

/* n of c as big-endian bytes, shifted left by shift bits, plus add. */
static BIGNUM *order_shifted(const struct curve *c, int shift, int add)
{
	EC_GROUP *g = EC_GROUP_new_by_curve_name(c->nid);
	BIGNUM *x = BN_dup(EC_GROUP_get0_order(g));

	assert_non_null(x);
	assert_int_equal(BN_lshift(x, x, shift), 1);
	assert_int_equal(add < 0 ? BN_sub_word(x, (BN_ULONG)-add) : BN_add_word(x, (BN_ULONG)add),
			 1);
	EC_GROUP_free(g);
	return x;
}

/*
 * SEC1 §4.1.3 steps 1-6 in OpenSSL's arithmetic for a given k: r = x(kG)
 * mod n, e = the hash's leftmost bits(n) bits, s = k^-1 (e + r d) mod n;
 * r || s into sig.
 */
static void reference_sign(const struct curve *c, const uint8_t *d, const uint8_t *k,
			   const uint8_t *hash, size_t hlen, uint8_t *sig)
{
	EC_GROUP *g = EC_GROUP_new_by_curve_name(c->nid);
	BN_CTX *ctx = BN_CTX_new();
	EC_POINT *R = EC_POINT_new(g);
	BIGNUM *bd = BN_bin2bn(d, (int)c->bytes, NULL), *bk = BN_bin2bn(k, (int)c->bytes, NULL);
	BIGNUM *x = BN_new(), *r = BN_new(), *e = BN_new(), *t = BN_new(), *s = BN_new();
	const BIGNUM *n = EC_GROUP_get0_order(g);
	const size_t use = hlen < c->bytes ? hlen : c->bytes;
	const int bits = BN_num_bits(n);

	assert_non_null(BN_bin2bn(hash, (int)use, e));
	if ((int)use * 8 > bits)
		assert_int_equal(BN_rshift(e, e, (int)use * 8 - bits), 1);
	assert_int_equal(EC_POINT_mul(g, R, bk, NULL, NULL, ctx), 1);
	assert_int_equal(EC_POINT_get_affine_coordinates(g, R, x, NULL, ctx), 1);
	assert_int_equal(BN_nnmod(r, x, n, ctx), 1);
	assert_int_equal(BN_nnmod(e, e, n, ctx), 1);
	assert_int_equal(BN_mod_mul(t, r, bd, n, ctx), 1);
	assert_int_equal(BN_mod_add(t, t, e, n, ctx), 1);
	assert_non_null(BN_mod_inverse(s, bk, n, ctx));
	assert_int_equal(BN_mod_mul(s, s, t, n, ctx), 1);
	assert_int_equal(BN_bn2binpad(r, sig, (int)c->bytes), (int)c->bytes);
	assert_int_equal(BN_bn2binpad(s, sig + c->bytes, (int)c->bytes), (int)c->bytes);
	BN_free(x);
	BN_free(r);
	BN_free(e);
	BN_free(t);
	BN_free(s);
	BN_clear_free(bd);
	BN_clear_free(bk);
	EC_POINT_free(R);
	BN_CTX_free(ctx);
	EC_GROUP_free(g);
}

static void openssl_verifies(const struct curve *c, const struct key *k, const uint8_t *hash,
			     size_t hlen, const uint8_t *sig)
{
	uint8_t der[16 + 2 * MAX_BYTES];
	const size_t der_len = openssl_ec_sig_to_der(sig, c->bytes, der, sizeof(der));
	EVP_PKEY *pk = openssl_ec_key(c->group, NULL, 0, k->pub, k->pub_len);

	assert_non_null(pk);
	assert_int_equal(openssl_ec_verify_der(pk, hash, hlen, der, der_len), 0);
	EVP_PKEY_free(pk);
}

/*
 * Signs hash with k's key and st's bytes through the hook; checks (r, s)
 * against reference_sign for the k that mbedtls_ecp_gen_privkey draws from
 * the same bytes, that the hook drew no more, and with OpenSSL's
 * verification.
 */
static void sign_and_check(const struct curve *c, struct key *k, const uint8_t *hash,
			   size_t hlen, struct stream *st)
{
	mbedtls_ecp_group *grp = &k->kp.MBEDTLS_PRIVATE(grp);
	uint8_t d[MAX_BYTES], nonce[MAX_BYTES], got[2 * MAX_BYTES], want[2 * MAX_BYTES];
	struct stream copy = *st;
	mbedtls_mpi r, s, kk;

	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	mbedtls_mpi_init(&kk);
	assert_int_equal(
		c->sign(grp, &r, &s, &k->kp.MBEDTLS_PRIVATE(d), hash, hlen, stream_rng, st), 0);
	assert_int_equal(mbedtls_mpi_write_binary(&r, got, c->bytes), 0);
	assert_int_equal(mbedtls_mpi_write_binary(&s, got + c->bytes, c->bytes), 0);

	assert_int_equal(mbedtls_ecp_gen_privkey(grp, &kk, stream_rng, &copy), 0);
	/* The hook took from f_rng the nonce's bytes and nothing else (the
	 * point multiplication's blinding comes from getrandom). */
	assert_int_equal(st->pos, copy.pos);
	assert_int_equal(mbedtls_mpi_write_binary(&kk, nonce, c->bytes), 0);
	assert_int_equal(mbedtls_mpi_write_binary(&k->kp.MBEDTLS_PRIVATE(d), d, c->bytes), 0);
	reference_sign(c, d, nonce, hash, hlen, want);
	assert_memory_equal(got, want, 2 * c->bytes);

	openssl_verifies(c, k, hash, hlen, got);
	assert_int_equal(mbedtls_ecdsa_verify(grp, hash, hlen, &k->kp.MBEDTLS_PRIVATE(Q), &r, &s),
			 0);
	mbedtls_mpi_free(&r);
	mbedtls_mpi_free(&s);
	mbedtls_mpi_free(&kk);
}

/* ------------------------------------------------------------ RFC 6979 */

static void test_rfc6979(void **state)
{
	static const struct {
		const char *d, *r, *s;
		const EVP_MD *(*md)(void);
		mbedtls_md_type_t mbed_md;
	} V[] = {
		/* A.2.6, SHA-384, "sample" */
		{"6B9D3DAD2E1B8C1C05B19875B6659F4DE23C3B667BF297BA9AA47740787137D8"
		 "96D5724E4C70A825F872C9EA60D2EDF5",
		 "94EDBB92A5ECB8AAD4736E56C691916B3F88140666CE9FA73D64C4EA95AD133C"
		 "81A648152E44ACF96E36DD1E80FABE46",
		 "99EF4AEB15F178CEA1FE40DB2603138F130E740A19624526203B6351D0A3A94F"
		 "A329C145786E679E7B82C71A38628AC8",
		 EVP_sha384, MBEDTLS_MD_SHA384},
		/* A.2.7, SHA-512, "sample" */
		{"00FAD06DAA62BA3B25D2FB40133DA757205DE67F5BB0018FEE8C86E1B68C7E75"
		 "CAA896EB32F1F47C70855836A6D16FCC1466F6D8FBEC67DB89EC0C08B0E996B8"
		 "3538",
		 "00C328FAFCBD79DD77850370C46325D987CB525569FB63C5D3BC53950E6D4C5F"
		 "174E25A1EE9017B5D450606ADD152B534931D7D4E8455CC91F9B15BF05EC36E3"
		 "77FA",
		 "00617CCE7CF5064806C467F678D3B4080D6F1CC50AF26CA209417308281B68AF"
		 "282623EAA63E5B5C0723D8B8C37FF0777B1A20F8CCB1DCCC43997F1EE0E44DA4"
		 "A67A",
		 EVP_sha512, MBEDTLS_MD_SHA512},
	};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const struct curve *c = &CURVES[i];
		uint8_t d[MAX_BYTES], want[2 * MAX_BYTES], got[2 * MAX_BYTES], h[64], der[160];
		unsigned int hl = sizeof(h);
		size_t der_len = 0;
		struct key k;
		mbedtls_mpi r, s;

		assert_int_equal(hex_decode(V[i].d, d, sizeof(d)), c->bytes);
		assert_int_equal(hex_decode(V[i].r, want, c->bytes), c->bytes);
		assert_int_equal(hex_decode(V[i].s, want + c->bytes, c->bytes), c->bytes);
		assert_int_equal(EVP_Digest("sample", 6, h, &hl, V[i].md(), NULL), 1);
		key_from_d(&k, c, d);
		mbedtls_ecp_group *grp = &k.kp.MBEDTLS_PRIVATE(grp);
		mbedtls_mpi_init(&r);
		mbedtls_mpi_init(&s);
		const mbedtls_mpi *d_mpi = &k.kp.MBEDTLS_PRIVATE(d);
		assert_int_equal(mbedtls_ecdsa_sign_det_ext(grp, &r, &s, d_mpi, h, hl,
							    V[i].mbed_md, test_rng, NULL),
				 0);
		assert_int_equal(mbedtls_mpi_write_binary(&r, got, c->bytes), 0);
		assert_int_equal(mbedtls_mpi_write_binary(&s, got + c->bytes, c->bytes), 0);
		assert_memory_equal(got, want, 2 * c->bytes);
		openssl_verifies(c, &k, h, hl, got);

		/* The same as DER, as the handshake writes it. */
		assert_int_equal(mbedtls_ecdsa_write_signature(&k.kp, V[i].mbed_md, h, hl, der,
							       sizeof(der), &der_len, test_rng,
							       NULL),
				 0);
		EVP_PKEY *pk = openssl_ec_key(c->group, NULL, 0, k.pub, k.pub_len);
		assert_non_null(pk);
		assert_int_equal(openssl_ec_verify_der(pk, h, hl, der, der_len), 0);
		EVP_PKEY_free(pk);
		mbedtls_mpi_free(&r);
		mbedtls_mpi_free(&s);
		mbedtls_ecp_keypair_free(&k.kp);
	}
}

/* ----------------------------------------------- random keys and hashes */

static void test_random(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_CURVES; i++) {
		const struct curve *c = &CURVES[i];

		for (int j = 0; j < RANDOM_KEYS; j++) {
			uint8_t d[MAX_BYTES], h[80];
			struct stream st;
			struct key k;
			mbedtls_ecp_keypair gen;
			/* Every length, below, at and above n's. */
			const size_t hlen = 1 + rng_below(sizeof(h));

			mbedtls_ecp_keypair_init(&gen);
			assert_int_equal(mbedtls_ecp_gen_key(c->id, &gen, test_rng, NULL), 0);
			assert_int_equal(mbedtls_mpi_write_binary(&gen.MBEDTLS_PRIVATE(d), d,
								  c->bytes),
					 0);
			mbedtls_ecp_keypair_free(&gen);
			key_from_d(&k, c, d);
			rng_fill(h, hlen);
			stream_random(&st);
			sign_and_check(c, &k, h, hlen, &st);
			mbedtls_ecp_keypair_free(&k.kp);
		}
	}
}

/* ------------------------------------------------------------ the edges */

static void test_edge_keys(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_CURVES; i++) {
		const struct curve *c = &CURVES[i];
		BIGNUM *nm1 = order_shifted(c, 0, -1);
		uint8_t d[MAX_BYTES] = {0}, h[64];

		/* d = 1 (Q = G) and d = n - 1 (Q = -G). */
		for (int e = 0; e < 2; e++) {
			struct stream st;
			struct key k;

			if (e == 0) {
				memset(d, 0, sizeof(d));
				d[c->bytes - 1] = 1;
			} else {
				const int len = BN_bn2binpad(nm1, d, (int)c->bytes);
				assert_int_equal(len, (int)c->bytes);
			}
			key_from_d(&k, c, d);
			for (int j = 0; j < 4; j++) {
				rng_fill(h, sizeof(h));
				stream_random(&st);
				sign_and_check(c, &k, h, sizeof(h), &st);
			}
			mbedtls_ecp_keypair_free(&k.kp);
		}
		BN_free(nm1);
	}
}

static void test_edge_hashes(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_CURVES; i++) {
		const struct curve *c = &CURVES[i];
		/* A hash of n's length is read from its leftmost bits(n) bits:
		 * the value v is the hash v << shift. */
		const int shift = (int)(8 * c->bytes) - c->bits;
		uint8_t d[MAX_BYTES], h[MAX_BYTES];
		struct stream st;
		struct key k;
		mbedtls_ecp_keypair gen;

		mbedtls_ecp_keypair_init(&gen);
		assert_int_equal(mbedtls_ecp_gen_key(c->id, &gen, test_rng, NULL), 0);
		assert_int_equal(mbedtls_mpi_write_binary(&gen.MBEDTLS_PRIVATE(d), d, c->bytes), 0);
		mbedtls_ecp_keypair_free(&gen);
		key_from_d(&k, c, d);

		/* e = 0; e = n, reduced to 0; e = n - 1; e = n + 1, reduced to 1;
		 * all ones, the largest hash, reduced. */
		memset(h, 0, sizeof(h));
		stream_random(&st);
		sign_and_check(c, &k, h, c->bytes, &st);
		for (int add = -1; add <= 1; add++) {
			BIGNUM *v = order_shifted(c, shift, add * (1 << shift));

			assert_int_equal(BN_bn2binpad(v, h, (int)c->bytes), (int)c->bytes);
			stream_random(&st);
			sign_and_check(c, &k, h, c->bytes, &st);
			BN_free(v);
		}
		memset(h, 0xff, sizeof(h));
		stream_random(&st);
		sign_and_check(c, &k, h, c->bytes, &st);
		mbedtls_ecp_keypair_free(&k.kp);
	}
}

/* SEC1 §4.1.3: d in [1, n-1]; anything else, wider than n included, is
 * refused before any nonce is drawn. */
static void test_bad_keys(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_CURVES; i++) {
		const struct curve *c = &CURVES[i];
		mbedtls_ecp_group grp;
		mbedtls_mpi d, r, s;
		struct stream st;
		uint8_t h[32] = {1};

		mbedtls_ecp_group_init(&grp);
		mbedtls_mpi_init(&d);
		mbedtls_mpi_init(&r);
		mbedtls_mpi_init(&s);
		assert_int_equal(mbedtls_ecp_group_load(&grp, c->id), 0);
		for (int bad = 0; bad < 6; bad++) {
			switch (bad) {
			case 0: /* 0 */
				assert_int_equal(mbedtls_mpi_lset(&d, 0), 0);
				break;
			case 1: /* n */
				assert_int_equal(mbedtls_mpi_copy(&d, &grp.N), 0);
				break;
			case 2: /* n + 1 */
				assert_int_equal(mbedtls_mpi_add_int(&d, &grp.N, 1), 0);
				break;
			case 3: /* -1 */
				assert_int_equal(mbedtls_mpi_lset(&d, -1), 0);
				break;
			case 4: /* 2^576 + 1: small below n's limbs, a limb above */
				assert_int_equal(mbedtls_mpi_lset(&d, 1), 0);
				assert_int_equal(mbedtls_mpi_set_bit(&d, 576, 1), 0);
				break;
			case 5: /* -(n - 1) */
				assert_int_equal(mbedtls_mpi_sub_int(&d, &grp.N, 1), 0);
				d.MBEDTLS_PRIVATE(s) = -1;
				break;
			}
			stream_random(&st);
			assert_int_equal(c->sign(&grp, &r, &s, &d, h, sizeof(h), stream_rng, &st),
					 MBEDTLS_ERR_ECP_INVALID_KEY);
			assert_int_equal(st.pos, 0);
		}
		mbedtls_ecp_group_free(&grp);
		mbedtls_mpi_free(&d);
		mbedtls_mpi_free(&r);
		mbedtls_mpi_free(&s);
	}
}

/* A nonce out of [1, n-1] is drawn again, as mbedtls_ecp_gen_privkey does
 * (so RFC 6979's sequence stays the same); an RNG that gives nothing in
 * range, or fails, makes signing fail. */
static void test_nonce_redraw(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_CURVES; i++) {
		const struct curve *c = &CURVES[i];
		uint8_t d[MAX_BYTES] = {0}, h[48];
		struct stream st;
		struct key k;
		mbedtls_mpi r, s;

		d[c->bytes - 1] = 7;
		key_from_d(&k, c, d);
		mbedtls_ecp_group *grp = &k.kp.MBEDTLS_PRIVATE(grp);
		rng_fill(h, sizeof(h));

		/* All ones (above n, P-521's too after its shift), then zero,
		 * then n exactly, then random bytes. */
		stream_random(&st);
		memset(st.buf, 0xff, c->bytes);
		memset(st.buf + c->bytes, 0, c->bytes);
		BIGNUM *n = order_shifted(c, (int)(8 * c->bytes) - c->bits, 0);
		assert_int_equal(BN_bn2binpad(n, st.buf + 2 * c->bytes, (int)c->bytes),
				 (int)c->bytes);
		BN_free(n);
		sign_and_check(c, &k, h, sizeof(h), &st);

		mbedtls_mpi_init(&r);
		mbedtls_mpi_init(&s);
		memset(st.buf, 0, sizeof(st.buf));
		st.pos = 0;
		assert_int_equal(c->sign(grp, &r, &s, &k.kp.MBEDTLS_PRIVATE(d), h, sizeof(h),
					 stream_rng, &st),
				 MBEDTLS_ERR_ECP_RANDOM_FAILED);
		st.pos = st.len;
		assert_int_equal(c->sign(grp, &r, &s, &k.kp.MBEDTLS_PRIVATE(d), h, sizeof(h),
					 stream_rng, &st),
				 MBEDTLS_ERR_ECP_RANDOM_FAILED);
		mbedtls_mpi_free(&r);
		mbedtls_mpi_free(&s);
		mbedtls_ecp_keypair_free(&k.kp);
	}
}

int main(void)
{
	rng_seed_from_env("test_ecdsa", 0xecd5a384521ull);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc6979),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_edge_keys),
		cmocka_unit_test(test_edge_hashes),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_nonce_redraw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

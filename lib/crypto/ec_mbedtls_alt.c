/*
 * mbedTLS's ECDH / ECDSA ALT functions (see ec_mbedtls_alt.h): P-256 in
 * sotls's own code, X25519 in libsodium, the rest in mbedTLS's generic ECP
 * (signing's arithmetic mod n in ecdsa_scalar.c).
 *
 * mbedTLS calls mbedtls_ecdsa_sign from its deterministic wrapper with an
 * HMAC-DRBG seeded from the key and the hash (MBEDTLS_ECDSA_DETERMINISTIC,
 * which the TLS code uses): its output is RFC 6979's nonce sequence, and
 * mbedTLS's documentation of MBEDTLS_ECDSA_SIGN_ALT asks an implementation to
 * use that RNG for the ephemeral key only. Both signing paths do exactly
 * that; the generic one blinds mbedtls_ecp_mul from getrandom instead (the
 * wrapper passes its f_rng_blind no further than a SIGN_ALT).
 */
#include "ec_mbedtls_alt.h"

#include "ct_valgrind.h"
#include "ecdsa_scalar.h"
#include "mbedtls_internals.h"
#include "p256.h"
#include "util.h"

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/platform_util.h>
#include <sodium.h>
#include <string.h>

typedef int (*rng_fn)(void *, unsigned char *, size_t);

/* An mbedTLS private key as 32 big-endian bytes (bad key if it does not fit). */
static int mpi_to32(const mbedtls_mpi *x, uint8_t out[32])
{
	if (mbedtls_mpi_cmp_int(x, 0) < 0 || mbedtls_mpi_write_binary(x, out, 32) != 0)
		return MBEDTLS_ERR_ECP_INVALID_KEY;
	return 0;
}

/* An affine point (Z = 1, as mbedTLS reads peers) as SEC1 uncompressed bytes. */
static int point_to65(const mbedtls_ecp_group *grp, const mbedtls_ecp_point *q, uint8_t out[65])
{
	size_t len = 0;

	if (mbedtls_mpi_cmp_int(sotls_mbed_point_z(q), 1) != 0 ||
	    mbedtls_ecp_point_write_binary(grp, q, MBEDTLS_ECP_PF_UNCOMPRESSED, &len, out, 65) != 0 ||
	    len != 65)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	return 0;
}

/* ------------------------------------------------ mbedTLS's generic ECP */

int sotls_ecp_gen_public_generic(mbedtls_ecp_group *grp, mbedtls_mpi *d, mbedtls_ecp_point *Q,
				 rng_fn f_rng, void *p_rng)
{
	int ret = mbedtls_ecp_gen_privkey(grp, d, f_rng, p_rng);

	return ret != 0 ? ret : mbedtls_ecp_mul(grp, Q, d, &grp->G, f_rng, p_rng);
}

int sotls_ecp_compute_shared_generic(mbedtls_ecp_group *grp, mbedtls_mpi *z,
				     const mbedtls_ecp_point *Q, const mbedtls_mpi *d,
				     rng_fn f_rng, void *p_rng)
{
	mbedtls_ecp_point p;
	int ret;

	mbedtls_ecp_point_init(&p);
	ret = mbedtls_ecp_mul(grp, &p, d, Q, f_rng, p_rng);
	/* SEC1 §3.3.1 step 2: a result at infinity is an error. */
	if (ret == 0 && mbedtls_ecp_is_zero(&p))
		ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	if (ret == 0)
		ret = mbedtls_mpi_copy(z, sotls_mbed_point_x(&p));
	mbedtls_ecp_point_free(&p);
	return ret;
}

/* SEC1 §4.1.3 step 5 / §4.1.4 step 3: the hash's leftmost nbits bits, mod n. */
static int hash_to_mpi(const mbedtls_ecp_group *grp, mbedtls_mpi *e, const unsigned char *buf,
		       size_t blen)
{
	const size_t nbytes = (grp->nbits + 7) / 8, use = blen < nbytes ? blen : nbytes;
	int ret = mbedtls_mpi_read_binary(e, buf, use);

	if (ret == 0 && use * 8 > grp->nbits)
		ret = mbedtls_mpi_shift_r(e, use * 8 - grp->nbits);
	if (ret == 0 && mbedtls_mpi_cmp_mpi(e, &grp->N) >= 0)
		ret = mbedtls_mpi_sub_mpi(e, e, &grp->N);
	return ret;
}

/* 1 <= x < n */
static int in_range(const mbedtls_ecp_group *grp, const mbedtls_mpi *x)
{
	return mbedtls_mpi_cmp_int(x, 1) >= 0 && mbedtls_mpi_cmp_mpi(x, &grp->N) < 0;
}

#define SIGN_TRIES 10

/* mbedtls_ecp_mul's coordinate blinding: fresh on every signature, as
 * mbedTLS's own deterministic signing draws it from the caller's RNG. */
static int blinding_rng(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	return sotls_getrandom(out, len) == 0 ? 0 : MBEDTLS_ERR_ECP_RANDOM_FAILED;
}

/*
 * SEC1 §4.1.3 on mbedTLS's ECP for the point, with the arithmetic mod n in
 * ecdsa_scalar.c, constant time in d and k. k·G is mbedTLS's: a comb with
 * constant-time table reads and projective coordinates randomised (its
 * blinding); its field arithmetic branches on those randomised coordinates,
 * which is why tests/unit/test_ecdsa_ct.c leaves it out.
 */
int sotls_ecdsa_sign_generic(mbedtls_ecp_group *grp, mbedtls_mpi *r, mbedtls_mpi *s,
			     const mbedtls_mpi *d, const unsigned char *buf, size_t blen,
			     rng_fn f_rng, void *p_rng)
{
	struct sotls_ecdsa_order o;
	uint64_t dl[SOTLS_ECDSA_MAX_LIMBS], k[SOTLS_ECDSA_MAX_LIMBS], el[SOTLS_ECDSA_MAX_LIMBS],
		rl[SOTLS_ECDSA_MAX_LIMBS], sl[SOTLS_ECDSA_MAX_LIMBS];
	mbedtls_ecp_point R;
	mbedtls_mpi km, e;
	int ret;

	/* Montgomery curves have no ECDSA; the key is in [1, n-1] (SEC1 §4.1.3). */
	if (!mbedtls_ecdsa_can_do(grp->id) || mbedtls_mpi_bitlen(&grp->N) == 0 ||
	    sotls_ecdsa_order_init(&o, &grp->N) != 0)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	if (!sotls_ecdsa_scalar_load(&o, dl, d)) {
		mbedtls_platform_zeroize(dl, sizeof(dl));
		return MBEDTLS_ERR_ECP_INVALID_KEY;
	}
	mbedtls_ecp_point_init(&R);
	mbedtls_mpi_init(&km);
	mbedtls_mpi_init(&e);
	/* Step 5: e (hash_to_mpi leaves it below n). */
	if ((ret = hash_to_mpi(grp, &e, buf, blen)) == 0)
		(void)sotls_ecdsa_scalar_load(&o, el, &e);
	for (int tries = 0; ret == 0; tries++) {
		if (tries == SIGN_TRIES) {
			ret = MBEDTLS_ERR_ECP_RANDOM_FAILED;
			break;
		}
		/* Steps 1-3: k, R = k·G, r = x_R mod n (non-zero); x_R is
		 * published as r. */
		if ((ret = sotls_ecdsa_nonce(&o, k, f_rng, p_rng)) != 0 ||
		    (ret = sotls_ecdsa_scalar_to_mpi(&o, &km, k)) != 0 ||
		    (ret = mbedtls_ecp_mul(grp, &R, &km, &grp->G, blinding_rng, NULL)) != 0)
			break;
		const mbedtls_mpi *x = sotls_mbed_point_x(&R);
		size_t x_limbs;
		const mbedtls_mpi_uint *xl = sotls_mbed_mpi_limbs(x, &x_limbs);
		SOTLS_CT_PUBLIC(x, sizeof(*x));
		SOTLS_CT_PUBLIC(xl, x_limbs * sizeof(*xl));
		if ((ret = mbedtls_mpi_mod_mpi(r, x, &grp->N)) != 0)
			break;
		if (mbedtls_mpi_cmp_int(r, 0) == 0)
			continue;
		/* Step 6: s = k^-1 (e + r·d) mod n (non-zero). */
		(void)sotls_ecdsa_scalar_load(&o, rl, r);
		sotls_ecdsa_s(&o, sl, k, dl, el, rl);
		ret = sotls_ecdsa_scalar_to_mpi(&o, s, sl);
		if (ret == 0 && mbedtls_mpi_cmp_int(s, 0) == 0)
			continue;
		break;
	}
	mbedtls_ecp_point_free(&R);
	mbedtls_mpi_free(&km);
	mbedtls_mpi_free(&e);
	mbedtls_platform_zeroize(dl, sizeof(dl));
	mbedtls_platform_zeroize(k, sizeof(k));
	return ret;
}

int sotls_ecdsa_verify_generic(mbedtls_ecp_group *grp, const unsigned char *buf, size_t blen,
			       const mbedtls_ecp_point *Q, const mbedtls_mpi *r,
			       const mbedtls_mpi *s)
{
	mbedtls_ecp_point R;
	mbedtls_mpi e, w, u1, u2;
	int ret;

	if (!mbedtls_ecdsa_can_do(grp->id) || mbedtls_mpi_bitlen(&grp->N) == 0)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	/* SEC1 §4.1.4 step 1: r, s in [1, n-1]. */
	if (!in_range(grp, r) || !in_range(grp, s))
		return MBEDTLS_ERR_ECP_VERIFY_FAILED;
	mbedtls_ecp_point_init(&R);
	mbedtls_mpi_init(&e);
	mbedtls_mpi_init(&w);
	mbedtls_mpi_init(&u1);
	mbedtls_mpi_init(&u2);
	/* Steps 3-8: R = (e/s)·G + (r/s)·Q, not infinity, x_R mod n == r. */
	if ((ret = hash_to_mpi(grp, &e, buf, blen)) == 0 &&
	    (ret = mbedtls_mpi_inv_mod(&w, s, &grp->N)) == 0 &&
	    (ret = mbedtls_mpi_mul_mpi(&u1, &e, &w)) == 0 &&
	    (ret = mbedtls_mpi_mod_mpi(&u1, &u1, &grp->N)) == 0 &&
	    (ret = mbedtls_mpi_mul_mpi(&u2, r, &w)) == 0 &&
	    (ret = mbedtls_mpi_mod_mpi(&u2, &u2, &grp->N)) == 0 &&
	    (ret = mbedtls_ecp_muladd(grp, &R, &u1, &grp->G, &u2, Q)) == 0) {
		if (mbedtls_ecp_is_zero(&R))
			ret = MBEDTLS_ERR_ECP_VERIFY_FAILED;
		/* u1 is spent: it takes x_R mod n. */
		else if ((ret = mbedtls_mpi_mod_mpi(&u1, sotls_mbed_point_x(&R), &grp->N)) == 0 &&
			 mbedtls_mpi_cmp_mpi(&u1, r) != 0)
			ret = MBEDTLS_ERR_ECP_VERIFY_FAILED;
	}
	mbedtls_ecp_point_free(&R);
	mbedtls_mpi_free(&e);
	mbedtls_mpi_free(&w);
	mbedtls_mpi_free(&u1);
	mbedtls_mpi_free(&u2);
	return ret;
}

/* ------------------------------------------------------------ X25519 */

/* RFC 7748 §5: a private scalar with the low 3 bits clear and bit 254 set;
 * mbedTLS keeps it (clamped, as mbedtls_ecp_gen_privkey does) little endian. */
static int x25519_gen_public(mbedtls_ecp_group *grp, mbedtls_mpi *d, mbedtls_ecp_point *Q,
			     rng_fn f_rng, void *p_rng)
{
	uint8_t sk[32], pk[32];
	int ret;

	if (sodium_init() < 0)
		return MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE;
	if (f_rng == NULL || f_rng(p_rng, sk, sizeof(sk)) != 0) {
		ret = MBEDTLS_ERR_ECP_RANDOM_FAILED;
		goto out;
	}
	sk[0] &= 248;
	sk[31] &= 127;
	sk[31] |= 64;
	ret = crypto_scalarmult_base(pk, sk) != 0 ? MBEDTLS_ERR_ECP_BAD_INPUT_DATA : 0;
	if (ret == 0)
		ret = mbedtls_mpi_read_binary_le(d, sk, sizeof(sk));
	if (ret == 0)
		ret = mbedtls_ecp_point_read_binary(grp, Q, pk, sizeof(pk));
out:
	sodium_memzero(sk, sizeof(sk));
	return ret;
}

static int x25519_compute_shared(mbedtls_mpi *z, const mbedtls_ecp_point *Q,
				 const mbedtls_mpi *d)
{
	uint8_t sk[32], pk[32], out[32];
	int ret;

	if (sodium_init() < 0)
		return MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE;
	if (mbedtls_mpi_write_binary_le(d, sk, sizeof(sk)) != 0)
		return MBEDTLS_ERR_ECP_INVALID_KEY;
	if (mbedtls_mpi_write_binary_le(sotls_mbed_point_x(Q), pk, sizeof(pk)) != 0) {
		ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
		goto out;
	}
	/* RFC 7748 §6.1: an all-zero result (a low-order peer point) is refused,
	 * as mbedTLS's own X25519 refuses a result at infinity. */
	ret = crypto_scalarmult(out, sk, pk) != 0 ? MBEDTLS_ERR_ECP_BAD_INPUT_DATA : 0;
	if (ret == 0)
		ret = mbedtls_mpi_read_binary_le(z, out, sizeof(out));
out:
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(out, sizeof(out));
	return ret;
}

/* ------------------------------------------------------ the ALT hooks */

int mbedtls_ecdh_gen_public(mbedtls_ecp_group *grp, mbedtls_mpi *d, mbedtls_ecp_point *Q,
			    rng_fn f_rng, void *p_rng)
{
	if (grp->id == MBEDTLS_ECP_DP_CURVE25519)
		return x25519_gen_public(grp, d, Q, f_rng, p_rng);
	if (grp->id != MBEDTLS_ECP_DP_SECP256R1)
		return sotls_ecp_gen_public_generic(grp, d, Q, f_rng, p_rng);

	uint8_t rnd[SOTLS_P256_KEYGEN_RANDOM], priv[32], pub[65];
	int ret;

	if (f_rng == NULL || f_rng(p_rng, rnd, sizeof(rnd)) != 0)
		ret = MBEDTLS_ERR_ECP_RANDOM_FAILED;
	else if (sotls_p256_keygen(NULL, rnd, priv, pub) != SOTLS_P256_OK)
		ret = MBEDTLS_ERR_ECP_INVALID_KEY;
	else if ((ret = mbedtls_mpi_read_binary(d, priv, sizeof(priv))) == 0)
		ret = mbedtls_ecp_point_read_binary(grp, Q, pub, sizeof(pub));
	mbedtls_platform_zeroize(rnd, sizeof(rnd));
	mbedtls_platform_zeroize(priv, sizeof(priv));
	return ret;
}

int mbedtls_ecdh_compute_shared(mbedtls_ecp_group *grp, mbedtls_mpi *z,
				const mbedtls_ecp_point *Q, const mbedtls_mpi *d, rng_fn f_rng,
				void *p_rng)
{
	if (grp->id == MBEDTLS_ECP_DP_CURVE25519)
		return x25519_compute_shared(z, Q, d);
	if (grp->id != MBEDTLS_ECP_DP_SECP256R1)
		return sotls_ecp_compute_shared_generic(grp, z, Q, d, f_rng, p_rng);

	uint8_t priv[32], pub[65], shared[32];
	int ret = mpi_to32(d, priv);

	if (ret == 0)
		ret = point_to65(grp, Q, pub);
	if (ret == 0) {
		switch (sotls_p256_ecdh(NULL, priv, pub, shared)) {
		case SOTLS_P256_OK:
			ret = mbedtls_mpi_read_binary(z, shared, sizeof(shared));
			break;
		case SOTLS_P256_ERR_KEY:
			ret = MBEDTLS_ERR_ECP_INVALID_KEY;
			break;
		default:
			ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
		}
	}
	mbedtls_platform_zeroize(priv, sizeof(priv));
	mbedtls_platform_zeroize(shared, sizeof(shared));
	return ret;
}

int mbedtls_ecdsa_sign(mbedtls_ecp_group *grp, mbedtls_mpi *r, mbedtls_mpi *s,
		       const mbedtls_mpi *d, const unsigned char *buf, size_t blen, rng_fn f_rng,
		       void *p_rng)
{
	if (grp->id != MBEDTLS_ECP_DP_SECP256R1)
		return sotls_ecdsa_sign_generic(grp, r, s, d, buf, blen, f_rng, p_rng);

	uint8_t priv[32], k[32], sig[64];
	int ret = mpi_to32(d, priv);

	/* The nonce is f_rng's, drawn as mbedtls_ecp_gen_privkey draws it (32
	 * bytes, refused outside [1, n-1]): from mbedTLS's deterministic wrapper
	 * that is RFC 6979's k, from a real RNG a random k. */
	if (ret == 0 && f_rng == NULL)
		ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	for (int tries = 0; ret == 0; tries++) {
		if (tries == SIGN_TRIES || f_rng(p_rng, k, sizeof(k)) != 0) {
			ret = MBEDTLS_ERR_ECP_RANDOM_FAILED;
			break;
		}
		const int rc = sotls_p256_sign_nonce(NULL, priv, buf, blen, k, sig);
		if (rc == SOTLS_P256_ERR_NONCE)
			continue;
		if (rc == SOTLS_P256_ERR_KEY)
			ret = MBEDTLS_ERR_ECP_INVALID_KEY;
		else if ((ret = mbedtls_mpi_read_binary(r, sig, 32)) == 0)
			ret = mbedtls_mpi_read_binary(s, sig + 32, 32);
		break;
	}
	mbedtls_platform_zeroize(priv, sizeof(priv));
	mbedtls_platform_zeroize(k, sizeof(k));
	return ret;
}

int mbedtls_ecdsa_verify(mbedtls_ecp_group *grp, const unsigned char *buf, size_t blen,
			 const mbedtls_ecp_point *Q, const mbedtls_mpi *r, const mbedtls_mpi *s)
{
	if (grp->id != MBEDTLS_ECP_DP_SECP256R1)
		return sotls_ecdsa_verify_generic(grp, buf, blen, Q, r, s);

	uint8_t pub[65], sig[64];

	/* SEC1 §4.1.4 step 1: r and s in [1, n-1]; anything wider fails here. */
	if (mbedtls_mpi_cmp_int(r, 0) <= 0 || mbedtls_mpi_cmp_int(s, 0) <= 0 ||
	    mbedtls_mpi_write_binary(r, sig, 32) != 0 || mbedtls_mpi_write_binary(s, sig + 32, 32) != 0)
		return MBEDTLS_ERR_ECP_VERIFY_FAILED;
	if (point_to65(grp, Q, pub) != 0)
		return MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
	switch (sotls_p256_verify(NULL, pub, buf, blen, sig)) {
	case SOTLS_P256_OK:
		return 0;
	case SOTLS_P256_ERR_POINT:
		return MBEDTLS_ERR_ECP_INVALID_KEY;
	default:
		return MBEDTLS_ERR_ECP_VERIFY_FAILED;
	}
}

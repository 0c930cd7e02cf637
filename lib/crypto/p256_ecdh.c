/* P-256 key generation and ECDH (SEC1 §3.2.1, §3.3.1; RFC 8422 §5.10). */
#include "p256.h"
#include "p256_point.h"
#include "p256_scalar.h"

#include <string.h>

int sotls_p256_public_key(const struct p256_impl *im, const uint8_t priv[32], uint8_t pub[65])
{
	p256_fe d;
	p256_jac q;
	p256_aff a;

	if (im == NULL)
		im = p256_impl_default();
	p256_load_be(d, priv);
	/* SEC1 §3.2.1: the private key is an integer in [1, n-1]. Whether it is
	 * says nothing about its value. */
	uint64_t ok = p256_sc_in_range(d);
	sotls_ct_public(&ok, sizeof(ok));
	if (!ok) {
		memset(d, 0, sizeof(d));
		return SOTLS_P256_ERR_KEY;
	}
	p256_mul_base(im, &q, d);
	p256_to_affine(im, &a, &q);
	p256_point_encode(im, pub, &a);
	memset(d, 0, sizeof(d));
	memset(&q, 0, sizeof(q));
	return SOTLS_P256_OK;
}

int sotls_p256_keygen(const struct p256_impl *im, const uint8_t rnd[SOTLS_P256_KEYGEN_RANDOM],
		      uint8_t priv[32], uint8_t pub[65])
{
	static const p256_fe one = {1, 0, 0, 0};
	p256_fe d;

	if (im == NULL)
		im = p256_impl_default();
	/* FIPS 186-5 A.2.1: d = c mod n from 128 bits more than n has. The value 0
	 * (probability 2^-256) becomes 1 rather than a retry, so nothing branches
	 * on the key. */
	p256_sc_from_wide(im, d, rnd);
	p256_fe_cmov(d, one, p256_fe_is_zero(d));
	p256_store_be(priv, d);
	memset(d, 0, sizeof(d));
	return sotls_p256_public_key(im, priv, pub);
}

int sotls_p256_ecdh(const struct p256_impl *im, const uint8_t priv[32], const uint8_t peer[65],
		    uint8_t shared[32])
{
	p256_fe d, x;
	p256_aff p, r;
	p256_jac q;

	if (im == NULL)
		im = p256_impl_default();
	/* RFC 8422 §5.10: the peer's point must be on the curve and not the point
	 * at infinity (and its coordinates field elements, SEC1 §3.2.2.1). */
	if (p256_point_decode(im, &p, peer) != 0)
		return SOTLS_P256_ERR_POINT;
	p256_load_be(d, priv);
	uint64_t ok = p256_sc_in_range(d);
	sotls_ct_public(&ok, sizeof(ok));
	if (!ok) {
		memset(d, 0, sizeof(d));
		return SOTLS_P256_ERR_KEY;
	}
	p256_mul_var(im, &q, d, &p);
	uint64_t inf = p256_to_affine(im, &r, &q);
	memset(d, 0, sizeof(d));
	memset(&q, 0, sizeof(q));
	/* SEC1 §3.3.1 step 2: infinity is an error. With cofactor 1 and a
	 * validated peer it cannot happen; the check stays. */
	sotls_ct_public(&inf, sizeof(inf));
	if (inf) {
		memset(&r, 0, sizeof(r));
		return SOTLS_P256_ERR_INFINITY;
	}
	/* RFC 8422 §5.10: the premaster secret is the X coordinate, FE2OSP. */
	p256_fe_from_mont(im, x, r.x);
	p256_store_be(shared, x);
	memset(x, 0, sizeof(x));
	memset(&r, 0, sizeof(r));
	return SOTLS_P256_OK;
}

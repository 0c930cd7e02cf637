/*
 * P-256 ECDSA: signing (SEC1 §4.1.3) with RFC 6979 nonces over HMAC-SHA-256
 * (sha256.h), and verification (SEC1 §4.1.4).
 */
#include "p256.h"
#include "p256_point.h"
#include "p256_scalar.h"
#include "sha256.h"

#include <string.h>

/*
 * RFC 6979 §3.2's HMAC_DRBG state: K and V, with qlen = hlen = 256, and K's
 * HMAC key blocks already hashed (RFC 2104: SHA-256 after K ^ ipad and after
 * K ^ opad). Each K serves two or three HMACs, so hashing its blocks once
 * saves two of the four compressions of each further HMAC.
 */
struct rfc6979 {
	struct sotls_sha256 inner, outer;
	uint8_t k[32], v[32];
};

/* The key blocks of st->k (RFC 2104: K padded to 64 bytes). */
static void hmac_key(struct rfc6979 *st)
{
	uint8_t pad[64];

	for (int i = 0; i < 64; i++)
		pad[i] = (uint8_t)((i < 32 ? st->k[i] : 0) ^ 0x36);
	sotls_sha256_init(&st->inner, NULL);
	sotls_sha256_update(&st->inner, pad, 64);
	for (int i = 0; i < 64; i++)
		pad[i] ^= 0x36 ^ 0x5c;
	sotls_sha256_init(&st->outer, NULL);
	sotls_sha256_update(&st->outer, pad, 64);
	memset(pad, 0, sizeof(pad));
}

/* out = HMAC_K(V || sep || x || h || extra), sep < 0 meaning V alone. */
static void hmac_kv(struct rfc6979 *st, uint8_t out[32], int sep, const uint8_t x[32],
		    const uint8_t h[32], const uint8_t *extra, size_t extra_len)
{
	const uint8_t b = (uint8_t)sep;
	struct sotls_sha256 c = st->inner;
	uint8_t ih[32];

	sotls_sha256_update(&c, st->v, 32);
	if (sep >= 0) {
		sotls_sha256_update(&c, &b, 1);
		if (x != NULL) {
			sotls_sha256_update(&c, x, 32);
			sotls_sha256_update(&c, h, 32);
		}
		sotls_sha256_update(&c, extra, extra_len);
	}
	sotls_sha256_final(&c, ih);
	c = st->outer;
	sotls_sha256_update(&c, ih, 32);
	sotls_sha256_final(&c, out);
	memset(ih, 0, sizeof(ih));
}

/* K = HMAC_K(V || sep || x || h || extra), V = HMAC_K(V): steps d-g, and
 * h.3 after a rejected candidate (sep 0, no x). */
static void rfc6979_rekey(struct rfc6979 *st, int sep, const uint8_t x[32], const uint8_t h[32],
			  const uint8_t *extra, size_t extra_len)
{
	hmac_kv(st, st->k, sep, x, h, extra, extra_len);
	hmac_key(st);
	hmac_kv(st, st->v, -1, NULL, NULL, NULL, 0);
}

/* RFC 6979 §3.2 steps b-g (with §3.6's additional data k'). */
static void rfc6979_init(struct rfc6979 *st, const uint8_t x[32], const uint8_t h[32],
			 const uint8_t *extra, size_t extra_len)
{
	memset(st->v, 0x01, 32);
	memset(st->k, 0x00, 32);
	hmac_key(st);
	for (int sep = 0; sep < 2; sep++)
		rfc6979_rekey(st, sep, x, h, extra, extra_len);
}

/* r, s for nonce k: r = x(k·G) mod n, s = k^-1 (e + r·d) mod n; all ones when
 * both are non-zero (SEC1 §4.1.3 steps 1-6). */
static uint64_t sign_with(const struct p256_impl *im, p256_fe r, p256_fe s, const p256_fe k,
			  const p256_fe d, const p256_fe e)
{
	p256_jac q;
	p256_fe x, zi, kinv;

	p256_mul_base(im, &q, k);
	/* x_R = X / Z^2; Z^-1 and k^-1 in one interleaved run. k·G is not at
	 * infinity for k in [1, n-1]. */
	im->inv2(zi, q.z, kinv, k);
	im->fe_sqr(zi, zi);
	im->fe_mul(x, q.x, zi);
	p256_fe_from_mont(im, x, x);
	p256_sc_reduce(r, x);
	p256_sc_mul(im, s, r, d);
	p256_sc_add(s, s, e);
	p256_sc_mul(im, s, s, kinv);
	memset(&q, 0, sizeof(q));
	memset(x, 0, sizeof(x));
	memset(zi, 0, sizeof(zi));
	memset(kinv, 0, sizeof(kinv));
	return ~p256_fe_is_zero(r) & ~p256_fe_is_zero(s);
}

int sotls_p256_sign_nonce(const struct p256_impl *im, const uint8_t priv[32],
			  const uint8_t *hash, size_t hash_len, const uint8_t nonce[32], uint8_t sig[64])
{
	p256_fe d, e, k, r, s;
	int ret = SOTLS_P256_OK;

	if (im == NULL)
		im = p256_impl_default();
	p256_load_be(d, priv);
	p256_load_be(k, nonce);
	/* SEC1 §4.1.3: the signer's key d is in [1, n-1]. */
	uint64_t ok = p256_sc_in_range(d);
	sotls_ct_public(&ok, sizeof(ok));
	if (!ok) {
		ret = SOTLS_P256_ERR_KEY;
		goto out;
	}
	/* SEC1 §4.1.3 step 1 and RFC 6979 §3.2 step h.3: k in [1, n-1], and r
	 * and s non-zero, or the caller's next candidate. A refused k is never
	 * used, so publishing the outcome leaks nothing about the k that is. */
	ok = p256_sc_in_range(k);
	sotls_ct_public(&ok, sizeof(ok));
	if (ok) {
		/* Step 5: e = bits2int(hash) mod n. */
		p256_sc_from_hash(e, hash, hash_len);
		ok = sign_with(im, r, s, k, d, e);
		sotls_ct_public(&ok, sizeof(ok));
	}
	if (!ok) {
		ret = SOTLS_P256_ERR_NONCE;
		goto out;
	}
	p256_store_be(sig, r);
	p256_store_be(sig + 32, s);
out:
	memset(d, 0, sizeof(d));
	memset(k, 0, sizeof(k));
	return ret;
}

int sotls_p256_sign(const struct p256_impl *im, const uint8_t priv[32], const uint8_t *hash,
		    size_t hash_len, const uint8_t *extra, size_t extra_len, uint8_t sig[64])
{
	struct rfc6979 st;
	p256_fe e;
	uint8_t h1[32];
	int ret;

	/* RFC 6979 §2.3.4 bits2octets(h1) = int2octets(bits2int(h1) mod q). */
	p256_sc_from_hash(e, hash, hash_len);
	p256_store_be(h1, e);
	rfc6979_init(&st, priv, h1, extra, extra_len);
	for (;;) {
		/* Step h.2: T = V (tlen = qlen = 256 bits), k = bits2int(T). */
		hmac_kv(&st, st.v, -1, NULL, NULL, NULL, 0);
		ret = sotls_p256_sign_nonce(im, priv, hash, hash_len, st.v, sig);
		if (ret != SOTLS_P256_ERR_NONCE)
			break;
		rfc6979_rekey(&st, 0, NULL, NULL, NULL, 0);
	}
	memset(&st, 0, sizeof(st));
	return ret;
}

/* Whether the Jacobian X with Z^2 = z2 is the x coordinate v (plain, < p). */
static int x_is(const struct p256_impl *im, const p256_fe v, const p256_fe z2, const p256_fe x)
{
	p256_fe t;

	im->fe_mul(t, v, P256_R2P);
	im->fe_mul(t, t, z2);
	return p256_fe_eq(t, x) != 0;
}

int sotls_p256_verify(const struct p256_impl *im, const uint8_t pub[65], const uint8_t *hash,
		      size_t hash_len, const uint8_t sig[64])
{
	p256_aff q;
	p256_jac a, b;
	p256_fe r, s, e, w, u1, u2, z2, rn, t;
	uint64_t carry = 0;

	if (im == NULL)
		im = p256_impl_default();
	if (p256_point_decode(im, &q, pub) != 0)
		return SOTLS_P256_ERR_POINT;
	p256_load_be(r, sig);
	p256_load_be(s, sig + 32);
	/* SEC1 §4.1.4 step 1: r and s are integers in [1, n-1]. */
	if (!p256_sc_in_range(r) || !p256_sc_in_range(s))
		return SOTLS_P256_ERR_SIG_RANGE;
	/* Steps 3-5: e, u1 = e·s^-1, u2 = r·s^-1, R = u1·G + u2·Q. */
	p256_sc_from_hash(e, hash, hash_len);
	p256_sc_inv(im, w, s);
	p256_sc_mul(im, u1, e, w);
	p256_sc_mul(im, u2, r, w);
	p256_mul_base(im, &a, u1);
	p256_mul_var_public(im, &b, u2, &q);
	im->add(&a, &a, &b);
	/* Step 5: R at infinity is a reject. */
	if (p256_fe_is_zero(a.z))
		return SOTLS_P256_ERR_SIG;
	/* Steps 6-8: v = x_R mod n must equal r. x_R = X/Z^2 < p < 2n, so v = r
	 * means x_R = r or, when r + n < p, x_R = r + n: compared as X = x·Z^2,
	 * which needs no inversion. */
	im->fe_sqr(z2, a.z);
	if (x_is(im, r, z2, a.x))
		return SOTLS_P256_OK;
	for (int i = 0; i < 4; i++) {
		const p256_u128 sum = (p256_u128)r[i] + P256_N[i] + carry;

		rn[i] = (uint64_t)sum;
		carry = (uint64_t)(sum >> 64);
	}
	if (!carry && p256_sub4(t, rn, P256_P) && x_is(im, rn, z2, a.x))
		return SOTLS_P256_OK;
	return SOTLS_P256_ERR_SIG;
}

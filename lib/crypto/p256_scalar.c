/*
 * Arithmetic mod n for P-256 keys and ECDSA, over the level's Montgomery
 * multiplication mod n (the inversion is the level's, p256_point_impl.h).
 * Constant time.
 */
#include "p256_scalar.h"

#include <string.h>

uint64_t p256_sc_in_range(const p256_fe a)
{
	p256_fe t;

	return (0 - p256_sub4(t, a, P256_N)) & ~p256_fe_is_zero(a);
}

void p256_sc_reduce(p256_fe r, const p256_fe a)
{
	p256_fe t;
	const uint64_t below = 0 - p256_sub4(t, a, P256_N);

	for (int i = 0; i < 4; i++)
		r[i] = (a[i] & below) | (t[i] & ~below);
}

void p256_sc_from_wide(const struct p256_impl *im, p256_fe r, const uint8_t in[48])
{
	uint8_t hi_bytes[32] = {0};
	p256_fe hi, lo;

	/* in = hi·2^256 + lo with hi < 2^128 < n; hi·2^256 mod n is the
	 * Montgomery product of hi and 2^512 mod n. */
	memcpy(hi_bytes + 16, in, 16);
	p256_load_be(hi, hi_bytes);
	p256_load_be(lo, in + 16);
	im->sc_mul(hi, hi, P256_R2N);
	p256_sc_reduce(lo, lo);
	p256_sc_add(r, hi, lo);
	memset(hi_bytes, 0, sizeof(hi_bytes));
	memset(hi, 0, sizeof(hi));
	memset(lo, 0, sizeof(lo));
}

void p256_sc_from_hash(p256_fe r, const uint8_t *hash, size_t len)
{
	uint8_t buf[32] = {0};

	/* bits2int: the leftmost qlen = 256 bits; a shorter hash is the integer it
	 * spells (left-padded). */
	if (len >= 32)
		memcpy(buf, hash, 32);
	else
		memcpy(buf + 32 - len, hash, len);
	p256_load_be(r, buf);
	p256_sc_reduce(r, r);
}

void p256_sc_add(p256_fe r, const p256_fe a, const p256_fe b)
{
	p256_add_mod(r, a, b, P256_N);
}

void p256_sc_mul(const struct p256_impl *im, p256_fe r, const p256_fe a, const p256_fe b)
{
	/* (a·b·2^-256)·2^512·2^-256 = a·b */
	im->sc_mul(r, a, b);
	im->sc_mul(r, r, P256_R2N);
}

void p256_sc_inv(const struct p256_impl *im, p256_fe r, const p256_fe a)
{
	im->sc_inv(r, a);
}

/*
 * P-256 field and scalar multiplication in portable C: 4x64-bit limbs,
 * products through unsigned __int128, word-by-word Montgomery reduction
 * (p256_mont.h). The point formulas on top come from p256_point_impl.h.
 */
#include "p256_mont.h"

static void fe_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	mont_mul(r, a, b, P256_P, 1);
}

static void fe_sqr(p256_fe r, const p256_fe a)
{
	mont_mul(r, a, a, P256_P, 1);
}

#define P256_LEVEL_NAME generic
#include "p256_point_impl.h"

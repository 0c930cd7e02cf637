/*
 * P-256 field and scalar multiplication in portable C: 4x64-bit limbs,
 * products through unsigned __int128, word-by-word Montgomery reduction
 * (p256_mont.h). The point formulas on top come from p256_point_impl.h.
 */
#include "p256_mont.h"

#define P256_LEVEL_NAME generic
#include "p256_point_impl.h"

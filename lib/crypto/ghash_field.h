/*
 * The GF(2^128) representation shared by the GHASH implementations (internal
 * to lib/crypto).
 *
 * SP 800-38D numbers the bits of a block from the most significant bit of
 * byte 0 and makes bit i the coefficient of x^i, modulo
 * P = x^128 + x^7 + x^2 + x + 1. Reading a block as a big-endian 128-bit
 * integer (two big-endian 64-bit words, or a byte-reversed vector) stores the
 * polynomial bit-reflected: x^i sits at integer bit 127 - i, and multiplying
 * by x is a right shift.
 *
 * The carry-less product of two reflected 128-bit values has 255 bits; read
 * as a reflected 256-bit value (x^i at bit 255 - i) it is a*b*x, one place
 * off. Rather than shift every product back, the tables hold H*x^-1: the
 * plain product with it is exactly the reflected a*h.
 *
 * Reducing that product d3:d2:d1:d0 (64-bit words, d3 holding x^0..x^63):
 * x^128 = x^7 + x^2 + x + 1 mod P, so a word standing at x^(128+64k) may be
 * moved to x^(64k) times 1 + x + x^2 + x^7. Reflected, the factor 1 puts the
 * word itself two words higher, and x, x^2, x^7 are right shifts by 1, 2, 7:
 * the 128-bit (w << 63) ^ (w << 62) ^ (w << 57), i.e. the carry-less product
 * of w with 0xC200000000000000, lands one word higher. d0 goes first because
 * it spills into d1, which goes next; then d3:d2 is the result.
 */
#ifndef SOTLS_CRYPTO_GHASH_FIELD_H
#define SOTLS_CRYPTO_GHASH_FIELD_H

#include <stdint.h>

#include "util.h"

/*
 * H*x^-1 as reflected words. x^-1 is a left shift; when the x^0 bit falls
 * off the top, x^-1 = x^127 + x^6 + x + 1 mod P (bits 0, 121, 126, 127)
 * comes back in.
 */
static inline void ghash_h_div_x(uint64_t *hi, uint64_t *lo, const uint8_t h[16])
{
	uint64_t a = sotls_load_be64(h), b = sotls_load_be64(h + 8);
	uint64_t carry = 0 - (a >> 63);

	*hi = (a << 1 | b >> 63) ^ (carry & UINT64_C(0xc200000000000000));
	*lo = (b << 1) ^ (carry & 1);
}

#endif

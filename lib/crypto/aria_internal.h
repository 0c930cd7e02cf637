/* Pieces shared by the ARIA key schedule, the portable cipher and the GFNI code. */
#ifndef SOTLS_CRYPTO_ARIA_INTERNAL_H
#define SOTLS_CRYPTO_ARIA_INTERNAL_H

#include <stdint.h>

/*
 * ARIA's S-boxes as affine maps around the inversion in GF(2^8) mod
 * x^8+x^4+x^3+x+1 (AES's field, and ARIA's). The matrices are in the layout
 * of GFNI's GF2P8AFFINEQB(x, M, c), which computes M*x ^ c per byte (and
 * GF2P8AFFINEINVQB the same to x^-1): in the 64-bit M, byte 7-i is the row
 * giving output bit i, bit j of the row taking input bit j. The GFNI code
 * uses them as they are, the constant-time key schedule (aria_generic.c)
 * around AES's bitsliced S-box circuit.
 *
 * S1 is the AES S-box, L*x^-1 ^ 0x63 with L AES's affine matrix.
 * S2(x) = B*x^247 ^ 0xE2 and x^247 = (x^-1)^8; squaring is linear over
 * GF(2), so y -> y^8 is a matrix F and S2 = (B*F)*x^-1 ^ 0xE2: ARIA_GF_S2
 * is B*F. The inverses undo the affine map first, then invert:
 * S1^-1(y) = (L^-1*y ^ L^-1*0x63)^-1, S2^-1(y) = ((BF)^-1*y ^ (BF)^-1*0xE2)^-1,
 * the final inversion being GF2P8AFFINEINVQB with the identity matrix. Each
 * of the 4 boxes was checked against RFC 5794's tables for all 256 inputs.
 */
#define ARIA_GF_S1 0xf1e3c78f1f3e7cf8ull
#define ARIA_GF_S1_C 0x63
#define ARIA_GF_S2 0xeafcb7c3c273c66full
#define ARIA_GF_S2_C 0xe2
#define ARIA_GF_S1INV 0xa44992254a942952ull /* L^-1 */
#define ARIA_GF_S1INV_C 0x05                /* L^-1 * 0x63 */
#define ARIA_GF_S2INV 0x186450c737d6bdc9ull /* (BF)^-1 */
#define ARIA_GF_S2INV_C 0x2c                /* (BF)^-1 * 0xE2 */
#define ARIA_GF_ID 0x0102040810204080ull

/* The odd and even round functions FO and FE on the state as big-endian
 * words, for the key schedule (aria_generic.c: constant time). */
void sotls_aria_fo(uint32_t x[4], const uint32_t rk[4]);
void sotls_aria_fe(uint32_t x[4], const uint32_t rk[4]);

#endif

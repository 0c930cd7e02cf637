/*
 * The affine byte maps that turn the AES S-box into ARIA's other S-boxes,
 * as nibble lookup tables, and the lane fix-up of byte-sliced code: shared
 * by the AES-NI code (aria_aesni_sbox.h, which explains them) and the ARMv8
 * code (aria_neon.c), whose AESE/AESD permute bytes as AESENCLAST/AESDECLAST
 * do. Plain data, no intrinsics.
 */
#ifndef SOTLS_CRYPTO_ARIA_AES_AFFINE_H
#define SOTLS_CRYPTO_ARIA_AES_AFFINE_H

#include <stdint.h>

/* F = S2 o S1^-1, on the low and the high nibble. */
static _Alignas(16) const uint8_t ARIA_AES_F_LO[16] = {
	0x88, 0x0d, 0x37, 0xb2, 0x00, 0x85, 0xbf, 0x3a,
	0xa8, 0x2d, 0x17, 0x92, 0x20, 0xa5, 0x9f, 0x1a};
static _Alignas(16) const uint8_t ARIA_AES_F_HI[16] = {
	0x00, 0x3e, 0xd4, 0xea, 0x84, 0xba, 0x50, 0x6e,
	0xcd, 0xf3, 0x19, 0x27, 0x49, 0x77, 0x9d, 0xa3};

/* G = F^-1 = S1 o S2^-1. */
static _Alignas(16) const uint8_t ARIA_AES_G_LO[16] = {
	0x04, 0x45, 0xee, 0xaf, 0x17, 0x56, 0xfd, 0xbc,
	0x53, 0x12, 0xb9, 0xf8, 0x40, 0x01, 0xaa, 0xeb};
static _Alignas(16) const uint8_t ARIA_AES_G_HI[16] = {
	0x00, 0xb6, 0x08, 0xbe, 0xd6, 0x60, 0xde, 0x68,
	0x53, 0xe5, 0x5b, 0xed, 0x85, 0x33, 0x8d, 0x3b};

/* sigma^2 as a PSHUFB control: swaps columns 0, 2 and 1, 3 in rows 1 and 3. */
static _Alignas(16) const uint8_t ARIA_AES_LANE_FIX[16] = {
	0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12, 5, 14, 7};

#endif

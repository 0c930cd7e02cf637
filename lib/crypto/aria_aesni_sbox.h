/*
 * ARIA's S-boxes through the AES instructions: the constants shared by the
 * AES-NI implementations (aria_aesni_avx.c, and aria_sliced.h's AES-NI
 * S-boxes), whatever their vector width.
 *
 * S1 is the AES S-box. AESENCLAST(x, k) = ShiftRows(SubBytes(x)) ^ k and
 * AESDECLAST(x, k) = InvShiftRows(InvSubBytes(x)) ^ k, so they give S1 and
 * S1^-1 with the bytes of each 128-bit lane permuted. S2(x) = B.x^247 ^ 0xe2
 * and x^247 = (x^-1)^8; squaring is linear over GF(2), so S2(x) = M.x^-1 ^ 0xe2
 * for a bit matrix M. With x^-1 = A_aes^-1.(S1(x) ^ 0x63), F = S2 o S1^-1 is
 * an affine map of bytes and S2 = F o S1; likewise S2^-1 = S1^-1 o G with
 * G = F^-1. An affine byte map is the XOR of its values on the two nibbles
 * (the constant folded into the low one): two 16-entry PSHUFB lookups. The
 * tables were computed offline from the RFC 5794 definitions and checked on
 * all 256 inputs.
 *
 * Lanes. AESENCLAST moves byte sigma(l) to byte l (sigma = ShiftRows), and
 * AESDECLAST sigma^-1(l) to l. Byte-sliced code, where byte l of a lane is
 * one block, needs all its registers in one order before the diffusion XORs:
 * after each substitution layer the registers at byte positions 2 and 3 of
 * each word are shuffled by sigma^2 (= sigma^-2, ARIA_AES_LANE_FIX). In odd
 * rounds those hold S1^-1, S2^-1 and everything ends up permuted by sigma;
 * in even rounds they hold S1, S2 and everything returns to the identity.
 * ARIA has an even number of rounds, so the output is in block order.
 */
#ifndef SOTLS_CRYPTO_ARIA_AESNI_SBOX_H
#define SOTLS_CRYPTO_ARIA_AESNI_SBOX_H

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

/* Pieces shared by the ARIA key schedule and the portable cipher. */
#ifndef SOTLS_CRYPTO_ARIA_INTERNAL_H
#define SOTLS_CRYPTO_ARIA_INTERNAL_H

#include <stdint.h>

/* Round tables, [0] for odd and [1] for even rounds, then by lane. */
extern const uint32_t sotls_aria_round_tab[2][4][256];

/* Final-round S-boxes by lane, as bytes in memory order. */
extern const uint8_t sotls_aria_last_tab[4][256][4];

/* The odd and even round functions FO and FE on the state as big-endian
 * words. */
void sotls_aria_fo(uint32_t x[4], const uint32_t rk[4]);
void sotls_aria_fe(uint32_t x[4], const uint32_t rk[4]);

#endif

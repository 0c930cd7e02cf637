/*
 * ARIA CTR as aria_aesni_avx2.c, with the ymm batches' S-boxes through
 * VAES: one AESENCLAST / AESDECLAST per ymm register instead of two xmm ones
 * plus the split and the merge, for CPUs with VAES but no GFNI (Zen 3).
 */
#include "aria.h"

#define ARIA_AVX2_SBOX ARIA_SL_VAES
#define ARIA_AVX2_CTR32 sotls_aria_ctr32_vaes_avx2
#include "aria_aesni_avx2.c"

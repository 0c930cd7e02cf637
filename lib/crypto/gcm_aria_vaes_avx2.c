/*
 * ARIA-GCM's bulk as gcm_aria_aesni_avx2.c, for CPUs with VAES and
 * VPCLMULQDQ but no GFNI (Zen 3): the ymm batches' S-boxes through VAES,
 * and GHASH two blocks a ymm register with one reduction a batch.
 */
#define GCM_ARIA_VAES
#include "gcm_aria_aesni_avx2.c"

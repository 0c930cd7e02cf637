/*
 * CPU feature levels. The level is chosen once from CPUID (with XGETBV for the
 * OS side of AVX / AVX-512 state) and may be lowered, never raised, by the
 * environment variable SOTLS_CPU=generic|aesni|avx2|avx512 so tests and
 * benchmarks can run every implementation on one machine.
 */
#ifndef SOTLS_CRYPTO_CPU_H
#define SOTLS_CRYPTO_CPU_H

#include <stdbool.h>

enum sotls_cpu_level {
	SOTLS_CPU_GENERIC = 0, /* portable C */
	SOTLS_CPU_AESNI = 1,   /* AES-NI + AVX + PCLMULQDQ + SSSE3 */
	SOTLS_CPU_AVX2 = 2,    /* + AVX2 + GFNI */
	SOTLS_CPU_AVX512 = 3,  /* + AVX-512 F/BW/VL + GFNI + VAES + VPCLMULQDQ */
	SOTLS_CPU_LEVELS = 4,
};

/* The level this process uses: detected, then capped by SOTLS_CPU. */
enum sotls_cpu_level sotls_cpu_level(void);

/* Whether the CPU and OS can run code of this level (ignores SOTLS_CPU). */
bool sotls_cpu_supports(enum sotls_cpu_level level);

/*
 * BMI2 and ADX (MULX, ADCX, ADOX), for the public-key arithmetic; outside the
 * levels above, false under SOTLS_CPU=generic.
 */
bool sotls_cpu_has_mulx(void);

/* "generic", "aesni", "avx2", "avx512"; NULL for an out-of-range value. */
const char *sotls_cpu_level_name(enum sotls_cpu_level level);

/*
 * The public-key code's levels, outside the cipher ladder above because
 * they need other features: MULX (BMI2) with ADCX/ADOX (ADX) for 64-bit
 * Montgomery multiplication, and AVX-512 IFMA (VPMADD52LUQ/HUQ, with
 * AVX-512 F/VL/BW and the OS's AVX-512 state) for 52-bit limbs. Both are
 * false under SOTLS_CPU=generic, and IFMA also under any cap below avx512.
 */
bool sotls_cpu_has_mulx_adx(void);
bool sotls_cpu_has_ifma(void);
/* The SHA extensions (with the aesni level's SSSE3 and SSE4.1), for
 * SHA-256; false under SOTLS_CPU=generic. */
bool sotls_cpu_has_sha_ni(void);

#endif

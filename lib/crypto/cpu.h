/*
 * CPU features and the choice of implementation (internal to lib/crypto).
 *
 * The features are read once, on x86-64 from CPUID (with XGETBV for the OS
 * side of the AVX and AVX-512 state), on aarch64 from the kernel's AT_HWCAP
 * (which has the kernel's word on what EL0 may run), then masked by the environment variable SOTLS_CPU,
 * which can only take features away, so that tests and benchmarks can run
 * every implementation on one machine:
 *
 *   SOTLS_CPU=-gfni,-avx512f     all detected features but these
 *   SOTLS_CPU=aes,pclmulqdq,avx  only these (and only if detected)
 *   SOTLS_CPU=generic|aesni|avx2|avx512
 *                                 the old levels, as feature sets (cpu.c)
 *
 * A value that is exactly one of the old level names is that level's set.
 * Otherwise it is a comma-separated list of feature names (as in
 * /proc/cpuinfo's flags: aes pclmulqdq ssse3 sse4_1 avx avx2 vaes vpclmulqdq
 * gfni avx512f avx512bw avx512vl sha_ni bmi2 adx avx512ifma; on aarch64, as in
 * its Features line: aes asimd pmull sha2), each optionally
 * prefixed with '-' (remove) or '+' (add), applied left to right to a start
 * of all features if the first item is a removal, else of none. An unknown
 * name makes the whole value mean "generic" (no features): a typo in a test
 * set-up then errs on the safe side.
 *
 * Each primitive keeps a table of its implementations, best first, each with
 * the features it needs (every instruction set its file is compiled with),
 * and takes the first whose needs are all present.
 */
#ifndef SOTLS_CRYPTO_CPU_H
#define SOTLS_CRYPTO_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The feature bits. Their names are sotls_cpu_feature_name's. */
#define SOTLS_CPU_AES (1u << 0)	       /* "aes": AES-NI */
#define SOTLS_CPU_PCLMUL (1u << 1)     /* "pclmulqdq" */
#define SOTLS_CPU_SSSE3 (1u << 2)      /* "ssse3" */
#define SOTLS_CPU_SSE41 (1u << 3)      /* "sse4_1" */
#define SOTLS_CPU_AVX (1u << 4)	       /* "avx", with the OS's ymm state */
#define SOTLS_CPU_AVX2 (1u << 5)       /* "avx2" */
#define SOTLS_CPU_VAES (1u << 6)       /* "vaes" */
#define SOTLS_CPU_VPCLMUL (1u << 7)    /* "vpclmulqdq" */
#define SOTLS_CPU_GFNI (1u << 8)       /* "gfni" */
#define SOTLS_CPU_AVX512F (1u << 9)    /* "avx512f", with the OS's zmm state */
#define SOTLS_CPU_AVX512BW (1u << 10)  /* "avx512bw" */
#define SOTLS_CPU_AVX512VL (1u << 11)  /* "avx512vl" */
#define SOTLS_CPU_SHA (1u << 12)       /* "sha_ni" */
#define SOTLS_CPU_BMI2 (1u << 13)      /* "bmi2" (MULX) */
#define SOTLS_CPU_ADX (1u << 14)       /* "adx" (ADCX, ADOX) */
#define SOTLS_CPU_IFMA (1u << 15)      /* "avx512ifma" */
/* aarch64. "aes" is bit 0 there too (AESE/AESD/AESMC/AESIMC): one name per
 * instruction family, whichever architecture the tables are built for. */
#define SOTLS_CPU_ASIMD (1u << 16)     /* "asimd": Advanced SIMD (NEON) */
#define SOTLS_CPU_PMULL (1u << 17)     /* "pmull": PMULL/PMULL2 on 64-bit lanes */
#define SOTLS_CPU_SHA2 (1u << 18)      /* "sha2": SHA256H/SHA256H2/SHA256SU0/SHA256SU1 */
#define SOTLS_CPU_FEATURES 19
#define SOTLS_CPU_ALL ((1u << SOTLS_CPU_FEATURES) - 1)

/* Groups that implementations' needs are made of. */
#define SOTLS_CPU_AVX_BASE (SOTLS_CPU_AVX | SOTLS_CPU_SSSE3 | SOTLS_CPU_SSE41)
#define SOTLS_CPU_AVX512 (SOTLS_CPU_AVX512F | SOTLS_CPU_AVX512BW | SOTLS_CPU_AVX512VL)

/* What the CPU and the OS offer (ignores SOTLS_CPU). */
uint32_t sotls_cpu_detected(void);

/* What this process uses: sotls_cpu_detected() masked by SOTLS_CPU. */
uint32_t sotls_cpu_features(void);

/*
 * Reads a SOTLS_CPU value (syntax above) into the set it allows (before
 * masking with what is detected). False, and *allowed = 0, for an unknown
 * token.
 */
bool sotls_cpu_parse(const char *value, uint32_t *allowed);

/* The name of feature bit i (0 <= i < SOTLS_CPU_FEATURES), else NULL. */
const char *sotls_cpu_feature_name(unsigned i);

/*
 * The names of the features in mask, joined by '+' ("-" for none), into buf
 * (truncated to fit, always terminated). Returns buf.
 */
char *sotls_cpu_describe(uint32_t mask, char *buf, size_t len);

/* The head of every entry of an implementation table. */
struct sotls_impl {
	const char *name;
	uint32_t needs;
};

/*
 * The index of the first entry whose needs are all in have, in a table of n
 * entries of stride bytes, each beginning with its struct sotls_impl. The
 * last entry of every table is the portable one, which needs nothing.
 */
size_t sotls_cpu_pick(const struct sotls_impl *first, size_t n, size_t stride, uint32_t have);

#define SOTLS_CPU_PICK(table, have)                                                        \
	(&(table)[sotls_cpu_pick(&(table)[0].impl, sizeof(table) / sizeof((table)[0]),    \
				 sizeof((table)[0]), (have))])

#endif

#include "cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bit i's name is the kernel's flag name, so /proc/cpuinfo reads the same. */
static const char *const FEATURE_NAMES[SOTLS_CPU_FEATURES] = {
	"aes",	   "pclmulqdq", "ssse3",    "sse4_1",	"avx",	"avx2", "vaes", "vpclmulqdq",
	"gfni",	   "avx512f",	"avx512bw", "avx512vl", "sha_ni", "bmi2", "adx",  "avx512ifma",
	"asimd",   "pmull",	"sha2",
};

/*
 * The levels SOTLS_CPU took before features could be named one by one, as
 * feature sets, so that old set-ups keep their meaning: aesni already had
 * MULX/ADX and SHA-NI, avx2 added GFNI (its ARIA) but not VAES.
 */
#define LEVEL_AESNI                                                                        \
	(SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE | SOTLS_CPU_SHA |          \
	 SOTLS_CPU_BMI2 | SOTLS_CPU_ADX)
static const struct {
	const char *name;
	uint32_t set;
} LEVELS[] = {
	{"generic", 0},
	{"aesni", LEVEL_AESNI},
	{"avx2", LEVEL_AESNI | SOTLS_CPU_AVX2 | SOTLS_CPU_GFNI},
	{"avx512", SOTLS_CPU_ALL},
};

#if defined(__x86_64__)
/* XCR0 bits the OS must enable before AVX / AVX-512 registers are usable. */
#define XCR0_SSE_AVX 0x06u
#define XCR0_AVX512 0xe0u

static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* Sets feature f if bit b of register r is set. */
#define BIT(r, b, f) (((r) >> (b)) & 1u ? (f) : 0u)

static uint32_t detect(void)
{
	unsigned a, b, c, d;
	uint32_t f = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	/* CPUID leaf 1, ECX (Intel SDM vol. 2A, CPUID). */
	f |= BIT(c, 25, SOTLS_CPU_AES) | BIT(c, 1, SOTLS_CPU_PCLMUL) | BIT(c, 9, SOTLS_CPU_SSSE3) |
	     BIT(c, 19, SOTLS_CPU_SSE41) | BIT(c, 28, SOTLS_CPU_AVX);
	const bool osxsave = (c >> 27) & 1u;
	const uint64_t xcr0 = osxsave ? read_xcr0() : 0;

	if (__get_cpuid_max(0, NULL) >= 7) {
		/* Leaf 7, sub-leaf 0. */
		__cpuid_count(7, 0, a, b, c, d);
		f |= BIT(b, 5, SOTLS_CPU_AVX2) | BIT(b, 8, SOTLS_CPU_BMI2) |
		     BIT(b, 16, SOTLS_CPU_AVX512F) | BIT(b, 19, SOTLS_CPU_ADX) |
		     BIT(b, 21, SOTLS_CPU_IFMA) | BIT(b, 29, SOTLS_CPU_SHA) |
		     BIT(b, 30, SOTLS_CPU_AVX512BW) | BIT(b, 31, SOTLS_CPU_AVX512VL) |
		     BIT(c, 8, SOTLS_CPU_GFNI) | BIT(c, 9, SOTLS_CPU_VAES) |
		     BIT(c, 10, SOTLS_CPU_VPCLMUL);
	}
	/* Without the OS's register state the instructions fault: VAES and
	 * VPCLMULQDQ exist only VEX- or EVEX-encoded. */
	if ((xcr0 & XCR0_SSE_AVX) != XCR0_SSE_AVX)
		f &= ~(SOTLS_CPU_AVX | SOTLS_CPU_AVX2 | SOTLS_CPU_VAES | SOTLS_CPU_VPCLMUL |
		       SOTLS_CPU_AVX512 | SOTLS_CPU_IFMA);
	if ((xcr0 & XCR0_AVX512) != XCR0_AVX512)
		f &= ~(SOTLS_CPU_AVX512 | SOTLS_CPU_IFMA);
	return f;
}
#elif defined(__aarch64__)
static uint32_t detect(void)
{
	/* The ID registers are not readable at EL0 everywhere; the kernel's
	 * HWCAP bits are (and say what it lets user space run). */
	const unsigned long hw = getauxval(AT_HWCAP);
	uint32_t f = 0;

	f |= hw & HWCAP_ASIMD ? SOTLS_CPU_ASIMD : 0u;
	f |= hw & HWCAP_AES ? SOTLS_CPU_AES : 0u;
	f |= hw & HWCAP_PMULL ? SOTLS_CPU_PMULL : 0u;
	f |= hw & HWCAP_SHA2 ? SOTLS_CPU_SHA2 : 0u;
	return f;
}
#else
/* Elsewhere only the portable code is built. */
static uint32_t detect(void)
{
	return 0;
}
#endif

/* The feature one token (without its sign) names, or false. */
static bool token_set(const char *t, size_t n, uint32_t *set)
{
	for (unsigned i = 0; i < SOTLS_CPU_FEATURES; i++)
		if (strlen(FEATURE_NAMES[i]) == n && memcmp(t, FEATURE_NAMES[i], n) == 0) {
			*set = 1u << i;
			return true;
		}
	return false;
}

bool sotls_cpu_parse(const char *value, uint32_t *allowed)
{
	/* A whole value that is a level name is that level ("avx2" too,
	 * which inside a list is the feature). */
	for (size_t i = 0; i < sizeof(LEVELS) / sizeof(LEVELS[0]); i++)
		if (strcmp(value, LEVELS[i].name) == 0) {
			*allowed = LEVELS[i].set;
			return true;
		}

	uint32_t acc = value[0] == '-' ? SOTLS_CPU_ALL : 0;
	for (const char *p = value;;) {
		const char *end = strchr(p, ',');
		const size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
		const size_t sign = *p == '-' || *p == '+' ? 1 : 0;
		uint32_t set;

		if (!token_set(p + sign, n - sign, &set)) {
			*allowed = 0;
			return false;
		}
		acc = *p == '-' ? acc & ~set : acc | set;
		if (end == NULL)
			break;
		p = end + 1;
	}
	*allowed = acc;
	return true;
}

/*
 * Computed once. Racing first callers compute the same values, and the
 * atomics make the publication well defined without a lock (bit 31 marks
 * a computed value).
 */
#define COMPUTED (1u << 31)
static _Atomic uint32_t detected;
static _Atomic uint32_t chosen;

uint32_t sotls_cpu_detected(void)
{
	uint32_t d = detected;

	if (d == 0) {
		d = detect() | COMPUTED;
		detected = d;
	}
	return d & ~COMPUTED;
}

uint32_t sotls_cpu_features(void)
{
	uint32_t f = chosen;

	if (f == 0) {
		const char *v = secure_getenv("SOTLS_CPU");
		uint32_t allowed = SOTLS_CPU_ALL;

		if (v != NULL)
			(void)sotls_cpu_parse(v, &allowed); /* a typo leaves 0: generic */
		f = (sotls_cpu_detected() & allowed) | COMPUTED;
		chosen = f;
	}
	return f & ~COMPUTED;
}

const char *sotls_cpu_feature_name(unsigned i)
{
	return i < SOTLS_CPU_FEATURES ? FEATURE_NAMES[i] : NULL;
}

char *sotls_cpu_describe(uint32_t mask, char *buf, size_t len)
{
	size_t at = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; i < SOTLS_CPU_FEATURES; i++) {
		if (!(mask & (1u << i)))
			continue;
		const int w = snprintf(buf + at, len - at, "%s%s", at > 0 ? "+" : "",
				       FEATURE_NAMES[i]);
		if (w < 0 || (size_t)w >= len - at)
			return buf; /* truncated, still terminated */
		at += (size_t)w;
	}
	if (at == 0)
		snprintf(buf, len, "-");
	return buf;
}

size_t sotls_cpu_pick(const struct sotls_impl *first, size_t n, size_t stride, uint32_t have)
{
	const char *p = (const char *)first;

	for (size_t i = 0; i + 1 < n; i++) {
		const struct sotls_impl *e = (const struct sotls_impl *)(p + i * stride);

		if ((e->needs & ~have) == 0)
			return i;
	}
	return n - 1;
}

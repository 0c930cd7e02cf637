#include "cpu.h"

#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const LEVEL_NAMES[SOTLS_CPU_LEVELS] = {"generic", "aesni", "avx2", "avx512"};

/* XCR0 bits the OS must enable before AVX / AVX-512 registers are usable. */
#define XCR0_SSE_AVX 0x06u
#define XCR0_AVX512 0xe0u

static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static enum sotls_cpu_level detect(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return SOTLS_CPU_GENERIC;
	const int aes = (c >> 25) & 1, pclmul = (c >> 1) & 1, ssse3 = (c >> 9) & 1;
	const int sse41 = (c >> 19) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
	if (!(aes && pclmul && ssse3 && sse41 && osxsave && avx))
		return SOTLS_CPU_GENERIC;
	const uint64_t xcr0 = read_xcr0();
	if ((xcr0 & XCR0_SSE_AVX) != XCR0_SSE_AVX)
		return SOTLS_CPU_GENERIC;

	if (__get_cpuid_max(0, NULL) < 7)
		return SOTLS_CPU_AESNI;
	__cpuid_count(7, 0, a, b, c, d);
	const int avx2 = (b >> 5) & 1, gfni = (c >> 8) & 1;
	if (!(avx2 && gfni))
		return SOTLS_CPU_AESNI;

	const int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
	const int vaes = (c >> 9) & 1, vpclmul = (c >> 10) & 1;
	if (avx512f && avx512bw && avx512vl && vaes && vpclmul &&
	    (xcr0 & XCR0_AVX512) == XCR0_AVX512)
		return SOTLS_CPU_AVX512;
	return SOTLS_CPU_AVX2;
}

static enum sotls_cpu_level env_cap(void)
{
	const char *v = secure_getenv("SOTLS_CPU");

	if (v == NULL)
		return SOTLS_CPU_AVX512;
	for (int l = 0; l < SOTLS_CPU_LEVELS; l++)
		if (strcmp(v, LEVEL_NAMES[l]) == 0)
			return (enum sotls_cpu_level)l;
	/* An unknown value is a typo in a test set-up: the safest reading is generic. */
	return SOTLS_CPU_GENERIC;
}

/*
 * Computed once. Racing first callers compute the same values, and int-sized
 * relaxed atomics make the publication well defined without a lock.
 */
static _Atomic int detected = -1;
static _Atomic int chosen = -1;

bool sotls_cpu_supports(enum sotls_cpu_level level)
{
	int d = detected;

	if (d < 0) {
		d = (int)detect();
		detected = d;
	}
	return (int)level >= 0 && (int)level <= d;
}

enum sotls_cpu_level sotls_cpu_level(void)
{
	int l = chosen;

	if (l < 0) {
		l = (int)env_cap();
		while (!sotls_cpu_supports((enum sotls_cpu_level)l))
			l--;
		chosen = l;
	}
	return (enum sotls_cpu_level)l;
}

/* CPUID leaf 7, sub-leaf 0, EBX bits (Intel SDM vol. 2A, CPUID). */
#define CPUID7_EBX_BMI2 (1u << 8)
#define CPUID7_EBX_ADX (1u << 19)
#define CPUID7_EBX_IFMA (1u << 21)
#define CPUID7_EBX_SHA (1u << 29)

static bool leaf7_ebx_has(unsigned bits)
{
	unsigned a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return false;
	__cpuid_count(7, 0, a, b, c, d);
	return (b & bits) == bits;
}

bool sotls_cpu_has_mulx_adx(void)
{
	return sotls_cpu_level() != SOTLS_CPU_GENERIC &&
	       leaf7_ebx_has(CPUID7_EBX_BMI2 | CPUID7_EBX_ADX);
}

bool sotls_cpu_has_ifma(void)
{
	return sotls_cpu_level() == SOTLS_CPU_AVX512 && sotls_cpu_has_mulx_adx() &&
	       leaf7_ebx_has(CPUID7_EBX_IFMA);
}

bool sotls_cpu_has_sha_ni(void)
{
	/* The aesni level brings the SSSE3 and SSE4.1 the SHA-NI code also uses. */
	return sotls_cpu_level() != SOTLS_CPU_GENERIC && leaf7_ebx_has(CPUID7_EBX_SHA);
}

const char *sotls_cpu_level_name(enum sotls_cpu_level level)
{
	if ((int)level < 0 || level >= SOTLS_CPU_LEVELS)
		return NULL;
	return LEVEL_NAMES[level];
}

bool sotls_cpu_has_mulx(void)
{
	unsigned a, b, c, d;

	/* Not one of the levels: only SOTLS_CPU=generic (or a typo) switches it off. */
	if (env_cap() == SOTLS_CPU_GENERIC || __get_cpuid_max(0, NULL) < 7)
		return false;
	__cpuid_count(7, 0, a, b, c, d);
	/* CPUID.(EAX=7,ECX=0):EBX bit 8 is BMI2 (MULX), bit 19 ADX (ADCX/ADOX). */
	return ((b >> 8) & 1) && ((b >> 19) & 1);
}

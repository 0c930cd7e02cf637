/*
 * What the constant-time tests run under valgrind memcheck share
 * (test_p256_ct.c, test_aead_ct.c): marking secrets undefined and results
 * defined again, and the canary, a branch and a table index on a secret on
 * purpose, which memcheck must report (meson expects such a run to fail).
 */
#ifndef SOTLS_TESTS_CT_CHECK_H
#define SOTLS_TESTS_CT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <valgrind/memcheck.h>

static inline void secret(void *p, size_t n)
{
	(void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
}

/* Results are checked, which needs their bytes defined again. */
static inline void public(void *p, size_t n)
{
	(void)VALGRIND_MAKE_MEM_DEFINED(p, n);
}

/* A secret-dependent branch and table index, for --canary. */
static __attribute__((noinline, unused)) int leaky(const uint8_t *k)
{
	static const uint8_t tab[256] = {1, 2, 3};
	volatile int r = 0;

	if (k[1] & 1)
		r = 7;
	return r + tab[k[0]];
}

#endif

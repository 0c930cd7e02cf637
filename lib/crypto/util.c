#include "util.h"

#include <string.h>

void sotls_wipe(void *p, size_t n)
{
	if (p == NULL || n == 0)
		return;
	memset(p, 0, n);
	/* The asm makes the compiler assume the zeroed bytes are read. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

int sotls_ct_memcmp(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a;
	const volatile uint8_t *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (uint8_t)(x[i] ^ y[i]);
	return d;
}

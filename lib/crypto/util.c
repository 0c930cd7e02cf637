#include "util.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

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

int sotls_getrandom(void *out, size_t len)
{
	uint8_t *p = out;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Montgomery set-up for a modulus, constant time so it serves the primes. */
#include "rsa_mont.h"

#include <string.h>

void sotls_mont_init(struct sotls_mont *mt, const uint64_t *m, size_t n)
{
	memset(mt, 0, sizeof(*mt));
	mt->n = n;
	memcpy(mt->m, m, n * sizeof(uint64_t));

	/* Newton's iteration doubles the correct low bits: m is its own inverse
	 * mod 8, so five steps reach 96 >= 64 bits. */
	uint64_t inv = m[0];
	for (int i = 0; i < 5; i++)
		inv *= 2 - m[0] * inv;
	mt->m0inv = (uint64_t)0 - inv;

	/* R^2 mod m = 2^(128 n) mod m: double 1 that many times, reducing by
	 * mask each time (x < m keeps 2x < 2m). */
	uint64_t *x = mt->rr;
	x[0] = 1;
	for (size_t k = 0; k < 128 * n; k++)
		sotls_mont_double(x, m, n);
}

/* Small helpers shared by the crypto code. */
#ifndef SOTLS_CRYPTO_UTIL_H
#define SOTLS_CRYPTO_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Zeroes memory in a way the compiler may not remove. */
void sotls_wipe(void *p, size_t n);

/* Fills out from getrandom(2), retrying short reads and EINTR. Returns 0, or
 * -1 with errno set. */
int sotls_getrandom(void *out, size_t len);

/* 0 if equal, nonzero otherwise; time depends only on n. */
int sotls_ct_memcmp(const void *a, const void *b, size_t n);

static inline uint32_t sotls_load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void sotls_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint64_t sotls_load_be64(const uint8_t *p)
{
	return ((uint64_t)sotls_load_be32(p) << 32) | sotls_load_be32(p + 4);
}

static inline void sotls_store_be64(uint8_t *p, uint64_t v)
{
	sotls_store_be32(p, (uint32_t)(v >> 32));
	sotls_store_be32(p + 4, (uint32_t)v);
}

#endif

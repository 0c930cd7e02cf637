/* SHA-256 (FIPS 180-4 §6.2), the portable compression and the padding. */
#include "sha256.h"

#include "cpu.h"

#include <string.h>

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
const uint32_t sotls_sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2};

/* §5.3.3: the first 32 bits of the fractional parts of the square roots of
 * the first 8 primes. */
static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

void sotls_sha256_blocks_generic(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	for (; blocks > 0; blocks--, p += 64) {
		uint32_t w[64], s[8];

		for (int t = 0; t < 16; t++)
			w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
			       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
		for (int t = 16; t < 64; t++) {
			const uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
			const uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);

			w[t] = w[t - 16] + s0 + w[t - 7] + s1;
		}
		memcpy(s, h, sizeof(s));
		for (int t = 0; t < 64; t++) {
			const uint32_t e = s[4], a = s[0];
			const uint32_t t1 = s[7] + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
					    ((e & s[5]) ^ (~e & s[6])) + sotls_sha256_k[t] + w[t];
			const uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
					    ((a & s[1]) ^ (a & s[2]) ^ (s[1] & s[2]));

			memmove(s + 1, s, 7 * sizeof(s[0]));
			s[4] += t1;
			s[0] = t1 + t2;
		}
		for (int i = 0; i < 8; i++)
			h[i] += s[i];
		memset(w, 0, sizeof(w));
		memset(s, 0, sizeof(s));
	}
}

const struct sotls_sha256_impl SOTLS_SHA256_IMPLS[SOTLS_SHA256_N_IMPLS] = {
#if defined(__x86_64__)
	{{"shani", SOTLS_CPU_SHA | SOTLS_CPU_SSSE3 | SOTLS_CPU_SSE41}, sotls_sha256_blocks_shani},
#elif defined(__aarch64__)
	{{"armv8", SOTLS_CPU_SHA2 | SOTLS_CPU_ASIMD}, sotls_sha256_blocks_armv8},
#endif
	{{"generic", 0}, sotls_sha256_blocks_generic},
};

static sotls_sha256_blocks_fn *_Atomic chosen;

sotls_sha256_blocks_fn *sotls_sha256_blocks(void)
{
	sotls_sha256_blocks_fn *fn = chosen;

	if (fn == NULL) {
		fn = SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, sotls_cpu_features())->blocks;
		chosen = fn;
	}
	return fn;
}

void sotls_sha256_init(struct sotls_sha256 *c, sotls_sha256_blocks_fn *blocks)
{
	memcpy(c->h, H0, sizeof(c->h));
	c->bytes = 0;
	c->blocks = blocks != NULL ? blocks : sotls_sha256_blocks();
}

void sotls_sha256_update(struct sotls_sha256 *c, const uint8_t *p, size_t n)
{
	size_t have = (size_t)(c->bytes % 64);

	if (n == 0)
		return;
	c->bytes += n;
	if (have > 0) {
		const size_t take = n < 64 - have ? n : 64 - have;

		memcpy(c->buf + have, p, take);
		p += take;
		n -= take;
		if (have + take < 64)
			return;
		c->blocks(c->h, c->buf, 1);
	}
	if (n >= 64) /* SHA-NI would load and store the state for nothing */
		c->blocks(c->h, p, n / 64);
	memcpy(c->buf, p + n / 64 * 64, n % 64);
}

void sotls_sha256_final(struct sotls_sha256 *c, uint8_t out[32])
{
	/* §5.1.1: a 1 bit, zeros to 56 mod 64 bytes, the bit length. */
	static const uint8_t pad[64] = {0x80};
	const uint64_t bits = c->bytes * 8;
	uint8_t len[8];

	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sotls_sha256_update(c, pad, 1 + (119 - c->bytes % 64) % 64);
	sotls_sha256_update(c, len, 8);
	for (int i = 0; i < 8; i++)
		for (int b = 0; b < 4; b++)
			out[4 * i + b] = (uint8_t)(c->h[i] >> (24 - 8 * b));
	memset(c, 0, sizeof(*c));
}

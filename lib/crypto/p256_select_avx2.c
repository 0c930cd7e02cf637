/*
 * The constant-time table lookup of P-256's scalar multiplications
 * (p256_point.c) with AVX2, compiled with -mavx2 and called only when the
 * CPU has AVX2 (p256_level.c's table): four limbs per register, so an entry
 * of two or three field elements is two or three loads, ANDs and ORs. The comb reads its
 * whole 88 KiB table once per k·G, which with SSE2 was a sixth of a
 * signature.
 */
#include "p256_point.h"

#include <immintrin.h>

void p256_select_avx2(uint64_t *r, const uint64_t *tab, int n, int fes, uint64_t idx)
{
	const __m256i want = _mm256_set1_epi64x((long long)idx), one = _mm256_set1_epi64x(1);
	__m256i acc[3] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
	__m256i j = one;

	for (int e = 0; e < n; e++) {
		const __m256i m = _mm256_cmpeq_epi64(j, want);

		for (int f = 0; f < fes; f++) {
			const __m256i v = _mm256_loadu_si256((const __m256i *)(tab + 4 * (e * fes + f)));

			acc[f] = _mm256_or_si256(acc[f], _mm256_and_si256(m, v));
		}
		j = _mm256_add_epi64(j, one);
	}
	for (int f = 0; f < fes; f++)
		_mm256_storeu_si256((__m256i *)(r + 4 * f), acc[f]);
}

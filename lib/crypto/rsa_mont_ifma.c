/*
 * The CRT exponentiations with AVX-512 IFMA (VPMADD52LUQ/HUQ; compiled with
 * -mavx512f -mavx512ifma, called only when cpu.c found IFMA and AVX-512),
 * both halves at once, the way OpenSSL 3 runs RSA-2048 on such CPUs.
 *
 * Numbers are k digits of 52 bits, one per 64-bit lane (V = k/8 rounded up
 * registers): k = 20, 30, 40 for 1024-, 1536-, 2048-bit primes. The
 * multiplication is "almost Montgomery" (AMM) with R' = 2^(52 k): a b / R'
 * mod m, below 2m for inputs below 2m, which 4m < R' allows, so only the
 * final result is reduced. Each of the k steps adds the low halves of
 * a b_i and of y m (y the digit that zeroes lane 0, from a scalar copy of
 * lane 0), shifts the lanes down by one and adds the high halves; the lanes
 * are not normalised inside (they stay below 2^61), only at the end, by
 * carry look-ahead on the lane masks. The two halves' steps are interleaved
 * so that one's scalar chain fills the other's latency.
 *
 * Conversions at the edges: the 64-bit levels' Montgomery form x R becomes
 * x R' by an AMM with R'^2 / R mod m, and back by an AMM with R mod m.
 * Multiplications outside the exponentiations are the mulx level's.
 *
 * Constant time: no branch or index depends on a digit; the window's table
 * entry is read by a full scan with masks.
 */
#include <immintrin.h>
#include <stdalign.h>
#include <string.h>

#include "rsa_mont.h"
#include "util.h"

#define MASK52 ((UINT64_C(1) << 52) - 1)
#define MAX_V 5
#define MAX_LANES (8 * MAX_V)
#define TABLE (1u << SOTLS_EXP_WINDOW)

/* A modulus in 52-bit digits. */
struct m52 {
	alignas(64) uint64_t m[MAX_LANES];
	uint64_t k0; /* -m^-1 mod 2^52 */
};

typedef uint64_t num52[MAX_LANES] __attribute__((aligned(64)));

/* d (lanes digits) = s (n 64-bit limbs). */
static void to52(uint64_t *d, const uint64_t *s, size_t n, size_t lanes)
{
	for (size_t j = 0; j < lanes; j++) {
		const size_t off = 52 * j, limb = off / 64, sh = off % 64;
		uint64_t v = limb < n ? s[limb] >> sh : 0;
		if (sh > 12 && limb + 1 < n)
			v |= s[limb + 1] << (64 - sh);
		d[j] = v & MASK52;
	}
}

/* d (n + 1 limbs) = s (k normalised digits). */
static void from52(uint64_t *d, const uint64_t *s, size_t n, size_t k)
{
	memset(d, 0, (n + 1) * sizeof(uint64_t));
	for (size_t j = 0; j < k; j++) {
		const size_t off = 52 * j, limb = off / 64, sh = off % 64;
		d[limb] |= s[j] << sh;
		if (sh > 12)
			d[limb + 1] |= s[j] >> (64 - sh);
	}
}

static inline __m512i lane0_only(uint64_t x)
{
	return _mm512_maskz_set1_epi64(1, (long long)x);
}

/* out = the lanes of A as normalised digits (the value is below 2^(52 k)). */
static inline __attribute__((always_inline)) void normalise(uint64_t *out, __m512i *A,
							    const int V)
{
	const __m512i mask = _mm512_set1_epi64((long long)MASK52);
	__m512i up = _mm512_setzero_si512();
	uint64_t g = 0, p = 0;

	/* Each lane's bits above 52 into the next lane: lanes <= MASK52 + 2^12. */
	for (int v = 0; v < V; v++) {
		const __m512i c = _mm512_srli_epi64(A[v], 52);
		A[v] = _mm512_add_epi64(_mm512_and_si512(A[v], mask),
					_mm512_alignr_epi64(c, up, 7));
		up = c;
	}
	/* Now a lane carries out exactly when it is above MASK52 (generate) or
	 * equal to it with a carry in (propagate): the carries into the lanes
	 * are those of the sum g + (g | p), by integer addition. */
	for (int v = 0; v < V; v++) {
		g |= (uint64_t)_mm512_cmpgt_epu64_mask(A[v], mask) << (8 * v);
		p |= (uint64_t)_mm512_cmpeq_epu64_mask(A[v], mask) << (8 * v);
	}
	const uint64_t cin = (g + (g | p)) ^ p;
	for (int v = 0; v < V; v++) {
		const __m512i one = _mm512_maskz_set1_epi64((__mmask8)(cin >> (8 * v)), 1);
		_mm512_store_si512((void *)(out + 8 * v),
				   _mm512_and_si512(_mm512_add_epi64(A[v], one), mask));
	}
}

/* ra = a b / R' mod ma, rc = c d / R' mod mc (below 2m); inputs normalised
 * digits below 2m. Outputs may be inputs. */
static inline __attribute__((always_inline)) void
amm2(uint64_t *ra, const uint64_t *a, const uint64_t *b, const struct m52 *ma, uint64_t *rc,
     const uint64_t *c, const uint64_t *d, const struct m52 *mc, const int V, const int K)
{
	const __m512i zero = _mm512_setzero_si512();
	__m512i A[MAX_V], C[MAX_V];
	uint64_t carry_a = 0, carry_c = 0;

	for (int v = 0; v < V; v++)
		A[v] = C[v] = zero;
	for (int i = 0; i < K; i++) {
		const uint64_t bi = b[i], di = d[i];
		/* Lane 0 after this step's low halves, in a scalar: its y, and
		 * its carry into lane 1 (the vector's lane 0 is shifted out). */
		const uint64_t xa = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(A[0])) +
				    carry_a + ((a[0] * bi) & MASK52);
		const uint64_t xc = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(C[0])) +
				    carry_c + ((c[0] * di) & MASK52);
		const uint64_t ya = (xa * ma->k0) & MASK52, yc = (xc * mc->k0) & MASK52;
		carry_a = (xa + ((ma->m[0] * ya) & MASK52)) >> 52;
		carry_c = (xc + ((mc->m[0] * yc) & MASK52)) >> 52;

		const __m512i Bi = _mm512_set1_epi64((long long)bi);
		const __m512i Di = _mm512_set1_epi64((long long)di);
		const __m512i Ya = _mm512_set1_epi64((long long)ya);
		const __m512i Yc = _mm512_set1_epi64((long long)yc);
		for (int v = 0; v < V; v++) {
			const __m512i av = _mm512_load_si512((const void *)(a + 8 * v));
			const __m512i cv = _mm512_load_si512((const void *)(c + 8 * v));
			A[v] = _mm512_madd52lo_epu64(A[v], av, Bi);
			C[v] = _mm512_madd52lo_epu64(C[v], cv, Di);
			A[v] = _mm512_madd52lo_epu64(
				A[v], _mm512_load_si512((const void *)(ma->m + 8 * v)), Ya);
			C[v] = _mm512_madd52lo_epu64(
				C[v], _mm512_load_si512((const void *)(mc->m + 8 * v)), Yc);
		}
		for (int v = 0; v < V; v++) {
			A[v] = _mm512_alignr_epi64(v + 1 < V ? A[v + 1] : zero, A[v], 1);
			C[v] = _mm512_alignr_epi64(v + 1 < V ? C[v + 1] : zero, C[v], 1);
		}
		for (int v = 0; v < V; v++) {
			const __m512i av = _mm512_load_si512((const void *)(a + 8 * v));
			const __m512i cv = _mm512_load_si512((const void *)(c + 8 * v));
			A[v] = _mm512_madd52hi_epu64(A[v], av, Bi);
			C[v] = _mm512_madd52hi_epu64(C[v], cv, Di);
			A[v] = _mm512_madd52hi_epu64(
				A[v], _mm512_load_si512((const void *)(ma->m + 8 * v)), Ya);
			C[v] = _mm512_madd52hi_epu64(
				C[v], _mm512_load_si512((const void *)(mc->m + 8 * v)), Yc);
		}
	}
	A[0] = _mm512_add_epi64(A[0], lane0_only(carry_a));
	C[0] = _mm512_add_epi64(C[0], lane0_only(carry_c));
	normalise(ra, A, V);
	normalise(rc, C, V);
}

/* r = table[idx], reading every entry. */
static inline __attribute__((always_inline)) void scan(uint64_t *r, const num52 *table,
						       uint64_t idx, const int V)
{
	__m512i acc[MAX_V];
	for (int v = 0; v < V; v++)
		acc[v] = _mm512_setzero_si512();
	for (uint64_t e = 0; e < TABLE; e++) {
		const uint64_t m = sotls_limb_barrier(~sotls_limb_nonzero_mask(e ^ idx));
		const __m512i mv = _mm512_set1_epi64((long long)m);
		for (int v = 0; v < V; v++)
			acc[v] = _mm512_or_si512(
				acc[v], _mm512_and_si512(mv, _mm512_load_si512(
								     (const void *)(table[e] + 8 * v))));
	}
	for (int v = 0; v < V; v++)
		_mm512_store_si512((void *)(r + 8 * v), acc[v]);
}

/* The per-half constants: the modulus, R'^2 / R and R (both mod m). */
struct half {
	struct m52 m;
	num52 to_r52, to_r64, one;
	num52 table[TABLE];
	num52 acc, t;
};

static void half_init(const struct sotls_mont_ops *ops, struct half *h,
		      const struct sotls_exp_job *job, size_t k)
{
	const struct sotls_mont *mt = job->m;
	const size_t n = mt->n, lanes = 8 * ((k + 7) / 8);
	static const uint64_t one[SOTLS_RSA_MAX_HALF] = {1};
	uint64_t x[SOTLS_RSA_MAX_HALF];

	memset(h, 0, sizeof(*h));
	to52(h->m.m, mt->m, n, lanes);
	h->m.k0 = mt->m0inv & MASK52;
	/* R'^2 mod m from R^2 mod m: 2 (52 k - 64 n) doublings. */
	memcpy(x, mt->rr, n * sizeof(uint64_t));
	for (size_t i = 0; i < 2 * (52 * k - 64 * n); i++)
		sotls_mont_double(x, mt->m, n);
	to52(h->one, x, n, lanes); /* R'^2 for now; made R' below */
	ops->mul(x, x, one, mt);   /* R'^2 / R */
	to52(h->to_r52, x, n, lanes);
	ops->mul(x, mt->rr, one, mt); /* R */
	to52(h->to_r64, x, n, lanes);
	to52(h->t, job->base, n, lanes);
	sotls_wipe(x, sizeof(x));
}

static inline __attribute__((always_inline)) void exp2_k(const struct sotls_mont_ops *ops,
							 const struct sotls_exp_job jobs[2],
							 const int V, const int K)
{
	struct half hs[2] __attribute__((aligned(64)));
	struct half *p = &hs[0], *q = &hs[1];
	static const num52 ONE = {1};
	const size_t n = jobs[0].m->n;

	half_init(ops, p, &jobs[0], (size_t)K);
	half_init(ops, q, &jobs[1], (size_t)K);
	/* R' = AMM(R'^2, 1); the bases x R -> x R'. */
	amm2(p->one, p->one, ONE, &p->m, q->one, q->one, ONE, &q->m, V, K);
	amm2(p->table[1], p->t, p->to_r52, &p->m, q->table[1], q->t, q->to_r52, &q->m, V, K);
	memcpy(p->table[0], p->one, sizeof(num52));
	memcpy(q->table[0], q->one, sizeof(num52));
	for (unsigned e = 2; e < TABLE; e++)
		amm2(p->table[e], p->table[e - 1], p->table[1], &p->m, q->table[e],
		     q->table[e - 1], q->table[1], &q->m, V, K);

	size_t pos = sotls_exp_top(n);
	scan(p->acc, p->table, sotls_exp_window(jobs[0].exp, n, pos), V);
	scan(q->acc, q->table, sotls_exp_window(jobs[1].exp, n, pos), V);
	while (pos > 0) {
		pos -= SOTLS_EXP_WINDOW;
		for (int s = 0; s < SOTLS_EXP_WINDOW; s++)
			amm2(p->acc, p->acc, p->acc, &p->m, q->acc, q->acc, q->acc, &q->m, V, K);
		scan(p->t, p->table, sotls_exp_window(jobs[0].exp, n, pos), V);
		scan(q->t, q->table, sotls_exp_window(jobs[1].exp, n, pos), V);
		amm2(p->acc, p->acc, p->t, &p->m, q->acc, q->acc, q->t, &q->m, V, K);
	}
	/* x R' -> x R (below 2m), then reduced in the 64-bit form. */
	amm2(p->acc, p->acc, p->to_r64, &p->m, q->acc, q->acc, q->to_r64, &q->m, V, K);
	for (int j = 0; j < 2; j++) {
		uint64_t r[SOTLS_RSA_MAX_HALF + 1];
		from52(r, hs[j].acc, n, (size_t)K);
		sotls_mont_final_sub(jobs[j].r, r, r[n], jobs[j].m->m, n);
		sotls_wipe(r, sizeof(r));
	}
	sotls_wipe(hs, sizeof(hs));
}

static void exp_both(const struct sotls_mont_ops *ops, const struct sotls_exp_job jobs[2])
{
	switch (jobs[0].m->n) {
	case 16:
		exp2_k(ops, jobs, 3, 20);
		break;
	case 24:
		exp2_k(ops, jobs, 4, 30);
		break;
	case 32:
		exp2_k(ops, jobs, 5, 40);
		break;
	}
}

static void mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct sotls_mont *mt)
{
	sotls_mont_mulx.mul(r, a, b, mt);
}

static void sqr(uint64_t *r, const uint64_t *a, const struct sotls_mont *mt)
{
	sotls_mont_mulx.sqr(r, a, mt);
}

const struct sotls_mont_ops sotls_mont_ifma = {
	.name = "ifma",
	.mul = mul,
	.sqr = sqr,
	.exp2 = exp_both,
};

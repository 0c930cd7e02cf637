/*
 * The CRT exponentiations with AVX-512 IFMA (VPMADD52LUQ/HUQ; compiled with
 * -mavx512f -mavx512ifma, called only when cpu.c found IFMA and AVX-512),
 * both halves at once, the way OpenSSL 3 runs RSA-2048 on such CPUs.
 *
 * Numbers are k digits of 52 bits, one per 64-bit lane, in V registers of 8
 * lanes with room for one digit more: k = 20, 30, 40 for 1024-, 1536- and
 * 2048-bit primes. The multiplication is "almost Montgomery" (AMM) with
 * R' = 2^(52 k): a b / R' mod m, below 2m for inputs below 2m, which 4m < R'
 * allows, so only the final result is reduced. Each of the k steps adds
 * a b_i + y m, y the digit that zeroes lane 0, and shifts the lanes down by
 * one: the low halves of the products go to one accumulator, the high
 * halves (through copies of a and m shifted up a lane) to another, so the
 * step's products do not wait for each other, and lane 0 is also summed in
 * a scalar, which gives y and the carry out of lane 0 early. The lanes are
 * not normalised inside (they stay below 2^61), only at the end, by carry
 * look-ahead on the lane masks. The two halves' AMMs are interleaved so
 * that one's scalar chain fills the other's latency.
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
#define MAX_V 6 /* 41 lanes for k = 40: one above the top digit */
#define MAX_LANES (8 * MAX_V)
#define TABLE (1u << SOTLS_EXP_WINDOW)

typedef uint64_t num52[MAX_LANES] __attribute__((aligned(64)));

/* A modulus in 52-bit digits, and shifted up a digit. */
struct m52 {
	num52 m, m_up;
	uint64_t k0; /* -m^-1 mod 2^52 */
};

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

/*
 * One AMM in flight. Low halves of the products go to lo, high halves to hi
 * through copies of the operands shifted up a lane (position j + 1), so both
 * accumulators take their step's terms in parallel and are shifted down
 * together; lane 0 of both, in a scalar, gives the step's y.
 */
struct amm {
	__m512i lo[MAX_V], hi[MAX_V];
	num52 a_up;
	const uint64_t *a, *b;
	const struct m52 *m;
	uint64_t carry;
};

static inline __attribute__((always_inline)) void amm_start(struct amm *s, const uint64_t *a,
							    const uint64_t *b,
							    const struct m52 *m, const int V)
{
	__m512i prev = _mm512_setzero_si512();
	for (int v = 0; v < V; v++) {
		const __m512i av = _mm512_load_si512((const void *)(a + 8 * v));
		_mm512_store_si512((void *)(s->a_up + 8 * v), _mm512_alignr_epi64(av, prev, 7));
		prev = av;
		s->lo[v] = s->hi[v] = _mm512_setzero_si512();
	}
	s->a = a;
	s->b = b;
	s->m = m;
	s->carry = 0;
}

/* Step i: + a b_i + y m, then / 2^52. */
static inline __attribute__((always_inline)) void amm_step(struct amm *s, int i, const int V)
{
	const uint64_t bi = s->b[i];
	/* Lane 0 of this step, whole: the vector's is shifted out below. */
	const uint64_t x = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(s->lo[0])) +
			   (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(s->hi[0])) +
			   s->carry + ((s->a[0] * bi) & MASK52);
	const uint64_t y = (x * s->m->k0) & MASK52;
	s->carry = (x + ((s->m->m[0] * y) & MASK52)) >> 52;

	const __m512i Bi = _mm512_set1_epi64((long long)bi), Y = _mm512_set1_epi64((long long)y);
	for (int v = 0; v < V; v++) {
		s->lo[v] = _mm512_madd52lo_epu64(
			s->lo[v], _mm512_load_si512((const void *)(s->a + 8 * v)), Bi);
		s->hi[v] = _mm512_madd52hi_epu64(
			s->hi[v], _mm512_load_si512((const void *)(s->a_up + 8 * v)), Bi);
	}
	for (int v = 0; v < V; v++) {
		s->lo[v] = _mm512_madd52lo_epu64(
			s->lo[v], _mm512_load_si512((const void *)(s->m->m + 8 * v)), Y);
		s->hi[v] = _mm512_madd52hi_epu64(
			s->hi[v], _mm512_load_si512((const void *)(s->m->m_up + 8 * v)), Y);
	}
	const __m512i zero = _mm512_setzero_si512();
	for (int v = 0; v < V; v++) {
		s->lo[v] = _mm512_alignr_epi64(v + 1 < V ? s->lo[v + 1] : zero, s->lo[v], 1);
		s->hi[v] = _mm512_alignr_epi64(v + 1 < V ? s->hi[v + 1] : zero, s->hi[v], 1);
	}
}

static inline __attribute__((always_inline)) void amm_end(struct amm *s, uint64_t *r,
							  const int V)
{
	__m512i sum[MAX_V];
	for (int v = 0; v < V; v++)
		sum[v] = _mm512_add_epi64(s->lo[v], s->hi[v]);
	sum[0] = _mm512_add_epi64(sum[0], lane0_only(s->carry));
	normalise(r, sum, V);
}

/* ra = a b / R' mod ma, rc = c d / R' mod mc (below 2m), two at once for
 * their latencies to overlap; inputs normalised digits below 2m. Outputs
 * may be inputs. */
static inline __attribute__((always_inline)) void
amm2(uint64_t *ra, const uint64_t *a, const uint64_t *b, const struct m52 *ma, uint64_t *rc,
     const uint64_t *c, const uint64_t *d, const struct m52 *mc, const int V, const int K)
{
	struct amm x, y;
	amm_start(&x, a, b, ma, V);
	amm_start(&y, c, d, mc, V);
	for (int i = 0; i < K; i++) {
		amm_step(&x, i, V);
		amm_step(&y, i, V);
	}
	amm_end(&x, ra, V);
	amm_end(&y, rc, V);
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
	const size_t n = mt->n, lanes = 8 * (k / 8 + 1);
	static const uint64_t one[SOTLS_RSA_MAX_HALF] = {1};
	uint64_t x[SOTLS_RSA_MAX_HALF];

	memset(h, 0, sizeof(*h));
	to52(h->m.m, mt->m, n, lanes);
	memcpy(h->m.m_up + 1, h->m.m, (lanes - 1) * sizeof(uint64_t));
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
		exp2_k(ops, jobs, 6, 40);
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

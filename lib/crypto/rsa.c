/*
 * The RSA private key operation (RFC 8017 §5.2.1 RSASP1, second form):
 *
 *   c' = c u^e mod n                      base blinding
 *   m1 = c'^dp mod p, m2 = c'^dq mod q    both CRT halves (rsa_mont_*.c)
 *   m' = m2 + q ((m1 - m2) qInv mod p)    Garner's recombination
 *   s  = m' u^-1 mod n                    unblinding
 *   s^e = c mod p and mod q, or nothing leaves: the fault-attack check
 *
 * The blinding pair (u^e, u^-1) lives in the key under its lock and is
 * squared after each use (a new valid pair, cheaply); every BLIND_USES
 * operations a fresh u comes from getrandom, its inverse by Fermat in both
 * halves (u^(p-2) mod p, u^(q-2) mod q, recombined), which costs about one
 * private operation.
 */
#include "rsa.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "ct_valgrind.h"
#include "rsa_mont.h"
#include "crypto_err.h"
#include "util.h"

#define N_MAX SOTLS_RSA_MAX_LIMBS
#define H_MAX SOTLS_RSA_MAX_HALF
/* As OpenSSL's BN_BLINDING_COUNTER: a fresh u this often. */
#define BLIND_USES 32

struct sotls_rsa_key {
	const struct sotls_mont_ops *ops;
	size_t bytes; /* of n */
	size_t half;  /* limbs of p and q; n has 2 half */
	uint64_t e;
	struct sotls_mont n, p, q;
	uint64_t dp[H_MAX], dq[H_MAX], qinv[H_MAX];
	uint64_t pm2[H_MAX], qm2[H_MAX]; /* p - 2, q - 2: Fermat's inverse */
	uint64_t r3p[H_MAX], r3q[H_MAX]; /* R^3 mod p, q: see to_mont_wide */
	int test_fault;

	pthread_mutex_t lock;
	unsigned uses;
	uint64_t vi[N_MAX], vf[N_MAX]; /* u^e R, u^-1 R mod n */
};

/* The other architectures build the portable code only: its entries below
 * are absent, so no CPU of theirs is ever given a NULL one. */
static const struct sotls_mont_ops *const OPS[SOTLS_RSA_IMPLS] = {
	&sotls_mont_generic,
#if defined(__x86_64__)
	&sotls_mont_mulx,
	&sotls_mont_ifma,
#endif
};

/* Best first. IFMA multiplies outside the exponentiations with MULX. */
static const struct rsa_impl_entry {
	struct sotls_impl impl;
	enum sotls_rsa_impl id;
} IMPLS[] = {
#if defined(__x86_64__)
	{{"ifma", SOTLS_CPU_IFMA | SOTLS_CPU_AVX512F | SOTLS_CPU_BMI2 | SOTLS_CPU_ADX},
	 SOTLS_RSA_IFMA},
	{{"mulx", SOTLS_CPU_BMI2 | SOTLS_CPU_ADX}, SOTLS_RSA_MULX},
#endif
	{{"generic", 0}, SOTLS_RSA_GENERIC},
};
#define N_IMPLS (sizeof(IMPLS) / sizeof(IMPLS[0]))

static const struct rsa_impl_entry *entry(enum sotls_rsa_impl impl)
{
	for (size_t i = 0; i < N_IMPLS; i++)
		if (IMPLS[i].id == impl)
			return &IMPLS[i];
	return NULL;
}

#ifdef SOTLS_CT_VALGRIND
/* valgrind runs MULX/ADCX/ADOX but hides ADX from CPUID: the ct test, which
 * reads the host's flags in /proc/cpuinfo, sets this. */
bool sotls_rsa_ct_mulx_forced;
#endif
#if defined(SOTLS_CT_VALGRIND) && defined(__x86_64__)
#define MULX_FORCED sotls_rsa_ct_mulx_forced
#else
#define MULX_FORCED false
#endif

bool sotls_rsa_impl_supported(enum sotls_rsa_impl impl)
{
	const struct rsa_impl_entry *e = entry(impl);

	if (e == NULL)
		return false;
	return (e->impl.needs & ~sotls_cpu_features()) == 0 ||
	       (impl == SOTLS_RSA_MULX && MULX_FORCED);
}

enum sotls_rsa_impl sotls_rsa_impl_best(void)
{
	if (MULX_FORCED && !sotls_rsa_impl_supported(SOTLS_RSA_IFMA))
		return SOTLS_RSA_MULX;
	return SOTLS_CPU_PICK(IMPLS, sotls_cpu_features())->id;
}

const char *sotls_rsa_impl_name(enum sotls_rsa_impl impl)
{
	const struct rsa_impl_entry *e = entry(impl);

	return e != NULL ? e->impl.name : NULL;
}

/* ---- conversions and small arithmetic ---- */

/* r (n limbs) = b; false if b does not fit. Time depends on the lengths only. */
static bool be_to_limbs(uint64_t *r, size_t n, const struct sotls_rsa_be *b)
{
	uint8_t excess = 0;

	memset(r, 0, n * sizeof(uint64_t));
	for (size_t i = 0; i < b->len; i++) {
		const uint8_t v = b->p[b->len - 1 - i];
		if (i < 8 * n)
			r[i / 8] |= (uint64_t)v << (8 * (i % 8));
		else
			excess |= v;
	}
	SOTLS_CT_PUBLIC(&excess, sizeof(excess));
	return excess == 0;
}

static void limbs_to_be(uint8_t *out, size_t len, const uint64_t *r)
{
	for (size_t i = 0; i < len; i++)
		out[len - 1 - i] = (uint8_t)(r[i / 8] >> (8 * (i % 8)));
}

/* r = a + b mod m, for a, b < m. */
static void mod_add(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct sotls_mont *m)
{
	uint64_t carry = sotls_limbs_add(r, a, b, m->n);
	sotls_mont_final_sub(r, r, carry, m->m, m->n);
}

/* r = a - b mod m, for a, b < m: m added back by mask. */
static void mod_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct sotls_mont *m)
{
	uint64_t back[H_MAX];
	const uint64_t mask = sotls_limb_barrier((uint64_t)0 - sotls_limbs_sub(r, a, b, m->n));
	for (size_t i = 0; i < m->n; i++)
		back[i] = m->m[i] & mask;
	sotls_limbs_add(r, r, back, m->n);
}

/* r (2h limbs) = a b + c, for a, b, c of h limbs with a b + c < 2^(128 h). */
static void mul_add(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *c,
		    size_t h)
{
	memset(r, 0, 2 * h * sizeof(uint64_t));
	memcpy(r, c, h * sizeof(uint64_t));
	for (size_t i = 0; i < h; i++) {
		uint64_t carry = 0;
		for (size_t j = 0; j < h; j++) {
			unsigned __int128 x = (unsigned __int128)a[i] * b[j] + r[i + j] + carry;
			r[i + j] = (uint64_t)x;
			carry = (uint64_t)(x >> 64);
		}
		r[i + h] = carry;
	}
}

/*
 * xm = x R mod m for x of 2 m->n limbs, x = hi R + lo:
 * x R = hi R^2 + lo R = mul(hi, R^3) + mul(lo, R^2).
 */
static void to_mont_wide(const struct sotls_rsa_key *k, uint64_t *xm, const uint64_t *x,
			 const struct sotls_mont *m, const uint64_t *r3)
{
	uint64_t hi[H_MAX];

	k->ops->mul(hi, x + m->n, r3, m);
	k->ops->mul(xm, x, m->rr, m);
	mod_add(xm, xm, hi, m);
	sotls_wipe(hi, sizeof(hi));
}

/* r = a^e R mod m for a in Montgomery form; e is public. */
static void pow_e(const struct sotls_rsa_key *k, uint64_t *r, const uint64_t *a,
		  const struct sotls_mont *m)
{
	uint64_t acc[N_MAX];

	memcpy(acc, a, m->n * sizeof(uint64_t));
	for (int b = 62 - __builtin_clzll(k->e); b >= 0; b--) {
		k->ops->sqr(acc, acc, m);
		if ((k->e >> b) & 1)
			k->ops->mul(acc, acc, a, m);
	}
	memcpy(r, acc, m->n * sizeof(uint64_t));
	sotls_wipe(acc, sizeof(acc));
}

/* out (n) = x^(ep, eq) mod n by the CRT, for x < R of 2 half limbs. */
static void crt(const struct sotls_rsa_key *k, uint64_t *out, const uint64_t *x,
		const uint64_t *ep, const uint64_t *eq)
{
	static const uint64_t one[H_MAX] = {1};
	const size_t h = k->half;
	uint64_t xp[H_MAX], xq[H_MAX], m1[H_MAX], m2[H_MAX], t[H_MAX];

	to_mont_wide(k, xp, x, &k->p, k->r3p);
	to_mont_wide(k, xq, x, &k->q, k->r3q);
	const struct sotls_exp_job jobs[2] = {
		{.r = m1, .base = xp, .exp = ep, .m = &k->p},
		{.r = m2, .base = xq, .exp = eq, .m = &k->q},
	};
	k->ops->exp2(k->ops, jobs);
	if (k->test_fault != 0)
		(k->test_fault == 1 ? m1 : m2)[h / 2] ^= 1;

	/* m1 is still m1 R mod p; bring m2 out of Montgomery form (mod q)
	 * and into it mod p: t = (m1 - m2) R, then t qInv / R. */
	k->ops->mul(m2, m2, one, &k->q);
	k->ops->mul(t, m2, k->p.rr, &k->p);
	mod_sub(t, m1, t, &k->p);
	k->ops->mul(t, t, k->qinv, &k->p);
	mul_add(out, t, k->q.m, m2, h);

	sotls_wipe(xp, sizeof(xp));
	sotls_wipe(xq, sizeof(xq));
	sotls_wipe(m1, sizeof(m1));
	sotls_wipe(m2, sizeof(m2));
	sotls_wipe(t, sizeof(t));
}

static int random_limbs(uint64_t *r, size_t n)
{
	if (sotls_getrandom(r, n * sizeof(uint64_t)) != 0)
		return SOTLS_CRYPTO_NO_RANDOM;
	SOTLS_CT_SECRET(r, n * sizeof(uint64_t));
	return 0;
}

/* A fresh blinding pair vi = u^e R, vf = u^-1 R mod n for a random u. */
static int fresh_pair(const struct sotls_rsa_key *k, uint64_t *vi, uint64_t *vf)
{
	uint64_t x[N_MAX], t[N_MAX];
	int rc = random_limbs(x, k->n.n);
	if (rc != 0)
		return rc;
	/* u = x mod n; x^(p-2) and x^(q-2) give u^-1 mod p and mod q. */
	crt(k, t, x, k->pm2, k->qm2);
	k->ops->mul(vf, t, k->n.rr, &k->n);
	k->ops->mul(t, x, k->n.rr, &k->n);
	pow_e(k, vi, t, &k->n);
	sotls_wipe(x, sizeof(x));
	sotls_wipe(t, sizeof(t));
	return 0;
}

/* This operation's blinding pair; the key keeps the next one. */
static int take_blinding(struct sotls_rsa_key *k, uint64_t *vi, uint64_t *vf)
{
	const size_t n = k->n.n;

	pthread_mutex_lock(&k->lock);
	const bool fresh = k->uses >= BLIND_USES;
	if (fresh) {
		/* Other threads go on with the old chain meanwhile. */
		k->uses = 0;
	} else {
		memcpy(vi, k->vi, n * sizeof(uint64_t));
		memcpy(vf, k->vf, n * sizeof(uint64_t));
		k->ops->sqr(k->vi, k->vi, &k->n);
		k->ops->sqr(k->vf, k->vf, &k->n);
		k->uses++;
	}
	pthread_mutex_unlock(&k->lock);
	if (!fresh)
		return 0;

	int rc = fresh_pair(k, vi, vf);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&k->lock);
	k->ops->sqr(k->vi, vi, &k->n);
	k->ops->sqr(k->vf, vf, &k->n);
	k->uses = 1;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

/*
 * Nonzero unless s^e = c mod m. Both primes together check s^e = c mod n
 * (the CRT), at a quarter of the cost of each multiplication mod n.
 */
static int e_check_half(const struct sotls_rsa_key *k, const uint64_t *s, const uint64_t *c,
			const struct sotls_mont *m, const uint64_t *r3)
{
	uint64_t sm[H_MAX], cm[H_MAX];

	to_mont_wide(k, sm, s, m, r3);
	pow_e(k, sm, sm, m);
	to_mont_wide(k, cm, c, m, r3);
	int bad = sotls_ct_memcmp(sm, cm, m->n * sizeof(uint64_t)) != 0;
	sotls_wipe(sm, sizeof(sm));
	sotls_wipe(cm, sizeof(cm));
	return bad;
}

int sotls_rsa_private(struct sotls_rsa_key *k, const uint8_t *in, size_t len, uint8_t *out)
{
	if (k == NULL || in == NULL || out == NULL || len != k->bytes)
		return SOTLS_CRYPTO_BAD_ARG;
	const size_t n = k->n.n;
	uint64_t c[N_MAX], vi[N_MAX], vf[N_MAX], x[N_MAX], s[N_MAX];
	const struct sotls_rsa_be b = {in, len};

	be_to_limbs(c, n, &b);
	/* RFC 8017 §5.2.1 step 1: "If the message representative m is not
	 * between 0 and n - 1, output 'message representative out of range'". */
	if (sotls_limbs_lt_mask(c, k->n.m, n) == 0)
		return SOTLS_CRYPTO_BAD_ARG;
	int rc = take_blinding(k, vi, vf);
	if (rc != 0)
		return rc;

	k->ops->mul(x, c, vi, &k->n);
	crt(k, s, x, k->dp, k->dq);
	k->ops->mul(s, s, vf, &k->n);

	int bad = e_check_half(k, s, c, &k->p, k->r3p) | e_check_half(k, s, c, &k->q, k->r3q);
	SOTLS_CT_PUBLIC(&bad, sizeof(bad));
	if (bad) {
		memset(out, 0, len);
		rc = SOTLS_CRYPTO_FAULT;
	} else {
		SOTLS_CT_PUBLIC(s, n * sizeof(uint64_t));
		limbs_to_be(out, len, s);
	}
	sotls_wipe(vi, sizeof(vi));
	sotls_wipe(vf, sizeof(vf));
	sotls_wipe(x, sizeof(x));
	sotls_wipe(s, sizeof(s));
	return rc;
}

size_t sotls_rsa_key_bytes(const struct sotls_rsa_key *k)
{
	return k == NULL ? 0 : k->bytes;
}

void sotls_rsa_key_test_fault(struct sotls_rsa_key *k, int half)
{
	if (k != NULL)
		k->test_fault = half;
}

void sotls_rsa_key_free(struct sotls_rsa_key *k)
{
	if (k == NULL)
		return;
	pthread_mutex_destroy(&k->lock);
	sotls_wipe(k, sizeof(*k));
	free(k);
}

/* ---- loading a key ---- */

/* Reads the parts and checks their shape. Returns 0, SOTLS_CRYPTO_UNSUPPORTED or
 * SOTLS_CRYPTO_BAD_KEY. */
static int load_parts(struct sotls_rsa_key *k, const struct sotls_rsa_params *pp)
{
	/* n is public: its leading zero bytes may be skipped by branching. */
	struct sotls_rsa_be nb = pp->n;
	while (nb.len > 0 && nb.p[0] == 0) {
		nb.p++;
		nb.len--;
	}
	if (nb.len != 256 && nb.len != 384 && nb.len != 512)
		return SOTLS_CRYPTO_UNSUPPORTED;
	k->bytes = nb.len;
	const size_t n = nb.len / 8, h = n / 2;
	k->half = h;

	uint64_t limbs[N_MAX], e[1];
	be_to_limbs(limbs, n, &nb);
	if (!be_to_limbs(e, 1, &pp->e) || (e[0] & 1) == 0 || e[0] < 3 || (limbs[0] & 1) == 0)
		return SOTLS_CRYPTO_UNSUPPORTED;
	k->e = e[0];
	sotls_mont_init(&k->n, limbs, n);

	uint64_t p[H_MAX], q[H_MAX];
	bool fits = be_to_limbs(p, h, &pp->p) && be_to_limbs(q, h, &pp->q) &&
		    be_to_limbs(k->dp, h, &pp->dp) && be_to_limbs(k->dq, h, &pp->dq) &&
		    be_to_limbs(k->qinv, h, &pp->qinv);
	if (!fits)
		return SOTLS_CRYPTO_UNSUPPORTED;
	/* Whether the key has a shape this code handles is public, not the
	 * bits it was learnt from. */
	uint64_t odd = p[0] & q[0] & 1;
	uint64_t below = sotls_limbs_lt_mask(k->qinv, p, h) & 1;
	SOTLS_CT_PUBLIC(&odd, sizeof(odd));
	SOTLS_CT_PUBLIC(&below, sizeof(below));
	if (!odd || !below)
		return SOTLS_CRYPTO_UNSUPPORTED;

	/* RFC 8017 §3.2: n = p q, dp < p, dq < q (d mod (p - 1) and d mod (q - 1)). */
	static const uint64_t zero[H_MAX];
	mul_add(limbs, p, q, zero, h);
	uint64_t wrong = (uint64_t)sotls_ct_memcmp(limbs, k->n.m, n * sizeof(uint64_t));
	wrong |= ~sotls_limbs_lt_mask(k->dp, p, h) | ~sotls_limbs_lt_mask(k->dq, q, h);
	wrong = sotls_limb_nonzero_mask(wrong);
	SOTLS_CT_PUBLIC(&wrong, sizeof(wrong));
	if (wrong)
		return SOTLS_CRYPTO_BAD_KEY;

	sotls_mont_init(&k->p, p, h);
	sotls_mont_init(&k->q, q, h);
	static const uint64_t two[H_MAX] = {2};
	sotls_limbs_sub(k->pm2, p, two, h);
	sotls_limbs_sub(k->qm2, q, two, h);
	k->ops->mul(k->r3p, k->p.rr, k->p.rr, &k->p);
	k->ops->mul(k->r3q, k->q.rr, k->q.rr, &k->q);
	sotls_wipe(p, sizeof(p));
	sotls_wipe(q, sizeof(q));
	sotls_wipe(limbs, sizeof(limbs));
	return 0;
}

int sotls_rsa_key_new(struct sotls_rsa_key **out, const struct sotls_rsa_params *params,
		      enum sotls_rsa_impl impl)
{
	if (out == NULL || params == NULL || !sotls_rsa_impl_supported(impl))
		return SOTLS_CRYPTO_BAD_ARG;
	*out = NULL;
	struct sotls_rsa_key *k = calloc(1, sizeof(*k));
	if (k == NULL)
		return SOTLS_CRYPTO_NO_MEMORY;
	k->ops = OPS[impl];
	if (pthread_mutex_init(&k->lock, NULL) != 0) {
		free(k);
		return SOTLS_CRYPTO_NO_MEMORY;
	}
	int rc = load_parts(k, params);
	if (rc == 0)
		rc = fresh_pair(k, k->vi, k->vf);
	if (rc == 0) {
		/* One operation on a random input below n (its top limb clear)
		 * checks the whole key with e. */
		uint64_t x[N_MAX];
		uint8_t buf[8 * N_MAX];
		rc = random_limbs(x, k->n.n);
		if (rc == 0) {
			x[k->n.n - 1] = 0;
			SOTLS_CT_PUBLIC(x, sizeof(x));
			limbs_to_be(buf, k->bytes, x);
			rc = sotls_rsa_private(k, buf, k->bytes, buf);
			if (rc == SOTLS_CRYPTO_FAULT)
				rc = SOTLS_CRYPTO_BAD_KEY;
		}
	}
	if (rc != 0) {
		sotls_rsa_key_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

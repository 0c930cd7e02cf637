/*
 * Fixed-window modular exponentiation for the 64-bit levels. Every
 * exponent bit of the modulus' full width is processed (the exponent's
 * length is not revealed), each window costs WINDOW squarings and one
 * multiplication by a table entry, and the entry is read by scanning the
 * whole table with masks, so neither the branches nor the addresses depend
 * on the exponent.
 */
#include "rsa_mont.h"
#include "util.h"

#define WINDOW SOTLS_EXP_WINDOW
#define TABLE (1u << WINDOW)

uint64_t sotls_exp_window(const uint64_t *e, size_t n, size_t pos)
{
	const size_t limb = pos / 64, shift = pos % 64;
	uint64_t v = e[limb] >> shift;
	if (shift + WINDOW > 64 && limb + 1 < n)
		v |= e[limb + 1] << (64 - shift);
	return v & ((1u << WINDOW) - 1);
}

size_t sotls_exp_top(size_t n)
{
	const size_t bits = 64 * n;
	return bits - (bits % WINDOW ? bits % WINDOW : WINDOW);
}

/* r = table[idx], reading every entry. */
static void table_scan(uint64_t *r, const uint64_t (*table)[SOTLS_RSA_MAX_HALF * 2], uint64_t idx,
		       size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i] = 0;
	for (uint64_t k = 0; k < TABLE; k++) {
		const uint64_t mask = sotls_limb_barrier(~sotls_limb_nonzero_mask(k ^ idx));
		for (size_t i = 0; i < n; i++)
			r[i] |= table[k][i] & mask;
	}
}

static void modexp(const struct sotls_mont_ops *ops, const struct sotls_exp_job *job)
{
	const struct sotls_mont *mt = job->m;
	const size_t n = mt->n;
	uint64_t table[TABLE][SOTLS_RSA_MAX_HALF * 2];
	uint64_t acc[SOTLS_RSA_MAX_LIMBS], t[SOTLS_RSA_MAX_LIMBS];
	static const uint64_t one[SOTLS_RSA_MAX_LIMBS] = {1};

	/* table[k] = base^k R: table[0] = R = mul(R^2, 1). */
	ops->mul(table[0], mt->rr, one, mt);
	for (size_t i = 0; i < n; i++)
		table[1][i] = job->base[i];
	for (unsigned k = 2; k < TABLE; k++)
		ops->mul(table[k], table[k - 1], job->base, mt);

	size_t pos = sotls_exp_top(n);
	table_scan(acc, (const uint64_t(*)[SOTLS_RSA_MAX_HALF * 2])table,
		   sotls_exp_window(job->exp, n, pos), n);
	while (pos > 0) {
		pos -= WINDOW;
		for (int s = 0; s < WINDOW; s++)
			ops->sqr(acc, acc, mt);
		table_scan(t, (const uint64_t(*)[SOTLS_RSA_MAX_HALF * 2])table,
			   sotls_exp_window(job->exp, n, pos), n);
		ops->mul(acc, acc, t, mt);
	}
	for (size_t i = 0; i < n; i++)
		job->r[i] = acc[i];
	sotls_wipe(table, sizeof(table));
	sotls_wipe(acc, sizeof(acc));
	sotls_wipe(t, sizeof(t));
}

void sotls_modexp_window(const struct sotls_mont_ops *ops, const struct sotls_exp_job jobs[2])
{
	modexp(ops, &jobs[0]);
	modexp(ops, &jobs[1]);
}

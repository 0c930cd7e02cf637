/*
 * Portable, constant-time GHASH. Carry-less products come from ordinary
 * integer multiplications of operands thinned out so that carries never
 * reach the bits that are kept; nothing is indexed by, and no branch depends
 * on, H or the data. This assumes the target multiplies in constant time, as
 * current 64-bit x86 and Arm cores do.
 */
#include "ghash.h"

#include "ghash_field.h"
#include "util.h"

/* Blocks folded per reduction (H^1..H^4: 768 bytes); more measured no faster. */
#define POWERS 4

/* A 128-bit integer product and the few operations done on it. */
#ifdef __SIZEOF_INT128__
typedef unsigned __int128 wide;

static inline wide wmul(uint64_t a, uint64_t b)
{
	return (wide)a * b;
}

static inline wide wmake(uint64_t hi, uint64_t lo)
{
	return (wide)hi << 64 | lo;
}

static inline wide wxor(wide a, wide b)
{
	return a ^ b;
}

static inline wide wmask(wide a, uint64_t m)
{
	return a & ((wide)m << 64 | m);
}

static inline uint64_t whi(wide a)
{
	return (uint64_t)(a >> 64);
}

static inline uint64_t wlo(wide a)
{
	return (uint64_t)a;
}
#else
typedef struct {
	uint64_t hi, lo;
} wide;

static inline wide wmul(uint64_t a, uint64_t b)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;

	return (wide){ hh + (lh >> 32) + (hl >> 32) + (mid >> 32), mid << 32 | (uint32_t)ll };
}

static inline wide wmake(uint64_t hi, uint64_t lo)
{
	return (wide){ hi, lo };
}

static inline wide wxor(wide a, wide b)
{
	return (wide){ a.hi ^ b.hi, a.lo ^ b.lo };
}

static inline wide wmask(wide a, uint64_t m)
{
	return (wide){ a.hi & m, a.lo & m };
}

static inline uint64_t whi(wide a)
{
	return a.hi;
}

static inline uint64_t wlo(wide a)
{
	return a.lo;
}
#endif

/*
 * One 64-bit Karatsuba factor of a power of H, prepared for clmul64(): its
 * bits 0..59 sorted by position mod 4, and each of its bits 60..63 widened
 * to an all-zeros or all-ones mask.
 */
struct hfactor {
	uint64_t c[4];
	uint64_t top[4];
};

/* The Karatsuba factors of H^k*x^-1: low word, high word, and their sum. */
struct hpower {
	struct hfactor lo, hi, mid;
};

/* pw[k] holds H^(k+1). */
/* Overlays the opaque byte table, hence may_alias. */
struct __attribute__((may_alias)) generic_tab {
	struct hpower pw[POWERS];
};

_Static_assert(sizeof(struct generic_tab) <= sizeof(((struct sotls_ghash_key *)0)->tab),
	       "generic GHASH table too large");

#define CLASS0 UINT64_C(0x1111111111111111)

/*
 * Carry-less 64x64 -> 128 product of x and the factor f.
 *
 * An integer product is the carry-less product plus carries. If x keeps only
 * its bits at positions = i mod 4 and f only those = j mod 4, every partial
 * product lands at a position = i + j mod 4, and column k of the integer
 * product adds up the bit pairs whose positions sum to k. While that count
 * stays below 16 it occupies bits k..k+3 and never reaches k + 4, the next
 * column of the same class, so bit k of the integer product is the parity of
 * column k: the carry-less result, read through the mask of class i + j.
 * Products for the same class are xored before masking.
 *
 * A count of 16 needs 16 set bits in a class of each operand, which is why
 * f's classes stop at bit 59: 15 bits per class at most. Its top four bits
 * are added by masked shifts of x instead.
 */
static inline wide clmul64(uint64_t x, const struct hfactor *f)
{
	uint64_t x0 = x & CLASS0, x1 = x & (CLASS0 << 1);
	uint64_t x2 = x & (CLASS0 << 2), x3 = x & (CLASS0 << 3);
	wide z0 = wxor(wxor(wmul(x0, f->c[0]), wmul(x1, f->c[3])),
		       wxor(wmul(x2, f->c[2]), wmul(x3, f->c[1])));
	wide z1 = wxor(wxor(wmul(x0, f->c[1]), wmul(x1, f->c[0])),
		       wxor(wmul(x2, f->c[3]), wmul(x3, f->c[2])));
	wide z2 = wxor(wxor(wmul(x0, f->c[2]), wmul(x1, f->c[1])),
		       wxor(wmul(x2, f->c[0]), wmul(x3, f->c[3])));
	wide z3 = wxor(wxor(wmul(x0, f->c[3]), wmul(x1, f->c[2])),
		       wxor(wmul(x2, f->c[1]), wmul(x3, f->c[0])));
	wide z = wxor(wxor(wmask(z0, CLASS0), wmask(z1, CLASS0 << 1)),
		      wxor(wmask(z2, CLASS0 << 2), wmask(z3, CLASS0 << 3)));
	uint64_t hi = whi(z), lo = wlo(z);

	for (int i = 0; i < 4; i++) {
		hi ^= (x >> (4 - i)) & f->top[i];
		lo ^= (x << (60 + i)) & f->top[i];
	}
	return wmake(hi, lo);
}

static void hfactor_init(struct hfactor *f, uint64_t b)
{
	for (int i = 0; i < 4; i++) {
		f->c[i] = b & (CLASS0 << i) & UINT64_C(0x0fffffffffffffff);
		f->top[i] = 0 - (b >> (60 + i) & 1);
	}
}

static void hpower_init(struct hpower *p, uint64_t hi, uint64_t lo)
{
	hfactor_init(&p->lo, lo);
	hfactor_init(&p->hi, hi);
	hfactor_init(&p->mid, lo ^ hi);
}

/* Unreduced sum of Karatsuba partial products over several blocks. */
struct acc {
	wide lo, hi, mid;
};

static inline void acc_block(struct acc *a, uint64_t xh, uint64_t xl, const struct hpower *p)
{
	a->lo = wxor(a->lo, clmul64(xl, &p->lo));
	a->hi = wxor(a->hi, clmul64(xh, &p->hi));
	a->mid = wxor(a->mid, clmul64(xl ^ xh, &p->mid));
}

/* Folds word w, standing two words above where it belongs (see ghash_field.h). */
static inline void fold(uint64_t w, uint64_t *up1, uint64_t *up2)
{
	*up1 ^= (w << 63) ^ (w << 62) ^ (w << 57);
	*up2 ^= w ^ (w >> 1) ^ (w >> 2) ^ (w >> 7);
}

static inline void acc_reduce(const struct acc *a, uint64_t *yh, uint64_t *yl)
{
	wide mid = wxor(a->mid, wxor(a->lo, a->hi));
	uint64_t d0 = wlo(a->lo), d1 = whi(a->lo) ^ wlo(mid);
	uint64_t d2 = wlo(a->hi) ^ whi(mid), d3 = whi(a->hi);

	fold(d0, &d1, &d2);
	fold(d1, &d2, &d3);
	*yh = d3;
	*yl = d2;
}

/* Y = (Y ^ X1)*H^n ^ X2*H^(n-1) ^ ... ^ Xn*H for 1 <= n <= POWERS. */
static inline void fold_blocks(const struct generic_tab *t, uint64_t *yh, uint64_t *yl,
			       const uint8_t *in, size_t n)
{
	struct acc a = { wmake(0, 0), wmake(0, 0), wmake(0, 0) };

	acc_block(&a, *yh ^ sotls_load_be64(in), *yl ^ sotls_load_be64(in + 8), &t->pw[n - 1]);
	for (size_t i = 1; i < n; i++)
		acc_block(&a, sotls_load_be64(in + 16 * i), sotls_load_be64(in + 16 * i + 8),
			  &t->pw[n - 1 - i]);
	acc_reduce(&a, yh, yl);
}

void sotls_ghash_init_generic(struct sotls_ghash_key *gk, const uint8_t h[16])
{
	struct generic_tab *t = (struct generic_tab *)gk->tab;
	uint64_t hi, lo;

	ghash_h_div_x(&hi, &lo, h);
	hpower_init(&t->pw[0], hi, lo);
	/* H^(k+1)*x^-1 = (H^k*x^-1)*H, and pw[0] multiplies by H. */
	for (int k = 1; k < POWERS; k++) {
		struct acc a = { wmake(0, 0), wmake(0, 0), wmake(0, 0) };

		acc_block(&a, hi, lo, &t->pw[0]);
		acc_reduce(&a, &hi, &lo);
		hpower_init(&t->pw[k], hi, lo);
	}
}

void sotls_ghash_update_generic(const struct sotls_ghash_key *gk, uint8_t y[16],
				const uint8_t *in, size_t nblocks)
{
	const struct generic_tab *t = (const struct generic_tab *)gk->tab;
	uint64_t yh = sotls_load_be64(y), yl = sotls_load_be64(y + 8);

	for (; nblocks >= POWERS; nblocks -= POWERS, in += 16 * POWERS)
		fold_blocks(t, &yh, &yl, in, POWERS);
	if (nblocks)
		fold_blocks(t, &yh, &yl, in, nblocks);
	sotls_store_be64(y, yh);
	sotls_store_be64(y + 8, yl);
}

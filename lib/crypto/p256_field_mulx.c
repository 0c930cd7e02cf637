/*
 * P-256 multiplication and squaring mod p and mod n, and addition and
 * subtraction mod p, for CPUs with BMI2 and ADX, in GNU inline assembly,
 * compiled with -mbmi2 -madx (p256_level.c calls it only when the CPU has
 * both). gcc 12 does not keep two carry chains from the _addcarryx_u64
 * intrinsics (it spilled them through SETC and ran at half the portable
 * speed), and its own MULX code of the portable schedule was no faster than
 * the portable level, so the rows are written out: MULX leaves
 * the flags alone, ADCX carries through CF only and ADOX through OF only, so
 * the low and high halves of a row's products go into the accumulator as
 * two independent chains.
 *
 * Inline rather than a .S file: p256_point_impl.h inlines these into every
 * point formula, which an out-of-line call (and its saved registers) would
 * cost about a third of a multiplication each time.
 *
 * Method: the full 512-bit product (squaring: the six cross products once,
 * doubled, plus the four squares), then Montgomery reduction of the low half
 * in the special form of p = 2^256 - 2^224 + 2^192 + 2^96 - 1. Since
 * -p^-1 mod 2^64 = 1, the quotient of each step is the low word q itself, and
 * q + q·p = q·2^96 + q·p3·2^192 (the words p0 = 2^64 - 1 and p1 = 2^32 - 1
 * fold into the shift), so a step adds q << 32, q >> 32 and the low word of
 * q·p3 to the next three words and makes the high word of q·p3 (plus the
 * carry: it is below 2^64 - 2^32) a fresh one, in the register q leaves, so
 * the window rotates and no carry runs further.
 * The four reduced words plus the high half are below 2p; one subtraction
 * of p, kept by CMOV on the borrow, finishes. Nothing branches.
 *
 * Mod n (ECDSA's scalars) there is no special form: each step takes its
 * quotient from one IMUL by -n^-1 and adds q·n with the same two chains.
 */
#include "p256_internal.h"

/* Operand names as strings for the assembly templates. */
#define OP(x) "%[" #x "]"
#define OP32(x) "%k[" #x "]"

/*
 * One reduction step on the window w0..w3 (w0 the quotient): w1..w3 += the
 * shifted quotient and q·p3, w0 becomes the fresh top word. t is scratch.
 */
#define RED(t, w0, w1, w2, w3)                                       \
	"movq " OP(w0) ", %%rdx\n\t"                                 \
	"mulxq " OP(p3) ", " OP(lo) ", " OP(hi) "\n\t"               \
	"movq " OP(w0) ", " OP(t) "\n\t"                             \
	"shlq $32, " OP(t) "\n\t"                                    \
	"shrq $32, " OP(w0) "\n\t"                                   \
	"addq " OP(t) ", " OP(w1) "\n\t"                             \
	"adcq " OP(w0) ", " OP(w2) "\n\t"                            \
	"adcq " OP(lo) ", " OP(w3) "\n\t"                            \
	"adcq $0, " OP(hi) "\n\t"                                    \
	"movq " OP(hi) ", " OP(w0) "\n\t"

/* The four steps on t0..t3, leaving the reduced low half in t0..t3. */
#define REDUCE(t) RED(t, t0, t1, t2, t3) RED(t, t1, t2, t3, t0) \
	RED(t, t2, t3, t0, t1) RED(t, t3, t0, t1, t2)

/*
 * t0..t3 = (t4..t7 + t0..t3) mod m, from a sum below 2m: subtract m (words
 * m0..m3, immediates or memory operands) and keep the sum instead when that
 * borrows past the sum's carry word (top).
 */
#define FINISH(top, m0, m1, m2, m3)                                   \
	"xorl " OP32(top) ", " OP32(top) "\n\t"                       \
	"addq " OP(t0) ", " OP(t4) "\n\t"                             \
	"adcq " OP(t1) ", " OP(t5) "\n\t"                             \
	"adcq " OP(t2) ", " OP(t6) "\n\t"                             \
	"adcq " OP(t3) ", " OP(t7) "\n\t"                             \
	"adcq $0, " OP(top) "\n\t"                                    \
	"movq " OP(t4) ", " OP(t0) "\n\t"                             \
	"movq " OP(t5) ", " OP(t1) "\n\t"                             \
	"movq " OP(t6) ", " OP(t2) "\n\t"                             \
	"movq " OP(t7) ", " OP(t3) "\n\t"                             \
	"subq " m0 ", " OP(t0) "\n\t"                                 \
	"sbbq " m1 ", " OP(t1) "\n\t"                                 \
	"sbbq " m2 ", " OP(t2) "\n\t"                                 \
	"sbbq " m3 ", " OP(t3) "\n\t"                                 \
	"sbbq $0, " OP(top) "\n\t"                                    \
	"cmovcq " OP(t4) ", " OP(t0) "\n\t"                           \
	"cmovcq " OP(t5) ", " OP(t1) "\n\t"                           \
	"cmovcq " OP(t6) ", " OP(t2) "\n\t"                           \
	"cmovcq " OP(t7) ", " OP(t3) "\n\t"

/* p's words: p0 = 2^64 - 1 and p2 = 0 fit an immediate, p1 and p3 do not. */
#define FINISH_P(top) FINISH(top, "$-1", OP(p1), "$0", OP(p3))
/* n's: n2 = 2^64 - 1. */
#define FINISH_N(top) FINISH(top, OP(n0), OP(n1), "$-1", OP(n3))

/*
 * A reduction step mod n on the window w0..w3: q = w0·(-n^-1) mod 2^64 makes
 * w0 + q·n0 ≡ 0, then w0..w3 += q·n with ADCX/ADOX, the high word of q·n3
 * (below n3 = 2^64 - 2^32, so both carries fit) going into w0, fresh. z is
 * zeroed (which clears CF and OF).
 */
#define RED_N(z, w0, w1, w2, w3)                                      \
	"movq " OP(w0) ", %%rdx\n\t"                                  \
	"imulq " OP(ninv) ", %%rdx\n\t"                               \
	"xorl " OP32(z) ", " OP32(z) "\n\t"                           \
	"mulxq " OP(n0) ", " OP(lo) ", " OP(hi) "\n\t"                \
	"adcxq " OP(lo) ", " OP(w0) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w1) "\n\t"                            \
	"mulxq " OP(n1) ", " OP(lo) ", " OP(hi) "\n\t"                \
	"adcxq " OP(lo) ", " OP(w1) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w2) "\n\t"                            \
	"mulxq " OP(n2) ", " OP(lo) ", " OP(hi) "\n\t"                \
	"adcxq " OP(lo) ", " OP(w2) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w3) "\n\t"                            \
	"mulxq " OP(n3) ", " OP(lo) ", " OP(w0) "\n\t"                \
	"adcxq " OP(lo) ", " OP(w3) "\n\t"                            \
	"adoxq " OP(z) ", " OP(w0) "\n\t"                             \
	"adcxq " OP(z) ", " OP(w0) "\n\t"

#define REDUCE_N(z) RED_N(z, t0, t1, t2, t3) RED_N(z, t1, t2, t3, t0) \
	RED_N(z, t2, t3, t0, t1) RED_N(z, t3, t0, t1, t2)

/*
 * w0..w4 += a·rdx, w4 fresh (the partial product stays below 2^(64·(i+5))
 * after row i, so w4 takes both chains' last carries without overflow).
 * z becomes zero; clearing it clears CF and OF.
 */
#define ROW(z, w0, w1, w2, w3, w4)                                    \
	"xorl " OP32(z) ", " OP32(z) "\n\t"                           \
	"mulxq 0(" OP(a) "), " OP(lo) ", " OP(hi) "\n\t"              \
	"adcxq " OP(lo) ", " OP(w0) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w1) "\n\t"                            \
	"mulxq 8(" OP(a) "), " OP(lo) ", " OP(hi) "\n\t"              \
	"adcxq " OP(lo) ", " OP(w1) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w2) "\n\t"                            \
	"mulxq 16(" OP(a) "), " OP(lo) ", " OP(hi) "\n\t"             \
	"adcxq " OP(lo) ", " OP(w2) "\n\t"                            \
	"adoxq " OP(hi) ", " OP(w3) "\n\t"                            \
	"mulxq 24(" OP(a) "), " OP(lo) ", " OP(w4) "\n\t"             \
	"adcxq " OP(lo) ", " OP(w3) "\n\t"                            \
	"adoxq " OP(z) ", " OP(w4) "\n\t"                             \
	"adcxq " OP(z) ", " OP(w4) "\n\t"

/* The 512-bit product a·b into t0..t7. b's pointer is scratch once b3 is
 * loaded: 13 registers besides RDX. */
#define MUL_PRODUCT                                                   \
	"movq 0(%[b]), %%rdx\n\t"                                      \
	"mulxq 0(%[a]), %[t0], %[t1]\n\t"                              \
	"mulxq 8(%[a]), %[lo], %[t2]\n\t"                              \
	"addq %[lo], %[t1]\n\t"                                        \
	"mulxq 16(%[a]), %[lo], %[t3]\n\t"                             \
	"adcq %[lo], %[t2]\n\t"                                        \
	"mulxq 24(%[a]), %[lo], %[t4]\n\t"                             \
	"adcq %[lo], %[t3]\n\t"                                        \
	"adcq $0, %[t4]\n\t"                                           \
	"movq 8(%[b]), %%rdx\n\t"                                      \
	ROW(t7, t1, t2, t3, t4, t5)                                   \
	"movq 16(%[b]), %%rdx\n\t"                                     \
	ROW(t7, t2, t3, t4, t5, t6)                                   \
	"movq 24(%[b]), %%rdx\n\t"                                     \
	ROW(b, t3, t4, t5, t6, t7)

/* a^2 into t0..t7: the cross products a_i·a_j (i < j) into t1..t6, then
 * t1..t7 doubled (CF chain) while the squares a_i^2 go in (OF chain). */
#define SQR_PRODUCT                                                   \
	"movq 0(%[a]), %%rdx\n\t"                                      \
	"mulxq 8(%[a]), %[t1], %[t2]\n\t"                              \
	"mulxq 16(%[a]), %[lo], %[t3]\n\t"                             \
	"addq %[lo], %[t2]\n\t"                                        \
	"mulxq 24(%[a]), %[lo], %[t4]\n\t"                             \
	"adcq %[lo], %[t3]\n\t"                                        \
	"adcq $0, %[t4]\n\t"                                           \
	"movq 8(%[a]), %%rdx\n\t"                                      \
	"xorl %k[t7], %k[t7]\n\t"                                      \
	"mulxq 16(%[a]), %[lo], %[hi]\n\t"                             \
	"adcxq %[lo], %[t3]\n\t"                                       \
	"adoxq %[hi], %[t4]\n\t"                                       \
	"mulxq 24(%[a]), %[lo], %[t5]\n\t"                             \
	"adcxq %[lo], %[t4]\n\t"                                       \
	"adoxq %[t7], %[t5]\n\t"                                       \
	"adcxq %[t7], %[t5]\n\t"                                       \
	"movq 16(%[a]), %%rdx\n\t"                                     \
	"mulxq 24(%[a]), %[lo], %[t6]\n\t"                             \
	"addq %[lo], %[t5]\n\t"                                        \
	"adcq $0, %[t6]\n\t"                                           \
	"movq 0(%[a]), %%rdx\n\t"                                      \
	"xorl %k[t7], %k[t7]\n\t"                                      \
	"mulxq %%rdx, %[t0], %[hi]\n\t"                                \
	"adcxq %[t1], %[t1]\n\t"                                       \
	"adoxq %[hi], %[t1]\n\t"                                       \
	"movq 8(%[a]), %%rdx\n\t"                                      \
	"mulxq %%rdx, %[lo], %[hi]\n\t"                                \
	"adcxq %[t2], %[t2]\n\t"                                       \
	"adoxq %[lo], %[t2]\n\t"                                       \
	"adcxq %[t3], %[t3]\n\t"                                       \
	"adoxq %[hi], %[t3]\n\t"                                       \
	"movq 16(%[a]), %%rdx\n\t"                                     \
	"mulxq %%rdx, %[lo], %[hi]\n\t"                                \
	"adcxq %[t4], %[t4]\n\t"                                       \
	"adoxq %[lo], %[t4]\n\t"                                       \
	"adcxq %[t5], %[t5]\n\t"                                       \
	"adoxq %[hi], %[t5]\n\t"                                       \
	"movq 24(%[a]), %%rdx\n\t"                                     \
	"mulxq %%rdx, %[lo], %[hi]\n\t"                                \
	"adcxq %[t6], %[t6]\n\t"                                       \
	"adoxq %[lo], %[t6]\n\t"                                       \
	"adcxq %[t7], %[t7]\n\t"                                       \
	"adoxq %[hi], %[t7]\n\t"

static const uint64_t n_inv = P256_N0;

/*
 * r = x·y·2^-256 by the template `code` (y = x for a square). Both pointers
 * are clobbered (scratch, then the carry word). r is written after the last
 * read of x and y, so it may alias them.
 */
#define MONT_ASM(r, x, y, code)                                                          \
	do {                                                                             \
		uint64_t t0, t1, t2, t3, t4, t5, t6, t7, lo, hi;                         \
		const uint64_t *pa = (x), *pb = (y);                                     \
                                                                                         \
		__asm__(code                                                             \
			: [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3),\
			  [t4] "=&r"(t4), [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7),\
			  [lo] "=&r"(lo), [hi] "=&r"(hi), [a] "+r"(pa), [b] "+r"(pb)     \
			: [p1] "m"(P256_P[1]), [p3] "m"(P256_P[3]), [n0] "m"(P256_N[0]), \
			  [n1] "m"(P256_N[1]), [n2] "m"(P256_N[2]), [n3] "m"(P256_N[3]), \
			  [ninv] "m"(n_inv)                                              \
			: "rdx", "cc", "memory");                                        \
		(r)[0] = t0;                                                             \
		(r)[1] = t1;                                                             \
		(r)[2] = t2;                                                             \
		(r)[3] = t3;                                                             \
	} while (0)

static inline void fe_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	MONT_ASM(r, a, b, MUL_PRODUCT REDUCE(b) FINISH_P(a));
}

static inline void fe_sqr(p256_fe r, const p256_fe a)
{
	MONT_ASM(r, a, a, SQR_PRODUCT REDUCE(b) FINISH_P(a));
}

static void sc_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	MONT_ASM(r, a, b, MUL_PRODUCT REDUCE_N(b) FINISH_N(a));
}

static void sc_sqr(p256_fe r, const p256_fe a)
{
	MONT_ASM(r, a, a, SQR_PRODUCT REDUCE_N(b) FINISH_N(a));
}

/*
 * Addition and subtraction mod p, half the instructions gcc makes of
 * p256_internal.h's __int128 versions: a doubling has eleven of them to its
 * eight multiplications. Nothing here needs BMI2 or ADX.
 */
static inline void fe_add(p256_fe r, const p256_fe a, const p256_fe b)
{
	uint64_t t0, t1, t2, t3, s0, s1, s2, s3, top;

	/* a + b (below 2p), then minus p unless that borrows past the carry. */
	__asm__("xorl %k[top], %k[top]\n\t"
		"movq 0(%[a]), %[t0]\n\t"
		"movq 8(%[a]), %[t1]\n\t"
		"movq 16(%[a]), %[t2]\n\t"
		"movq 24(%[a]), %[t3]\n\t"
		"addq 0(%[b]), %[t0]\n\t"
		"adcq 8(%[b]), %[t1]\n\t"
		"adcq 16(%[b]), %[t2]\n\t"
		"adcq 24(%[b]), %[t3]\n\t"
		"adcq $0, %[top]\n\t"
		"movq %[t0], %[s0]\n\t"
		"movq %[t1], %[s1]\n\t"
		"movq %[t2], %[s2]\n\t"
		"movq %[t3], %[s3]\n\t"
		"subq $-1, %[s0]\n\t"
		"sbbq %[p1], %[s1]\n\t"
		"sbbq $0, %[s2]\n\t"
		"sbbq %[p3], %[s3]\n\t"
		"sbbq $0, %[top]\n\t"
		"cmovcq %[t0], %[s0]\n\t"
		"cmovcq %[t1], %[s1]\n\t"
		"cmovcq %[t2], %[s2]\n\t"
		"cmovcq %[t3], %[s3]\n\t"
		: [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [s0] "=&r"(s0),
		  [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [top] "=&r"(top)
		: [a] "r"(a), [b] "r"(b), [p1] "m"(P256_P[1]), [p3] "m"(P256_P[3])
		: "cc", "memory");
	r[0] = s0;
	r[1] = s1;
	r[2] = s2;
	r[3] = s3;
}

static inline void fe_sub(p256_fe r, const p256_fe a, const p256_fe b)
{
	uint64_t t0, t1, t2, t3, mask, m1, m3;

	/* a - b, plus p when that borrows: p masked by the borrow is
	 * (mask, mask >> 32, 0, (mask << 32) + (mask & 1)). */
	__asm__("movq 0(%[a]), %[t0]\n\t"
		"movq 8(%[a]), %[t1]\n\t"
		"movq 16(%[a]), %[t2]\n\t"
		"movq 24(%[a]), %[t3]\n\t"
		"subq 0(%[b]), %[t0]\n\t"
		"sbbq 8(%[b]), %[t1]\n\t"
		"sbbq 16(%[b]), %[t2]\n\t"
		"sbbq 24(%[b]), %[t3]\n\t"
		"sbbq %[mask], %[mask]\n\t"
		"movq %[mask], %[m1]\n\t"
		"shrq $32, %[m1]\n\t"
		"movq %[mask], %[m3]\n\t"
		"shlq $32, %[m3]\n\t"
		"subq %[mask], %[m3]\n\t"
		"addq %[mask], %[t0]\n\t"
		"adcq %[m1], %[t1]\n\t"
		"adcq $0, %[t2]\n\t"
		"adcq %[m3], %[t3]\n\t"
		: [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3),
		  [mask] "=&r"(mask), [m1] "=&r"(m1), [m3] "=&r"(m3)
		: [a] "r"(a), [b] "r"(b)
		: "cc", "memory");
	r[0] = t0;
	r[1] = t1;
	r[2] = t2;
	r[3] = t3;
}

#define P256_LEVEL_NAME mulx
#include "p256_point_impl.h"

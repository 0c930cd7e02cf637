/*
 * P-256 field multiplication and squaring for CPUs with BMI2 and ADX, in GNU
 * inline assembly, compiled with -mbmi2 -madx (p256_level.c calls it only
 * when the CPU has both). gcc 12 does not keep two carry chains from the
 * _addcarryx_u64 intrinsics (it spilled them through SETC and ran at half
 * the portable speed), and its own MULX code of p256_mont.h's schedule was no
 * faster than the portable level, so the rows are written out: MULX leaves
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
 * sc_mul (mod n, no special form) stays p256_mont.h's C.
 */
#include "p256_mont.h"

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
 * t0..t3 = (t4..t7 + t0..t3) mod p, from a sum below 2p: subtract p and keep
 * the sum instead when that borrows past the sum's carry word (top).
 */
#define FINISH(top)                                                   \
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
	"subq $-1, " OP(t0) "\n\t"                                    \
	"sbbq " OP(p1) ", " OP(t1) "\n\t"                             \
	"sbbq $0, " OP(t2) "\n\t"                                     \
	"sbbq " OP(p3) ", " OP(t3) "\n\t"                             \
	"sbbq $0, " OP(top) "\n\t"                                    \
	"cmovcq " OP(t4) ", " OP(t0) "\n\t"                           \
	"cmovcq " OP(t5) ", " OP(t1) "\n\t"                           \
	"cmovcq " OP(t6) ", " OP(t2) "\n\t"                           \
	"cmovcq " OP(t7) ", " OP(t3) "\n\t"

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

static inline void fe_mul(p256_fe r, const p256_fe a, const p256_fe b)
{
	uint64_t t0, t1, t2, t3, t4, t5, t6, t7, lo, hi;
	const uint64_t *pa = a, *pb = b;

	/* 13 registers besides RDX: b's pointer is scratch once b3 is loaded,
	 * a's the carry word once the products are done. */
	__asm__("movq 0(%[b]), %%rdx\n\t"
		"mulxq 0(%[a]), %[t0], %[t1]\n\t"
		"mulxq 8(%[a]), %[lo], %[t2]\n\t"
		"addq %[lo], %[t1]\n\t"
		"mulxq 16(%[a]), %[lo], %[t3]\n\t"
		"adcq %[lo], %[t2]\n\t"
		"mulxq 24(%[a]), %[lo], %[t4]\n\t"
		"adcq %[lo], %[t3]\n\t"
		"adcq $0, %[t4]\n\t"
		"movq 8(%[b]), %%rdx\n\t"
		ROW(t7, t1, t2, t3, t4, t5)
		"movq 16(%[b]), %%rdx\n\t"
		ROW(t7, t2, t3, t4, t5, t6)
		"movq 24(%[b]), %%rdx\n\t"
		ROW(b, t3, t4, t5, t6, t7)
		REDUCE(b)
		FINISH(a)
		: [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
		  [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi),
		  [a] "+r"(pa), [b] "+r"(pb)
		: [p1] "m"(P256_P[1]), [p3] "m"(P256_P[3])
		: "rdx", "cc", "memory");
	r[0] = t0;
	r[1] = t1;
	r[2] = t2;
	r[3] = t3;
}

static inline void fe_sqr(p256_fe r, const p256_fe a)
{
	uint64_t t0, t1, t2, t3, t4, t5, t6, t7, lo, hi;
	const uint64_t *pa = a;

	/* Cross products a_i·a_j (i < j) into t1..t6, then t1..t7 doubled (CF
	 * chain) while the squares a_i^2 go in (OF chain). */
	__asm__("movq 0(%[a]), %%rdx\n\t"
		"mulxq 8(%[a]), %[t1], %[t2]\n\t"
		"mulxq 16(%[a]), %[lo], %[t3]\n\t"
		"addq %[lo], %[t2]\n\t"
		"mulxq 24(%[a]), %[lo], %[t4]\n\t"
		"adcq %[lo], %[t3]\n\t"
		"adcq $0, %[t4]\n\t"
		"movq 8(%[a]), %%rdx\n\t"
		"xorl %k[t7], %k[t7]\n\t"
		"mulxq 16(%[a]), %[lo], %[hi]\n\t"
		"adcxq %[lo], %[t3]\n\t"
		"adoxq %[hi], %[t4]\n\t"
		"mulxq 24(%[a]), %[lo], %[t5]\n\t"
		"adcxq %[lo], %[t4]\n\t"
		"adoxq %[t7], %[t5]\n\t"
		"adcxq %[t7], %[t5]\n\t"
		"movq 16(%[a]), %%rdx\n\t"
		"mulxq 24(%[a]), %[lo], %[t6]\n\t"
		"addq %[lo], %[t5]\n\t"
		"adcq $0, %[t6]\n\t"
		"movq 0(%[a]), %%rdx\n\t"
		"xorl %k[t7], %k[t7]\n\t"
		"mulxq %%rdx, %[t0], %[hi]\n\t"
		"adcxq %[t1], %[t1]\n\t"
		"adoxq %[hi], %[t1]\n\t"
		"movq 8(%[a]), %%rdx\n\t"
		"mulxq %%rdx, %[lo], %[hi]\n\t"
		"adcxq %[t2], %[t2]\n\t"
		"adoxq %[lo], %[t2]\n\t"
		"adcxq %[t3], %[t3]\n\t"
		"adoxq %[hi], %[t3]\n\t"
		"movq 16(%[a]), %%rdx\n\t"
		"mulxq %%rdx, %[lo], %[hi]\n\t"
		"adcxq %[t4], %[t4]\n\t"
		"adoxq %[lo], %[t4]\n\t"
		"adcxq %[t5], %[t5]\n\t"
		"adoxq %[hi], %[t5]\n\t"
		"movq 24(%[a]), %%rdx\n\t"
		"mulxq %%rdx, %[lo], %[hi]\n\t"
		"adcxq %[t6], %[t6]\n\t"
		"adoxq %[lo], %[t6]\n\t"
		"adcxq %[t7], %[t7]\n\t"
		"adoxq %[hi], %[t7]\n\t"
		REDUCE(a)
		FINISH(lo)
		: [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
		  [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi),
		  [a] "+r"(pa)
		: [p1] "m"(P256_P[1]), [p3] "m"(P256_P[3])
		: "rdx", "cc", "memory");
	r[0] = t0;
	r[1] = t1;
	r[2] = t2;
	r[3] = t3;
}

#define P256_LEVEL_NAME mulx
#include "p256_point_impl.h"

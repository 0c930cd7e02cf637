/*
 * Montgomery multiplication with MULX, ADCX and ADOX (BMI2 + ADX, compiled
 * with -mbmi2 -madx and called only when cpu.c found both). CIOS as in
 * rsa_mont_generic.c, one row of the outer loop per asm block: the a b_i
 * pass adds the low halves of the products on the carry chain (ADCX) and the
 * high halves on the overflow chain (ADOX), so the two additions of each limb
 * do not wait for each other; the q m pass does the same and shifts the
 * accumulator down a limb as it stores. GAS's .rept unrolls each pass for the
 * size, which the asm takes as an immediate, so every size has straight-line
 * code without a copy of it in the source.
 */
#include "rsa_mont.h"

/*
 * Limbs 1 .. n-1 of a pass over the n limbs at X: t[J] + lo(X[J] rdx) on
 * the carry chain, + the previous high half (r10) on the overflow chain,
 * stored at T_AT (t[J], or t[J-1] to shift).
 */
#define PASS_LIMBS(X, T_AT)                                                                \
	".set J, 1\n\t"                                                                    \
	".rept %c[n] - 1\n\t"                                                              \
	"mulx 8*J(%[" X "]), %%rax, %%rbx\n\t"                                             \
	"movq 8*J(%[t]), %%r9\n\t"                                                         \
	"adcx %%rax, %%r9\n\t"                                                             \
	"adox %%r10, %%r9\n\t"                                                             \
	"movq %%r9, " T_AT "(%[t])\n\t"                                                    \
	"movq %%rbx, %%r10\n\t"                                                            \
	".set J, J + 1\n\t"                                                                \
	".endr\n\t"

/*
 * t[0..n] += a[0..n) bi, t[n+1] = the carry out. rdx = bi; r10 carries the
 * previous high half; r11 = 0 (xor also clears CF and OF).
 */
#define PASS_MUL                                                                           \
	"xorl %%r11d, %%r11d\n\t"                                                          \
	"mulx (%[a]), %%rax, %%r10\n\t"                                                    \
	"movq (%[t]), %%r9\n\t"                                                            \
	"adcx %%rax, %%r9\n\t"                                                             \
	"movq %%r9, (%[t])\n\t" PASS_LIMBS("a", "8*J")                                     \
	"movq 8*%c[n](%[t]), %%r9\n\t"                                                     \
	"adcx %%r11, %%r9\n\t"                                                             \
	"adox %%r10, %%r9\n\t"                                                             \
	"movq %%r9, 8*%c[n](%[t])\n\t"                                                     \
	"movl $0, %%r9d\n\t"                                                               \
	"adcx %%r11, %%r9\n\t"                                                             \
	"adox %%r11, %%r9\n\t"                                                             \
	"movq %%r9, 8*%c[n]+8(%[t])\n\t"

/*
 * q = t[0] m0inv mod 2^64; t = (t + q m) / 2^64 over n + 2 limbs, which
 * leaves t[0..n] with t[n] <= 1.
 */
#define PASS_REDUCE                                                                        \
	"movq (%[t]), %%rdx\n\t"                                                           \
	"imulq %[m0inv], %%rdx\n\t"                                                        \
	"xorl %%r11d, %%r11d\n\t"                                                          \
	"mulx (%[m]), %%rax, %%r10\n\t"                                                    \
	"movq (%[t]), %%r9\n\t"                                                            \
	"adcx %%rax, %%r9\n\t" PASS_LIMBS("m", "8*J-8")                                    \
	"movq 8*%c[n](%[t]), %%r9\n\t"                                                     \
	"adcx %%r11, %%r9\n\t"                                                             \
	"adox %%r10, %%r9\n\t"                                                             \
	"movq %%r9, 8*%c[n]-8(%[t])\n\t"                                                   \
	"movq 8*%c[n]+8(%[t]), %%r9\n\t"                                                   \
	"adcx %%r11, %%r9\n\t"                                                             \
	"adox %%r11, %%r9\n\t"                                                             \
	"movq %%r9, 8*%c[n](%[t])\n\t"

#define MUL_N(N)                                                                           \
	static void mul_##N(uint64_t *r, const uint64_t *a, const uint64_t *b,             \
			    const struct sotls_mont *mt)                                   \
	{                                                                                  \
		uint64_t t[N + 2] = {0};                                                   \
		for (size_t i = 0; i < N; i++) {                                           \
			uint64_t bi = b[i];                                                \
			__asm__ volatile(PASS_MUL PASS_REDUCE                              \
					 : "+d"(bi)                                        \
					 : [a] "r"(a), [m] "r"(mt->m), [t] "r"(t),         \
					   [m0inv] "r"(mt->m0inv), [n] "i"(N)              \
					 : "rax", "rbx", "r9", "r10", "r11", "cc",         \
					   "memory");                                      \
		}                                                                          \
		sotls_mont_final_sub(r, t, t[N], mt->m, N);                                \
	}

SOTLS_MONT_SIZES(MUL_N)
SOTLS_MONT_BY_SIZE(mul)

const struct sotls_mont_ops sotls_mont_mulx = {
	.name = "mulx",
	.mul = mul,
	.sqr = sqr,
	.exp2 = sotls_modexp_window,
};

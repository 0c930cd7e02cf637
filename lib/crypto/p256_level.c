/* The P-256 implementation level and table lookup, each chosen once from the CPU's
 * features (cpu.h). */
#include "cpu.h"
#include "p256_internal.h"
#include "p256_point.h"

#include <stddef.h>

#define MULX_NEEDS (SOTLS_CPU_BMI2 | SOTLS_CPU_ADX)

/* The field arithmetic and the table lookup, best first. */
static const struct {
	struct sotls_impl impl;
	const struct p256_impl *p;
} FIELD[] = {
#if defined(__x86_64__) /* the other architectures build the portable code only */
	{{"mulx", MULX_NEEDS}, &p256_impl_mulx},
#endif
	{{"generic", 0}, &p256_impl_generic},
};

static const struct {
	struct sotls_impl impl;
	p256_select_fn *fn;
} SELECT[] = {
#if defined(__x86_64__)
	{{"avx2", SOTLS_CPU_AVX2 | SOTLS_CPU_AVX}, p256_select_avx2},
#endif
	{{"generic", 0}, p256_select_generic},
};

const struct p256_impl *p256_impl_get(enum p256_level level)
{
	switch (level) {
	case P256_GENERIC:
		return &p256_impl_generic;
	case P256_MULX:
#if defined(__x86_64__)
		return (MULX_NEEDS & ~sotls_cpu_features()) == 0 ? &p256_impl_mulx : NULL;
#else
		return NULL;
#endif
	default:
		return NULL;
	}
}

/* Racing first callers compute the same pointer; the atomic makes the
 * publication well defined without a lock. */
static const struct p256_impl *_Atomic chosen;

const struct p256_impl *p256_impl_default(void)
{
	const struct p256_impl *im = chosen;

	if (im == NULL) {
		im = SOTLS_CPU_PICK(FIELD, sotls_cpu_features())->p;
		chosen = im;
	}
	return im;
}

static p256_select_fn *_Atomic select_chosen;

p256_select_fn *p256_select(void)
{
	p256_select_fn *fn = select_chosen;

	if (fn == NULL) {
		fn = SOTLS_CPU_PICK(SELECT, sotls_cpu_features())->fn;
		select_chosen = fn;
	}
	return fn;
}

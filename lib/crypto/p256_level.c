/* The P-256 implementation level and table lookup, each chosen once from the CPU (cpu.c). */
#include "cpu.h"
#include "p256_internal.h"
#include "p256_point.h"

#include <stddef.h>

const struct p256_impl *p256_impl_get(enum p256_level level)
{
	switch (level) {
	case P256_GENERIC:
		return &p256_impl_generic;
	case P256_MULX:
		return sotls_cpu_has_mulx() ? &p256_impl_mulx : NULL;
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
		im = p256_impl_get(P256_MULX);
		if (im == NULL)
			im = &p256_impl_generic;
		chosen = im;
	}
	return im;
}

static p256_select_fn *_Atomic select_chosen;

p256_select_fn *p256_select(void)
{
	p256_select_fn *fn = select_chosen;

	if (fn == NULL) {
		fn = sotls_cpu_level() >= SOTLS_CPU_AVX2 ? p256_select_avx2 : p256_select_generic;
		select_chosen = fn;
	}
	return fn;
}

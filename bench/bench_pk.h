/*
 * sotls-bench-pk's measuring harness (bench_pk.c). A group is one operation done by several
 * implementations, measured side by side: the same rounds, a rotating order,
 * the best slice kept, and each row's rate as a ratio of OpenSSL's.
 */
#ifndef SOTLS_BENCH_PK_H
#define SOTLS_BENCH_PK_H

#include <stddef.h>

struct bench_pk_impl {
	const char *name; /* "openssl" is the reference of the group's ratios */
	/* One operation; non-zero is a failure, which stops the benchmark. */
	int (*op)(void *ctx);
	void *ctx;
};

struct bench_pk_opts {
	double seconds; /* measuring time per row, split into rounds */
	int rounds;
	int json;
};

/* Measures every implementation of one operation and prints its rows. */
void bench_pk_group(const struct bench_pk_opts *o, const char *op,
		    const struct bench_pk_impl *impls, size_t n);

/* Bytes for keys and nonces: a fast generator, not a secure one (benchmark
 * only). The mbedTLS-style signature fits mbedTLS's f_rng. */
int bench_pk_random(void *unused, unsigned char *out, size_t len);

/* Fatal set-up error. */
void bench_pk_die(const char *what);

#endif

/*
 * sotls-bench-pk-rsa: the RSA rows of bench_pk_rsa.c on their own, as a
 * table on stdout (the public-key benchmark sotls-bench-pk will carry them).
 *   sotls-bench-pk-rsa [--seconds S] [--rounds N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pk_rsa.h"

static void print_row(struct bench_pk_ctx *ctx, const char *op, const char *impl, double per_s,
		      double openssl_per_s)
{
	(void)ctx;
	printf("%-18s %-14s %10.1f /s %7.2fx openssl\n", op, impl, per_s, per_s / openssl_per_s);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct bench_pk_ctx ctx = {.seconds = 1.0, .rounds = 3, .row = print_row};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			ctx.seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			ctx.rounds = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: sotls-bench-pk-rsa [--seconds S] [--rounds N]\n");
			return 2;
		}
	}
	if (ctx.seconds <= 0 || ctx.rounds <= 0) {
		fprintf(stderr, "sotls-bench-pk-rsa: --seconds and --rounds must be positive\n");
		return 2;
	}
	bench_pk_rsa(&ctx);
	return 0;
}

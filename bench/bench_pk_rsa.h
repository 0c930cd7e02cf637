/*
 * The RSA rows of the public-key benchmark: RSA-2048/3072/4096 private key
 * operations (PKCS #1 v1.5 signatures) at every sotls level against OpenSSL's
 * EVP and mbedTLS's mbedtls_rsa_private, and RSA-2048 verification (OpenSSL,
 * and mbedTLS, which verifies in sotls's handshakes), all in one process.
 */
#ifndef SOTLS_BENCH_PK_RSA_H
#define SOTLS_BENCH_PK_RSA_H

/* What the benchmark program hands to each group of rows. */
struct bench_pk_ctx {
	double seconds; /* measuring time per row and round */
	int rounds;	/* rounds; a row reports its median */
	/* One finished row: operations per second of impl, and OpenSSL's for
	 * the same operation in the same run (the reference). */
	void (*row)(struct bench_pk_ctx *ctx, const char *op, const char *impl, double per_s,
		    double openssl_per_s);
	void *user;
};

void bench_pk_rsa(struct bench_pk_ctx *ctx);

#endif

/*
 * The RSA rows of the public-key benchmark: RSA-2048/3072/4096 private key
 * operations (PKCS #1 v1.5 signatures) at every sotls level against OpenSSL's
 * EVP and mbedTLS's mbedtls_rsa_private, and RSA-2048 verification (OpenSSL,
 * and mbedTLS, which verifies in sotls's handshakes), all in one process.
 */
#ifndef SOTLS_BENCH_PK_RSA_H
#define SOTLS_BENCH_PK_RSA_H

#include "bench_pk.h"

/* Measures and prints the RSA groups (bench_pk_group). */
void bench_pk_rsa(const struct bench_pk_opts *o);

#endif

/* A self-signed RSA-2048 certificate (CN=localhost) for the ECDHE-RSA suites,
 * made with OpenSSL: sotls's mbedTLS has no RSA key generation (it serves no
 * suite). Tests only. */
#ifndef SOTLS_TESTS_TEST_RSA_CERT_H
#define SOTLS_TESTS_TEST_RSA_CERT_H

#include <stddef.h>

/* Fills cert_pem and key_pem (NUL-terminated PEM). 0, or -1. */
int test_rsa_cert(char *cert_pem, size_t cert_size, char *key_pem, size_t key_size);

#endif

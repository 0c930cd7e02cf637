/* A self-signed ECDSA P-256 certificate made in memory with mbedTLS's
 * x509write, for the examples and tests when no --cert/--key is given. */
#ifndef SOTLS_EXAMPLES_EPHEMERAL_CERT_H
#define SOTLS_EXAMPLES_EPHEMERAL_CERT_H

#include <stddef.h>

/* Fills cert_pem and key_pem (NUL-terminated PEM) for subject CN=cn.
 * Returns 0, or -1 with a message on stderr. */
int ephemeral_cert(const char *cn, char *cert_pem, size_t cert_size, char *key_pem,
		   size_t key_size);

/* A new server configuration that serves a fresh ephemeral certificate for
 * cn. NULL (with a message on stderr) if either fails. */
struct sotls_config *ephemeral_server_config(const char *cn);

/* The RNG callback (f_rng) this uses for mbedTLS, for others that need one:
 * fills out with len bytes of getrandom(2). Returns 0, or -1. */
int ephemeral_cert_random(void *ctx, unsigned char *out, size_t len);

#endif

/* mbedTLS 3.6 private state sotls needs (mbedtls_internals.c says why). */
#ifndef SOTLS_MBEDTLS_INTERNALS_H
#define SOTLS_MBEDTLS_INTERNALS_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ssl.h>

int sotls_mbed_state(const mbedtls_ssl_context *ssl);
/* Received bytes mbedTLS holds that it has not handed on; 0 after a clean
 * handshake. */
size_t sotls_mbed_unread(const mbedtls_ssl_context *ssl);
void sotls_mbed_next_seqs(const mbedtls_ssl_context *ssl, uint64_t *out_seq, uint64_t *in_seq);
/* Restarts the transcript with msg, the real first handshake message. */
int sotls_mbed_rehash_hello(mbedtls_ssl_context *ssl, const uint8_t *msg, size_t len);
void sotls_mbed_uncompressed_points(mbedtls_ssl_context *ssl);
/* The group of the ECDHE exchange once the ServerKeyExchange is made. */
mbedtls_ecp_group_id sotls_mbed_kex_group(const mbedtls_ssl_context *ssl);

#endif

/* mbedTLS 3.6 private state sotls needs (mbedtls_internals.c says why). */
#ifndef SOTLS_MBEDTLS_INTERNALS_H
#define SOTLS_MBEDTLS_INTERNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

int sotls_mbed_state(const mbedtls_ssl_context *ssl);
/* Received bytes mbedTLS holds that it has not handed on; 0 after a clean
 * handshake. */
size_t sotls_mbed_unread(const mbedtls_ssl_context *ssl);
void sotls_mbed_next_seqs(const mbedtls_ssl_context *ssl, uint64_t *out_seq, uint64_t *in_seq);
/* Restarts the transcript with msg (the real first handshake message) and,
 * unless NULL, msg2. */
int sotls_mbed_rehash(mbedtls_ssl_context *ssl, const uint8_t *msg, size_t len,
		      const uint8_t *msg2, size_t len2);
/* Server: the protocol the ServerHello's ALPN extension names (NULL: none);
 * it must outlive the ServerHello. */
void sotls_mbed_set_alpn(mbedtls_ssl_context *ssl, const char *protocol);
/* Server: the chain chosen for the suite, NULL before the choice. */
const mbedtls_x509_crt *sotls_mbed_own_chain(const mbedtls_ssl_context *ssl);
void sotls_mbed_uncompressed_points(mbedtls_ssl_context *ssl);
/* The group of the ECDHE exchange once the ServerKeyExchange is made. */
mbedtls_ecp_group_id sotls_mbed_kex_group(const mbedtls_ssl_context *ssl);

/* Resumption (resume.c). During the handshake: whether mbedTLS is resuming
 * a session, whether both hellos carried extended_master_secret, and the
 * suite of the session being negotiated. */
bool sotls_mbed_resuming(const mbedtls_ssl_context *ssl);
bool sotls_mbed_ems(const mbedtls_ssl_context *ssl);
int sotls_mbed_negotiated_suite(const mbedtls_ssl_context *ssl);
/* Server: whether a NewSessionTicket is to follow (and the ServerHello to
 * carry the session_ticket extension); set before the ServerHello step. */
bool sotls_mbed_ticket_pending(const mbedtls_ssl_context *ssl);
void sotls_mbed_set_ticket_pending(mbedtls_ssl_context *ssl, bool pending);
/* Server, before the ServerHello step: turns a resumption mbedTLS accepted
 * from a ticket into a full handshake with a fresh ticket, dropping what the
 * ticket's session brought (secret, the client certificate's digest). */
void sotls_mbed_unresume(mbedtls_ssl_context *ssl);
/* The ticket a client session holds and its lifetime hint, NULL (and *len
 * 0) if none; the length of its session ID. */
const uint8_t *sotls_mbed_session_ticket(const mbedtls_ssl_session *s, size_t *len,
					 uint32_t *hint);
const uint8_t *sotls_mbed_session_id(const mbedtls_ssl_session *s, size_t *len);
/* The session being negotiated (NULL once the handshake is over). */
const mbedtls_ssl_session *sotls_mbed_session_negotiate(const mbedtls_ssl_context *ssl);
/* The suite of a loaded session. */
int sotls_mbed_session_suite(const mbedtls_ssl_session *s);

/* The description of the alert record mbedTLS read last, -1 if that was
 * not an alert. */
int sotls_mbed_received_alert(const mbedtls_ssl_context *ssl);

/* lib/crypto's ALT hooks. A point's X and Z coordinates; an MPI's limbs
 * (least significant first) with their count, and its sign (1 or -1), read
 * without looking at the value; SHA-256's eight state words. */
const mbedtls_mpi *sotls_mbed_point_x(const mbedtls_ecp_point *p);
const mbedtls_mpi *sotls_mbed_point_z(const mbedtls_ecp_point *p);
const mbedtls_mpi_uint *sotls_mbed_mpi_limbs(const mbedtls_mpi *x, size_t *n);
int sotls_mbed_mpi_sign(const mbedtls_mpi *x);
uint32_t *sotls_mbed_sha256_state(mbedtls_sha256_context *ctx);

#endif

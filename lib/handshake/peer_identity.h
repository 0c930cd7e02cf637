/*
 * The peer's identity as the connection keeps it after the handshake: the
 * verified chain (DER), the leaf's subject and subjectAltNames, and the
 * verdict. One allocation, made while mbedTLS still holds the parsed chain
 * (verify.c) and owned by the connection from the end of the handshake, so
 * nothing of mbedTLS has to outlive the handshake and kTLS changes nothing.
 */
#ifndef SOTLS_PEER_IDENTITY_H
#define SOTLS_PEER_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/x509_crt.h>

#include "sotls.h"

struct sotls_peer_san {
	enum sotls_san_type type;
	const char *value;
};

struct sotls_peer {
	uint32_t flags; /* the final verification flags (enum sotls_cert_problem) */
	bool verified;	/* sotls_info.peer_verified */
	size_t n_certs, n_sans;
	struct sotls_verify_cert *certs; /* [depth] */
	struct sotls_peer_san *sans;
	const char *subject;
	/* certs, sans, then the bytes: DER copies, subject, SAN texts */
};

/*
 * Copies chain[0 .. n) (chain[0] the peer's leaf) with their flags. A
 * certificate that is an element of the trust list ca (the anchor) is not
 * copied but pointed to: the connection holds a reference on the
 * configuration that owns it. NULL if out of memory.
 */
struct sotls_peer *sotls_peer_new(mbedtls_x509_crt *const *chain, const uint32_t *flags, size_t n,
				  const mbedtls_x509_crt *ca);
void sotls_peer_free(struct sotls_peer *p);

/* The accessors behind sotls_conn_peer_cert / _subject / _san; p may be
 * NULL (no certificate). */
int sotls_peer_cert(const struct sotls_peer *p, size_t index, const uint8_t **der, size_t *len);
const char *sotls_peer_subject(const struct sotls_peer *p);
int sotls_peer_san(const struct sotls_peer *p, size_t index, enum sotls_san_type *type,
		   const char **value);

#endif

/* The test key holder: the other end of a sotls_private_key_method, as an
 * HSM or a key server would be, signing with an mbedTLS key it holds;
 * synchronously, asynchronously after some PENDING rounds, or failing. For
 * the private-key tests and the engine's (a pending signature mid-flight). */
#ifndef SOTLS_TESTS_KEY_HOLDER_H
#define SOTLS_TESTS_KEY_HOLDER_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/md.h>
#include <mbedtls/pk.h>

#include "sotls.h"

/* How the key holder answers. */
enum mode {
	SYNC,	      /* sign returns the signature */
	ASYNC,	      /* sign PENDING; complete signs after `rounds` more PENDINGs */
	FAIL_SIGN,    /* sign FAILURE */
	FAIL_COMPLETE /* sign PENDING, complete FAILURE */
};

struct holder {
	mbedtls_pk_context key;
	enum mode mode;
	int rounds;
	int sign_calls, complete_calls, cancel_calls;
	uint16_t sigalg;
	uint8_t digest[64];
	size_t digest_len;
};

/* The method whose arg is a struct holder. */
extern const struct sotls_private_key_method key_holder_method;

/* The hash of a SignatureAndHashAlgorithm (RFC 5246 §7.4.1.4.1). */
mbedtls_md_type_t key_holder_md(uint16_t sigalg);

/* Parses key_pem into h (0, or mbedTLS's error). */
int key_holder_init(struct holder *h, const char *key_pem, enum mode mode, int rounds);

#endif

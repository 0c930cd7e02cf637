/* Certificates made in memory with mbedTLS's x509write for the identity
 * tests: a CA, and leaves it signs with chosen subjectAltNames, so a test
 * knows the exact DER, subject and SANs the peer must report. */
#ifndef SOTLS_TESTS_TEST_CERTS_H
#define SOTLS_TESTS_TEST_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct test_cert {
	char pem[4096];
	char key_pem[1024];
	uint8_t der[2048];
	size_t der_len;
};

/* One subjectAltName: type is a GeneralName tag (1 email, 2 DNS, 6 URI,
 * 7 IP); value of len bytes (an IP in network order). */
struct test_san {
	int type;
	const void *value;
	size_t len;
};

/*
 * An ECDSA P-256 certificate for subject (e.g. "CN=client,O=sotls test"),
 * signed by issuer (NULL: self-signed), a CA if ca is set, with the nsans
 * SANs. Returns 0, or -1 with a message on stderr.
 */
int test_cert_make(struct test_cert *out, const char *subject, const struct test_cert *issuer,
		   bool ca, const struct test_san *sans, size_t nsans);

#endif

/* One side of one connection of tests/vm/resume_ktls_test.c: the handshake
 * on a non-blocking socket, data both ways at once right behind it, the
 * checks of what sotls_info says, and close_notify both ways. */
#ifndef SOTLS_TESTS_VM_RESUME_CONN_H
#define SOTLS_TESTS_VM_RESUME_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "sotls.h"

/* What one side does and must find. */
struct resume_side {
	const char *name; /* the case and connection, for the messages */
	int server;
	const char *suite;		 /* "ARIA-128-GCM": the suite must be this one */
	enum sotls_resumption resumed; /* expected on this side */
	int kernel;			 /* 1: both directions in the kernel */
	const char *reason;		 /* kernel 0: in both userspace reasons */
	size_t tx, rx;			 /* bytes this side sends, receives */
	unsigned tx_seed, rx_seed;	 /* of the data (resume_pattern) */
	int peer_verified;		 /* expected sotls_info.peer_verified */
	/* Client: TCP_CORK on from the ClientHello's flush until the first
	 * data is sent, so the Finished and the first records leave in one
	 * segment. */
	int cork;
};

/* The byte at off of the data with this seed: printable text (lines of 63
 * letters), so openssl s_client can carry it through stdin and stdout. */
uint8_t resume_pattern(uint64_t off, unsigned seed);

/*
 * Runs s on c, whose fd is non-blocking: the handshake, then s->tx bytes out
 * while s->rx bytes come in, verified byte for byte (both sides send before
 * they read anything, so neither waits for the other), the checks of
 * sotls_info, then close_notify sent and received. A client whose session is
 * wanted passes session (else NULL): it gets malloc()ed session bytes
 * (sotls_conn_get_session) and *session_len. Every step is a check() line.
 * Returns 0 if all passed.
 */
int resume_converse(struct sotls_conn *c, int fd, const struct resume_side *s, uint8_t **session,
		    size_t *session_len);

#endif

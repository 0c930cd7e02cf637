/*
 * A peer's own TLS 1.2 AEAD records, for tests that must send what sotls
 * never would: any content type, any length (past 2^14 too), any sequence
 * number in the nonce and in the AAD. The record layout is the one in
 * lib/record/record.h; this is written apart from it on purpose, so a bug
 * in the record layer is not repeated by the peer that checks it.
 * Used by the hostile peer (tests/hostile) and the record fuzzers.
 */
#ifndef SOTLS_TESTS_RECORD_FORGE_H
#define SOTLS_TESTS_RECORD_FORGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "aead.h"

#define FORGE_HEADER 5
#define FORGE_OVERHEAD (5 + 8 + 16) /* header, explicit nonce, tag */
/* Longest plaintext whose record length still fits the 16-bit field. */
#define FORGE_MAX_PLAINTEXT (65535 - 8 - 16)

/* One direction's keys. */
struct forge_keys {
	struct sotls_aead aead;
	uint8_t salt[4];
};

/* 0, or the AEAD's error for a bad alg or key. */
int forge_init(struct forge_keys *k, enum sotls_aead_alg alg, const uint8_t *key,
	       const uint8_t salt[4]);
void forge_clear(struct forge_keys *k);

/*
 * Seals len bytes (len <= FORGE_MAX_PLAINTEXT) as one record of `type` with
 * sequence number seq into out (FORGE_OVERHEAD + len bytes). Returns the
 * record's size; aborts on an AEAD failure (a test bug).
 */
size_t forge_seal(const struct forge_keys *k, uint64_t seq, uint8_t type, const uint8_t *pt,
		  size_t len, uint8_t *out);

/*
 * Opens the whole record rec (n bytes, header included) as sequence number
 * seq into pt (n - FORGE_OVERHEAD bytes). Returns the plaintext length, or
 * -1 if the record is malformed or does not authenticate.
 */
ssize_t forge_open(const struct forge_keys *k, uint64_t seq, const uint8_t *rec, size_t n,
		   uint8_t *pt);

#endif

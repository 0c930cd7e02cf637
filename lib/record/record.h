/*
 * The userspace TLS 1.2 record layer for AEAD suites (RFC 5246 6.2.3.3,
 * RFC 5288, RFC 6209): one half-connection per direction, each with its own
 * AEAD key, implicit salt and sequence number; one send buffer into which
 * records are sealed back to back; one receive buffer that a single large
 * read fills and in which records are opened in place.
 *
 * Record on the wire:
 *   type(1) | version(2) = 03 03 | length(2) | explicit nonce(8) | ciphertext | tag(16)
 * AEAD nonce = salt(4) || explicit nonce(8); we send the sequence number as
 * the explicit nonce. AAD = seq(8) | type | version | plaintext length(2).
 *
 * The buffers are borrowed when first needed and given back at the end of
 * any call that leaves them empty (record_buffers.c), so an idle connection
 * holds none; nothing is allocated per record. Any fatal error is
 * sticky: every later call returns it.
 */
#ifndef SOTLS_RECORD_H
#define SOTLS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "aead.h"
#include "policy.h"
#include "tls12.h"
#include "wire.h"

_Static_assert(SOTLS_REC_TAG == SOTLS_AEAD_TAG_LEN, "the AEAD's tag is the record's");

/* Records sealed per send batch, and the receive buffer in records. */
#define SOTLS_REC_TX_BATCH 4
#define SOTLS_REC_RX_RECORDS 4

/*
 * Useless records tolerated between two records that deliver application
 * data (a data record resets every counter; control.h counts them for both
 * record paths). Past any cap: unexpected_message, SOTLS_ERR_RECORD_FLOOD.
 * The first two are BoringSSL's figures.
 */
#define SOTLS_REC_MAX_EMPTY_RECORDS 32
#define SOTLS_REC_MAX_WARNING_ALERTS 4
/* Handshake messages refused with no_renegotiation (HelloRequest on a
 * client, ClientHello on a server). */
#define SOTLS_REC_MAX_RENEG_REFUSALS 8

/*
 * Records one key may seal or open: 2^24 keeps AES-GCM and ARIA-GCM within
 * their confidentiality margin for full 2^14-byte records (RFC 8446 5.5
 * gives 2^24.5 for AES-GCM; ARIA-GCM has the same 128-bit block and bound).
 */
#define SOTLS_REC_DEFAULT_KEY_LIMIT ((uint64_t)1 << 24)

/* One direction: its AEAD, implicit salt and next sequence number. */
struct sotls_half {
	struct sotls_aead aead;
	uint8_t salt[SOTLS_REC_SALT];
	uint64_t seq;
};

struct sotls_record {
	struct sotls_wire *wire; /* the connection's: a socket or the application */
	struct sotls_policy pol; /* the rules, the errors, the alerts (policy.h) */

	struct sotls_half tx, rx;
	uint64_t tx_records, rx_records;

	/* Send buffer (NULL while not borrowed): sealed records in [tx_head,
	 * tx_tail). tx_pending counts the caller's plaintext bytes sealed there
	 * but not yet reported. */
	uint8_t *txbuf;
	size_t tx_cap, tx_head, tx_tail, tx_pending;

	/* Receive buffer (NULL while not borrowed): unparsed bytes in
	 * [rx_head, rx_tail); opened plaintext not yet handed out in
	 * [plain, plain + plain_len). */
	uint8_t *rxbuf;
	size_t rx_cap, rx_head, rx_tail;
	uint8_t *plain;
	size_t plain_len;

	/* Set when the send direction is in the kernel (kTLS TX) and this
	 * record layer only receives: its alerts go out through this (best
	 * effort, never blocking; 0 when sent) instead of being sealed here. */
	int (*alert_out)(void *ctx, uint8_t level, uint8_t desc);
	void *alert_ctx;

	/* The most plaintext per record either way: 2^14, or the negotiated
	 * max_fragment_length (RFC 6066 §4), which the caller sets after
	 * sotls_record_init. Records are cut to it, and a larger one received
	 * is a record_overflow. */
	size_t max_plain;
};

/*
 * One record under h with sequence number h->seq (the caller counts): seals
 * len <= 2^14 bytes of in at p, header included (SOTLS_REC_OVERHEAD + len
 * bytes; 0 or SOTLS_ERR_INVALID_ARGUMENT), or opens the whole record at p
 * (frag_len body bytes, at least nonce + tag) into out, its ciphertext
 * position or the caller's buffer (0, or SOTLS_ERR_BAD_RECORD_MAC with out
 * all zeros). The handshake opens the peer's Finished with them too.
 */
int sotls_half_seal(const struct sotls_half *h, uint8_t *p, uint8_t type, const uint8_t *in,
		    size_t len);
int sotls_half_open(const struct sotls_half *h, const uint8_t *p, size_t frag_len, uint8_t *out);

/*
 * Sets up both directions on wire (the connection's, which outlives this).
 * initial/initial_len: bytes already read from
 * the socket that belong to the record stream (normally none). Returns 0,
 * SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ERR_INVALID_ARGUMENT or SOTLS_ERR_UNSUPPORTED.
 */
int sotls_record_init(struct sotls_record *r, struct sotls_wire *wire, enum sotls_aead_alg alg,
		      const struct sotls_dir_keys *tx, const struct sotls_dir_keys *rx,
		      const uint8_t *initial, size_t initial_len);

/* The role (which post-handshake handshake messages are refused rather
 * than fatal) and the key usage limit (records per direction, >= 1;
 * SOTLS_REC_DEFAULT_KEY_LIMIT until this is called). */
void sotls_record_set_policy(struct sotls_record *r, bool server, uint64_t key_limit);

/* Wipes keys and buffers and frees them. */
void sotls_record_free(struct sotls_record *r);

/* See sotls_send in sotls.h for the contract. */
ssize_t sotls_record_send(struct sotls_record *r, const uint8_t *buf, size_t len);

/* See sotls_recv in sotls.h for the contract; len must be > 0. */
ssize_t sotls_record_recv(struct sotls_record *r, uint8_t *buf, size_t len);

/* Sends a fatal alert (best effort, never blocks) and fails the
 * connection with err. Returns the sticky error. */
int sotls_record_fatal(struct sotls_record *r, uint8_t desc, int err);

/* Sends a warning alert (e.g. no_renegotiation) after whatever is sealed;
 * flushed if the socket takes it now. Returns the sticky error or 0. */
int sotls_record_warning(struct sotls_record *r, uint8_t desc);

/* Seals close_notify (once) and flushes. 0 or SOTLS_WANT_WRITE or an error. */
int sotls_record_shutdown(struct sotls_record *r);

/*
 * For callers that build records in their own buffers (lib/io, sendfile):
 * rec points at a record laid out as
 *   [header(5) | explicit nonce(8) | plaintext (len <= max_plain) | tag(16)]
 * with the plaintext already in place. Writes the header and nonce, encrypts
 * the plaintext in place and appends the tag, taking the next TX sequence
 * number. The record (SOTLS_REC_OVERHEAD + len bytes) must then be sent
 * before anything else this layer seals. 0 or a (sticky) error.
 */
int sotls_record_seal_in_place(struct sotls_record *r, uint8_t *rec, size_t len);

/*
 * Whether records may be sealed for sending now: 0, or the error a send
 * returns (the sticky error; SOTLS_ERR_KEY_USAGE_LIMIT once the limit closed
 * the direction, after flushing what is sealed; SOTLS_ERR_CLOSED).
 */
int sotls_record_tx_usable(struct sotls_record *r);

/* Whether the key may seal one more data record (one is kept for
 * close_notify). */
bool sotls_record_may_seal_data(const struct sotls_record *r);

/* The key usage limit is reached: seals close_notify after what is already
 * sealed, flushes what the socket takes now, and closes the direction.
 * Returns SOTLS_ERR_KEY_USAGE_LIMIT (or the sticky error). */
int sotls_record_limit_close(struct sotls_record *r);

/* Free bytes at the end of the send buffer (alert room kept apart). */
size_t sotls_record_tx_room(const struct sotls_record *r);

/* Appends already sealed bytes (the unsent rest of records sealed with
 * sotls_record_seal_in_place) to the send buffer; the next send, shutdown
 * or flush writes them first. len <= sotls_record_tx_room(). */
int sotls_record_queue_sealed(struct sotls_record *r, const uint8_t *data, size_t len);

/*
 * The engine's side of the buffers (sotls_engine_*): sealed bytes waiting
 * to be sent (NULL, *len 0: none), and n of them taken by the application;
 * free space at the end of the receive buffer for ciphertext (NULL, *cap 0:
 * none now, or a sticky error), and n bytes written there.
 * sotls_record_out_taken and sotls_record_in_added: 0 or
 * SOTLS_ERR_INVALID_ARGUMENT (more than there is).
 */
const uint8_t *sotls_record_out(const struct sotls_record *r, size_t *len);
int sotls_record_out_taken(struct sotls_record *r, size_t n);
uint8_t *sotls_record_in_space(struct sotls_record *r, size_t *cap);
int sotls_record_in_added(struct sotls_record *r, size_t n);

/* For callers that make records themselves (lib/io): the most plaintext a
 * record may carry (2^14 or the negotiated max_fragment_length), whether
 * a non-blocking sotls_send left bytes sealed that its caller must pass
 * again, and the sticky error (0: none). */
size_t sotls_record_max_plain(const struct sotls_record *r);
bool sotls_record_send_unfinished(const struct sotls_record *r);
int sotls_record_error(const struct sotls_record *r);

/* Fails the connection with SOTLS_ERR_SYSCALL and errno err (a send of
 * sealed bytes failed: the stream is broken). Returns the sticky error. */
int sotls_record_fail_syscall(struct sotls_record *r, int err);

#endif

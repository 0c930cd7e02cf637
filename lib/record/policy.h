/*
 * The record policy, one for both record paths. Each path (the userspace
 * record layer, record.c, and the kernel, kconn.c) only fetches and
 * writes records; everything it then decides is decided here, on the one
 * state below that both keep: which alert a fault on the wire gets, what an
 * alert from the peer means (RFC 5246 7.2), what a post-handshake handshake
 * message gets (RFC 5246 7.4.1.1, RFC 5746 4.2 / 4.4), how many useless
 * records in a row are tolerated, the AEAD usage limit of a key, and the
 * first permanent error. A path's only own part is how it sends the alert
 * a decision names.
 *
 * The decisions return 0 (go on) or the connection's error with *alert the
 * fatal alert to send first (SOTLS_POLICY_NO_ALERT: none, the peer is gone
 * or sent nothing wrong; the path just fails).
 */
#ifndef SOTLS_RECORD_POLICY_H
#define SOTLS_RECORD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The caps and the default limit are in record.h. */

#define SOTLS_POLICY_NO_ALERT (-1)

/* The counters; all zero is the initial state. */
struct sotls_useless {
	unsigned empty, warnings, refusals;
};

enum sotls_useless_kind {
	SOTLS_USELESS_EMPTY,
	SOTLS_USELESS_WARNING,
	SOTLS_USELESS_REFUSAL,
};

/* Why a connection failed, for sotls_conn_error_detail: a static text and
 * the number it is about ("empty application-data records in a row, more
 * than: 32"). */
struct sotls_why {
	const char *what;
	uint64_t value;
};

/* A record that delivered application data: every counter starts again. */
void sotls_useless_reset(struct sotls_useless *u);

/*
 * Counts n more useless records of one kind. Returns false (and fills *f)
 * when that passes the kind's cap: the caller sends unexpected_message and
 * fails with SOTLS_ERR_RECORD_FLOOD.
 */
bool sotls_useless_count(struct sotls_useless *u, enum sotls_useless_kind kind, uint64_t n,
			 struct sotls_why *f);

/* What a whole, exactly 2-byte alert from the peer means. */
enum sotls_alert_kind {
	SOTLS_ALERT_IS_CLOSE,	  /* warning close_notify: a clean end of the stream */
	SOTLS_ALERT_IS_WARNING,	  /* another warning: counted, otherwise ignored */
	SOTLS_ALERT_IS_FATAL,	  /* level fatal, any description (close_notify too) */
	SOTLS_ALERT_IS_BAD_LEVEL, /* neither level: illegal_parameter, SOTLS_ERR_DECODE */
};

enum sotls_alert_kind sotls_alert_classify(uint8_t level, uint8_t desc);

/*
 * Post-handshake handshake messages, seen as a byte stream across records
 * (a message may be split across records, and several may share one): only
 * the 4-byte header of each is needed to decide, so at most 4 bytes are kept;
 * the body of a refused ClientHello is skipped as it comes.
 */
struct sotls_hs_track {
	uint8_t hdr[4];
	uint8_t hdr_len;
	uint32_t skip; /* body bytes of a refused message still to come */
};

/*
 * Feeds len plaintext bytes of one handshake record (or of the part of one
 * the kernel handed over; record_start says whether they begin a record).
 * Returns 0 and sets *refusals to the messages to answer with a
 * no_renegotiation warning and *useless to what the record adds to the
 * refusal cap (its refused messages, and 1 for a record that only carries
 * the rest of one, so that a refused message cut into tiny records is no way
 * around the cap). Or returns SOTLS_ERR_DECODE (an empty record) or
 * SOTLS_ERR_UNEXPECTED_MESSAGE (any other message, a HelloRequest with a
 * body); the caller sends the matching fatal alert (control_alert_for).
 */
int sotls_hs_track_feed(struct sotls_hs_track *t, bool server, bool record_start,
			const uint8_t *pt, size_t len, unsigned *refusals, unsigned *useless);

/* The fatal alert for an error of sotls_hs_track_feed. */
uint8_t sotls_hs_track_alert(int err);

/*
 * The key usage limit, per direction. Sealing: a record other than
 * close_notify may take sequence number seq only if seq + 1 < limit, so that
 * close_notify can still go out at limit - 1; nothing is ever sealed at
 * seq >= limit. Opening: a record at seq >= limit is past the limit.
 */
bool sotls_key_may_seal_data(uint64_t seq, uint64_t limit);
bool sotls_key_may_seal_close(uint64_t seq, uint64_t limit);

/* What a connection's record paths know of how it is going: the same state
 * whichever path carries a direction (one copy per path in mixed modes, the
 * kernel's for its directions), so one function reports it (conn.c). */
struct sotls_policy {
	int err;	/* 0, or the first permanent error: every later call returns it */
	int sys_errno;	/* errno of a SOTLS_ERR_SYSCALL */
	/* Alert descriptions (0-255) or -1: 16 bits keep this struct, and so
	 * the connection, a malloc size class smaller. */
	int16_t peer_alert; /* the last one from the peer */
	int16_t sent_alert; /* the last one we sent */
	bool rx_closed; /* the peer's close_notify arrived */
	bool tx_closed; /* our close_notify is out (or sealed) */
	bool tx_limited; /* ... because the key usage limit was reached */
	bool server;	/* which handshake messages are refused, not fatal */
	uint64_t key_limit; /* records per key and direction */
	struct sotls_useless useless;
	struct sotls_hs_track hs;
	struct sotls_why why; /* what failed, when an error needs more words */
};

/* server: the role; key_limit 0: SOTLS_REC_DEFAULT_KEY_LIMIT. */
void sotls_policy_init(struct sotls_policy *p, bool server, uint64_t key_limit);

/* The first permanent error wins; returns it. */
int sotls_policy_fail(struct sotls_policy *p, int err);

/*
 * A fault a path found in the peer's records, named by its error:
 * SOTLS_ERR_UNEXPECTED_MESSAGE (a type that cannot come now),
 * SOTLS_ERR_PROTOCOL_VERSION, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ERR_DECODE,
 * SOTLS_ERR_BAD_RECORD_MAC, SOTLS_ERR_SEQUENCE_OVERFLOW,
 * SOTLS_ERR_KEY_USAGE_LIMIT (the peer's key passed the limit). Returns err
 * and the alert for it.
 */
int sotls_policy_fault(struct sotls_policy *p, int err, int *alert);

/* A record that delivered application data: the useless counters start
 * again. */
void sotls_policy_data(struct sotls_policy *p);

/* n empty application-data records (RFC 5246 6.2.1 allows them, against
 * traffic analysis; a run of them is a flood). */
int sotls_policy_empty(struct sotls_policy *p, uint64_t n, int *alert);

/*
 * A record that is neither application data nor empty: an alert (pt, len:
 * its whole body) or handshake bytes (record_start: they begin a record;
 * the kernel may hand over the rest of one in a later call). *refusals: the
 * no_renegotiation warnings to send (when it returns 0).
 */
int sotls_policy_control(struct sotls_policy *p, uint8_t type, const uint8_t *pt, size_t len,
			 bool record_start, int *alert, unsigned *refusals);

#endif

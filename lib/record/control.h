/*
 * The rules for records that deliver no application data, shared by the
 * userspace record layer (record.c) and the kernel RX path (conn_ktls.c) so
 * that the two cannot drift apart: what an alert means (RFC 5246 7.2), what
 * a post-handshake handshake message gets (RFC 5246 7.4.1.1, RFC 5746 4.2 /
 * 4.4), how many useless records in a row are tolerated, and the AEAD usage
 * limit of a key.
 */
#ifndef SOTLS_RECORD_CONTROL_H
#define SOTLS_RECORD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The caps and the default limit are in record.h. */

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

#endif

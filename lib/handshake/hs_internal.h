/*
 * Inside one handshake: the state that hs.c (mbedTLS driving), hs_reader.c
 * (the record framing under mbedTLS), hello_check.c (the hello checks
 * mbedTLS lacks) and hs_alert.c (errors to alerts) share.
 *
 * The invariants, stated once:
 * - Nothing past the record mbedTLS is reading is ever taken from the
 *   socket: the reader asks recv() for the rest of the current record's
 *   header or body, never more, so the byte after the peer's Finished is the
 *   first one the record layer (or kTLS) sees.
 * - Until the peer's ChangeCipherSpec, mbedTLS sees the peer's handshake
 *   messages re-framed, one whole message per record, whatever the wire
 *   fragmentation was; from the ChangeCipherSpec on it sees the wire records
 *   unchanged (they are encrypted).
 * - Every failure that sotls detects itself sets fail_err/fail_alert before
 *   the reader returns an error to mbedTLS; mbedTLS's own failures are
 *   mapped in hs_alert.c. Either way exactly one fatal alert goes out
 *   (unless mbedTLS already sent one, seen by the writer), then nothing.
 */
#ifndef SOTLS_HS_INTERNAL_H
#define SOTLS_HS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ssl.h>

#include "handshake.h"
#include "record.h"

/* RFC 5246 §6.2.1: TLSPlaintext.length MUST NOT exceed 2^14; §6.2.3:
 * TLSCiphertext.length MUST NOT exceed 2^14 + 2048. */
#define SOTLS_HS_MAX_PLAIN 16384u
#define SOTLS_HS_MAX_CIPHER (16384u + 2048u)
/* The largest handshake message accepted (header included): mbedTLS parses
 * a message from one buffer of MBEDTLS_SSL_IN_CONTENT_LEN bytes. */
#define SOTLS_HS_MAX_MESSAGE 32768u
/* Warning alerts tolerated during a handshake (CVE-2016-8610, "SSL Death
 * Alert"): more are a fatal unexpected_message. */
#define SOTLS_HS_MAX_WARNINGS 4

/* Tracks record boundaries in a byte stream that someone else frames. */
struct sotls_rec_tracker {
	uint8_t hdr[5];
	size_t hdr_have;
	size_t body_left;
	uint8_t first_body_byte; /* an alert's level */
	bool want_first;
};

struct sotls_hs_reader {
	/* The wire record being read. */
	uint8_t hdr[5];
	size_t hdr_have;
	size_t body_have;
	uint8_t small_body[2]; /* alert / CCS bodies */
	/* The peer's handshake byte stream, reassembled. */
	uint8_t *msg;
	size_t msg_len, msg_cap;
	/* What is being served to mbedTLS: a 5-byte header, then out_body. */
	uint8_t out_hdr[5];
	const uint8_t *out_body;
	size_t out_total, out_pos; /* over header + body */
	size_t consume;		   /* bytes of msg to drop once served */
	bool ccs_after_serve;	   /* switch to pass-through once served */
	bool passthrough;	   /* after the peer's CCS */
	struct sotls_rec_tracker in; /* pass-through: counts alerts, sizes */
	unsigned warnings;
	unsigned hellos; /* ClientHellos (server) / ServerHellos (client) seen */
};

struct sotls_hs {
	struct sotls_config *cfg;
	int fd;
	bool server;
	int bio_errno; /* errno of a failed send/recv, 0 if none */
	mbedtls_ssl_context ssl;

	struct sotls_hs_reader rd;
	struct sotls_rec_tracker out; /* what mbedTLS writes */
	bool alert_sent;	      /* a fatal alert record went out */

	/* A failure sotls found itself; fail_alert < 0: none to send. */
	int fail_err;
	int fail_alert;
	char fail_detail[160];

	/* RFC 5246 E.1: a ClientHello above TLS 1.2 is answered in TLS 1.2.
	 * mbedTLS 3.6 built without TLS 1.3 refuses it, so it is shown the
	 * hello with client_version 0x0303, and the transcript is put back to
	 * the real bytes (kept here) once mbedTLS has hashed and parsed it. */
	uint8_t *real_hello;
	size_t real_hello_len;

	/* The leaf's name check that sotls does itself (hs.c, verify_name):
	 * an IP literal, or none at all for SOTLS_VERIFY_CHAIN_ONLY. */
	bool check_ip, chain_only;
	uint8_t ip[16];
	size_t ip_len;

	/* Filled by the export callback. */
	bool exported;
	uint8_t master[48];
	uint8_t client_random[32];
	uint8_t server_random[32];

	/* RFC 6066 §4 max_fragment_length, in bytes, once both hellos agree on
	 * it (hello_check.c): 0 until then. Records read after that are held
	 * to it (hs_reader.c), and mbedTLS's handshake records, which it
	 * never cuts itself in TLS, are cut to it on the way out. */
	uint16_t mfl;
	bool out_ccs;	   /* our ChangeCipherSpec went out: what follows is sealed */
	uint8_t *frag;	   /* an oversized record of mbedTLS's, cut into records */
	size_t frag_len, frag_sent;
	size_t frag_src;   /* the length of mbedTLS's record it stands for */

	/* The connection, for the key log callback (keylog.c). */
	const struct sotls_conn *conn;
};

/* The mbedTLS BIO callbacks (hs_reader.c); ctx is the sotls_hs. */
int sotls_hs_bio_send(void *ctx, const unsigned char *buf, size_t len);
int sotls_hs_bio_recv(void *ctx, unsigned char *buf, size_t len);
void sotls_hs_reader_free(struct sotls_hs_reader *rd);

/* Records a failure found by sotls (first one wins); returns the code the
 * reader hands to mbedTLS. */
int sotls_hs_fail(struct sotls_hs *hs, int err, int alert, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Checks a whole ClientHello (server) or ServerHello (client) message,
 * header included, for what RFC 5246, 8422, 7627 and 6066 require and mbedTLS
 * 3.6 does not check. Returns 0, or the sotls_hs_fail code. May rewrite the
 * ClientHello's client_version (see real_hello).
 */
int sotls_hs_check_client_hello(struct sotls_hs *hs, uint8_t *msg, size_t len);
int sotls_hs_check_server_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len);

/* The NSS key log line for this handshake to the configuration's callback,
 * if it has one (keylog.c). */
void sotls_hs_keylog(const struct sotls_hs *hs);

/* The alert for an mbedTLS failure that mbedTLS did not announce itself, and
 * the sotls code and detail (hs_alert.c). */
int sotls_hs_map_error(struct sotls_hs *hs, int mrc, int *alert, char *detail, size_t len,
		       int *sys_errno);
const char *sotls_alert_name(int desc);

#endif

/*
 * Inside one handshake: the state that hs.c (mbedTLS driving), hs_reader.c
 * (the record framing under mbedTLS), msg_check.c (the message checks
 * mbedTLS lacks) and hs_alert.c (errors to alerts) share.
 *
 * The invariants, stated once:
 * - Nothing past the record mbedTLS is reading is ever taken from the
 *   socket: the reader asks recv() for the rest of the current record's
 *   header or body, never more, so the byte after the peer's Finished is the
 *   first one the record layer (or kTLS) sees.
 * - mbedTLS sees the peer's handshake messages re-framed, one whole message
 *   per record, whatever the wire fragmentation was. From the peer's
 *   ChangeCipherSpec on, the reader opens the peer's records with the keys
 *   mbedTLS exported and seals each message again for mbedTLS; the wire
 *   records' count is the sequence number the record layer goes on from.
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

/* The largest handshake message mbedTLS parses (header included): it reads a
 * message from one buffer of MBEDTLS_SSL_IN_CONTENT_LEN (2^14) bytes. A
 * ClientHello may be twice that: msg_check.c shows mbedTLS a shorter one. */
#define SOTLS_HS_MAX_MBED_MESSAGE 16384u
#define SOTLS_HS_MAX_MESSAGE 32768u
/* The most sotls holds of its own flight before it goes out: a server's
 * chain of ten 16 KiB certificates and its messages fit. */
#define SOTLS_HS_MAX_FLIGHT (256u * 1024u)
/* Warning alerts tolerated during a handshake (CVE-2016-8610, "SSL Death
 * Alert"): more are a fatal unexpected_message. */
#define SOTLS_HS_MAX_WARNINGS 4
/* The longest chain mbedTLS builds: leaf, 8 intermediates, anchor
 * (MBEDTLS_X509_MAX_VERIFY_CHAIN_SIZE; verify.c checks). */
#define SOTLS_HS_MAX_CHAIN 10

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
	bool ccs_after_serve;	   /* turn to sealed records once served */
	/* After the peer's ChangeCipherSpec (hs_reader.c, start_sealed): its
	 * records are opened with peer (whose seq counts the wire records)
	 * and what mbedTLS reads is sealed again with shown. cbuf holds one
	 * wire record, sbuf the record served. */
	bool sealed, keyed;
	struct sotls_half peer, shown;
	uint8_t *cbuf, *sbuf;
	unsigned warnings;
	unsigned hellos; /* ClientHellos (server) / ServerHellos (client) seen */
	/* An engine's application writes where record_dest points: waiting
	 * while the reader waits for bytes, staged how many it wrote. */
	bool waiting;
	size_t staged;
};

struct sotls_hs {
	struct sotls_config *cfg;
	struct sotls_wire *wire; /* the connection's */
	bool server;
	int bio_errno; /* errno of a failed send/recv, 0 if none */
	mbedtls_ssl_context ssl;

	struct sotls_hs_reader rd;
	struct sotls_rec_tracker out; /* what mbedTLS writes */
	bool alert_sent;	      /* a fatal alert record went out */

	/* A failure sotls found itself; fail_alert < 0: none to send. */
	int fail_err;
	int fail_alert;
	/* The fatal alert the peer ended the handshake with, or -1. */
	int peer_alert;
	char fail_detail[160];

	/* What mbedTLS 3.6 cannot take in a ClientHello, it is shown
	 * rewritten, and the transcript is put back to the real bytes (kept
	 * here) once mbedTLS has hashed and parsed it: a client_version above
	 * TLS 1.2, which RFC 5246 E.1 says to answer in TLS 1.2 (mbedTLS built
	 * without TLS 1.3 refuses it), and a hello above 16 KiB, shown without
	 * what mbedTLS does not act on, and one without supported_groups,
	 * which mbedTLS takes for no curve at all (msg_check.c). shown_hello
	 * is what mbedTLS is shown, until it has read it. */
	uint8_t *real_hello;
	size_t real_hello_len;
	uint8_t *shown_hello;
	size_t shown_hello_len;

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
	/* The key block of the above, derived once (sotls_hs_key_block): the
	 * reader opens the peer's records after its ChangeCipherSpec with it,
	 * and the record layer starts from it. */
	bool have_kb;
	struct sotls_key_block kb;

	/* real_hello holds a ClientHello shown to mbedTLS rewritten (else it
	 * is a copy kept for the SNI acknowledgement, sni_ack.c). */
	bool hello_rewritten;
	/* The SNI host name: server, the one the client sent (lower case);
	 * client, the one sent. */
	bool sni_present;
	char sni[256];
	/* Server, during the ClientHello check only: the client's ALPN
	 * protocol_name_list (alpn.c), already checked for syntax. */
	bool alpn_offered;
	const uint8_t *alpn_offer;
	size_t alpn_offer_len;
	/* Server: the protocol chosen, "" for none; mbedTLS writes it into
	 * the ServerHello from here. */
	char alpn[256];
	/* Server: the certificate (cert_select.c) and the acknowledgement of
	 * the name that chose it (sni_ack.c). */
	struct sotls_cert *cb_cert; /* our reference to the SNI callback's chain */
	/* The selection callback (sotls_config_set_cert_select): not asked yet,
	 * pending (the ClientHello waits, held below), or answered (cb_cert, or
	 * NULL for the configured certificates). */
	enum { SELECT_NONE, SELECT_PENDING, SELECT_ANSWERED, SELECT_DONE } select;
	const uint8_t *held_shown;
	size_t held_shown_len, held_len;
	/* A private-key method's signature (private_key.c): what it signs,
	 * kept for the check with the public key, and its answer. */
	struct sotls_pk_op *pk_op;
	int cert_index;
	enum { SNI_ACK_NONE, SNI_ACK_PENDING, SNI_ACK_SENT } sni_ack;
	uint8_t *sh; /* the ServerHello record as sent, with the extension */
	size_t sh_len, sh_sent;
	/* The peer's chain (verify.c): mbedTLS's certificates while it
	 * verifies, then sotls's copy, which the result hands over. */
	struct sotls_conn *conn;
	mbedtls_x509_crt *vchain[SOTLS_HS_MAX_CHAIN];
	uint32_t vflags[SOTLS_HS_MAX_CHAIN];
	size_t vchain_len;
	struct sotls_peer *peer;
	bool peer_checked; /* sotls_hs_check_peer has decided */
	/* RFC 6066 §4 max_fragment_length, in bytes, once both hellos agree on
	 * it (msg_check.c): 0 until then. Records read after that are held
	 * to it (hs_reader.c), and mbedTLS's handshake records, which it
	 * never cuts itself in TLS, are cut to it on the way out. */
	uint16_t mfl;
	bool out_ccs;	   /* our ChangeCipherSpec went out: what follows is sealed */
	/* Our records not yet sent: a flight goes out in one send (hs_reader.c). */
	uint8_t *flight;
	size_t flight_len, flight_cap, flight_sent;
	uint8_t *frag;	   /* an oversized record of mbedTLS's, cut into records */
	size_t frag_len, frag_sent;
	size_t frag_src;   /* the length of mbedTLS's record it stands for */

	/* Resumption (resume.c). The ClientHello's extended_master_secret
	 * and session ID (msg_check.c); whether both hellos agreed on the
	 * extended master secret (client). */
	bool hello_ems, ems;
	uint8_t client_sid[32];
	uint8_t client_sid_len;
	/* A session being considered, until the abbreviated handshake is
	 * certain: how it was found, its suite, age and peer; a server's
	 * ticket under a key that no longer issues (renewed). */
	enum sotls_resumption resume_kind;
	uint16_t resume_suite;
	int64_t resume_issued;
	struct sotls_peer *resume_peer;
	bool resume_renew;
	bool ems_abort; /* server: RFC 7627 §5.3, found in the ticket */
	/* Client: the offered session had a ticket, how long it lives; a
	 * new ticket came in this handshake. */
	bool offer_ticket, new_ticket;
	uint32_t offer_lifetime;
	/* The outcome, and a server's session ID as put in the cache. */
	enum sotls_resumption resumed;
	uint8_t sid[32];
	uint8_t sid_len;
};

/* The mbedTLS BIO callbacks (hs_reader.c); ctx is the sotls_hs. */
int sotls_hs_bio_send(void *ctx, const unsigned char *buf, size_t len);
int sotls_hs_bio_recv(void *ctx, unsigned char *buf, size_t len);
void sotls_hs_reader_free(struct sotls_hs_reader *rd);

/* What the reader returns to mbedTLS after sotls_hs_fail(): mbedTLS passes
 * a BIO error up unchanged and sends nothing for it. */
#define SOTLS_HS_READER_FAILED MBEDTLS_ERR_SSL_BAD_INPUT_DATA

/* Records a failure found by sotls (first one wins); returns the code the
 * reader hands to mbedTLS. */
int sotls_hs_fail(struct sotls_hs *hs, int err, int alert, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Checks a whole ClientHello (server) or ServerHello (client) message,
 * header included, for what RFC 5246, 8422, 7627 and 6066 require and mbedTLS
 * 3.6 does not check. Returns 0, or the sotls_hs_fail code. *shown and
 * *shown_len are the ClientHello mbedTLS is to see: msg itself, or one
 * rewritten for it (see real_hello).
 */
/* Server, the ClientHello checked: asks the certificate selection callback,
 * once. 0 (go on), 1 (pending: hold the ClientHello), or the sotls_hs_fail
 * code (refused). */
int sotls_cert_select_ask(struct sotls_hs *hs);

int sotls_hs_check_client_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len,
				const uint8_t **shown, size_t *shown_len);
int sotls_hs_check_server_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len);
/* The peer's ECDHE share (RFC 8422 §5.4, §5.11; RFC 7748 §6.1). */
int sotls_hs_check_client_key_exchange(struct sotls_hs *hs, const uint8_t *msg, size_t len);
int sotls_hs_check_server_key_exchange(struct sotls_hs *hs, const uint8_t *msg, size_t len);

/* Server: after the ClientHello's extensions are checked, chooses the
 * ALPN protocol or fails (alpn.c). Returns 0 or the sotls_hs_fail code. */
int sotls_alpn_choose(struct sotls_hs *hs);

/* The server's cert_index once mbedTLS has chosen the suite and chain,
 * right after the ClientHello step (cert_select.c). */
void sotls_cert_note_choice(struct sotls_hs *hs);
/* The configuration's (or the SNI callback's) certificate whose chain is
 * chain, NULL if none. */
struct sotls_cert *sotls_hs_cert_of(const struct sotls_hs *hs, const mbedtls_x509_crt *chain);
/* Frees a private-key operation's state (private_key.c). NULL is ignored. */
void sotls_pk_op_free(struct sotls_pk_op *op);

/* Frees (wiped) the ClientHello copies, real_hello and shown_hello. */
void sotls_hs_drop_hello(struct sotls_hs *hs);

/* The socket write under the BIO: n >= 0 bytes, or an mbedTLS code. */
int sotls_hs_sock_send(struct sotls_hs *hs, const uint8_t *buf, size_t len);
/* Sends what sotls_hs_sock_send gathered: 0 once it is all out, or
 * MBEDTLS_ERR_SSL_WANT_WRITE / MBEDTLS_ERR_NET_SEND_FAILED. */
int sotls_hs_flush(struct sotls_hs *hs);
/* Server: writes the ServerHello record buf with an empty server_name
 * extension added and the transcript made to match (sni_ack.c). Returns
 * len once all of it is out, or an mbedTLS code. */
int sotls_sni_ack_send(struct sotls_hs *hs, const uint8_t *buf, size_t len);

/* The NSS key log line for this handshake to the configuration's callback,
 * if it has one (keylog.c). */
void sotls_hs_keylog(const struct sotls_hs *hs);

/* The alert for an mbedTLS failure that mbedTLS did not announce itself, and
 * the sotls code and detail (hs_alert.c). */
/* hs->kb for suite, derived the first time it is asked for. 0 or
 * SOTLS_ERR_INTERNAL. */
int sotls_hs_key_block(struct sotls_hs *hs, const struct sotls_suite *suite);

int sotls_hs_map_error(struct sotls_hs *hs, int mrc, int *alert, char *detail, size_t len,
		       int *sys_errno);
const char *sotls_alert_name(int desc);

/* The peer's chain (verify.c). sotls_hs_verify_chain is mbedTLS's verify
 * callback; sotls_hs_check_peer decides once the peer's Certificate message
 * is parsed (0, or the sotls_hs_fail code). */
int sotls_hs_verify_chain(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags);
int sotls_hs_check_peer(struct sotls_hs *hs);
/* The leaf's name rules that hs.c keeps (an IP literal, CHAIN_ONLY). */
void sotls_hs_verify_name(struct sotls_hs *hs, const mbedtls_x509_crt *leaf, uint32_t *flags);
/* Verification flags in words, one line ("" for 0). */
void sotls_verify_reason(uint32_t flags, char *out, size_t len);
/* The alert for a chain with these flags (RFC 5246 §7.2.2). */
int sotls_verify_alert(uint32_t flags);

#endif

/*
 * The records under mbedTLS during a handshake (see hs_internal.h for the
 * invariants).
 *
 * mbedTLS 3.6 parses a handshake message only if its 4-byte header sits in
 * one record and the whole message fits one buffer; it lets warning alerts
 * through without limit; and it sends no alert for several malformed
 * records. So until the peer's ChangeCipherSpec this reader reads the wire
 * records itself (header, then exactly the body), checks them, reassembles
 * the handshake byte stream and hands mbedTLS one whole message per record.
 * The transcript hash covers handshake messages, not records, so mbedTLS
 * computes the same Finished as the peer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"
#include "record.h"
#include "util.h"

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* ---- the wire ---- */

/* buf is where record_dest says the next bytes go; an engine's application
 * has put staged bytes there already (sotls_hs_in_added). */
static int sock_recv(struct sotls_hs *hs, uint8_t *buf, size_t len)
{
	struct sotls_hs_reader *rd = &hs->rd;
	if (rd->staged > 0) {
		int n = (int)rd->staged;
		rd->staged = 0;
		rd->waiting = false;
		return n;
	}
	ssize_t n = sotls_wire_recv(hs->wire, buf, len);
	if (n == SOTLS_WANT_READ) {
		rd->waiting = true;
		return MBEDTLS_ERR_SSL_WANT_READ;
	}
	if (n < 0) {
		hs->bio_errno = errno;
		return MBEDTLS_ERR_NET_RECV_FAILED;
	}
	rd->waiting = false;
	return (int)n; /* 0: EOF */
}

/*
 * Feeds n bytes of a record stream to a tracker; calls on_header for each
 * header completed and on_level for each alert's first body byte. Returns 0
 * or what a callback returned.
 */
static int track(struct sotls_hs *hs, struct sotls_rec_tracker *t, const uint8_t *p, size_t n,
		 int (*on_header)(struct sotls_hs *, const uint8_t hdr[5]),
		 int (*on_level)(struct sotls_hs *, uint8_t level))
{
	while (n > 0) {
		if (t->hdr_have < 5) {
			size_t k = 5 - t->hdr_have < n ? 5 - t->hdr_have : n;
			memcpy(t->hdr + t->hdr_have, p, k);
			t->hdr_have += k;
			p += k;
			n -= k;
			if (t->hdr_have == 5) {
				t->body_left = be16(t->hdr + 3);
				t->want_first = t->hdr[0] == SOTLS_CT_ALERT;
				int rc = on_header != NULL ? on_header(hs, t->hdr) : 0;
				if (rc != 0)
					return rc;
				if (t->body_left == 0)
					t->hdr_have = 0;
			}
			continue;
		}
		if (t->want_first) {
			t->want_first = false;
			int rc = on_level != NULL ? on_level(hs, p[0]) : 0;
			if (rc != 0)
				return rc;
		}
		size_t k = t->body_left < n ? t->body_left : n;
		t->body_left -= k;
		p += k;
		n -= k;
		if (t->body_left == 0)
			t->hdr_have = 0;
	}
	return 0;
}

/* ---- what mbedTLS writes ---- */

static int out_header(struct sotls_hs *hs, const uint8_t hdr[5])
{
	if (hdr[0] == SOTLS_CT_ALERT)
		hs->alert_sent = true;
	if (hdr[0] == SOTLS_CT_CHANGE_CIPHER_SPEC)
		hs->out_ccs = true;
	return 0;
}

/* How many of buf's bytes finish the record being written: under a
 * max_fragment_length each send stops at a record's end, so every record
 * mbedTLS writes is seen from its first byte (see bio_send). */
static size_t to_record_end(const struct sotls_rec_tracker *t, const uint8_t *buf, size_t len)
{
	size_t n;
	if (t->hdr_have == 5) {
		n = t->body_left;
	} else {
		size_t need = 5 - t->hdr_have;
		if (len < need)
			return len;
		uint8_t hdr[5];
		memcpy(hdr, t->hdr, t->hdr_have);
		memcpy(hdr + t->hdr_have, buf, need);
		n = need + be16(hdr + 3);
	}
	return n < len ? n : len;
}

/* mbedTLS's whole plaintext handshake record at buf (len bytes), as records
 * of at most hs->mfl body bytes: the same type, version and bytes in order,
 * which is all RFC 5246 §6.2.1 asks of fragments. */
static int cut_record(struct sotls_hs *hs, const uint8_t *buf, size_t len)
{
	size_t body = len - 5, n = (body + hs->mfl - 1) / hs->mfl;
	hs->frag = malloc(body + 5 * n);
	if (hs->frag == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory to fragment a handshake record");
	uint8_t *p = hs->frag;
	for (size_t off = 0; off < body; off += hs->mfl) {
		size_t k = body - off < hs->mfl ? body - off : hs->mfl;
		memcpy(p, buf, 3);
		p[3] = (uint8_t)(k >> 8);
		p[4] = (uint8_t)k;
		memcpy(p + 5, buf + 5 + off, k);
		p += 5 + k;
	}
	hs->frag_len = (size_t)(p - hs->frag);
	hs->frag_sent = 0;
	hs->frag_src = len;
	return 0;
}

/* Sends the cut records; mbedTLS hears of its record only once all are
 * out, and until then passes the same bytes again. */
static int send_cut(struct sotls_hs *hs, const uint8_t *buf)
{
	while (hs->frag_sent < hs->frag_len) {
		int n = sotls_hs_sock_send(hs, hs->frag + hs->frag_sent, hs->frag_len - hs->frag_sent);
		if (n < 0)
			return n;
		hs->frag_sent += (size_t)n;
	}
	int done = (int)hs->frag_src;
	free(hs->frag);
	hs->frag = NULL;
	(void)track(hs, &hs->out, buf, hs->frag_src, out_header, NULL);
	return done;
}

int sotls_hs_bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct sotls_hs *hs = ctx;
	if (hs->sni_ack == SNI_ACK_PENDING) {
		/* The ServerHello, amended (sni_ack.c); the tracker sees what
		 * mbedTLS wrote, whatever went on the wire. */
		int n = sotls_sni_ack_send(hs, buf, len);
		if (n >= 0)
			(void)track(hs, &hs->out, buf, (size_t)n, out_header, NULL);
		return n;
	}
	size_t span = len;
	/* RFC 6066 §4: "the client and server MUST immediately begin
	 * fragmenting messages (including handshake messages) to ensure that
	 * no fragment larger than the negotiated length is sent". mbedTLS
	 * does not cut handshake messages in TLS, so its plaintext records
	 * are cut here; after our ChangeCipherSpec only the Finished (16
	 * bytes) and alerts follow. */
	if (hs->mfl != 0 && !hs->out_ccs) {
		if (hs->frag == NULL && hs->out.hdr_have == 0 && len >= 5 &&
		    buf[0] == SOTLS_CT_HANDSHAKE && be16(buf + 3) > hs->mfl) {
			size_t rec = 5 + be16(buf + 3);
			if (len < rec)
				return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
						     "mbedTLS wrote part of a handshake record");
			int rc = cut_record(hs, buf, rec);
			if (rc != 0)
				return rc;
		}
		if (hs->frag != NULL)
			return send_cut(hs, buf);
		span = to_record_end(&hs->out, buf, len);
	}
	int n = sotls_hs_sock_send(hs, buf, span);
	if (n > 0)
		(void)track(hs, &hs->out, buf, (size_t)n, out_header, NULL);
	return n;
}

/* ---- what the peer sends ---- */

/* A record of len bytes, overhead of them not plaintext, above the agreed
 * max_fragment_length? RFC 6066 §4 puts the negotiated length where RFC
 * 5246 §6.2.1 has 2^14, whose excess is a record_overflow (§7.2.2). */
static bool over_mfl(const struct sotls_hs *hs, uint32_t len, uint32_t overhead)
{
	return hs->mfl != 0 && len > hs->mfl + overhead;
}

/* ---- one wire record at a time ---- */

static int check_version(struct sotls_hs *hs)
{
	const uint8_t *hdr = hs->rd.hdr;
	if (hdr[1] == 3 && (hs->rd.hellos == 0 || hdr[2] == 3))
		return 0;
	/* RFC 5246 E.1: "a TLS server MUST accept any value {03,XX} as the
	 * record layer version number for ClientHello"; a client takes the
	 * ServerHello's records the same way, as OpenSSL does. Once the
	 * hello is in, TLS 1.2 is the version and every record carries
	 * {03,03} (RFC 5246 §6.2.1), as OpenSSL requires too
	 * (protocol_version). mbedTLS sees every record as {03,03} (serve):
	 * it would refuse a ClientHello record above its own version. */
	return sotls_hs_fail(hs, SOTLS_ERR_PROTOCOL_VERSION, SOTLS_ALERT_PROTOCOL_VERSION,
			     "record version %u.%u%s", hdr[1], hdr[2],
			     hs->rd.hellos > 0 ? " after the hello" : "");
}

/* RFC 5246 §6.2.1 and §7, for a plaintext record header. */
static int check_header(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	uint8_t type = rd->hdr[0];
	uint32_t len = be16(rd->hdr + 3);

	if (type != SOTLS_CT_HANDSHAKE && type != SOTLS_CT_ALERT && type != SOTLS_CT_CHANGE_CIPHER_SPEC) {
		/* RFC 5246 §6: "If a TLS implementation receives an unexpected
		 * record type, it MUST send an unexpected_message alert." That
		 * covers application data before Finished, heartbeats that
		 * were never negotiated (RFC 6520 §2), and SSLv2-format hellos
		 * (first byte 0x80), which sotls does not accept (E.2: MAY). */
		return sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE,
				     type & 0x80 ? "SSLv2-format record (first byte 0x%02x)"
						 : "record type %u during the handshake",
				     type);
	}
	int rc = check_version(hs);
	if (rc != 0)
		return rc;
	if (len > (size_t)SOTLS_REC_MAX_PLAINTEXT)
		/* RFC 5246 §6.2.1: "The length MUST NOT exceed 2^14." */
		return sotls_hs_fail(hs, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW,
				     "plaintext record of %u bytes", len);
	if (over_mfl(hs, len, 0))
		return sotls_hs_fail(hs, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW,
				     "record of %u bytes above max_fragment_length %u", len, hs->mfl);
	if (len == 0)
		/* RFC 5246 §6.2.1: "Implementations MUST NOT send
		 * zero-length fragments of Handshake, Alert, or
		 * ChangeCipherSpec content types." */
		return sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR,
				     "empty record of type %u", type);
	if (type != SOTLS_CT_HANDSHAKE && rd->msg_len > 0)
		/* A handshake message continues in the next handshake
		 * record; nothing may come between its fragments. */
		return sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE,
				     "record type %u inside a fragmented handshake message", type);
	if ((type == SOTLS_CT_ALERT && len != 2) || (type == SOTLS_CT_CHANGE_CIPHER_SPEC && len != 1))
		/* RFC 5246 §7.2: an alert is level + description; §7.1: a
		 * ChangeCipherSpec is "a single byte of value 1". */
		return sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR,
				     "%s record of %u bytes",
				     type == SOTLS_CT_ALERT ? "alert" : "ChangeCipherSpec", len);
	if (type == SOTLS_CT_HANDSHAKE && rd->msg_len + len > SOTLS_HS_MAX_MESSAGE + (size_t)SOTLS_REC_MAX_PLAINTEXT)
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_ILLEGAL_PARAMETER,
				     "handshake messages above %u bytes", SOTLS_HS_MAX_MESSAGE);
	return 0;
}

/* Room for len more handshake bytes. */
static int reserve(struct sotls_hs *hs, size_t len)
{
	struct sotls_hs_reader *rd = &hs->rd;
	if (rd->msg_len + len <= rd->msg_cap)
		return 0;
	size_t cap = rd->msg_cap ? rd->msg_cap : 4096;
	while (cap < rd->msg_len + len)
		cap *= 2;
	uint8_t *p = malloc(cap);
	if (p == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for a handshake message");
	if (rd->msg != NULL) {
		memcpy(p, rd->msg, rd->msg_len);
		sotls_wipe(rd->msg, rd->msg_cap);
		free(rd->msg);
	}
	rd->msg = p;
	rd->msg_cap = cap;
	return 0;
}

/* ---- after the peer's ChangeCipherSpec: its records opened here ---- */

/*
 * mbedTLS 3.6 reassembles a handshake message over records only when the
 * first one holds its whole 4-byte header ("handshake message too short",
 * decode_error), while RFC 5246 §6.2.1 lets the peer cut its Finished
 * anywhere. So the reader opens the peer's sealed records itself, with the
 * keys mbedTLS exported, reassembles them like the plaintext ones and shows
 * mbedTLS each whole message sealed again, in a record of its own under the
 * same key and the sequence number mbedTLS expects (rd->shown.seq). The
 * record layer continues from the peer's count (rd->peer.seq). What is sealed
 * again never leaves the process.
 */
static int start_sealed(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	const struct sotls_suite *suite =
		sotls_suite_by_id((uint16_t)sotls_mbed_negotiated_suite(&hs->ssl));
	if (!hs->exported || suite == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "no keys for the peer's records after its ChangeCipherSpec");
	rd->cbuf = malloc(SOTLS_REC_HEADER + (size_t)SOTLS_REC_MAX_CIPHERTEXT);
	rd->sbuf = malloc(SOTLS_REC_OVERHEAD + SOTLS_HS_MAX_MBED_MESSAGE);
	if (rd->cbuf == NULL || rd->sbuf == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the peer's Finished");
	int rc = sotls_hs_key_block(hs, suite);
	const struct sotls_key_block *kb = &hs->kb;
	const uint8_t *key = hs->server ? kb->client_key : kb->server_key;
	const uint8_t *salt = hs->server ? kb->client_salt : kb->server_salt;
	if (rc == 0)
		rc = sotls_aead_init(&rd->peer.aead, suite->alg, key, kb->key_len);
	if (rc == 0)
		rc = sotls_aead_init(&rd->shown.aead, suite->alg, key, kb->key_len);
	memcpy(rd->peer.salt, salt, SOTLS_REC_SALT);
	memcpy(rd->shown.salt, salt, SOTLS_REC_SALT);
	rd->peer.seq = rd->shown.seq = 0; /* RFC 5246 §6.1: reset at ChangeCipherSpec */
	if (rc != 0)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "the keys for the peer's records did not set up");
	rd->keyed = true;
	return 0;
}

/* RFC 5246 §7.4.9, §6.2.3, for a sealed record's header. */
static int check_sealed_header(struct sotls_hs *hs)
{
	const uint8_t *hdr = hs->rd.hdr;
	uint32_t len = be16(hdr + 3);
	if (hdr[0] != SOTLS_CT_HANDSHAKE && hdr[0] != SOTLS_CT_ALERT)
		/* RFC 5246 §7.4.9: Finished follows ChangeCipherSpec. */
		return sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE,
				     "record type %u after the peer's ChangeCipherSpec", hdr[0]);
	int rc = check_version(hs);
	if (rc != 0)
		return rc;
	if (len > (size_t)SOTLS_REC_MAX_CIPHERTEXT)
		/* RFC 5246 §6.2.3: length MUST NOT exceed 2^14 + 2048. */
		return sotls_hs_fail(hs, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW,
				     "encrypted handshake record of %u bytes", len);
	if (len < SOTLS_REC_EXPLICIT_NONCE + SOTLS_REC_TAG)
		/* RFC 5246 §6.2.3.3: nonce_explicit and the tag at least;
		 * the record layer answers the same (record.c). */
		return sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR,
				     "encrypted record of %u bytes", len);
	if (over_mfl(hs, len, SOTLS_REC_EXPLICIT_NONCE + SOTLS_REC_TAG))
		return sotls_hs_fail(hs, SOTLS_ERR_RECORD_OVERFLOW, SOTLS_ALERT_RECORD_OVERFLOW,
				     "encrypted record of %u bytes above max_fragment_length %u",
				     len, hs->mfl);
	return 0;
}

/* The sealed record in cbuf, opened: its plaintext joins the handshake
 * stream (or small_body) as a plaintext record's would, after the same
 * checks. */
static int open_sealed(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	size_t frag = be16(rd->hdr + 3), len = frag - SOTLS_REC_EXPLICIT_NONCE - SOTLS_REC_TAG;
	uint8_t *pt = rd->cbuf + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
	if (sotls_half_open(&rd->peer, rd->cbuf, frag, pt) != 0)
		return sotls_hs_fail(hs, SOTLS_ERR_BAD_RECORD_MAC, SOTLS_ALERT_BAD_RECORD_MAC,
				     "the peer's Finished record failed authentication");
	rd->peer.seq++;
	rd->hdr[3] = (uint8_t)(len >> 8);
	rd->hdr[4] = (uint8_t)len;
	int rc = check_header(hs);
	if (rc == 0 && rd->hdr[0] == SOTLS_CT_HANDSHAKE)
		rc = reserve(hs, len);
	if (rc == 0) {
		bool hs_rec = rd->hdr[0] == SOTLS_CT_HANDSHAKE;
		memcpy(hs_rec ? rd->msg + rd->msg_len : rd->small_body, pt, len);
		if (hs_rec)
			rd->msg_len += len;
	}
	sotls_wipe(pt, len);
	return rc;
}

/* Where the next bytes of the wire record being read go, and how many it
 * still needs: the header, then exactly its body, so nothing past the
 * record is ever read (the peer's Finished is the last). */
static uint8_t *record_dest(struct sotls_hs_reader *rd, size_t *want)
{
	if (rd->hdr_have < 5) {
		*want = 5 - rd->hdr_have;
		return rd->hdr + rd->hdr_have;
	}
	uint8_t *body = rd->sealed ? rd->cbuf + SOTLS_REC_HEADER
		      : rd->hdr[0] == SOTLS_CT_HANDSHAKE ? rd->msg + rd->msg_len
							 : rd->small_body;
	*want = be16(rd->hdr + 3) - rd->body_have;
	return body + rd->body_have;
}

/* Reads the rest of one wire record. 1 when whole, else what recv gave
 * (0 at EOF, WANT_READ) or a failure. */
static int read_record(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	if (rd->sealed && !rd->keyed) {
		int rc = start_sealed(hs);
		if (rc != 0)
			return rc;
	}
	size_t want;
	while (rd->hdr_have < 5) {
		uint8_t *p = record_dest(rd, &want);
		int n = sock_recv(hs, p, want);
		if (n <= 0)
			return n;
		rd->hdr_have += (size_t)n;
		if (rd->hdr_have == 5) {
			int rc = rd->sealed ? check_sealed_header(hs) : check_header(hs);
			if (rc == 0 && rd->hdr[0] == SOTLS_CT_HANDSHAKE && !rd->sealed)
				rc = reserve(hs, be16(rd->hdr + 3));
			if (rc != 0)
				return rc;
		}
	}
	size_t len = be16(rd->hdr + 3);
	while (rd->body_have < len) {
		uint8_t *p = record_dest(rd, &want);
		int n = sock_recv(hs, p, want);
		if (n <= 0)
			return n;
		rd->body_have += (size_t)n;
	}
	rd->hdr_have = 0;
	rd->body_have = 0;
	if (rd->sealed) {
		memcpy(rd->cbuf, rd->hdr, SOTLS_REC_HEADER);
		int rc = open_sealed(hs);
		return rc != 0 ? rc : 1;
	}
	if (rd->hdr[0] == SOTLS_CT_HANDSHAKE)
		rd->msg_len += len;
	return 1;
}

uint8_t *sotls_hs_in_space(struct sotls_hs *hs, size_t *cap)
{
	struct sotls_hs_reader *rd = &hs->rd;
	*cap = 0;
	if (!rd->waiting || hs->fail_err != 0)
		return NULL;
	size_t want;
	uint8_t *p = record_dest(rd, &want);
	*cap = want - rd->staged;
	return p + rd->staged;
}

int sotls_hs_in_added(struct sotls_hs *hs, size_t n)
{
	size_t cap;
	if (sotls_hs_in_space(hs, &cap) == NULL || n > cap)
		return SOTLS_ERR_INVALID_ARGUMENT;
	hs->rd.staged += n;
	return 0;
}

/* What mbedTLS reads next: a record of type with body, sealed again after
 * the peer's ChangeCipherSpec (see start_sealed). */
static int serve(struct sotls_hs *hs, uint8_t type, const uint8_t *body, size_t len)
{
	struct sotls_hs_reader *rd = &hs->rd;
	rd->out_hdr[0] = type;
	rd->out_hdr[1] = 3;
	rd->out_hdr[2] = 3;
	rd->out_hdr[3] = (uint8_t)(len >> 8);
	rd->out_hdr[4] = (uint8_t)len;
	rd->out_body = body;
	rd->out_total = 5 + len;
	rd->out_pos = 0;
	if (!rd->sealed)
		return 0;
	if (sotls_half_seal(&rd->shown, rd->sbuf, type, body, len) != 0)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "could not seal the peer's message again for mbedTLS");
	rd->shown.seq++;
	memcpy(rd->out_hdr, rd->sbuf, 5);
	rd->out_body = rd->sbuf + 5;
	rd->out_total = SOTLS_REC_OVERHEAD + len;
	return 0;
}

/* The first whole message of the handshake stream, checked, to mbedTLS. */
static int serve_message(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	/* The ClientHello waits for the certificate selection (cert_select.c):
	 * nothing is read meanwhile, and once answered it goes on as checked. */
	if (hs->select == SELECT_PENDING)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (hs->select == SELECT_ANSWERED) {
		hs->select = SELECT_DONE;
		rd->consume = hs->held_len;
		return serve(hs, SOTLS_CT_HANDSHAKE, hs->held_shown, hs->held_shown_len);
	}
	if (rd->msg_len < 4)
		return 0;
	size_t mlen = 4 + ((size_t)rd->msg[1] << 16 | (size_t)rd->msg[2] << 8 | rd->msg[3]);
	if (mlen > SOTLS_HS_MAX_MESSAGE)
		/* OpenSSL's answer to an excessive message size as well. */
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_ILLEGAL_PARAMETER,
				     "handshake message of %zu bytes (at most %u)", mlen,
				     SOTLS_HS_MAX_MESSAGE);
	if (rd->msg_len < mlen)
		return 0;
	uint8_t type = rd->msg[0];
	const uint8_t *shown = rd->msg;
	size_t shown_len = mlen;
	int rc = 0;
	if (type == (hs->server ? SOTLS_HS_CLIENT_KEY_EXCHANGE : SOTLS_HS_SERVER_KEY_EXCHANGE) &&
	    rd->hellos > 0)
		rc = hs->server ? sotls_hs_check_client_key_exchange(hs, rd->msg, mlen)
				: sotls_hs_check_server_key_exchange(hs, rd->msg, mlen);
	else if (type == (hs->server ? SOTLS_HS_CLIENT_HELLO : SOTLS_HS_SERVER_HELLO)) {
		/* RFC 5246 §7.3: one hello each way; sotls never
		 * renegotiates, so a second one is out of order. */
		if (rd->hellos++ > 0)
			return sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE,
					     SOTLS_ALERT_UNEXPECTED_MESSAGE, "a second %s",
					     hs->server ? "ClientHello" : "ServerHello");
		rc = hs->server ? sotls_hs_check_client_hello(hs, rd->msg, mlen, &shown, &shown_len)
				: sotls_hs_check_server_hello(hs, rd->msg, mlen);
	}
	if (rc != 0)
		return rc;
	if (shown_len > SOTLS_HS_MAX_MBED_MESSAGE)
		/* A ClientHello is shown without what mbedTLS ignores
		 * (msg_check.c); what is left must fit mbedTLS's buffer. */
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_ILLEGAL_PARAMETER,
				     shown_len < mlen ? "handshake message of %zu bytes with %zu that "
							"mbedTLS would parse (at most %u)"
						      : "handshake message of %zu bytes (%zu; at most %u)",
				     mlen, shown_len, SOTLS_HS_MAX_MBED_MESSAGE);
	if (hs->server && type == SOTLS_HS_CLIENT_HELLO) {
		rc = sotls_cert_select_ask(hs);
		if (rc == 1) {
			hs->held_shown = shown;
			hs->held_shown_len = shown_len;
			hs->held_len = mlen;
			return MBEDTLS_ERR_SSL_WANT_READ;
		}
		if (rc != 0)
			return rc;
	}
	rd->consume = mlen;
	return serve(hs, SOTLS_CT_HANDSHAKE, shown, shown_len);
}

/* A whole wire record is in: decides what mbedTLS gets next. */
static int handle_record(struct sotls_hs *hs)
{
	struct sotls_hs_reader *rd = &hs->rd;
	switch (rd->hdr[0]) {
	case SOTLS_CT_HANDSHAKE:
		return 0; /* sotls_hs_bio_recv serves whole messages */
	case SOTLS_CT_ALERT:
		if (rd->small_body[0] != 1 && rd->small_body[0] != 2)
			/* RFC 5246 §7.2: AlertLevel is warning(1) or fatal(2). */
			return sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_ILLEGAL_PARAMETER,
					     "alert level %u", rd->small_body[0]);
		if (rd->small_body[0] == 1 && ++rd->warnings > SOTLS_HS_MAX_WARNINGS)
			return sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE,
					     SOTLS_ALERT_UNEXPECTED_MESSAGE,
					     "more than %d warning alerts during the handshake",
					     SOTLS_HS_MAX_WARNINGS);
		return serve(hs, SOTLS_CT_ALERT, rd->small_body, 2);
	default: /* SOTLS_CT_CHANGE_CIPHER_SPEC: check_header let nothing else through */
		if (rd->small_body[0] != 1)
			return sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR,
					     "ChangeCipherSpec of value %u", rd->small_body[0]);
		rd->ccs_after_serve = true;
		return serve(hs, SOTLS_CT_CHANGE_CIPHER_SPEC, rd->small_body, 1);
	}
}

/* Copies what is being served; at its end drops the message and, after a
 * ChangeCipherSpec, turns to the sealed records. */
static int copy_out(struct sotls_hs_reader *rd, uint8_t *buf, size_t len)
{
	size_t left = rd->out_total - rd->out_pos;
	size_t n = len < left ? len : left, done = 0;
	while (done < n) {
		size_t at = rd->out_pos + done;
		if (at < 5) {
			buf[done++] = rd->out_hdr[at];
		} else {
			size_t k = n - done;
			memcpy(buf + done, rd->out_body + (at - 5), k);
			done += k;
		}
	}
	rd->out_pos += n;
	if (rd->out_pos == rd->out_total) {
		rd->out_total = rd->out_pos = 0;
		if (rd->consume > 0) {
			rd->msg_len -= rd->consume;
			memmove(rd->msg, rd->msg + rd->consume, rd->msg_len);
			rd->consume = 0;
		}
		if (rd->ccs_after_serve) {
			rd->ccs_after_serve = false;
			rd->sealed = true;
		}
	}
	return (int)n;
}

int sotls_hs_bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct sotls_hs *hs = ctx;
	struct sotls_hs_reader *rd = &hs->rd;
	if (hs->fail_err != 0)
		return SOTLS_HS_READER_FAILED;
	if (len == 0)
		return 0;
	/* Our flight goes before we wait for the peer's. */
	int frc = sotls_hs_flush(hs);
	if (frc != 0)
		return frc;
	for (;;) {
		if (rd->out_pos < rd->out_total)
			return copy_out(rd, buf, len);
		/* More handshake messages may wait in what was read. */
		int rc = serve_message(hs);
		if (rc != 0)
			return rc;
		if (rd->out_total > 0)
			continue;
		rc = read_record(hs);
		if (rc <= 0)
			return rc;
		rc = handle_record(hs);
		if (rc != 0)
			return rc;
	}
}

void sotls_hs_reader_free(struct sotls_hs_reader *rd)
{
	if (rd->msg != NULL) {
		sotls_wipe(rd->msg, rd->msg_cap);
		free(rd->msg);
	}
	if (rd->cbuf != NULL) {
		sotls_wipe(rd->cbuf, SOTLS_REC_HEADER + (size_t)SOTLS_REC_MAX_CIPHERTEXT);
		free(rd->cbuf);
	}
	if (rd->sbuf != NULL) {
		sotls_wipe(rd->sbuf, SOTLS_REC_OVERHEAD + SOTLS_HS_MAX_MBED_MESSAGE);
		free(rd->sbuf);
	}
	sotls_aead_clear(&rd->peer.aead);
	sotls_aead_clear(&rd->shown.aead);
	memset(rd, 0, sizeof(*rd));
}

/*
 * The server's acknowledgement of SNI. RFC 6066 §3: a server that used the
 * name to choose its certificate "SHALL include an extension of type
 * "server_name" in the (extended) server hello. The "extension_data" field
 * of this extension SHALL be empty." mbedTLS 3.6's TLS 1.2 server never
 * writes it, so the ServerHello record is amended on its way to the socket:
 * four bytes (type 0, length 0) at the end of its extensions, the three
 * lengths grown to match. mbedTLS hashed the ServerHello it wrote before
 * sending it, so the transcript is rebuilt from the ClientHello (its real
 * bytes) and the ServerHello as sent; the Finished messages then cover
 * what both peers saw.
 */
#include <stdlib.h>
#include <string.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"

static const uint8_t SERVER_NAME_ACK[4] = {0, 0, 0, 0};

static size_t be16(const uint8_t *p)
{
	return (size_t)p[0] << 8 | p[1];
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The offset of the extensions block (its length field) in a ServerHello
 * record, or 0 if rec is not exactly one whole ServerHello. RFC 5246
 * §7.4.1.3: server_version, random[32], session_id<0..32>, cipher_suite,
 * compression_method, then optional extensions<0..2^16-1>. */
static size_t extensions_at(const uint8_t *rec, size_t len)
{
	if (len < 5 + 4 + 38 || rec[0] != SOTLS_CT_HANDSHAKE || be16(rec + 3) != len - 5 ||
	    rec[5] != 2 /* server_hello */ || rec[6] != 0 || be16(rec + 7) != len - 9)
		return 0;
	size_t at = 9 + 34;
	at += 1 + rec[at];
	at += 2 + 1;
	if (at > len || (at < len && (at + 2 > len || be16(rec + at) != len - at - 2)))
		return 0;
	return at;
}

/* The record with the extension, and the transcript to match. */
static int amend(struct sotls_hs *hs, const uint8_t *rec, size_t len)
{
	size_t at = extensions_at(rec, len);
	if (at == 0 || hs->real_hello == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "the ServerHello to acknowledge SNI in is not one whole record");
	bool had_block = at < len;
	size_t grow = sizeof(SERVER_NAME_ACK) + (had_block ? 0 : 2);
	uint8_t *sh = malloc(len + grow);
	if (sh == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the ServerHello");
	memcpy(sh, rec, len);
	if (!had_block)
		put16(sh + len, 0);
	memcpy(sh + len + grow - sizeof(SERVER_NAME_ACK), SERVER_NAME_ACK,
	       sizeof(SERVER_NAME_ACK));
	size_t total = len + grow;
	put16(sh + 3, total - 5);      /* record */
	put16(sh + 7, total - 9);      /* handshake message (< 2^16: byte 6 stays 0) */
	put16(sh + at, total - at - 2); /* extensions */

	int mrc = sotls_mbed_rehash(&hs->ssl, hs->real_hello, hs->real_hello_len, sh + 5,
				    total - 5);
	sotls_hs_drop_hello(hs);
	if (mrc != 0) {
		free(sh);
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "the transcript could not be rebuilt for the SNI acknowledgement");
	}
	hs->sh = sh;
	hs->sh_len = total;
	hs->sh_sent = 0;
	return 0;
}

int sotls_sni_ack_send(struct sotls_hs *hs, const uint8_t *buf, size_t len)
{
	/* Anything before the ServerHello (an alert) goes out as it is. */
	if (hs->sh == NULL && (len < 6 || buf[0] != SOTLS_CT_HANDSHAKE || buf[5] != 2))
		return sotls_hs_sock_send(hs, buf, len);
	if (hs->sh == NULL && sotls_mbed_resuming(&hs->ssl)) {
		/* RFC 6066 §3: "When resuming a session, the server MUST NOT
		 * include a server_name extension in the server hello." */
		hs->sni_ack = SNI_ACK_NONE;
		sotls_hs_drop_hello(hs);
		return sotls_hs_sock_send(hs, buf, len);
	}
	if (hs->sh == NULL) {
		int rc = amend(hs, buf, len);
		if (rc != 0)
			return rc;
	}
	/* mbedTLS hands back the same whole record after a would-block (it
	 * only ever learns "all of it" or "try again"), so the position in
	 * the amended copy is ours to keep. */
	while (hs->sh_sent < hs->sh_len) {
		int n = sotls_hs_sock_send(hs, hs->sh + hs->sh_sent, hs->sh_len - hs->sh_sent);
		if (n < 0)
			return n;
		hs->sh_sent += (size_t)n;
	}
	free(hs->sh);
	hs->sh = NULL;
	hs->sni_ack = SNI_ACK_SENT;
	return (int)len;
}

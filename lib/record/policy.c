/* The record policy both record paths apply; see policy.h. */
#include "policy.h"

#include <string.h>

#include "record.h"
#include "sotls.h"

void sotls_useless_reset(struct sotls_useless *u)
{
	u->empty = u->warnings = u->refusals = 0;
}

bool sotls_useless_count(struct sotls_useless *u, enum sotls_useless_kind kind, uint64_t n,
			 struct sotls_why *f)
{
	static const struct sotls_why caps[] = {
		[SOTLS_USELESS_EMPTY] = {"too many empty application-data records in a row; the "
					 "cap is",
					 SOTLS_REC_MAX_EMPTY_RECORDS},
		[SOTLS_USELESS_WARNING] = {"too many warning alerts between data records; the cap is",
					   SOTLS_REC_MAX_WARNING_ALERTS},
		[SOTLS_USELESS_REFUSAL] = {"too many refused renegotiation attempts between data "
					   "records; the cap is",
					   SOTLS_REC_MAX_RENEG_REFUSALS},
	};
	unsigned *c = kind == SOTLS_USELESS_EMPTY     ? &u->empty
		      : kind == SOTLS_USELESS_WARNING ? &u->warnings
						      : &u->refusals;
	unsigned cap = (unsigned)caps[kind].value;
	/* Saturates at cap + 1: n may be any number of records the kernel
	 * consumed in one call. */
	*c = n > (uint64_t)(cap + 1 - *c) ? cap + 1 : *c + (unsigned)n;
	if (*c <= cap)
		return true;
	*f = caps[kind];
	return false;
}

enum sotls_alert_kind sotls_alert_classify(uint8_t level, uint8_t desc)
{
	/* RFC 5246 7.2: "enum { warning(1), fatal(2), (255) } AlertLevel;" —
	 * no other level exists, so another value is a malformed field. */
	if (level == SOTLS_ALERT_FATAL)
		return SOTLS_ALERT_IS_FATAL; /* a fatal close_notify is no clean close */
	if (level != SOTLS_ALERT_WARNING)
		return SOTLS_ALERT_IS_BAD_LEVEL;
	/* RFC 5246 7.2.1: close_notify ends the stream. RFC 5246 7.2: a
	 * warning the receiver does not know may be ignored; the cap on
	 * warnings bounds what ignoring costs. */
	return desc == SOTLS_ALERT_CLOSE_NOTIFY ? SOTLS_ALERT_IS_CLOSE : SOTLS_ALERT_IS_WARNING;
}

int sotls_hs_track_feed(struct sotls_hs_track *t, bool server, bool record_start,
			const uint8_t *pt, size_t len, unsigned *refusals, unsigned *useless)
{
	*refusals = 0;
	*useless = 0;
	/* RFC 5246 6.2.1: "Implementations MUST NOT send zero-length fragments
	 * of Handshake, Alert, or ChangeCipherSpec content types." */
	if (record_start && len == 0)
		return SOTLS_ERR_DECODE;
	while (len > 0) {
		if (t->skip > 0) {
			size_t n = len < t->skip ? len : t->skip;
			t->skip -= (uint32_t)n;
			pt += n;
			len -= n;
			continue;
		}
		t->hdr[t->hdr_len++] = *pt++;
		len--;
		if (t->hdr_len < sizeof(t->hdr))
			continue;
		t->hdr_len = 0;
		uint32_t body = (uint32_t)t->hdr[1] << 16 | (uint32_t)t->hdr[2] << 8 | t->hdr[3];
		/* RFC 5246 7.4.1.1: a client may answer HelloRequest with
		 * no_renegotiation; the message is empty ("struct { }
		 * HelloRequest;"). RFC 5746 4.4 / 5246 7.4.1.2: a server may
		 * refuse a renegotiating ClientHello with no_renegotiation. Any
		 * other message after the handshake is out of place. */
		if (!server && t->hdr[0] == SOTLS_HS_HELLO_REQUEST && body == 0) {
			(*refusals)++;
		} else if (server && t->hdr[0] == SOTLS_HS_CLIENT_HELLO) {
			(*refusals)++;
			t->skip = body;
		} else {
			return SOTLS_ERR_UNEXPECTED_MESSAGE;
		}
	}
	*useless = *refusals > 0 ? *refusals : record_start;
	return 0;
}

uint8_t sotls_hs_track_alert(int err)
{
	return err == SOTLS_ERR_DECODE ? SOTLS_ALERT_DECODE_ERROR : SOTLS_ALERT_UNEXPECTED_MESSAGE;
}

bool sotls_key_may_seal_data(uint64_t seq, uint64_t limit)
{
	return seq < limit && limit - seq > 1;
}

bool sotls_key_may_seal_close(uint64_t seq, uint64_t limit)
{
	return seq < limit;
}

void sotls_policy_init(struct sotls_policy *p, bool server, uint64_t key_limit)
{
	memset(p, 0, sizeof(*p));
	p->peer_alert = -1;
	p->sent_alert = -1;
	p->server = server;
	p->key_limit = key_limit > 0 ? key_limit : SOTLS_REC_DEFAULT_KEY_LIMIT;
}

int sotls_policy_fail(struct sotls_policy *p, int err)
{
	if (p->err == 0)
		p->err = err;
	return p->err;
}

int sotls_policy_fault(struct sotls_policy *p, int err, int *alert)
{
	switch (err) {
	case SOTLS_ERR_PROTOCOL_VERSION:
		*alert = SOTLS_ALERT_PROTOCOL_VERSION;
		break;
	case SOTLS_ERR_RECORD_OVERFLOW:
		/* RFC 5246 6.2.1 / 6.2.3: more than 2^14 (+2048) bytes, or
		 * RFC 6066 4: more than the negotiated max_fragment_length. */
		*alert = SOTLS_ALERT_RECORD_OVERFLOW;
		break;
	case SOTLS_ERR_DECODE:
		*alert = SOTLS_ALERT_DECODE_ERROR;
		break;
	case SOTLS_ERR_BAD_RECORD_MAC:
		/* RFC 5246 7.2.2: "bad_record_mac ... This message is always
		 * fatal". */
		*alert = SOTLS_ALERT_BAD_RECORD_MAC;
		break;
	case SOTLS_ERR_SEQUENCE_OVERFLOW:
		/* RFC 5246 6.1: "Sequence numbers ... MUST NOT wrap". */
		*alert = SOTLS_ALERT_INTERNAL_ERROR;
		break;
	case SOTLS_ERR_KEY_USAGE_LIMIT:
		/* A conforming peer closes before its key passes the limit,
		 * as sotls does; one that goes on is refused (policy.h). */
		p->why = (struct sotls_why){"the peer sent more records under one key than the key "
					    "usage limit:",
					    p->key_limit};
		*alert = SOTLS_ALERT_UNEXPECTED_MESSAGE;
		break;
	default: /* SOTLS_ERR_UNEXPECTED_MESSAGE */
		*alert = SOTLS_ALERT_UNEXPECTED_MESSAGE;
		break;
	}
	return err;
}

void sotls_policy_data(struct sotls_policy *p)
{
	sotls_useless_reset(&p->useless);
}

/* Past a cap the connection ends (RFC 5246 has none; BoringSSL's figures). */
static int count(struct sotls_policy *p, enum sotls_useless_kind kind, uint64_t n, int *alert)
{
	if (sotls_useless_count(&p->useless, kind, n, &p->why))
		return 0;
	*alert = SOTLS_ALERT_UNEXPECTED_MESSAGE;
	return SOTLS_ERR_RECORD_FLOOD;
}

int sotls_policy_empty(struct sotls_policy *p, uint64_t n, int *alert)
{
	return count(p, SOTLS_USELESS_EMPTY, n, alert);
}

static int alert_record(struct sotls_policy *p, const uint8_t *pt, size_t len, int *alert)
{
	/* RFC 5246 7.2: "struct { AlertLevel level; AlertDescription
	 * description; } Alert;" — two bytes, one alert per record. */
	if (len != 2) {
		*alert = SOTLS_ALERT_DECODE_ERROR;
		return SOTLS_ERR_DECODE;
	}
	p->peer_alert = pt[1];
	switch (sotls_alert_classify(pt[0], pt[1])) {
	case SOTLS_ALERT_IS_CLOSE:
		p->rx_closed = true;
		return 0;
	case SOTLS_ALERT_IS_FATAL:
		/* The peer is gone; answering would be pointless. */
		*alert = SOTLS_POLICY_NO_ALERT;
		return SOTLS_ERR_PEER_ALERT;
	case SOTLS_ALERT_IS_BAD_LEVEL:
		p->why = (struct sotls_why){"alert level neither warning (1) nor fatal (2):", pt[0]};
		*alert = SOTLS_ALERT_ILLEGAL_PARAMETER;
		return SOTLS_ERR_DECODE;
	case SOTLS_ALERT_IS_WARNING:
		break;
	}
	return count(p, SOTLS_USELESS_WARNING, 1, alert);
}

int sotls_policy_control(struct sotls_policy *p, uint8_t type, const uint8_t *pt, size_t len,
			 bool record_start, int *alert, unsigned *refusals)
{
	*refusals = 0;
	if (type == SOTLS_CT_ALERT)
		return alert_record(p, pt, len, alert);
	if (type != SOTLS_CT_HANDSHAKE) {
		/* change_cipher_spec after the handshake, or an unknown type. */
		*alert = SOTLS_ALERT_UNEXPECTED_MESSAGE;
		return SOTLS_ERR_UNEXPECTED_MESSAGE;
	}
	unsigned useless;
	int rc = sotls_hs_track_feed(&p->hs, p->server, record_start, pt, len, refusals, &useless);
	if (rc != 0) {
		*alert = sotls_hs_track_alert(rc);
		*refusals = 0;
		return rc;
	}
	rc = count(p, SOTLS_USELESS_REFUSAL, useless, alert);
	if (rc != 0)
		*refusals = 0;
	return rc;
}

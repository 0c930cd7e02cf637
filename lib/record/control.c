/* The rules for non-data records both record paths apply; see control.h. */
#include "control.h"

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

#define HS_HELLO_REQUEST 0
#define HS_CLIENT_HELLO 1

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
		if (!server && t->hdr[0] == HS_HELLO_REQUEST && body == 0) {
			(*refusals)++;
		} else if (server && t->hdr[0] == HS_CLIENT_HELLO) {
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

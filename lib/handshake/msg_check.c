/*
 * The checks on the peer's handshake messages that RFC 5246, 8422, 7627 and
 * 6066 make and mbedTLS 3.6 does not (or answers with the wrong alert): the
 * hellos, and the ECDHE key share in ServerKeyExchange / ClientKeyExchange.
 * They run on the whole message, before mbedTLS parses it, so the alert they
 * name is the first and only thing sent.
 */
#include <ctype.h>
#include <string.h>

#include <mbedtls/ecp.h>

#include "hs_internal.h"
#include "util.h"
#include "mbedtls_internals.h"

/* A bounded reader over one message. */
struct cur {
	const uint8_t *p;
	size_t left;
};

static bool take(struct cur *c, size_t n, const uint8_t **out)
{
	if (c->left < n)
		return false;
	if (out != NULL)
		*out = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

/* A vector with an n-byte length prefix. */
static bool vec(struct cur *c, size_t n, struct cur *out)
{
	const uint8_t *l;
	if (!take(c, n, &l))
		return false;
	size_t len = n == 1 ? l[0] : (size_t)l[0] << 8 | l[1];
	out->p = c->p;
	out->left = len;
	return take(c, len, NULL);
}

static uint16_t u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#define DECODE(hs, ...) sotls_hs_fail(hs, SOTLS_ERR_DECODE, SOTLS_ALERT_DECODE_ERROR, __VA_ARGS__)
#define ILLEGAL(hs, ...) \
	sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_ILLEGAL_PARAMETER, __VA_ARGS__)

enum {
	EXT_SERVER_NAME = 0,
	EXT_MAX_FRAGMENT_LENGTH = 1,
	EXT_SUPPORTED_GROUPS = 10,
	EXT_EC_POINT_FORMATS = 11,
	EXT_SIGNATURE_ALGORITHMS = 13,
	EXT_ALPN = 16,
	EXT_EXTENDED_MASTER_SECRET = 23,
};

/* The groups sotls's ECDHE uses (hs.c offers and accepts the same). */
static bool group_supported(uint16_t g)
{
	return g == 23 /* secp256r1 */ || g == 29 /* x25519 */ || g == 24 /* secp384r1 */ ||
	       g == 25 /* secp521r1 */;
}

/*
 * Every extension check below runs twice over a hello: first with judge
 * false, when it checks only that the extension decodes, then, once the whole
 * message is known to decode, with judge true for what its content means.
 * RFC 5246 §7.2.2: decode_error is for "A message [that] could not be
 * decoded", so a hello that does not parse gets it whatever else is wrong
 * with it; illegal_parameter and the rest judge a message that does.
 */

/* RFC 8422 §5.1.2: ECPointFormat ec_point_format_list<1..2^8-1>, and the
 * uncompressed format (0) MUST be in it. Both hellos use this rule. */
static int check_point_formats(struct sotls_hs *hs, struct cur ext, bool judge)
{
	struct cur list;
	if (!vec(&ext, 1, &list) || ext.left != 0 || list.left == 0)
		/* RFC 5246 §7.2.2: a vector outside its range <1..2^8-1>. */
		return DECODE(hs, "malformed ec_point_formats extension");
	if (!judge)
		return 0;
	for (size_t i = 0; i < list.left; i++)
		if (list.p[i] == 0)
			return 0;
	/* RFC 8422 §5.1.2 (client) and §5.2 (server): "MUST abort the
	 * handshake and return an illegal_parameter alert". */
	return ILLEGAL(hs, "ec_point_formats without the uncompressed format");
}

/* The host name for the certificate choice and sotls_info, lower case
 * (RFC 4343: DNS names compare without regard to case). RFC 6066 §3:
 * HostName is "the fully qualified DNS hostname of the server", so a NUL
 * byte or more than 255 bytes cannot be one; like OpenSSL, sotls answers
 * unrecognized_name rather than match a name cut short at the NUL. */
static int keep_host_name(struct sotls_hs *hs, struct cur name)
{
	if (name.left >= sizeof(hs->sni) || memchr(name.p, '\0', name.left) != NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_UNRECOGNIZED_NAME, SOTLS_ALERT_UNRECOGNIZED_NAME,
				     "the client's SNI host name (%zu bytes) %s", name.left,
				     name.left >= sizeof(hs->sni) ? "is longer than 255 bytes"
								  : "holds a NUL byte");
	for (size_t i = 0; i < name.left; i++)
		hs->sni[i] = (char)tolower(name.p[i]);
	hs->sni[name.left] = '\0';
	hs->sni_present = true;
	return 0;
}

/* RFC 6066 §3: ServerNameList server_name_list<1..2^16-1>, each entry a
 * name_type and an opaque HostName<1..2^16-1>; "The ServerNameList MUST NOT
 * contain more than one name of the same name_type." */
static int check_server_name(struct sotls_hs *hs, struct cur ext, bool judge)
{
	struct cur list;
	if (!vec(&ext, 2, &list) || ext.left != 0 || list.left == 0)
		return DECODE(hs, "malformed server_name extension");
	bool host_name = false;
	while (list.left > 0) {
		const uint8_t *type;
		struct cur name;
		if (!take(&list, 1, &type) || !vec(&list, 2, &name) || name.left == 0)
			return DECODE(hs, "malformed server_name entry");
		if (type[0] == 0 && judge) {
			if (host_name)
				return ILLEGAL(hs, "two host names in server_name");
			host_name = true;
			int rc = keep_host_name(hs, name);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* RFC 7301 §3.1: ProtocolName protocol_name_list<2..2^16-1>, each opaque
 * ProtocolName<1..2^8-1>: "Empty strings MUST NOT be included and byte
 * strings MUST NOT be truncated." The list is kept for alpn.c. */
static int check_alpn(struct sotls_hs *hs, struct cur ext, bool judge)
{
	struct cur list, name;
	if (!vec(&ext, 2, &list) || ext.left != 0 || list.left < 2)
		return DECODE(hs, "malformed application_layer_protocol_negotiation extension");
	if (judge) {
		hs->alpn_offered = true;
		hs->alpn_offer = list.p;
		hs->alpn_offer_len = list.left;
		return 0;
	}
	while (list.left > 0) {
		if (!vec(&list, 1, &name))
			return DECODE(hs, "a truncated protocol name in the ALPN list");
		if (name.left == 0)
			return DECODE(hs, "an empty protocol name in the ALPN list");
	}
	return 0;
}

/* RFC 8422 §5.1.1: a client whose supported_groups names no group the
 * server has cannot use an ECDHE suite, and every sotls suite is one: no
 * suite is left (RFC 5246 §7.4.1.3: handshake_failure). */
static int check_groups(struct sotls_hs *hs, struct cur ext, bool judge)
{
	struct cur list;
	if (!vec(&ext, 2, &list) || ext.left != 0 || list.left < 2 || list.left % 2 != 0)
		return DECODE(hs, "malformed supported_groups extension");
	if (!judge)
		return 0;
	for (size_t i = 0; i < list.left; i += 2)
		if (group_supported(u16(list.p + i)))
			return 0;
	return sotls_hs_fail(hs, SOTLS_ERR_NO_SHARED_SUITE, SOTLS_ALERT_HANDSHAKE_FAILURE,
			     "the client offers no elliptic curve group sotls has (P-256, "
			     "X25519, P-384, P-521)");
}

/* RFC 6066 §4: enum { 2^9(1), 2^10(2), 2^11(3), 2^12(4), (255) }, the length
 * 2^(8+code). */
static bool mfl_code_valid(struct cur ext)
{
	return ext.left == 1 && ext.p[0] >= 1 && ext.p[0] <= 4;
}

/* The server agrees to whatever valid length a client asks for (mbedTLS
 * echoes it in the ServerHello), so from here on it is the limit. */
static int check_client_mfl(struct sotls_hs *hs, struct cur ext, bool judge)
{
	if (ext.left != 1)
		return DECODE(hs, "malformed max_fragment_length extension");
	if (!judge)
		return 0;
	if (!mfl_code_valid(ext))
		/* RFC 6066 §4: "If a server receives a maximum fragment
		 * length negotiation request for a value other than the
		 * allowed values, it MUST abort the handshake with an
		 * "illegal_parameter" alert." */
		return ILLEGAL(hs, "max_fragment_length code %u", ext.p[0]);
	hs->mfl = (uint16_t)(256u << ext.p[0]);
	return 0;
}

static int check_client_ext(struct sotls_hs *hs, uint16_t type, struct cur ext, bool judge)
{
	struct cur list;
	switch (type) {
	case EXT_SERVER_NAME:
		return check_server_name(hs, ext, judge);
	case EXT_MAX_FRAGMENT_LENGTH:
		return check_client_mfl(hs, ext, judge);
	case EXT_SUPPORTED_GROUPS:
		return check_groups(hs, ext, judge);
	case EXT_EC_POINT_FORMATS:
		return check_point_formats(hs, ext, judge);
	case EXT_SIGNATURE_ALGORITHMS:
		/* RFC 5246 §7.4.1.4.1: supported_signature_algorithms
		 * <2..2^16-2>, pairs of bytes. */
		if (!vec(&ext, 2, &list) || ext.left != 0 || list.left < 2 || list.left % 2 != 0)
			return DECODE(hs, "malformed signature_algorithms extension");
		return 0;
	case EXT_EXTENDED_MASTER_SECRET:
		/* RFC 7627 §5.1: "The extension_data field of this extension
		 * is empty." */
		if (ext.left != 0)
			return DECODE(hs, "extended_master_secret with data");
		hs->hello_ems |= judge; /* resume.c: RFC 7627 §5.3 */
		return 0;
	case EXT_ALPN:
		return check_alpn(hs, ext, judge);
	}
	return 0;
}

/* The extension types that sotls or mbedTLS act on, each a bit of a
 * "seen" mask. */
static const uint16_t TRACKED[] = {0, 1, 10, 11, 13, 16, 23, 35, 0xff01};

static uint32_t tracked_bit(uint16_t type)
{
	for (unsigned i = 0; i < sizeof(TRACKED) / sizeof(TRACKED[0]); i++)
		if (TRACKED[i] == type)
			return 1u << i;
	return 0;
}

/* Walks an extensions block (all that is left of the message), checking
 * each extension as judge says (see above); *seen gets the tracked types
 * present. */
static int check_extensions(struct sotls_hs *hs, struct cur c,
			    int (*check)(struct sotls_hs *, uint16_t, struct cur, bool), bool judge,
			    uint32_t *seen)
{
	*seen = 0;
	if (c.left == 0)
		return 0; /* RFC 5246 §7.4.1.2: extensions are optional */
	struct cur exts;
	if (!vec(&c, 2, &exts) || c.left != 0)
		return DECODE(hs, "malformed extensions block");
	while (exts.left > 0) {
		const uint8_t *type;
		struct cur ext;
		if (!take(&exts, 2, &type) || !vec(&exts, 2, &ext))
			return DECODE(hs, "malformed extension");
		uint16_t t = u16(type);
		uint32_t bit = tracked_bit(t);
		if (*seen & bit)
			/* RFC 5246 §7.4.1.4: "There MUST NOT be more than
			 * one extension of the same type." */
			return DECODE(hs, "extension %u twice", t);
		*seen |= bit;
		int rc = check(hs, t, ext, judge);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static bool suite_configured(const struct sotls_hs *hs, uint16_t suite)
{
	for (const int *id = hs->cfg->suites; *id != 0; id++)
		if (suite == *id)
			return true;
	return false;
}

static bool suite_in_common(const struct sotls_hs *hs, struct cur suites)
{
	for (size_t i = 0; i + 1 < suites.left; i += 2)
		if (suite_configured(hs, u16(suites.p + i)))
			return true;
	return false;
}

/* A ClientHello's variable fields, once it is known to decode. */
struct client_hello {
	const uint8_t *version;
	struct cur sid, suites, comp;
	struct cur exts; /* the extensions block with its length; empty if none */
};

/* RFC 5246 §7.4.1.2: client_version, random[32], session_id<0..32>,
 * cipher_suites<2..2^16-2>, compression_methods<1..2^8-1>, then optional
 * extensions<0..2^16-1>, each of which must decode too. */
static int parse_client_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len,
			      struct client_hello *h, uint32_t *seen)
{
	struct cur c = {msg + 4, len - 4};
	if (!take(&c, 2, &h->version) || !take(&c, 32, NULL) || !vec(&c, 1, &h->sid) ||
	    h->sid.left > 32)
		return DECODE(hs, "malformed ClientHello");
	if (!vec(&c, 2, &h->suites) || h->suites.left < 2 || h->suites.left % 2 != 0)
		return DECODE(hs, "malformed cipher_suites in the ClientHello");
	if (!vec(&c, 1, &h->comp) || h->comp.left == 0)
		return DECODE(hs, "malformed compression_methods in the ClientHello");
	h->exts = c;
	return check_extensions(hs, c, check_client_ext, false, seen);
}

/* What a ClientHello above 16 KiB is shown with: of what mbedTLS acts on,
 * the first of each suite sotls has (and RFC 5746's SCSV), group and
 * signature algorithm it can use, and the extensions mbedTLS 3.6's TLS 1.2
 * server parses. ALPN is not one: sotls chooses the protocol itself and a
 * server's mbedTLS has no list to match. */
static bool shown_suite(const struct sotls_hs *hs, uint16_t id)
{
	return id == 0x00ff /* TLS_EMPTY_RENEGOTIATION_INFO_SCSV */ || suite_configured(hs, id);
}

static bool shown_extension(uint16_t type)
{
	static const uint16_t PARSED[] = {0, 1, 10, 11, 13, 22, 23, 35, 0xff01};
	for (size_t i = 0; i < sizeof(PARSED) / sizeof(PARSED[0]); i++)
		if (PARSED[i] == type)
			return true;
	return false;
}

/* Appends a list of 2-byte items with a 2-byte length prefix: all of
 * them, or only the first of each that keep() accepts (what it accepts is a
 * handful, so the look back is short). */
static uint8_t *put_list(uint8_t *p, struct cur list, bool all, const struct sotls_hs *hs,
			 bool (*keep)(const struct sotls_hs *, uint16_t))
{
	uint8_t *len_at = p;
	p += 2;
	for (size_t i = 0; i + 1 < list.left; i += 2) {
		bool put = all || keep(hs, u16(list.p + i));
		for (const uint8_t *q = len_at + 2; put && !all && q < p; q += 2)
			put = u16(q) != u16(list.p + i);
		if (put) {
			memcpy(p, list.p + i, 2);
			p += 2;
		}
	}
	if (p == len_at + 2 && list.left >= 2) {
		/* None to keep: the first stays, so that the vector keeps its
		 * minimum length and mbedTLS finds nothing it can use in it,
		 * as in the whole list. */
		memcpy(p, list.p, 2);
		p += 2;
	}
	size_t n = (size_t)(p - len_at - 2);
	len_at[0] = (uint8_t)(n >> 8);
	len_at[1] = (uint8_t)n;
	return p;
}

static bool shown_group(const struct sotls_hs *hs, uint16_t g)
{
	(void)hs;
	return group_supported(g);
}

/* RFC 5246 §7.4.1.4.1 SignatureAndHashAlgorithm pairs sotls's mbedTLS can
 * use: SHA-256, -384 or -512 with RSA or ECDSA. */
static bool shown_sig_alg(const struct sotls_hs *hs, uint16_t alg)
{
	(void)hs;
	uint8_t hash = (uint8_t)(alg >> 8), sig = (uint8_t)alg;
	return hash >= 4 && hash <= 6 && (sig == 1 || sig == 3);
}

/* RFC 8422 §4: "A client that proposes ECC cipher suites may choose not to
 * include these extensions. In this case, the server is free to choose any
 * one of the elliptic curves or point formats listed in Section 5." mbedTLS
 * 3.6 instead takes no supported_groups as no curve at all and refuses every
 * ECDHE suite; it is shown the NIST curves of §5.1.1 that sotls has, P-256
 * first, which mbedTLS's order (mbed_config.c) then picks, as OpenSSL and
 * other peers do for such clients. */
static const uint8_t DEFAULT_GROUPS_EXT[] = {
	0, EXT_SUPPORTED_GROUPS, 0, 8, 0, 6, 0, 23 /* secp256r1 */, 0, 24 /* secp384r1 */,
	0, 25 /* secp521r1 */,
};

/*
 * The ClientHello as mbedTLS is to see it, in hs->shown_hello: the
 * client_version clamped to TLS 1.2 (clamp), the default groups added
 * (add_groups), and for one above what mbedTLS parses (big) only what it acts
 * on (see shown_suite). The real bytes stay for the transcript (real_hello).
 */
static int show_client_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len,
			     const struct client_hello *h, bool clamp, bool add_groups, bool big)
{
	hs->shown_hello = malloc(len + sizeof(DEFAULT_GROUPS_EXT) + 2);
	if (hs->shown_hello == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the ClientHello");
	uint8_t *out = hs->shown_hello, *p = out + 4;
	/* version, random and session_id as they are */
	size_t fixed = (size_t)(h->sid.p + h->sid.left - (msg + 4));
	memcpy(p, msg + 4, fixed);
	if (clamp) {
		/* RFC 5246 E.1: "If a TLS server receives a ClientHello
		 * containing a version number greater than the highest version
		 * supported by the server, it MUST reply according to the
		 * highest version supported by the server." */
		p[0] = 3;
		p[1] = 3;
	}
	p += fixed;
	p = put_list(p, h->suites, !big, hs, shown_suite);
	*p++ = (uint8_t)h->comp.left;
	memcpy(p, h->comp.p, h->comp.left);
	p += h->comp.left;
	if (h->exts.left > 0 || add_groups) {
		uint8_t *len_at = p;
		p += 2;
		struct cur exts = {h->exts.p + 2, h->exts.left > 0 ? h->exts.left - 2 : 0};
		while (exts.left > 0) {
			uint16_t type = u16(exts.p);
			struct cur ext = {0};
			(void)take(&exts, 2, NULL);
			(void)vec(&exts, 2, &ext); /* parse_client_hello checked it */
			if (big && !shown_extension(type))
				continue;
			p[0] = (uint8_t)(type >> 8);
			p[1] = (uint8_t)type;
			if (big && (type == EXT_SUPPORTED_GROUPS || type == EXT_SIGNATURE_ALGORITHMS)) {
				struct cur list = {0};
				(void)vec(&ext, 2, &list);
				uint8_t *end = put_list(p + 4, list, false, hs,
							type == EXT_SUPPORTED_GROUPS ? shown_group
										     : shown_sig_alg);
				size_t n = (size_t)(end - p - 4);
				p[2] = (uint8_t)(n >> 8);
				p[3] = (uint8_t)n;
				p = end;
				continue;
			}
			p[2] = (uint8_t)(ext.left >> 8);
			p[3] = (uint8_t)ext.left;
			memcpy(p + 4, ext.p, ext.left);
			p += 4 + ext.left;
		}
		if (add_groups) {
			memcpy(p, DEFAULT_GROUPS_EXT, sizeof(DEFAULT_GROUPS_EXT));
			p += sizeof(DEFAULT_GROUPS_EXT);
		}
		size_t n = (size_t)(p - len_at - 2);
		len_at[0] = (uint8_t)(n >> 8);
		len_at[1] = (uint8_t)n;
	}
	size_t body = (size_t)(p - out - 4);
	out[0] = msg[0];
	out[1] = (uint8_t)(body >> 16);
	out[2] = (uint8_t)(body >> 8);
	out[3] = (uint8_t)body;
	hs->shown_hello_len = (size_t)(p - out);
	return 0;
}

int sotls_hs_check_client_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len,
				const uint8_t **shown, size_t *shown_len)
{
	struct client_hello h = {0};
	uint32_t seen;
	/* All that decodes is checked before any of what it means. */
	int rc = parse_client_hello(hs, msg, len, &h, &seen);
	if (rc != 0)
		return rc;
	if (memchr(h.comp.p, 0, h.comp.left) == NULL)
		/* RFC 5246 §7.4.1.2: "this vector MUST contain ...
		 * CompressionMethod.null"; sotls offers nothing else. */
		return ILLEGAL(hs, "the ClientHello offers no null compression");
	memcpy(hs->client_sid, h.sid.p, h.sid.left);
	hs->client_sid_len = (uint8_t)h.sid.left;
	rc = check_extensions(hs, h.exts, check_client_ext, true, &seen);
	if (rc != 0)
		return rc;
	if (!suite_in_common(hs, h.suites))
		/* RFC 5246 §7.4.1.3: with no acceptable choice the server
		 * "MUST respond with a handshake failure alert". */
		return sotls_hs_fail(hs, SOTLS_ERR_NO_SHARED_SUITE, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "no cipher suite in common with the client");

	rc = sotls_alpn_choose(hs);
	hs->alpn_offer = NULL; /* points into msg */
	if (rc != 0)
		return rc;

	*shown = msg;
	*shown_len = len;
	bool clamp = u16(h.version) > 0x0303;
	bool add_groups = !(seen & tracked_bit(EXT_SUPPORTED_GROUPS)); /* every suite is ECDHE */
	bool big = len > SOTLS_HS_MAX_MBED_MESSAGE;
	hs->hello_rewritten = clamp || add_groups || big;
	/* The real bytes, for the transcript of a rewritten hello and for the
	 * SNI acknowledgement (sni_ack.c). */
	if (hs->hello_rewritten || hs->sni_present) {
		hs->real_hello = malloc(len);
		if (hs->real_hello == NULL)
			return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
					     "no memory for the ClientHello");
		memcpy(hs->real_hello, msg, len);
		hs->real_hello_len = len;
	}
	if (!hs->hello_rewritten)
		return 0;
	rc = show_client_hello(hs, msg, len, &h, clamp, add_groups, big);
	if (rc == 0) {
		*shown = hs->shown_hello;
		*shown_len = hs->shown_hello_len;
	}
	return rc;
}

static int check_server_ext(struct sotls_hs *hs, uint16_t type, struct cur ext, bool judge)
{
	if (type == EXT_EC_POINT_FORMATS)
		return check_point_formats(hs, ext, judge);
	if (!judge)
		/* RFC 6066 §3: "The "extension_data" field of this extension
		 * SHALL be empty." */
		return type == EXT_SERVER_NAME && ext.left != 0
			       ? DECODE(hs, "the ServerHello's server_name is not empty")
			       : 0;
	/* RFC 6066 §4: the answer holds "the same as the requested maximum
	 * fragment length"; mbedTLS refuses any other with illegal_parameter,
	 * so the limit is set only for the one sotls asked for. */
	if (type == EXT_MAX_FRAGMENT_LENGTH && mfl_code_valid(ext) &&
	    (256u << ext.p[0]) == hs->cfg->max_frag_len)
		hs->mfl = hs->cfg->max_frag_len;
	if (type == EXT_SERVER_NAME && !hs->sni_present)
		/* RFC 5246 §7.4.1.4: an extension the client did not offer
		 * "MUST abort the handshake with an unsupported_extension
		 * fatal alert". */
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_UNSUPPORTED_EXTENSION,
				     "the server acknowledged a server_name that was not sent");
	return 0;
}

int sotls_hs_check_server_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len)
{
	/* RFC 5246 §7.4.1.3: server_version, random[32], session_id<0..32>,
	 * cipher_suite, compression_method, optional extensions. All that
	 * decodes is checked before any of what it means. */
	struct cur c = {msg + 4, len - 4}, sid, suite;
	const uint8_t *comp;
	uint32_t seen;
	if (!take(&c, 34, NULL) || !vec(&c, 1, &sid) || sid.left > 32 ||
	    !take(&c, 2, &suite.p) || !take(&c, 1, &comp))
		return DECODE(hs, "malformed ServerHello");
	int rc = check_extensions(hs, c, check_server_ext, false, &seen);
	if (rc != 0)
		return rc;
	suite.left = 2;
	if (!suite_in_common(hs, suite))
		/* RFC 5246 §7.4.1.3: "The single cipher suite selected by the
		 * server from the list in ClientHello.cipher_suites". */
		return ILLEGAL(hs, "the ServerHello chose suite 0x%04x, which was not offered",
			       u16(suite.p));
	if (comp[0] != 0)
		/* RFC 5246 §7.4.1.3: chosen "from the list in
		 * ClientHello.compression_methods", which holds null only. */
		return ILLEGAL(hs, "the ServerHello chose compression method %u", comp[0]);
	return check_extensions(hs, c, check_server_ext, true, &seen);
}

/* ---- the ECDHE key shares ---- */

static mbedtls_ecp_group_id group_of(uint16_t tls_id)
{
	switch (tls_id) {
	case 23: return MBEDTLS_ECP_DP_SECP256R1;
	case 24: return MBEDTLS_ECP_DP_SECP384R1;
	case 25: return MBEDTLS_ECP_DP_SECP521R1;
	case 29: return MBEDTLS_ECP_DP_CURVE25519;
	}
	return MBEDTLS_ECP_DP_NONE;
}

/*
 * The peer's public key on group id: RFC 8422 §5.4: NIST points are
 * uncompressed ("the only valid representation", §5.1.2: a compressed one is
 * a format that was not agreed, illegal_parameter), X25519 shares 32 bytes
 * (a wrong length does not decode: decode_error). §5.11: the point must be
 * on the curve; RFC 7748 §6.1: an X25519 share of small order gives the
 * all-zero secret. Both are a field out of range: illegal_parameter.
 */
static int check_share(struct sotls_hs *hs, mbedtls_ecp_group_id id, struct cur pt)
{
	mbedtls_ecp_group grp;
	mbedtls_ecp_point q;
	int rc = 0;
	mbedtls_ecp_group_init(&grp);
	mbedtls_ecp_point_init(&q);
	if (mbedtls_ecp_group_load(&grp, id) != 0) {
		rc = sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_ILLEGAL_PARAMETER,
				   "key share on a group sotls did not offer");
		goto out;
	}
	size_t plen = (grp.pbits + 7) / 8;
	bool mont = id == MBEDTLS_ECP_DP_CURVE25519;
	if (!mont && pt.left == 1 + plen && (pt.p[0] == 2 || pt.p[0] == 3)) {
		rc = ILLEGAL(hs, "compressed ECDHE point");
	} else if (pt.left != (mont ? plen : 1 + 2 * plen)) {
		rc = DECODE(hs, "ECDHE key share of %zu bytes", pt.left);
	} else if (!mont && pt.p[0] != 4) {
		rc = ILLEGAL(hs, "ECDHE point in format %u", pt.p[0]);
	} else if (mbedtls_ecp_point_read_binary(&grp, &q, pt.p, pt.left) != 0 ||
		   mbedtls_ecp_check_pubkey(&grp, &q) != 0) {
		rc = ILLEGAL(hs, mont ? "X25519 share of small order" : "ECDHE point not on the curve");
	}
out:
	mbedtls_ecp_point_free(&q);
	mbedtls_ecp_group_free(&grp);
	return rc;
}

int sotls_hs_check_client_key_exchange(struct sotls_hs *hs, const uint8_t *msg, size_t len)
{
	/* RFC 8422 §5.7: ClientECDiffieHellmanPublic, ecdh_Yc<1..2^8-1>. */
	struct cur c = {msg + 4, len - 4}, pt;
	if (!vec(&c, 1, &pt) || c.left != 0)
		return DECODE(hs, "malformed ClientKeyExchange");
	return check_share(hs, sotls_mbed_kex_group(&hs->ssl), pt);
}

int sotls_hs_check_server_key_exchange(struct sotls_hs *hs, const uint8_t *msg, size_t len)
{
	/* RFC 8422 §5.4: ServerECDHParams = ECParameters (curve_type
	 * named_curve(3), NamedCurve) + ECPoint point<1..2^8-1>, then the
	 * signature, which mbedTLS checks. */
	struct cur c = {msg + 4, len - 4}, pt;
	const uint8_t *type, *curve;
	if (!take(&c, 1, &type) || !take(&c, 2, &curve) || !vec(&c, 1, &pt))
		return DECODE(hs, "malformed ServerKeyExchange");
	mbedtls_ecp_group_id id = group_of(u16(curve));
	if (type[0] != 3 || id == MBEDTLS_ECP_DP_NONE)
		/* RFC 8422 §5.4: explicit curves are deprecated; a named
		 * curve the client did not offer is out of range. */
		return ILLEGAL(hs, "ServerKeyExchange on curve type %u, group %u", type[0],
			       u16(curve));
	return check_share(hs, id, pt);
}
static void drop_copy(uint8_t **buf, size_t len)
{
	if (*buf != NULL) {
		sotls_wipe(*buf, len);
		free(*buf);
		*buf = NULL;
	}
}


void sotls_hs_drop_hello(struct sotls_hs *hs)
{
	drop_copy(&hs->real_hello, hs->real_hello_len);
	drop_copy(&hs->shown_hello, hs->shown_hello_len);
}

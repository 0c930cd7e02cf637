/*
 * The checks on the peer's hello that RFC 5246, 8422, 7627 and 6066 make and
 * mbedTLS 3.6 does not (or answers with the wrong alert). They run on the
 * whole message, before mbedTLS parses it, so the alert they name is the
 * first and only thing sent.
 */
#include <string.h>

#include "hs_internal.h"

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
	EXT_EXTENDED_MASTER_SECRET = 23,
};

/* The groups sotls's ECDHE uses (hs.c offers and accepts the same). */
static bool group_supported(uint16_t g)
{
	return g == 23 /* secp256r1 */ || g == 29 /* x25519 */ || g == 24 /* secp384r1 */ ||
	       g == 25 /* secp521r1 */;
}

/* RFC 8422 §5.1.2: ECPointFormat ec_point_format_list<1..2^8-1>, and the
 * uncompressed format (0) MUST be in it. Both hellos use this rule. */
static int check_point_formats(struct sotls_hs *hs, struct cur ext)
{
	struct cur list;
	if (!vec(&ext, 1, &list) || ext.left != 0)
		return DECODE(hs, "malformed ec_point_formats extension");
	for (size_t i = 0; i < list.left; i++)
		if (list.p[i] == 0)
			return 0;
	/* RFC 8422 §5.1.2 (client) and §5.2 (server): "MUST abort the
	 * handshake and return an illegal_parameter alert". An empty list
	 * lacks it too. */
	return ILLEGAL(hs, "ec_point_formats without the uncompressed format");
}

/* RFC 6066 §3: ServerNameList server_name_list<1..2^16-1>, each entry a
 * name_type and an opaque HostName<1..2^16-1>; "The ServerNameList MUST NOT
 * contain more than one name of the same name_type." */
static int check_server_name(struct sotls_hs *hs, struct cur ext)
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
		if (type[0] == 0) {
			if (host_name)
				return ILLEGAL(hs, "two host names in server_name");
			host_name = true;
		}
	}
	return 0;
}

/* RFC 8422 §5.1.1: a client whose supported_groups names no group the
 * server has cannot use an ECDHE suite, and every sotls suite is one: no
 * suite is left (RFC 5246 §7.4.1.3: handshake_failure). */
static int check_groups(struct sotls_hs *hs, struct cur ext)
{
	struct cur list;
	if (!vec(&ext, 2, &list) || ext.left != 0 || list.left < 2 || list.left % 2 != 0)
		return DECODE(hs, "malformed supported_groups extension");
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
static int check_client_mfl(struct sotls_hs *hs, struct cur ext)
{
	if (ext.left != 1)
		return DECODE(hs, "malformed max_fragment_length extension");
	if (!mfl_code_valid(ext))
		/* RFC 6066 §4: "If a server receives a maximum fragment
		 * length negotiation request for a value other than the
		 * allowed values, it MUST abort the handshake with an
		 * "illegal_parameter" alert." */
		return ILLEGAL(hs, "max_fragment_length code %u", ext.p[0]);
	hs->mfl = (uint16_t)(256u << ext.p[0]);
	return 0;
}

static int check_client_ext(struct sotls_hs *hs, uint16_t type, struct cur ext)
{
	struct cur list;
	switch (type) {
	case EXT_SERVER_NAME:
		return check_server_name(hs, ext);
	case EXT_MAX_FRAGMENT_LENGTH:
		return check_client_mfl(hs, ext);
	case EXT_SUPPORTED_GROUPS:
		return check_groups(hs, ext);
	case EXT_EC_POINT_FORMATS:
		return check_point_formats(hs, ext);
	case EXT_SIGNATURE_ALGORITHMS:
		/* RFC 5246 §7.4.1.4.1: supported_signature_algorithms
		 * <2..2^16-2>, pairs of bytes. */
		if (!vec(&ext, 2, &list) || ext.left != 0 || list.left < 2 || list.left % 2 != 0)
			return DECODE(hs, "malformed signature_algorithms extension");
		return 0;
	case EXT_EXTENDED_MASTER_SECRET:
		/* RFC 7627 §5.1: "The extension_data field of this extension
		 * is empty." */
		return ext.left == 0 ? 0 : DECODE(hs, "extended_master_secret with data");
	}
	return 0;
}

/* RFC 5246 §7.4.1.4: "There MUST NOT be more than one extension of the
 * same type." Types that sotls or mbedTLS act on are tracked. */
static bool seen_before(uint16_t type, uint32_t *seen)
{
	static const uint16_t TRACKED[] = {0, 1, 10, 11, 13, 16, 23, 35, 0xff01};
	for (unsigned i = 0; i < sizeof(TRACKED) / sizeof(TRACKED[0]); i++) {
		if (TRACKED[i] == type) {
			bool was = *seen & (1u << i);
			*seen |= 1u << i;
			return was;
		}
	}
	return false;
}

/* Walks an extensions block (all that is left of the message). */
static int check_extensions(struct sotls_hs *hs, struct cur *c,
			    int (*check)(struct sotls_hs *, uint16_t, struct cur))
{
	if (c->left == 0)
		return 0; /* RFC 5246 §7.4.1.2: extensions are optional */
	struct cur exts;
	if (!vec(c, 2, &exts) || c->left != 0)
		return DECODE(hs, "malformed extensions block");
	uint32_t seen = 0;
	while (exts.left > 0) {
		const uint8_t *type;
		struct cur ext;
		if (!take(&exts, 2, &type) || !vec(&exts, 2, &ext))
			return DECODE(hs, "malformed extension");
		uint16_t t = u16(type);
		if (seen_before(t, &seen))
			return DECODE(hs, "extension %u twice", t);
		int rc = check(hs, t, ext);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static bool suite_in_common(const struct sotls_hs *hs, struct cur suites)
{
	for (size_t i = 0; i < suites.left; i += 2)
		for (const int *id = hs->cfg->suites; *id != 0; id++)
			if (u16(suites.p + i) == *id)
				return true;
	return false;
}

int sotls_hs_check_client_hello(struct sotls_hs *hs, uint8_t *msg, size_t len)
{
	/* RFC 5246 §7.4.1.2: client_version, random[32], session_id<0..32>,
	 * cipher_suites<2..2^16-2>, compression_methods<1..2^8-1>, then
	 * optional extensions<0..2^16-1>. */
	struct cur c = {msg + 4, len - 4}, sid, suites, comp;
	const uint8_t *version;
	if (!take(&c, 2, &version) || !take(&c, 32, NULL) || !vec(&c, 1, &sid) || sid.left > 32)
		return DECODE(hs, "malformed ClientHello");
	if (!vec(&c, 2, &suites) || suites.left < 2 || suites.left % 2 != 0)
		return DECODE(hs, "malformed cipher_suites in the ClientHello");
	if (!vec(&c, 1, &comp) || comp.left == 0)
		return DECODE(hs, "malformed compression_methods in the ClientHello");
	if (memchr(comp.p, 0, comp.left) == NULL)
		/* RFC 5246 §7.4.1.2: "this vector MUST contain ...
		 * CompressionMethod.null"; sotls offers nothing else. */
		return ILLEGAL(hs, "the ClientHello offers no null compression");
	int rc = check_extensions(hs, &c, check_client_ext);
	if (rc != 0)
		return rc;
	if (!suite_in_common(hs, suites))
		/* RFC 5246 §7.4.1.3: with no acceptable choice the server
		 * "MUST respond with a handshake failure alert". */
		return sotls_hs_fail(hs, SOTLS_ERR_NO_SHARED_SUITE, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "no cipher suite in common with the client");

	if (version[0] == 3 && version[1] > 3) {
		/* RFC 5246 E.1: "If a TLS server receives a ClientHello
		 * containing a version number greater than the highest version
		 * supported by the server, it MUST reply according to the
		 * highest version supported by the server." See real_hello. */
		hs->real_hello = malloc(len);
		if (hs->real_hello == NULL)
			return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
					     "no memory for the ClientHello");
		memcpy(hs->real_hello, msg, len);
		hs->real_hello_len = len;
		msg[5] = 3;
	}
	return 0;
}

static int check_server_ext(struct sotls_hs *hs, uint16_t type, struct cur ext)
{
	if (type == EXT_EC_POINT_FORMATS)
		return check_point_formats(hs, ext);
	/* RFC 6066 §4: the answer holds "the same as the requested maximum
	 * fragment length"; mbedTLS refuses any other with illegal_parameter,
	 * so the limit is set only for the one sotls asked for. */
	if (type == EXT_MAX_FRAGMENT_LENGTH && mfl_code_valid(ext) &&
	    (256u << ext.p[0]) == hs->cfg->max_frag_len)
		hs->mfl = hs->cfg->max_frag_len;
	return 0;
}

int sotls_hs_check_server_hello(struct sotls_hs *hs, const uint8_t *msg, size_t len)
{
	/* RFC 5246 §7.4.1.3: server_version, random[32], session_id<0..32>,
	 * cipher_suite, compression_method, optional extensions. */
	struct cur c = {msg + 4, len - 4}, sid;
	const uint8_t *comp;
	if (!take(&c, 34, NULL) || !vec(&c, 1, &sid) || sid.left > 32 || !take(&c, 2, NULL) ||
	    !take(&c, 1, &comp))
		return DECODE(hs, "malformed ServerHello");
	if (comp[0] != 0)
		/* RFC 5246 §7.4.1.3: chosen "from the list in
		 * ClientHello.compression_methods", which holds null only. */
		return ILLEGAL(hs, "the ServerHello chose compression method %u", comp[0]);
	return check_extensions(hs, &c, check_server_ext);
}

/*
 * The numbers of TLS 1.2 that sotls's layers share, defined once: the
 * record layer, the kernel path, the handshake glue and the policy all take
 * them from here (RFC 5246; RFC 5288 and RFC 6209 for the GCM suites'
 * nonces; RFC 6066, RFC 7301 for the alerts they add). Where one number
 * depends on others it is checked when this compiles.
 */
#ifndef SOTLS_PROTO_TLS12_H
#define SOTLS_PROTO_TLS12_H

#include <stdint.h>

/* RFC 5246 §6.2.1: ProtocolVersion { 3, 3 } is TLS 1.2. */
#define SOTLS_TLS12_MAJOR 3
#define SOTLS_TLS12_MINOR 3

/* RFC 5246 §6.2.1, ContentType. */
enum sotls_content_type {
	SOTLS_CT_CHANGE_CIPHER_SPEC = 20,
	SOTLS_CT_ALERT = 21,
	SOTLS_CT_HANDSHAKE = 22,
	SOTLS_CT_APPLICATION_DATA = 23,
};

/* RFC 5246 §7.2, AlertLevel. */
enum sotls_alert_level {
	SOTLS_ALERT_WARNING = 1,
	SOTLS_ALERT_FATAL = 2,
};

/* RFC 5246 §7.2, AlertDescription, with RFC 6066 §9 and RFC 7301 §3.2. */
enum sotls_alert_desc {
	SOTLS_ALERT_CLOSE_NOTIFY = 0,
	SOTLS_ALERT_UNEXPECTED_MESSAGE = 10,
	SOTLS_ALERT_BAD_RECORD_MAC = 20,
	SOTLS_ALERT_RECORD_OVERFLOW = 22,
	SOTLS_ALERT_HANDSHAKE_FAILURE = 40,
	SOTLS_ALERT_BAD_CERTIFICATE = 42,
	SOTLS_ALERT_UNSUPPORTED_CERTIFICATE = 43,
	SOTLS_ALERT_CERTIFICATE_REVOKED = 44,
	SOTLS_ALERT_CERTIFICATE_EXPIRED = 45,
	SOTLS_ALERT_CERTIFICATE_UNKNOWN = 46,
	SOTLS_ALERT_ILLEGAL_PARAMETER = 47,
	SOTLS_ALERT_UNKNOWN_CA = 48,
	SOTLS_ALERT_DECODE_ERROR = 50,
	SOTLS_ALERT_DECRYPT_ERROR = 51,
	SOTLS_ALERT_PROTOCOL_VERSION = 70,
	SOTLS_ALERT_INSUFFICIENT_SECURITY = 71,
	SOTLS_ALERT_INTERNAL_ERROR = 80,
	SOTLS_ALERT_USER_CANCELED = 90,
	SOTLS_ALERT_NO_RENEGOTIATION = 100,
	SOTLS_ALERT_MISSING_EXTENSION = 109,
	SOTLS_ALERT_UNSUPPORTED_EXTENSION = 110,
	SOTLS_ALERT_UNRECOGNIZED_NAME = 112,
	SOTLS_ALERT_NO_APPLICATION_PROTOCOL = 120,
};

/* RFC 5246 §7.4, HandshakeType (RFC 5077 §3.3 adds NewSessionTicket). */
enum sotls_hs_type {
	SOTLS_HS_HELLO_REQUEST = 0,
	SOTLS_HS_CLIENT_HELLO = 1,
	SOTLS_HS_SERVER_HELLO = 2,
	SOTLS_HS_NEW_SESSION_TICKET = 4,
	SOTLS_HS_CERTIFICATE = 11,
	SOTLS_HS_SERVER_KEY_EXCHANGE = 12,
	SOTLS_HS_CERTIFICATE_REQUEST = 13,
	SOTLS_HS_SERVER_HELLO_DONE = 14,
	SOTLS_HS_CERTIFICATE_VERIFY = 15,
	SOTLS_HS_CLIENT_KEY_EXCHANGE = 16,
	SOTLS_HS_FINISHED = 20,
};

/*
 * A GCM record (RFC 5246 §6.2.3.3, RFC 5288 §3):
 *   type(1) | version(2) | length(2) | explicit nonce(8) | ciphertext | tag(16)
 * nonce = salt(4, from the key block) || explicit nonce(8).
 */
#define SOTLS_REC_HEADER 5
#define SOTLS_REC_EXPLICIT_NONCE 8
#define SOTLS_REC_TAG 16
#define SOTLS_REC_SALT 4
#define SOTLS_REC_OVERHEAD (SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE + SOTLS_REC_TAG)
/* RFC 5246 §6.2.1: "The length MUST NOT exceed 2^14." */
#define SOTLS_REC_MAX_PLAINTEXT 16384
/* RFC 5246 §6.2.3: "The length MUST NOT exceed 2^14 + 2048"; longer is
 * record_overflow. */
#define SOTLS_REC_MAX_CIPHERTEXT (16384 + 2048)

/*
 * One direction's traffic keys, from the key block (RFC 5246 §6.3: its
 * write key and, for GCM, the 4-byte salt, RFC 5288 §3) to the record layer
 * or the kernel, with the sequence number of its next record.
 */
struct sotls_dir_keys {
	const uint8_t *key;  /* the AEAD's key length */
	const uint8_t *salt; /* SOTLS_REC_SALT bytes */
	uint64_t seq;
};

_Static_assert(SOTLS_REC_HEADER == 1 + 2 + 2, "type, version, length");
_Static_assert(SOTLS_REC_SALT + SOTLS_REC_EXPLICIT_NONCE == 12,
	       "RFC 5288 §3: the GCM nonce is 12 bytes");
_Static_assert(SOTLS_REC_OVERHEAD + SOTLS_REC_MAX_PLAINTEXT <= SOTLS_REC_HEADER +
									   SOTLS_REC_MAX_CIPHERTEXT,
	       "a full GCM record fits the longest length the peer may send");
_Static_assert(SOTLS_REC_MAX_CIPHERTEXT <= 0xffff, "the length field is 16 bits");

#endif

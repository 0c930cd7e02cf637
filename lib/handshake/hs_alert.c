/*
 * mbedTLS handshake failures as sotls codes, details and the fatal alert
 * that RFC 5246 §7.2.2 names for them. mbedTLS sends that alert itself for
 * many failures and for others sends nothing; hs.c sends the one chosen here
 * only when the writer saw no alert go out.
 */
#include <stdio.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"

const char *sotls_alert_name(int desc)
{
	switch (desc) {
	case SOTLS_ALERT_CLOSE_NOTIFY: return "close_notify";
	case SOTLS_ALERT_UNEXPECTED_MESSAGE: return "unexpected_message";
	case SOTLS_ALERT_BAD_RECORD_MAC: return "bad_record_mac";
	case SOTLS_ALERT_RECORD_OVERFLOW: return "record_overflow";
	case SOTLS_ALERT_HANDSHAKE_FAILURE: return "handshake_failure";
	case SOTLS_ALERT_BAD_CERTIFICATE: return "bad_certificate";
	case SOTLS_ALERT_UNSUPPORTED_CERTIFICATE: return "unsupported_certificate";
	case SOTLS_ALERT_CERTIFICATE_REVOKED: return "certificate_revoked";
	case SOTLS_ALERT_CERTIFICATE_EXPIRED: return "certificate_expired";
	case SOTLS_ALERT_CERTIFICATE_UNKNOWN: return "certificate_unknown";
	case SOTLS_ALERT_ILLEGAL_PARAMETER: return "illegal_parameter";
	case SOTLS_ALERT_UNKNOWN_CA: return "unknown_ca";
	case SOTLS_ALERT_DECODE_ERROR: return "decode_error";
	case SOTLS_ALERT_DECRYPT_ERROR: return "decrypt_error";
	case SOTLS_ALERT_PROTOCOL_VERSION: return "protocol_version";
	case SOTLS_ALERT_INSUFFICIENT_SECURITY: return "insufficient_security";
	case SOTLS_ALERT_INTERNAL_ERROR: return "internal_error";
	case SOTLS_ALERT_USER_CANCELED: return "user_canceled";
	case SOTLS_ALERT_NO_RENEGOTIATION: return "no_renegotiation";
	case SOTLS_ALERT_MISSING_EXTENSION: return "missing_extension";
	case SOTLS_ALERT_UNSUPPORTED_EXTENSION: return "unsupported_extension";
	case SOTLS_ALERT_UNRECOGNIZED_NAME: return "unrecognized_name";
	case SOTLS_ALERT_NO_APPLICATION_PROTOCOL: return "no_application_protocol";
	}
	return "unknown alert";
}

/* Errors of the peer's key share and signature: a point off the curve or at
 * infinity, a share of the wrong size, a bad signature (RFC 8422 §5.10/5.11:
 * illegal_parameter for a bad point; RFC 5246 §7.2.2: decrypt_error for a
 * signature that does not verify). */
static int crypto_alert(int code)
{
	switch (code) {
	case MBEDTLS_ERR_ECP_INVALID_KEY:
	case MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE:
		return SOTLS_ALERT_ILLEGAL_PARAMETER;
	case MBEDTLS_ERR_ECP_BAD_INPUT_DATA:
	case MBEDTLS_ERR_ECP_BUFFER_TOO_SMALL:
	case MBEDTLS_ERR_MPI_BAD_INPUT_DATA:
		return SOTLS_ALERT_DECODE_ERROR;
	case MBEDTLS_ERR_ECP_VERIFY_FAILED:
	case MBEDTLS_ERR_ECP_SIG_LEN_MISMATCH:
	case MBEDTLS_ERR_PK_BAD_INPUT_DATA:
		return SOTLS_ALERT_DECRYPT_ERROR;
	}
	return -1;
}

int sotls_hs_map_error(struct sotls_hs *hs, int mrc, int *alert, char *detail, size_t len,
		       int *sys_errno)
{
	char msg[160] = "";
	mbedtls_strerror(mrc, msg, sizeof(msg));
	*alert = -1;

	if (hs->fail_err != 0) {
		*alert = hs->fail_alert;
		snprintf(detail, len, "%s", hs->fail_detail);
		return hs->fail_err;
	}
	if (mrc == MBEDTLS_ERR_RSA_PRIVATE_FAILED) {
		/* sotls's RSA (rsa_key.c) and mbedTLS's return this alone when the
		 * signature fails its check with e: a fault, nothing was sent. */
		*alert = SOTLS_ALERT_INTERNAL_ERROR;
		snprintf(detail, len, "the RSA signature failed its check with the public key");
		return SOTLS_ERR_PRIVATE_KEY_CHECK;
	}
	/* An mbedTLS code is a high-level part (bits 7-14: SSL, X509, PK,
	 * ECP, ...) plus a low-level one (bits 0-6: MPI, NET, ...); either
	 * may be alone. */
	int high = -((-mrc) & 0x7f80);
	int low = -((-mrc) & 0x007f);
	if (high == 0)
		high = low;

	switch (high) {
	case MBEDTLS_ERR_NET_SEND_FAILED:
	case MBEDTLS_ERR_NET_RECV_FAILED:
		*sys_errno = hs->bio_errno;
		snprintf(detail, len, "handshake I/O failed: %s", strerror(hs->bio_errno));
		return SOTLS_ERR_SYSCALL;
	case MBEDTLS_ERR_SSL_CONN_EOF:
		snprintf(detail, len, "the peer closed the connection during the handshake");
		return SOTLS_ERR_TRUNCATED;
	case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
		snprintf(detail, len, "the peer sent close_notify during the handshake");
		return SOTLS_ERR_TRUNCATED;
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE: {
		int desc = sotls_mbed_received_alert(&hs->ssl);
		hs->peer_alert = desc;
		/* sotls_strerror says "the peer sent a fatal alert": the detail
		 * says which, without saying that again. */
		snprintf(detail, len, "%s (%d) during the handshake%s", sotls_alert_name(desc), desc,
			 desc == 40 ? ": probably no cipher suite in common" : "");
		return desc == 70 ? SOTLS_ERR_PROTOCOL_VERSION : SOTLS_ERR_PEER_ALERT;
	}
	case MBEDTLS_ERR_SSL_ALLOC_FAILED:
		*alert = SOTLS_ALERT_INTERNAL_ERROR;
		snprintf(detail, len, "out of memory in the handshake");
		return SOTLS_ERR_OUT_OF_MEMORY;
	case MBEDTLS_ERR_SSL_BAD_PROTOCOL_VERSION:
		*alert = SOTLS_ALERT_PROTOCOL_VERSION;
		snprintf(detail, len, "the peer does not speak TLS 1.2: %s", msg);
		return SOTLS_ERR_PROTOCOL_VERSION;
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
	case MBEDTLS_ERR_SSL_BAD_CERTIFICATE:
	case MBEDTLS_ERR_SSL_CA_CHAIN_REQUIRED:
	case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE: {
		char info[200];
		uint32_t flags = mbedtls_ssl_get_verify_result(&hs->ssl);
		sotls_verify_reason(flags == (uint32_t)-1 ? 0 : flags, info, sizeof(info));
		*alert = high == MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE ? SOTLS_ALERT_HANDSHAKE_FAILURE
									: SOTLS_ALERT_BAD_CERTIFICATE;
		snprintf(detail, len, "certificate verification failed: %s%s", info[0] ? info : msg,
			 hs->cfg->have_ca ? "" : " (no CA certificates configured)");
		return SOTLS_ERR_CERT_VERIFY;
	}
	case MBEDTLS_ERR_SSL_CERTIFICATE_VERIFICATION_WITHOUT_HOSTNAME:
		*alert = SOTLS_ALERT_INTERNAL_ERROR;
		snprintf(detail, len, "no server name to check the certificate against");
		return SOTLS_ERR_HOSTNAME;
	case MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE:
	case MBEDTLS_ERR_SSL_UNEXPECTED_RECORD:
		*alert = SOTLS_ALERT_UNEXPECTED_MESSAGE;
		snprintf(detail, len, "unexpected message from the peer: %s", msg);
		return SOTLS_ERR_UNEXPECTED_MESSAGE;
	case MBEDTLS_ERR_SSL_INVALID_MAC:
		*alert = SOTLS_ALERT_BAD_RECORD_MAC;
		snprintf(detail, len, "the peer's Finished record failed authentication");
		return SOTLS_ERR_BAD_RECORD_MAC;
	case MBEDTLS_ERR_SSL_DECODE_ERROR:
	case MBEDTLS_ERR_SSL_INVALID_RECORD:
		*alert = SOTLS_ALERT_DECODE_ERROR;
		snprintf(detail, len, "malformed message from the peer: %s", msg);
		return SOTLS_ERR_DECODE;
	case MBEDTLS_ERR_SSL_ILLEGAL_PARAMETER:
		*alert = SOTLS_ALERT_ILLEGAL_PARAMETER;
		snprintf(detail, len, "illegal parameter from the peer: %s", msg);
		return SOTLS_ERR_HANDSHAKE;
	case MBEDTLS_ERR_SSL_HANDSHAKE_FAILURE:
		*alert = SOTLS_ALERT_HANDSHAKE_FAILURE;
		snprintf(detail, len, "handshake failed: %s", msg);
		return SOTLS_ERR_HANDSHAKE;
	}
	*alert = crypto_alert(high);
	if (*alert < 0)
		*alert = crypto_alert(low);
	if (*alert < 0)
		*alert = SOTLS_ALERT_INTERNAL_ERROR;
	snprintf(detail, len, "handshake failed: %s", msg);
	return SOTLS_ERR_HANDSHAKE;
}

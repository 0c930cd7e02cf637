/* Text for every return code of the public API. */
#include "sotls.h"

SOTLS_API const char *sotls_strerror(int err)
{
	if (err > 0)
		return "success (byte count)";
	switch ((enum sotls_error)err) {
	case SOTLS_OK:
		return "success";
	case SOTLS_WANT_READ:
		return "operation would block: wait until the socket is readable and retry";
	case SOTLS_WANT_WRITE:
		return "operation would block: wait until the socket is writable and retry";
	case SOTLS_WANT_PRIVATE_KEY:
		return "the private-key method has not signed yet: call sotls_handshake again once it has";
	case SOTLS_WANT_CERTIFICATE:
		return "the certificate selection is pending: call sotls_conn_set_cert, then "
		       "sotls_handshake again";
	case SOTLS_ERR_INVALID_ARGUMENT:
		return "invalid argument";
	case SOTLS_ERR_OUT_OF_MEMORY:
		return "out of memory";
	case SOTLS_ERR_BAD_STATE:
		return "call not allowed in the current state";
	case SOTLS_ERR_UNSUPPORTED:
		return "not supported";
	case SOTLS_ERR_BUFFER_TOO_SMALL:
		return "the buffer is too small (the length it needs was returned)";
	case SOTLS_ERR_CERT_LOAD:
		return "could not load the certificate chain";
	case SOTLS_ERR_KEY_LOAD:
		return "could not load the private key (or it does not match the certificate)";
	case SOTLS_ERR_CA_LOAD:
		return "could not load the CA certificates";
	case SOTLS_ERR_UNKNOWN_SUITE:
		return "unknown or unsupported cipher suite name";
	case SOTLS_ERR_KEY_PASSWORD:
		return "the private key is encrypted and no password, or the wrong one, was given";
	case SOTLS_ERR_CRL_LOAD:
		return "could not load the certificate revocation list";
	case SOTLS_ERR_TICKET_KEYS:
		return "the ticket key file is malformed, holds no key, or is readable by others";
	case SOTLS_ERR_SYSCALL:
		return "system call failed (see errno)";
	case SOTLS_ERR_HANDSHAKE:
		return "TLS handshake failed";
	case SOTLS_ERR_NO_SHARED_SUITE:
		return "no cipher suite in common with the peer";
	case SOTLS_ERR_PROTOCOL_VERSION:
		return "the peer does not speak TLS 1.2";
	case SOTLS_ERR_CERT_VERIFY:
		return "the peer's certificate failed verification";
	case SOTLS_ERR_KTLS_REQUIRED:
		return "kernel TLS was required but could not be used";
	case SOTLS_ERR_BAD_RECORD_MAC:
		return "a record failed authentication (bad_record_mac)";
	case SOTLS_ERR_RECORD_OVERFLOW:
		return "a record exceeded the maximum length (record_overflow)";
	case SOTLS_ERR_DECODE:
		return "a malformed record or message (decode_error)";
	case SOTLS_ERR_UNEXPECTED_MESSAGE:
		return "a record of an unexpected type (unexpected_message)";
	case SOTLS_ERR_RENEGOTIATION_REFUSED:
		return "renegotiation is not supported and was refused";
	case SOTLS_ERR_PEER_ALERT:
		return "the peer sent a fatal alert";
	case SOTLS_ERR_TRUNCATED:
		return "the connection ended without close_notify (truncated)";
	case SOTLS_ERR_CLOSED:
		return "the connection is closed";
	case SOTLS_ERR_SEQUENCE_OVERFLOW:
		return "the record sequence number is exhausted";
	case SOTLS_ERR_INTERNAL:
		return "internal error";
	case SOTLS_ERR_RECORD_FLOOD:
		return "the peer sent too many records that carry no data (unexpected_message)";
	case SOTLS_ERR_KEY_USAGE_LIMIT:
		return "the key usage limit of the connection was reached: reconnect";
	case SOTLS_ERR_HOSTNAME:
		return "no server name to check the peer's certificate against";
	case SOTLS_ERR_NO_APPLICATION_PROTOCOL:
		return "no application protocol in common with the client (ALPN)";
	case SOTLS_ERR_UNRECOGNIZED_NAME:
		return "the client asked for a server name this server does not serve";
	case SOTLS_ERR_PRIVATE_KEY_CHECK:
		return "a private-key result failed its check with the public key (fault), not sent";
	case SOTLS_ERR_PRIVATE_KEY_OPERATION:
		return "the private-key method failed to sign";
	case SOTLS_ERR_SESSION:
		return "not a session this sotls can offer (corrupt, truncated or another version)";
	case SOTLS_ERR_NOT_RESUMABLE:
		return "this connection's session cannot be resumed";
	}
	return "unknown error code";
}

SOTLS_API const char *sotls_version(void)
{
	return SOTLS_VERSION_STRING;
}

/*
 * sotls — TLS 1.2 with a fast userspace ARIA-GCM record layer and kTLS handoff.
 *
 * This is the whole public API. Every symbol starts with sotls_ / SOTLS_.
 * Functions return 0 (SOTLS_OK) or a positive count on success and a negative
 * enum sotls_error on failure; sotls_strerror() turns any of them into text.
 */
#ifndef SOTLS_H
#define SOTLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SOTLS_API __attribute__((visibility("default")))
#else
#define SOTLS_API
#endif

/*
 * Every failure has its own code. SOTLS_WANT_READ / SOTLS_WANT_WRITE are not
 * failures: a non-blocking socket would block; call again when it is ready.
 */
enum sotls_error {
	SOTLS_OK = 0,
	SOTLS_WANT_READ = -1,
	SOTLS_WANT_WRITE = -2,

	/* Caller errors. */
	SOTLS_ERR_INVALID_ARGUMENT = -10,
	SOTLS_ERR_OUT_OF_MEMORY = -11,
	SOTLS_ERR_BAD_STATE = -12,
	SOTLS_ERR_UNSUPPORTED = -13,

	/* Configuration. */
	SOTLS_ERR_CERT_LOAD = -20,
	SOTLS_ERR_KEY_LOAD = -21,
	SOTLS_ERR_CA_LOAD = -22,
	SOTLS_ERR_UNKNOWN_SUITE = -23,

	/* System. errno holds the cause. */
	SOTLS_ERR_SYSCALL = -30,

	/* Handshake. */
	SOTLS_ERR_HANDSHAKE = -40,
	SOTLS_ERR_NO_SHARED_SUITE = -41,
	SOTLS_ERR_PROTOCOL_VERSION = -42,
	SOTLS_ERR_CERT_VERIFY = -43,
	SOTLS_ERR_KTLS_REQUIRED = -44,

	/* Records and the stream. */
	SOTLS_ERR_BAD_RECORD_MAC = -50,
	SOTLS_ERR_RECORD_OVERFLOW = -51,
	SOTLS_ERR_DECODE = -52,
	SOTLS_ERR_UNEXPECTED_MESSAGE = -53,
	SOTLS_ERR_RENEGOTIATION_REFUSED = -54,
	SOTLS_ERR_PEER_ALERT = -55,
	SOTLS_ERR_TRUNCATED = -56,
	SOTLS_ERR_CLOSED = -57,
	SOTLS_ERR_SEQUENCE_OVERFLOW = -58,
	SOTLS_ERR_INTERNAL = -59,
};

/* A short English sentence for any return value of this API. Never NULL. */
SOTLS_API const char *sotls_strerror(int err);

/* The library version, "MAJOR.MINOR.PATCH". */
SOTLS_API const char *sotls_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SOTLS_H */

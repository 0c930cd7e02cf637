/*
 * Kernel TLS (SOL_TLS) for one TCP socket. No handshake knowledge: the caller
 * brings the traffic key, the 4-byte implicit salt and the next 64-bit record
 * sequence number of each direction, and this module
 *   - attaches the "tls" upper-layer protocol (TCP_ULP) to an established socket,
 *   - installs TLS_TX or TLS_RX for a TLS 1.2 AEAD cipher (ARIA-GCM, AES-GCM),
 *   - sends a record of any content type (TLS_SET_RECORD_TYPE control message),
 *   - receives with the content type (TLS_GET_RECORD_TYPE control message),
 * and says, when the kernel cannot, why not: a stable reason code plus text.
 *
 * A failed install leaves the socket usable as plain TCP for the userspace
 * record layer: the ULP stays attached but does nothing until a direction is
 * installed. Once TLS_RX is installed, every byte in the socket's receive
 * queue is parsed as TLS records, so install RX only with nothing of the
 * encrypted stream read ahead.
 */
#ifndef SOTLS_KTLS_H
#define SOTLS_KTLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "aead.h"
#include "tls12.h"


enum sotls_ktls_dir {
	SOTLS_KTLS_TX = 1, /* TLS_TX */
	SOTLS_KTLS_RX = 2, /* TLS_RX */
};

/*
 * Why the kernel did not take a direction (or the ULP). Values are stable:
 * they may be logged, counted and compared by callers and tests.
 */
enum sotls_ktls_reason {
	SOTLS_KTLS_OK = 0,	     /* installed (or the ULP attached) */
	SOTLS_KTLS_NO_ULP = 1,	     /* TCP_ULP "tls": ENOENT, no CONFIG_TLS */
	SOTLS_KTLS_OLD_KERNEL = 2,   /* the kernel lacks the option: ENOPROTOOPT/EOPNOTSUPP */
	SOTLS_KTLS_NO_CIPHER = 3,    /* TLS_TX/RX: the kernel cannot do this cipher */
	SOTLS_KTLS_NOT_CONNECTED = 4, /* the socket is not an established TCP socket */
	SOTLS_KTLS_ULP_BUSY = 5,     /* another ULP is attached to the socket */
	SOTLS_KTLS_ALREADY_SET = 6,  /* this direction was installed before (EBUSY) */
	SOTLS_KTLS_NO_MEMORY = 7,    /* ENOMEM / ENOBUFS */
	SOTLS_KTLS_BAD_ARGUMENT = 8, /* caller error: unknown alg, key length, direction */
	SOTLS_KTLS_SYSCALL = 9,	     /* any other errno */
	SOTLS_KTLS_REASONS = 10,
};

/*
 * What happened to one step (ULP or one direction). text is a static string
 * (never NULL), fit for struct sotls_info's tx_reason / rx_reason, e.g.
 * "kernel cannot do gcm(aria) for TLS (no gcm(aria) in its crypto API)".
 */
struct sotls_ktls_result {
	enum sotls_ktls_reason reason;
	int err; /* errno of the failing call, 0 if none */
	const char *text;
};

/* A direction's keys are struct sotls_dir_keys (tls12.h), the type the key
 * block, the record layer and the kernel path share; its key is
 * sotls_aead_key_len(alg) bytes. */

/* Whether this module has a SOL_TLS mapping for alg. */
int sotls_ktls_alg_supported(enum sotls_aead_alg alg);
/* The kernel crypto API name the kernel will allocate for alg ("gcm(aria)"), or NULL. */
const char *sotls_ktls_kernel_cipher_name(enum sotls_aead_alg alg);
/* The SOL_TLS cipher_type for alg (TLS_CIPHER_ARIA_GCM_128 = 57, ...), or 0. */
unsigned sotls_ktls_cipher_type(enum sotls_aead_alg alg);
/* sizeof the tls12_crypto_info_* struct for alg, or 0. */
size_t sotls_ktls_crypto_info_size(enum sotls_aead_alg alg);

/*
 * Fills buf (at least sotls_ktls_crypto_info_size(alg) bytes) with the
 * crypto_info struct setsockopt(SOL_TLS, TLS_TX/TLS_RX) takes: version TLS 1.2,
 * iv and rec_seq = seq big-endian, key, salt. Returns its size, or 0 for an
 * unknown alg, missing keys or a short buffer. For tests and tools;
 * sotls_ktls_install uses it and wipes the copy.
 */
size_t sotls_ktls_fill_crypto_info(enum sotls_aead_alg alg, const struct sotls_dir_keys *keys,
				   void *buf, size_t buf_len);

/*
 * Attaches the "tls" ULP to fd (an established TCP socket). Idempotent: an
 * already attached "tls" ULP is success. Returns SOTLS_OK, or
 * SOTLS_ERR_UNSUPPORTED (the kernel cannot, or another ULP is attached: use
 * the userspace record layer), SOTLS_ERR_BAD_STATE (not an established TCP
 * socket), SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ERR_INVALID_ARGUMENT,
 * SOTLS_ERR_SYSCALL (errno kept); res (optional) says why.
 */
int sotls_ktls_enable(int fd, struct sotls_ktls_result *res);

/*
 * Attaches the ULP if needed and installs one direction. The crypto_info is
 * wiped after the call. Returns SOTLS_OK, SOTLS_ERR_UNSUPPORTED (fall back to
 * userspace: res->reason says why), SOTLS_ERR_INVALID_ARGUMENT,
 * SOTLS_ERR_BAD_STATE (the direction was installed already, or fd is not an
 * established TCP socket), SOTLS_ERR_OUT_OF_MEMORY or SOTLS_ERR_SYSCALL
 * (errno kept). res is optional.
 */
int sotls_ktls_install(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
		       const struct sotls_dir_keys *keys, struct sotls_ktls_result *res);

/*
 * Checks on a throwaway loopback TCP connection whether this kernel attaches
 * the ULP and, if alg is nonzero, installs TLS_TX for alg. Returns as
 * sotls_ktls_install; the result tells the reason. Loads modules on demand
 * (tls, gcm(aria)) exactly as a real connection would.
 */
int sotls_ktls_probe(enum sotls_aead_alg alg, struct sotls_ktls_result *res);

/*
 * Sends one record of content type `type` with len bytes (kTLS TX installed).
 * Returns the number of bytes taken (len unless the socket is non-blocking),
 * or SOTLS_WANT_WRITE, SOTLS_ERR_CLOSED (EPIPE/ECONNRESET), SOTLS_ERR_SYSCALL.
 */
ssize_t sotls_ktls_send_record(int fd, uint8_t type, const void *data, size_t len);

/* The same with extra send flags (MSG_DONTWAIT for a best-effort alert). */
ssize_t sotls_ktls_send_record_flags(int fd, uint8_t type, const void *data, size_t len,
				     int flags);

/* Sends an alert record {level, description}; 0 or an error as above. */
int sotls_ktls_send_alert(int fd, uint8_t level, uint8_t description);
/* The same with extra send flags. */
int sotls_ktls_send_alert_flags(int fd, uint8_t level, uint8_t description, int flags);

/*
 * Receives plaintext of one record type (kTLS RX installed): at most len
 * bytes, never mixing records of different types. *type gets the content
 * type. Returns the byte count (0: the peer closed TCP), or SOTLS_WANT_READ,
 * or the mapped kernel error (sotls_ktls_map_rx_errno). EINTR is retried.
 */
ssize_t sotls_ktls_recv(int fd, void *buf, size_t len, int flags, uint8_t *type);

/*
 * Reads back the sequence number of the next record the kernel will seal
 * (TLS_TX) or open (TLS_RX): getsockopt(SOL_TLS) returns the crypto_info
 * with rec_seq (and the key, wiped here at once); alg is the cipher installed,
 * whose crypto_info size the kernel insists on. Returns SOTLS_OK,
 * SOTLS_ERR_UNSUPPORTED (the kernel does not report it for this cipher) or
 * SOTLS_ERR_SYSCALL (errno kept).
 */
int sotls_ktls_get_seq(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg, uint64_t *seq);

#ifdef SOTLS_TEST_SEAMS
/*
 * Test seam (tests/fuzz/fuzz_ktls_cmsg.c), only in the test build of this
 * file (SOTLS_TEST_SEAMS; libsotls has none): the recvmsg(2)
 * sotls_ktls_recv calls; NULL puts the real one back. Set it before any
 * connection exists (it is not synchronised).
 */
struct msghdr;
typedef ssize_t (*sotls_ktls_recvmsg_fn)(int fd, struct msghdr *msg, int flags);
void sotls_ktls_set_test_recvmsg(sotls_ktls_recvmsg_fn fn);
/* The same for the getsockopt(2) of sotls_ktls_get_seq (the fake kernel's
 * rec_seq). */
typedef int (*sotls_ktls_getsockopt_fn)(int fd, int level, int name, void *val,
					socklen_t *len);
void sotls_ktls_set_test_getsockopt(sotls_ktls_getsockopt_fn fn);
#endif

/*
 * Maps an errno of recv/recvmsg on a kTLS RX socket to an enum sotls_error:
 * EBADMSG -> SOTLS_ERR_BAD_RECORD_MAC (bad tag, or an empty record),
 * EMSGSIZE -> SOTLS_ERR_RECORD_OVERFLOW, EINVAL -> SOTLS_ERR_PROTOCOL_VERSION
 * (the record header's version is not 3,3, as the userspace path reports it), EAGAIN -> SOTLS_WANT_READ,
 * ECONNRESET/EPIPE -> SOTLS_ERR_CLOSED, anything else SOTLS_ERR_SYSCALL.
 */
int sotls_ktls_map_rx_errno(int err);

/*
 * Fills res with the reason and text for errno err of setsockopt(TCP_ULP)
 * (ulp_step nonzero) or of setsockopt(SOL_TLS, dir) for alg, and returns the
 * enum sotls_error sotls_ktls_enable / sotls_ktls_install return for it.
 * err 0 means success. Exposed for tests.
 */
int sotls_ktls_explain(int err, int ulp_step, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
		       struct sotls_ktls_result *res);

/* A fixed short text per reason ("kernel has no TLS ULP (CONFIG_TLS)"). Never NULL. */
const char *sotls_ktls_reason_name(enum sotls_ktls_reason reason);

#endif

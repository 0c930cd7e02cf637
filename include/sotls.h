/*
 * sotls — TLS 1.2 with fast userspace ARIA-GCM and AES-GCM records and kTLS handoff.
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
 * failures: a non-blocking socket would block (or a blocking socket's
 * SO_RCVTIMEO / SO_SNDTIMEO expired); call again when it is ready.
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

	/* Handshake, continued. */
	SOTLS_ERR_HOSTNAME = -62,
	/* The server's RSA signature failed its check with the public key (a
	 * computation fault): it was not sent. */
	SOTLS_ERR_PRIVATE_KEY_CHECK = -63,
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/*
 * A configuration holds everything that is the same for many connections:
 * role, certificates, trust, allowed suites, kTLS policy. Build it with the
 * setters below, then create connections from it. It becomes read-only when
 * the first connection is created (setters then return SOTLS_ERR_BAD_STATE),
 * so any number of connections on any number of threads may share it without
 * locks. It is reference counted: sotls_config_free() may be called while
 * connections still use it; the memory goes when the last one is freed.
 */
struct sotls_config;
/* One TLS connection over one connected stream socket. Not thread-safe:
 * use one connection from one thread at a time. */
struct sotls_conn;

enum sotls_role {
	SOTLS_ROLE_CLIENT = 0,
	SOTLS_ROLE_SERVER = 1,
};

enum sotls_verify {
	/* Server default: do not ask for / do not check a peer certificate. */
	SOTLS_VERIFY_NONE = 0,
	/* Client default: the peer's chain must verify against the CA set and
	 * the leaf must match the server name (a DNS name, or an IPv4/IPv6
	 * literal matched against the certificate's iPAddress SANs and not sent
	 * as SNI). A client with no server name fails the handshake with
	 * SOTLS_ERR_HOSTNAME before sending anything: any certificate the CA
	 * signed, for any name, would otherwise pass. */
	SOTLS_VERIFY_REQUIRED = 1,
	/* The chain must verify, but no name is checked: only for peers whose
	 * CA vouches for them alone (a private CA per service, a pinned CA).
	 * A server name, if set, is still sent as SNI. On a server this is
	 * the same as SOTLS_VERIFY_REQUIRED. */
	SOTLS_VERIFY_CHAIN_ONLY = 2,
};

/*
 * What to do about kernel TLS (SOL_TLS). After the handshake each direction
 * (TX, RX) is handed to the kernel (TCP_ULP "tls", then TLS_TX / TLS_RX with
 * the traffic key, salt and next sequence number) or stays in sotls's
 * userspace record layer; sotls_get_info says which and why.
 * AUTO: use the kernel where it takes a direction, userspace otherwise, per
 * direction (the default). OFF: always userspace, the kernel is not asked.
 * REQUIRE: fail the handshake with SOTLS_ERR_KTLS_REQUIRED (and an
 * internal_error alert to the peer) unless both directions go to the kernel;
 * sotls_conn_error_detail() names the direction and the kernel's reason.
 * The calls and errors of a connection are the same on either path.
 * Test only: the environment variable SOTLS_KTLS_FORCE_USERSPACE=tx|rx|both,
 * read once per process, keeps those directions in userspace (mixed modes).
 */
enum sotls_ktls_policy {
	SOTLS_KTLS_AUTO = 0,
	SOTLS_KTLS_OFF = 1,
	SOTLS_KTLS_REQUIRE = 2,
};

/* Returns a new configuration, or NULL if out of memory or role is invalid.
 * Defaults: all supported suites, TLS 1.2 only, kTLS AUTO, verify REQUIRED
 * for a client and NONE for a server. */
SOTLS_API struct sotls_config *sotls_config_new(enum sotls_role role);

/* Drops the caller's reference; see above. NULL is ignored. */
SOTLS_API void sotls_config_free(struct sotls_config *cfg);

/*
 * Own certificate chain (leaf first) and private key, from PEM files.
 * Required for a server. Errors: SOTLS_ERR_CERT_LOAD, SOTLS_ERR_KEY_LOAD
 * (including a key that does not match the certificate).
 */
SOTLS_API int sotls_config_set_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path);

/* The same from memory: PEM (with or without the final NUL) or DER. */
SOTLS_API int sotls_config_set_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len);

/* Trusted CA certificates (PEM file, or PEM/DER in memory). Error:
 * SOTLS_ERR_CA_LOAD. May be called more than once; certificates add up. */
SOTLS_API int sotls_config_set_ca_file(struct sotls_config *cfg, const char *path);
SOTLS_API int sotls_config_set_ca_mem(struct sotls_config *cfg, const void *ca, size_t len);

/* Whether to verify the peer (see enum sotls_verify). On a server,
 * SOTLS_VERIFY_REQUIRED asks the client for a certificate and requires it. */
SOTLS_API int sotls_config_set_verify(struct sotls_config *cfg, enum sotls_verify mode);

/*
 * Client: the server name sent in SNI and checked against the server's
 * certificate. A connection may override it (sotls_conn_set_server_name).
 * NULL clears it.
 */
SOTLS_API int sotls_config_set_server_name(struct sotls_config *cfg, const char *name);

/*
 * Allowed cipher suites, in order of preference, separated by ':' ',' or
 * spaces. Each item is an IANA name ("TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256"),
 * an OpenSSL name ("ECDHE-ECDSA-ARIA128-GCM-SHA256", "ECDHE-ARIA256-GCM-SHA384",
 * "ECDHE-RSA-AES128-GCM-SHA256"), or "ARIA-128-GCM" / "ARIA-256-GCM" /
 * "AES-128-GCM" / "AES-256-GCM" for the ECDHE-ECDSA and ECDHE-RSA suites of
 * that cipher and key size. Supported: ECDHE-ECDSA and ECDHE-RSA with
 * ARIA-128-GCM-SHA256, ARIA-256-GCM-SHA384, AES-128-GCM-SHA256 and
 * AES-256-GCM-SHA384 (0xC05C 0xC060 0xC05D 0xC061 0xC02B 0xC02F 0xC02C
 * 0xC030). Error: SOTLS_ERR_UNKNOWN_SUITE (the configuration is left
 * unchanged).
 *
 * The default is all eight, in that order: the ARIA suites first, then the
 * AES-GCM ones, so peers without ARIA (stock OpenSSL, browsers) still
 * connect; within each, ECDSA before RSA and 128-bit before 256-bit keys.
 * A server chooses by its own order, not the client's: a default server
 * picks ARIA whenever the client offers it. Set "ARIA-128-GCM:ARIA-256-GCM"
 * to speak ARIA only.
 */
SOTLS_API int sotls_config_set_suites(struct sotls_config *cfg, const char *list);

/* kTLS policy (see enum sotls_ktls_policy). */
SOTLS_API int sotls_config_set_ktls(struct sotls_config *cfg, enum sotls_ktls_policy policy);

/* ------------------------------------------------------------------------ */
/* Connections                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Creates a connection on fd, a connected stream socket (TCP or AF_UNIX),
 * blocking or non-blocking as the caller set it. The connection does not own
 * fd: sotls_conn_free() never closes it. Takes a reference on cfg and makes
 * cfg read-only. Sets *out and returns 0, or SOTLS_ERR_INVALID_ARGUMENT,
 * SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ERR_BAD_STATE (a server configuration
 * without a certificate).
 */
SOTLS_API int sotls_conn_new(struct sotls_config *cfg, int fd, struct sotls_conn **out);

/* Client: the server name for this connection only (SNI and certificate
 * check); overrides the configuration's. Before the handshake only. */
SOTLS_API int sotls_conn_set_server_name(struct sotls_conn *c, const char *name);

/*
 * Runs the handshake. Returns 0 when it is complete; on a non-blocking socket
 * SOTLS_WANT_READ / SOTLS_WANT_WRITE: wait for the socket and call again.
 * Failures: SOTLS_ERR_NO_SHARED_SUITE, SOTLS_ERR_CERT_VERIFY,
 * SOTLS_ERR_PROTOCOL_VERSION, SOTLS_ERR_PEER_ALERT, SOTLS_ERR_KTLS_REQUIRED,
 * SOTLS_ERR_TRUNCATED (the peer closed), SOTLS_ERR_SYSCALL (errno),
 * SOTLS_ERR_HANDSHAKE (anything else; sotls_conn_error_detail() says more).
 * sotls_send/sotls_recv run it implicitly if it has not completed.
 * The handshake never reads a byte past the peer's Finished message.
 */
SOTLS_API int sotls_handshake(struct sotls_conn *c);

/*
 * Encrypts and sends up to len bytes. Returns the number of bytes sent
 * (> 0; on a blocking socket always len), or a negative code.
 * Non-blocking: SOTLS_WANT_WRITE (nothing more could be sent), or a count
 * smaller than len. In both cases part of the following bytes may already be
 * encrypted in sotls's buffer: the next call must be sotls_send (or
 * sotls_shutdown) with the rest of the same data, starting at buf + count,
 * never with shorter or different data. len 0 only flushes.
 * Failures are final: the connection is closed for sending and receiving.
 */
SOTLS_API ssize_t sotls_send(struct sotls_conn *c, const void *buf, size_t len);

/*
 * Receives up to len decrypted bytes. Returns the count (> 0), 0 once the
 * peer has sent close_notify (and every later call), or a negative code:
 * SOTLS_WANT_READ (non-blocking, no whole record yet), SOTLS_ERR_TRUNCATED
 * (the stream ended without close_notify), SOTLS_ERR_PEER_ALERT (the peer
 * sent a fatal alert), SOTLS_ERR_BAD_RECORD_MAC, SOTLS_ERR_RECORD_OVERFLOW,
 * SOTLS_ERR_DECODE, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ERR_SYSCALL, ... In
 * the error cases sotls has sent the matching alert (best effort) and the
 * connection is closed. Never returns a byte that failed authentication.
 * A renegotiation attempt by the peer is refused with a no_renegotiation
 * warning and does not end the connection.
 */
SOTLS_API ssize_t sotls_recv(struct sotls_conn *c, void *buf, size_t len);

/*
 * Sends count bytes of the file file_fd, starting at *offset, like
 * sendfile(2): returns the number of bytes sent (> 0), 0 at end of file or
 * for count 0, and advances *offset by that many (offset NULL: the file's own
 * position is used and advanced). On a blocking socket the count is short
 * only at end of file. On a non-blocking socket it may be short, or
 * SOTLS_WANT_WRITE when nothing could go; bytes reported as sent may still sit
 * sealed in sotls's buffer and go out first on the next sotls_sendfile,
 * sotls_send or sotls_shutdown, so unlike sotls_send there is nothing to pass
 * again. Call it only between whole sotls_send calls (not while a
 * non-blocking sotls_send is unfinished: SOTLS_ERR_BAD_STATE).
 *
 * SOTLS_ERR_SYSCALL with the file's errno when reading the file fails before
 * any byte was sent: the connection stays usable. Socket failures are final,
 * as for sotls_send.
 *
 * How it sends (sotls_info.sendfile_path says which, and why):
 *  - userspace TX path: io_uring READ_FIXED of the file into registered
 *    buffers laid out as records, sealed in place, sent with SEND_ZC (zero
 *    copy; a buffer is reused only after the kernel's notification), several
 *    records in flight; IORING_OP_SEND where SEND_ZC is unsupported (old
 *    kernel, AF_UNIX socket); pread(2) + send(2) where io_uring is unavailable
 *    (ENOSYS, sysctl kernel.io_uring_disabled, seccomp).
 *  - kernel TX path (kTLS): io_uring SPLICE file -> pipe -> socket, the kernel
 *    seals; sendfile(2) where io_uring cannot, or on a non-blocking socket.
 * The io_uring (16 entries, one file descriptor) and 136 KiB of registered
 * buffers (two groups of 4 records, locked memory counted against
 * RLIMIT_MEMLOCK unless CAP_IPC_LOCK) are made per connection on the first
 * call and kept until sotls_conn_free: setting them up costs ~150 us, too
 * much to repeat per file. Under SEND_ZC the groups grow while all of them
 * wait for the peer's ACK, up to 4 MiB (sotls_info.sendfile_buffer_bytes);
 * groups beyond the first two that went unused for a second are given back
 * at the start of the next call;
 * where registration fails, the connection uses pread + send and says why.
 * Nothing is allocated per record. When SEND_ZC reports
 * that the kernel copied the data anyway (a loopback peer, a device without
 * scatter-gather; Linux 6.2+), the connection moves to preadv(2) + send(2),
 * which then costs least. On a non-blocking socket a zero-copy call may still wait
 * for the kernel to release a buffer of an earlier call, once the pool is at
 * its largest (until the peer has acknowledged those bytes).
 *
 * A server that runs its own io_uring: on the kernel TX path (sotls_info's
 * tx_path SOTLS_PATH_KERNEL) it may drive the same path itself, submitting
 * IORING_OP_SPLICE file -> pipe -> the connection's fd on its own ring, as
 * long as it makes no other sotls call on the connection while those are in
 * flight. On the userspace path there is no such hook in this version:
 * every record must be sealed with the connection's key and next sequence
 * number between the read's completion and the send's submission, and the
 * sends must reach the socket in sequence order, so the ring has to be the
 * one sotls drives. Such a server uses a non-blocking socket and calls
 * sotls_sendfile when its ring reports the socket writable (a poll request);
 * sotls's private ring leaves the server's untouched.
 */
SOTLS_API ssize_t sotls_sendfile(struct sotls_conn *c, int file_fd, off_t *offset, size_t count);

/*
 * Sends close_notify (after any data still buffered). Returns 0, or on a
 * non-blocking socket SOTLS_WANT_WRITE (call again). Does not wait for the
 * peer's close_notify: keep calling sotls_recv until it returns 0 for that.
 * Does not close fd.
 */
SOTLS_API int sotls_shutdown(struct sotls_conn *c);

/* Frees the connection and wipes its keys. Does not close fd, does not send
 * anything. NULL is ignored. */
SOTLS_API void sotls_conn_free(struct sotls_conn *c);

/* The path a direction's records take. */
enum sotls_path {
	SOTLS_PATH_NONE = 0,	  /* no handshake yet */
	SOTLS_PATH_USERSPACE = 1, /* sotls's record layer */
	SOTLS_PATH_KERNEL = 2,	  /* kernel TLS (SOL_TLS) */
};

/* Facts about a connection. All strings are static and never NULL. */
struct sotls_info {
	const char *suite;	 /* IANA name, e.g. "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256" */
	uint16_t suite_id;	 /* e.g. 0xC05C */
	const char *version;	 /* "TLSv1.2" */
	enum sotls_path tx_path; /* where sent records are made */
	enum sotls_path rx_path; /* where received records are opened */
	/* Why tx_path is what it is, e.g. "installed in the kernel (kTLS)",
	 * "kernel cannot do gcm(aria) for TLS (no gcm(aria) in its crypto
	 * API)", "kernel has no TLS ULP (CONFIG_TLS)", "kTLS disabled by
	 * configuration". */
	const char *tx_reason;
	const char *rx_reason;
	const char *aead_impl;	 /* e.g. "sotls-avx512"; "kernel (kTLS)" if both in the kernel */
	int peer_alert;		 /* last alert received from the peer, or -1 */
	uint64_t tx_records;	 /* records sent since the handshake (userspace TX; 0 on kTLS) */
	uint64_t rx_records;	 /* records received since the handshake (userspace RX; 0 on kTLS) */
	/* How sotls_sendfile sends, once it has been called ("" before):
	 * "io_uring-send-zc", "io_uring-send", "pread-send" (userspace TX),
	 * "io_uring-splice", "sendfile" (kernel TX); and why that one. */
	const char *sendfile_path;
	const char *sendfile_reason;
	/* Memory sotls_sendfile holds for its record buffers (userspace TX):
	 * 2 x 68 KiB from the first call, growing under SEND_ZC while the
	 * kernel still holds every buffer (data in flight) up to 64 x 68 KiB,
	 * back down once unused for a second (at the next call); 0 before any
	 * call. */
	size_t sendfile_buffer_bytes;
};

/* Fills *info. Before the handshake completes the strings are "" (paths
 * NONE). Returns 0 or SOTLS_ERR_INVALID_ARGUMENT. */
SOTLS_API int sotls_get_info(const struct sotls_conn *c, struct sotls_info *info);

/* Human-readable detail about the connection's last failure (e.g. the
 * mbedTLS reason, or which alert the peer sent); "" if none. Valid until the
 * next call on the connection. */
SOTLS_API const char *sotls_conn_error_detail(const struct sotls_conn *c);

/* The names of the suites this build supports, IANA form, NULL-terminated. */
SOTLS_API const char *const *sotls_supported_suites(void);

/* A short English sentence for any return value of this API. Never NULL. */
SOTLS_API const char *sotls_strerror(int err);

/* The library version, "MAJOR.MINOR.PATCH". */
SOTLS_API const char *sotls_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SOTLS_H */

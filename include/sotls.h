/*
 * sotls — TLS 1.2 with fast userspace ARIA-GCM and AES-GCM records and kTLS handoff.
 *
 * This is the whole public API. Every symbol starts with sotls_ / SOTLS_.
 * Functions return 0 (SOTLS_OK) or a positive count on success and a negative
 * enum sotls_error on failure; sotls_strerror() turns any of them into text.
 *
 * Environment: the library reads one variable, SOTLS_CPU (with
 * secure_getenv), which takes CPU features away from the record ciphers'
 * and the public-key code's choice of implementation, for tests and
 * benchmarks; it never adds any, and every implementation gives the same
 * bytes. SOTLS_CPU=-gfni,-avx512f uses all detected features but those;
 * SOTLS_CPU=aes,pclmulqdq,avx,ssse3,sse4_1 only those; a list is
 * comma-separated feature names as in /proc/cpuinfo (aes pclmulqdq ssse3
 * sse4_1 avx avx2 vaes vpclmulqdq gfni avx512f avx512bw avx512vl sha_ni bmi2
 * adx avx512ifma), each optionally prefixed with '-' (remove) or '+' (add),
 * applied left to right to all features if the first item is a removal,
 * else to none. SOTLS_CPU=generic|aesni|avx2|avx512 are the former levels;
 * an unknown name means generic (no features). README, "CPU features".
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
	/* Server: the certificate's private-key method (sotls_cert_new_external)
	 * has not finished signing; call sotls_handshake again once it has. */
	SOTLS_WANT_PRIVATE_KEY = -3,
	/* Server: the certificate selection callback (sotls_config_set_cert_select)
	 * said PENDING; call sotls_handshake again after sotls_conn_set_cert. */
	SOTLS_WANT_CERTIFICATE = -4,

	/* Caller errors. */
	SOTLS_ERR_INVALID_ARGUMENT = -10,
	SOTLS_ERR_OUT_OF_MEMORY = -11,
	SOTLS_ERR_BAD_STATE = -12,
	SOTLS_ERR_UNSUPPORTED = -13,
	/* The buffer is too small; the call said how large it must be. */
	SOTLS_ERR_BUFFER_TOO_SMALL = -14,

	/* Configuration. */
	SOTLS_ERR_CERT_LOAD = -20,
	SOTLS_ERR_KEY_LOAD = -21,
	SOTLS_ERR_CA_LOAD = -22,
	SOTLS_ERR_UNKNOWN_SUITE = -23,
	SOTLS_ERR_KEY_PASSWORD = -24, /* encrypted key: no password, or the wrong one */
	SOTLS_ERR_CRL_LOAD = -25,
	/* A ticket key file that does not parse, holds no key, or can be read
	 * by other users than its owner (sotls_ticket_key_file_read). */
	SOTLS_ERR_TICKET_KEYS = -26,

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
	/* The peer sent too many records that deliver nothing in a row (empty
	 * application data, warning alerts, refused renegotiation); sotls sent
	 * unexpected_message. The detail names the cap and its value. */
	SOTLS_ERR_RECORD_FLOOD = -60,
	/* The AEAD usage limit of a key was reached (sotls_config_set_key_usage_limit).
	 * On sending: sotls sent close_notify; sends fail with this, data already
	 * received can still be read until the peer's close_notify; reconnect.
	 * On receiving (the peer went past the limit): fatal, unexpected_message sent. */
	SOTLS_ERR_KEY_USAGE_LIMIT = -61,

	/* Handshake, continued. */
	SOTLS_ERR_HOSTNAME = -62,
	/* Server: ALPN found no protocol in common (or the client offered none
	 * and the policy requires one); no_application_protocol was sent. */
	SOTLS_ERR_NO_APPLICATION_PROTOCOL = -63,
	/* Server: the client's SNI host name is not one the server serves (or
	 * cannot be a host name); unrecognized_name was sent. */
	SOTLS_ERR_UNRECOGNIZED_NAME = -64,
	/* The server's RSA signature failed its check with the public key (a
	 * computation fault), or a private-key method's signature does not
	 * verify with the certificate's public key: it was not sent;
	 * internal_error was. */
	SOTLS_ERR_PRIVATE_KEY_CHECK = -65,
	/* Server: a private-key method (sotls_cert_new_external) reported a
	 * failure, or gave a signature that does not fit its buffer; sotls sent
	 * internal_error. A signature that fails the check with the leaf's public
	 * key is SOTLS_ERR_PRIVATE_KEY_CHECK. */
	SOTLS_ERR_PRIVATE_KEY_OPERATION = -66,
	/* Client: the bytes given to sotls_conn_set_session are not a session
	 * this sotls can offer (corrupt, truncated, or from another version). */
	SOTLS_ERR_SESSION = -67,
	/* Client: sotls_conn_get_session on a connection whose session cannot
	 * be resumed: the server gave neither a ticket nor a session ID, or the
	 * handshake had no extended master secret (RFC 7627 §5.3), or the
	 * connection failed. */
	SOTLS_ERR_NOT_RESUMABLE = -68,
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
	/* Server default: do not ask for a client certificate. On a client
	 * (not recommended) the server's chain is still checked and recorded,
	 * so sotls_info.peer_verified and sotls_conn_peer_cert() tell what it
	 * was, but the verdict is ignored and no verify callback is called. */
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
	/* Server only (a client gets SOTLS_ERR_INVALID_ARGUMENT): ask for a
	 * client certificate. A client that sends none is accepted
	 * (sotls_info.peer_chain_len 0); one that sends a chain that does not
	 * verify is refused with the alert for its fault, as OpenSSL's
	 * SSL_VERIFY_PEER without SSL_VERIFY_FAIL_IF_NO_PEER_CERT does. To
	 * accept any certificate and only report it (nginx's
	 * "optional_no_ca"), add a verify callback that returns
	 * SOTLS_VERDICT_ACCEPT. */
	SOTLS_VERIFY_OPTIONAL = 3,
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
 * TX_ONLY / RX_ONLY: AUTO for that direction, the other stays in userspace
 * (not tried, with that reason): TX_ONLY keeps sendfile's kernel splice
 * path while RX stays where every peer fault gets its alert (see below).
 * The calls and errors of a connection are the same on either path, except
 * where the kernel decides alone on RX: it skips empty records inside
 * recvmsg (so the cap of 32 empty records in a row never trips there), and
 * a record that fails authentication makes it abort the socket (the peer
 * gets a TCP reset, not bad_record_mac; sotls_recv returns
 * SOTLS_ERR_SYSCALL with EBADMSG or EIO instead of SOTLS_ERR_BAD_RECORD_MAC).
 */
enum sotls_ktls_policy {
	SOTLS_KTLS_AUTO = 0,
	SOTLS_KTLS_OFF = 1,
	SOTLS_KTLS_REQUIRE = 2,
	SOTLS_KTLS_TX_ONLY = 3,
	SOTLS_KTLS_RX_ONLY = 4,
};

/* Returns a new configuration, or NULL if out of memory or role is invalid.
 * Defaults: all supported suites, TLS 1.2 only, kTLS AUTO, verify REQUIRED
 * for a client and NONE for a server. */
SOTLS_API struct sotls_config *sotls_config_new(enum sotls_role role);

/* Drops the caller's reference; see above. NULL is ignored. */
SOTLS_API void sotls_config_free(struct sotls_config *cfg);

/*
 * Own certificate chain (leaf first) and private key, from PEM files.
 * Required for a server (this or sotls_config_add_cert*, or an SNI
 * callback). On a server it is the default certificate (index 0, its names
 * those of the leaf's subjectAltName): it replaces index 0, or adds it when
 * there is none; see sotls_config_add_cert for more. Errors:
 * SOTLS_ERR_CERT_LOAD, SOTLS_ERR_KEY_LOAD (including a key that does not
 * match the certificate).
 */
SOTLS_API int sotls_config_set_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path);

/* The same from memory: PEM (with or without the final NUL) or DER. */
SOTLS_API int sotls_config_set_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len);

/*
 * Why the most recent failed call on cfg that loads key material failed:
 * the input (a path, or "the private key", "CA certificates" for memory)
 * and the reason, errno's text or mbedTLS's words, one line, e.g.
 * "key.pem: the key does not match the public key of the leaf in
 * chain.pem", "key.pem: Permission denied", "ca.pem: CA certificates: X509
 * - ...". Set by sotls_config_set_cert_file/_mem, sotls_config_add_cert_file
 * /_mem, sotls_config_set_ca_file/_mem/_dir, sotls_config_set_crl_file/_mem
 * and sotls_config_set_ticket_key_file; "" until one fails. Valid until the
 * next call on cfg; like the setters, not for use from several threads.
 * NULL gives "".
 */
SOTLS_API const char *sotls_config_error_detail(const struct sotls_config *cfg);

/* Trusted CA certificates (PEM file, or PEM/DER in memory). Error:
 * SOTLS_ERR_CA_LOAD. May be called more than once; certificates add up. */
SOTLS_API int sotls_config_set_ca_file(struct sotls_config *cfg, const char *path);
SOTLS_API int sotls_config_set_ca_mem(struct sotls_config *cfg, const void *ca, size_t len);

/* Whether to verify the peer (see enum sotls_verify). On a server,
 * SOTLS_VERIFY_REQUIRED asks the client for a certificate and requires it:
 * a client that sends none gets handshake_failure (RFC 5246 §7.4.6), one
 * whose chain does not verify the alert for its fault (see
 * sotls_config_set_verify_callback). */
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

/*
 * How sotls_sendfile sends (sotls_info.sendfile_path says what it did).
 * AUTO, the default, takes the best the kernel offers and falls back by
 * itself, saying why; the others pin one path where it exists, for an
 * operator who must (a kernel whose SEND_ZC misbehaves) and for tests:
 * ZERO_COPY: userspace TX with io_uring SEND_ZC even where the kernel says
 *   it copied anyway (loopback); COPY: io_uring READ_FIXED + SEND;
 *   PREAD: pread + send, no io_uring; PLAIN: on kernel TX, sendfile(2)
 *   instead of io_uring splice. All give the same bytes and errors.
 */
enum sotls_sendfile_mode {
	SOTLS_SENDFILE_AUTO = 0,
	SOTLS_SENDFILE_ZERO_COPY = 1,
	SOTLS_SENDFILE_COPY = 2,
	SOTLS_SENDFILE_PREAD = 3,
	SOTLS_SENDFILE_PLAIN = 4,
};
SOTLS_API int sotls_config_set_sendfile_mode(struct sotls_config *cfg,
					     enum sotls_sendfile_mode mode);

/*
 * The AEAD usage limit: records per key and direction. AES-GCM and ARIA-GCM
 * lose their confidentiality margin after about 2^24.5 full records under
 * one key (RFC 8446 5.5), and TLS 1.2 cannot change keys without the
 * renegotiation sotls refuses, so the default, 2^24 records (about 256 GiB
 * of full records per direction), is also the largest value accepted
 * (SOTLS_ERR_INVALID_ARGUMENT above it, and for 0); lower it for tests.
 *
 * Sending: before the sequence number would pass the limit, sotls sends
 * close_notify (the limit's last record is kept for it) and the send returns
 * what it sent; later sends fail with SOTLS_ERR_KEY_USAGE_LIMIT and a
 * detail that says to reconnect. Call sotls_shutdown (until 0 on a
 * non-blocking socket) to flush the close_notify; sotls_recv still returns
 * the data the peer sends until its close_notify. This holds on the kernel
 * TX path too: sotls reads the kernel's record sequence number back
 * (getsockopt TLS_TX) whenever what it cannot see might reach the limit, and
 * never hands the kernel more bytes than records left.
 * Receiving: a record at or past the limit means the peer ignored it: the
 * connection fails with SOTLS_ERR_KEY_USAGE_LIMIT and an unexpected_message
 * alert (on the kernel RX path, the bytes of the recv call that crossed the
 * limit are dropped too, since the kernel does not say which record they
 * came from). Peers without such a limit (most TLS 1.2 stacks) therefore get
 * cut off after 2^24 records on a long connection.
 */
SOTLS_API int sotls_config_set_key_usage_limit(struct sotls_config *cfg, uint64_t records);

/* ------------------------------------------------------------------------ */
/* Server features: ALPN, several certificates, SNI                          */
/* ------------------------------------------------------------------------ */

/*
 * ALPN (RFC 7301). protos: n protocol names, most preferred first, each 1 to
 * 255 bytes ("h2", "http/1.1"), no name twice; n 0 (protos may then be NULL)
 * turns ALPN off. A client offers them in this order. A server chooses the
 * first of its own list that the client offers (RFC 7301 §3.2: "the server
 * SHALL select the most highly preferred protocol that it supports and that
 * is also advertised by the client"), or asks its selection callback. The
 * result is sotls_info.alpn ("" if none). At most SOTLS_ALPN_MAX names.
 * Errors: SOTLS_ERR_INVALID_ARGUMENT (an empty or too long name, a name
 * twice, too many), SOTLS_ERR_BAD_STATE (in use), SOTLS_ERR_OUT_OF_MEMORY.
 */
#define SOTLS_ALPN_MAX 16
SOTLS_API int sotls_config_set_alpn(struct sotls_config *cfg, const char *const *protos, size_t n);

/*
 * Server: what to do when ALPN finds nothing to agree on.
 * STRICT (default): a client that offers protocols of which the server has
 * none gets a fatal no_application_protocol (120) alert, as RFC 7301 §3.2
 * requires; a client that sends no ALPN extension is served without a
 * protocol (sotls_info.alpn ""), as before ALPN existed.
 * LENIENT: no overlap means no protocol, and the handshake goes on (what
 * OpenSSL's servers do by default); for protocols that work without ALPN.
 * REQUIRED: as STRICT, and a client that offers no ALPN at all gets the same
 * alert (RFC 9113 §3.2: h2 over TLS is only ever chosen by ALPN).
 * A client configuration refuses it (SOTLS_ERR_INVALID_ARGUMENT).
 */
enum sotls_alpn_policy {
	SOTLS_ALPN_STRICT = 0,
	SOTLS_ALPN_LENIENT = 1,
	SOTLS_ALPN_REQUIRED = 2,
};
SOTLS_API int sotls_config_set_alpn_policy(struct sotls_config *cfg,
					   enum sotls_alpn_policy policy);

/*
 * Server: chooses the protocol instead of the configured list. Called once
 * per handshake whose ClientHello has an ALPN extension, on the thread doing
 * the handshake, before any reply is sent. server_name: the SNI host name
 * ("" if none); offered: the client's n protocols, in its order of
 * preference, NUL-terminated (names holding a NUL byte are left out). Returns
 * the index of the chosen one, or SOTLS_ALPN_NONE for none (the policy above
 * then decides). Must not call sotls on the connection. NULL removes it.
 */
#define SOTLS_ALPN_NONE (-1)
typedef int (*sotls_alpn_select_cb)(void *arg, const char *server_name,
				    const char *const *offered, size_t n);
SOTLS_API int sotls_config_set_alpn_select(struct sotls_config *cfg, sotls_alpn_select_cb cb,
					   void *arg);

/*
 * Server: the same selection, with the connection being handshaken: c
 * tells connections apart and carries the application's pointer
 * (sotls_conn_user, set before the handshake), e.g. the listener or
 * tenant the client came in through. Called at the same point, with the
 * same server_name and offered, answering the same way (an index or
 * SOTLS_ALPN_NONE) as sotls_alpn_select_cb; during the call c may only be
 * given to sotls_conn_user. One selection callback at a time: either
 * setter replaces the callback the other set. Errors:
 * SOTLS_ERR_INVALID_ARGUMENT (a client configuration), SOTLS_ERR_BAD_STATE
 * (in use). NULL removes it.
 */
typedef int (*sotls_alpn_select_conn_cb)(struct sotls_conn *c, void *arg,
					 const char *server_name, const char *const *offered,
					 size_t n);
SOTLS_API int sotls_config_set_alpn_select_conn(struct sotls_config *cfg,
						sotls_alpn_select_conn_cb cb, void *arg);

/*
 * A certificate chain (leaf first) and its private key, parsed and checked
 * against each other once (PEM, or DER in memory). Immutable and reference
 * counted: one may serve several configurations on any number of threads.
 * Errors: SOTLS_ERR_CERT_LOAD, SOTLS_ERR_KEY_LOAD (a key that does not match
 * the leaf included), SOTLS_ERR_INVALID_ARGUMENT, SOTLS_ERR_OUT_OF_MEMORY.
 * sotls_cert_free drops the caller's reference (NULL is ignored).
 */
struct sotls_cert;
SOTLS_API int sotls_cert_new_file(const char *chain_path, const char *key_path,
				  struct sotls_cert **out);
SOTLS_API int sotls_cert_new_mem(const void *chain, size_t chain_len, const void *key,
				 size_t key_len, struct sotls_cert **out);
SOTLS_API void sotls_cert_free(struct sotls_cert *cert);

/*
 * Server: one more certificate, chosen per handshake:
 *  1. by the client's SNI host name (RFC 6066 §3), matched without regard to
 *     case against names: exact ("www.example.com") or a wildcard for one
 *     leftmost label ("*.example.com" matches "a.example.com", neither
 *     "example.com" nor "a.b.example.com"; RFC 6125 §6.4.3). names NULL /
 *     n_names 0: the DNS names of the leaf's subjectAltName. Exact matches
 *     come before wildcard ones, each in the order added;
 *  2. among those, by what the client can use: the first, in that order,
 *     whose key type fits the suite chosen (sotls picks suites by its own
 *     order, sotls_config_set_suites) and the client's signature_algorithms
 *     and curves; so a client that signs RSA only gets the RSA chain.
 * A name that matches no certificate, or no SNI at all, gets the default
 * (index 0, the first one added, or the one set with sotls_config_set_cert_*),
 * or when the client cannot use it the next one it can use, in the order
 * added; sotls_config_set_sni_policy can refuse unknown names instead. When
 * the name chose the certificate, the server acknowledges it with an empty
 * server_name extension in its ServerHello (RFC 6066 §3). sotls_info says
 * which name the client sent and which certificate it got (cert_index).
 * sotls_config_add_cert takes its own reference on cert.
 * Returns the certificate's index (>= 0), or SOTLS_ERR_INVALID_ARGUMENT (a
 * client configuration; a name that is empty, longer than 253 bytes, or a
 * wildcard other than "*." + a name), SOTLS_ERR_BAD_STATE (in use),
 * SOTLS_ERR_CERT_LOAD / SOTLS_ERR_KEY_LOAD, SOTLS_ERR_OUT_OF_MEMORY.
 *
 * Reloading certificates without a restart: build a new configuration with
 * the new files and use it for new connections; drop the old one with
 * sotls_config_free. Connections already open keep a reference to the old
 * one and finish on it (sotls-https-server does this on SIGHUP).
 */
SOTLS_API int sotls_config_add_cert(struct sotls_config *cfg, struct sotls_cert *cert,
				    const char *const *names, size_t n_names);
SOTLS_API int sotls_config_add_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path, const char *const *names,
					 size_t n_names);
SOTLS_API int sotls_config_add_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len,
					const char *const *names, size_t n_names);

/*
 * Server: a host name the client sends that no certificate (and no SNI
 * callback) knows. RFC 6066 §3 lets the server either go on or refuse.
 * DEFAULT_CERT (default): the default certificate is sent, and the name is
 * not acknowledged. REFUSE_UNKNOWN: a fatal unrecognized_name (112) alert.
 * A ClientHello without SNI always gets the default certificate.
 */
enum sotls_sni_policy {
	SOTLS_SNI_DEFAULT_CERT = 0,
	SOTLS_SNI_REFUSE_UNKNOWN = 1,
};
SOTLS_API int sotls_config_set_sni_policy(struct sotls_config *cfg, enum sotls_sni_policy policy);

/*
 * Server: certificates loaded lazily or kept in a store. Called once per
 * handshake whose ClientHello names a host (server_name, in lower case), on
 * the handshake's thread, before the configured
 * certificates are searched. Return 0 with *cert set to use that chain
 * (sotls takes its own reference for the handshake: a cache may hand out
 * the one it keeps), 0 with *cert NULL to go on with the configured
 * certificates, or a negative value to refuse the name with unrecognized_name
 * (112). sotls_info.cert_index is then SOTLS_CERT_INDEX_CALLBACK. A server
 * configuration with a callback may have no certificate of its own; a
 * handshake that then finds none fails with handshake_failure. NULL removes it.
 */
#define SOTLS_CERT_INDEX_CALLBACK (-2)
typedef int (*sotls_sni_cb)(void *arg, const char *server_name, struct sotls_cert **cert);
SOTLS_API int sotls_config_set_sni_callback(struct sotls_config *cfg, sotls_sni_cb cb, void *arg);

/*
 * Server: the certificate chosen per connection, possibly later (a store on
 * another machine, a certificate made on demand). Called once per
 * handshake, for every client (server_name "" without SNI), once its
 * ClientHello has passed sotls's checks and before anything is answered,
 * with the connection (sotls_conn_user is the application's pointer).
 * Return 0 with *cert set (sotls takes its own reference) or NULL (the
 * configured certificates by name, as without a callback); a negative value
 * refuses the name with unrecognized_name (112); SOTLS_CERT_PENDING: the
 * handshake returns SOTLS_WANT_CERTIFICATE (an engine: no
 * SOTLS_ENGINE_RECV) until the application answers with
 * sotls_conn_set_cert (a chain, or NULL for the configured ones; any thread,
 * but not while another call runs on that connection) and calls
 * sotls_handshake again. Takes the place of the SNI callback when both are
 * set. NULL removes it.
 */
#define SOTLS_CERT_PENDING 1
typedef int (*sotls_cert_select_cb)(struct sotls_conn *c, void *arg, const char *server_name,
				    struct sotls_cert **cert);
SOTLS_API int sotls_config_set_cert_select(struct sotls_config *cfg, sotls_cert_select_cb cb,
					   void *arg);
/* The answer to a pending selection: 0, SOTLS_ERR_BAD_STATE (none pending),
 * SOTLS_ERR_INVALID_ARGUMENT. */
SOTLS_API int sotls_conn_set_cert(struct sotls_conn *c, struct sotls_cert *cert);

/* ------------------------------------------------------------------------ */
/* Record sizes and the key log                                              */
/* ------------------------------------------------------------------------ */

/*
 * Client: asks the server for records of at most len plaintext bytes (RFC
 * 6066 §4 max_fragment_length): 512, 1024, 2048 or 4096; 0 (the default)
 * asks nothing. Once the server agrees, every record either side sends,
 * the handshake's own included, carries at most len bytes, and a larger
 * record from the peer is a record_overflow. A server always agrees to what
 * a client asks and honours it the same way (nothing to set). The kernel
 * cannot (Linux 6.1's kTLS cuts records at 2^14 and takes any record up to
 * 2^14), so a connection with max_fragment_length keeps both directions in
 * userspace and sotls_info says why (SOTLS_KTLS_REQUIRE then fails).
 * Errors: SOTLS_ERR_INVALID_ARGUMENT (another len, or a server
 * configuration), SOTLS_ERR_BAD_STATE (in use).
 */
SOTLS_API int sotls_config_set_max_fragment_length(struct sotls_config *cfg, unsigned len);

/*
 * Key log, for debugging with Wireshark/tshark: cb gets one line per
 * connection in the NSS key log format (SSLKEYLOGFILE),
 *   CLIENT_RANDOM <client random, 64 hex digits> <master secret, 96 hex digits>
 * without a newline, during sotls_handshake, as soon as the master secret
 * exists (before the Finished messages are checked, so a failing handshake
 * can be decrypted too). Whoever holds the line can decrypt the whole
 * connection: never log in production. The line is wiped when cb returns,
 * so copy what you keep. cb runs on the thread doing the handshake, so with
 * a configuration shared by threads it must be thread-safe. NULL (the
 * default) logs nothing. Error: SOTLS_ERR_BAD_STATE (in use).
 */
typedef void (*sotls_keylog_cb)(const struct sotls_conn *c, const char *line, void *arg);
SOTLS_API int sotls_config_set_keylog(struct sotls_config *cfg, sotls_keylog_cb cb, void *arg);

/* ------------------------------------------------------------------------ */
/* The log: what sotls decides on its own                                    */
/* ------------------------------------------------------------------------ */

/*
 * Decisions no call returns: each has its own value, stable across
 * releases (new ones are added at the end), to count or filter by.
 */
enum sotls_log_event {
	/* A direction the kTLS policy would give the kernel stays in userspace
	 * (the kernel refused it, or max_fragment_length was negotiated): the
	 * line has sotls_info's tx_reason / rx_reason. Once per connection, at
	 * the end of the handshake (an engine: at sotls_engine_attach_fd). */
	SOTLS_LOG_KTLS_FALLBACK = 1,
	/* The peer was cut off for sending too many records that deliver
	 * nothing (SOTLS_ERR_RECORD_FLOOD): which cap, its value. */
	SOTLS_LOG_RECORD_FLOOD = 2,
	/* The peer was cut off for going past the key usage limit
	 * (SOTLS_ERR_KEY_USAGE_LIMIT on receiving). */
	SOTLS_LOG_KEY_USAGE_LIMIT = 3,
	/* A record failed authentication; bad_record_mac was sent. */
	SOTLS_LOG_BAD_RECORD_MAC = 4,
	/* The peer was cut off for any other fault in its records after the
	 * handshake (decode_error, unexpected_message, record_overflow, ...):
	 * the error and the alert sent. */
	SOTLS_LOG_PEER_FAULT = 5,
	/* Server: re-reading the ticket key file (sotls_config_set_ticket_key_file)
	 * failed; the keys read before stay in use. c is NULL. Said again only
	 * when the reason changes, or after a read that succeeded. */
	SOTLS_LOG_TICKET_KEY_FILE = 6,
	/* A session offered (client: the one given to sotls_conn_set_session;
	 * server: the client's ticket or session ID) was made under another
	 * trust or session context (sotls_config_set_session_context): a full
	 * handshake instead. */
	SOTLS_LOG_SESSION_CONTEXT = 7,
};

/*
 * The log: cb is told of each event above with the connection concerned
 * (NULL for one of the configuration's own), and one line of text without
 * a newline, e.g. "kTLS: TX stays in userspace: kernel has no TLS ULP
 * (CONFIG_TLS)"; both valid during the call only. It runs on the thread
 * that made the decision (inside sotls_handshake, sotls_recv, ...), so with
 * a configuration shared by threads it must be thread-safe; it must not
 * call sotls on c. Without a callback (NULL, the default) nothing is
 * formatted. Errors: SOTLS_ERR_INVALID_ARGUMENT (NULL cfg),
 * SOTLS_ERR_BAD_STATE (in use).
 */
typedef void (*sotls_log_cb)(const struct sotls_conn *c, enum sotls_log_event event,
			     const char *line, void *arg);
SOTLS_API int sotls_config_set_log(struct sotls_config *cfg, sotls_log_cb cb, void *arg);

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

/*
 * The engine: a connection without a socket, for servers with their own
 * event loop or io_uring (multishot recv into provided buffers, SEND_ZC),
 * which do not hand their sockets to a library. It makes no syscall: the
 * application moves the ciphertext. It is the connection sotls_conn_new
 * makes, the same code: sotls_handshake, sotls_send, sotls_recv,
 * sotls_shutdown, the callbacks, sotls_get_info and the errors behave as on
 * a non-blocking socket, where SOTLS_WANT_READ means "give me ciphertext"
 * (sotls_engine_recv_buf) and SOTLS_WANT_WRITE "take the ciphertext I hold"
 * (sotls_engine_send_buf). sotls_sendfile: SOTLS_ERR_UNSUPPORTED (no
 * socket) until sotls_engine_attach_fd. Arguments as sotls_conn_new's.
 *
 * The loop (see examples/engine-echo-server.c):
 *     for (;;) {
 *         ssize_t n = sotls_recv(c, app, sizeof(app));  // or sotls_handshake
 *         size_t len;
 *         const void *out = sotls_engine_send_buf(c, &len);
 *         if (len > 0)                                  // even after a failure:
 *             sotls_engine_send_done(c, send(fd, out, len, 0));  // its alert
 *         if (n == SOTLS_WANT_READ) {
 *             size_t cap;
 *             void *in = sotls_engine_recv_buf(c, &cap);
 *             ssize_t got = recv(fd, in, cap, 0);       // 0: sotls_engine_recv_eof
 *             sotls_engine_recv_done(c, got);
 *         }
 *         ...
 *     }
 */
SOTLS_API int sotls_conn_new_engine(struct sotls_config *cfg, struct sotls_conn **out);

/*
 * Where to put received ciphertext, and how many bytes the engine takes now
 * (*cap). NULL and *cap 0: nothing now (call sotls_handshake / sotls_recv
 * first, or it has failed). During the handshake *cap never reaches past
 * the record being read, so an application that reads at most *cap bytes
 * from its socket never reads past the peer's Finished and can give the
 * socket to the kernel afterwards (sotls_engine_attach_fd). After the
 * handshake it is the free end of the receive buffer, where records are
 * opened in place: reading straight into it costs no copy.
 * Then sotls_engine_recv_done: n bytes were written there (0, or
 * SOTLS_ERR_INVALID_ARGUMENT: more than *cap). Call it with n = 0 when the
 * socket had nothing (EAGAIN): the buffer is lent until then, and an empty
 * one goes back, so an idle connection holds no receive buffer.
 */
SOTLS_API void *sotls_engine_recv_buf(struct sotls_conn *c, size_t *cap);
SOTLS_API int sotls_engine_recv_done(struct sotls_conn *c, size_t n);
/* Copies in as much of data as the engine takes now (sotls_engine_recv_buf,
 * memcpy, sotls_engine_recv_done): returns how many bytes it took, maybe
 * fewer than len (keep the rest, call sotls_handshake / sotls_recv, feed
 * again), 0 when it takes none now. For data that already sits in the
 * application's buffers (a provided-buffer ring). */
SOTLS_API size_t sotls_engine_feed(struct sotls_conn *c, const void *data, size_t len);
/* The peer closed its end of the stream (recv returned 0): the next read
 * sees it, as on a socket (SOTLS_ERR_TRUNCATED without close_notify). */
SOTLS_API int sotls_engine_recv_eof(struct sotls_conn *c);

/*
 * Ciphertext to send (*len bytes; NULL and 0: none), then
 * sotls_engine_send_done: n of them were sent (0, or
 * SOTLS_ERR_INVALID_ARGUMENT). After a failure it still holds what the
 * connection had to say (its fatal alert last): send that, then close.
 */
SOTLS_API const void *sotls_engine_send_buf(struct sotls_conn *c, size_t *len);
SOTLS_API int sotls_engine_send_done(struct sotls_conn *c, size_t n);

/* What an engine connection wants (sotls_engine_state: a set of bits). */
enum sotls_engine_bits {
	SOTLS_ENGINE_SEND = 1,	      /* ciphertext waits in sotls_engine_send_buf */
	SOTLS_ENGINE_RECV = 2,	      /* it takes ciphertext now */
	SOTLS_ENGINE_PRIVATE_KEY = 4, /* the handshake waits for the private-key method */
	SOTLS_ENGINE_OPEN = 8,	      /* the handshake is complete: records flow */
	SOTLS_ENGINE_CLOSED = 16,     /* the peer's close_notify arrived */
	SOTLS_ENGINE_FAILED = 32,     /* final (sotls_conn_error_detail); send SEND, then close */
	SOTLS_ENGINE_CERTIFICATE = 64, /* the handshake waits for sotls_conn_set_cert */
};
SOTLS_API unsigned sotls_engine_state(struct sotls_conn *c);

/*
 * The kernel handoff, right after sotls_handshake returned 0 and before any
 * sotls_send / sotls_recv / sotls_shutdown (then SOTLS_ERR_BAD_STATE).
 * sotls_engine_attach_fd: the connection goes on over fd, the socket whose
 * ciphertext the engine has seen so far (nothing past the peer's Finished
 * read from it): each direction goes to the kernel as the configuration's
 * kTLS policy says, with sotls_info's reasons as for sotls_conn_new, the
 * rest stays in userspace on fd, and sotls_sendfile works. It is then a
 * connection on fd in every respect (no engine buffers any more).
 */
SOTLS_API int sotls_engine_attach_fd(struct sotls_conn *c, int fd);

/* One direction's traffic keys, for an application that installs them in
 * the kernel itself (struct tls12_crypto_info_*): key, implicit salt, and
 * the sequence number of the next record. */
struct sotls_traffic_keys {
	uint16_t suite_id; /* IANA (sotls_info.suite_id) */
	uint8_t key_len;   /* 16 or 32 */
	uint8_t key[32];
	uint8_t salt[4];
	uint64_t seq;
};
/* Copies both directions' keys out, once (wipe them after use); the
 * connection then moves no record: SOTLS_ERR_BAD_STATE from sotls_send and
 * sotls_recv. */
SOTLS_API int sotls_engine_traffic_keys(struct sotls_conn *c, struct sotls_traffic_keys *tx,
					struct sotls_traffic_keys *rx);

/* Decrypted bytes sotls holds for the next sotls_recv (OpenSSL's
 * SSL_pending): a caller that read less than a record must not wait for
 * its socket before reading these. Either kind of connection. */
SOTLS_API size_t sotls_pending(const struct sotls_conn *c);

/* A pointer of the application's, kept with the connection (NULL at first). */
SOTLS_API void sotls_conn_set_user(struct sotls_conn *c, void *user);
SOTLS_API void *sotls_conn_user(const struct sotls_conn *c);

/* Client: the server name for this connection only (SNI and certificate
 * check); overrides the configuration's. Before the handshake only. */
SOTLS_API int sotls_conn_set_server_name(struct sotls_conn *c, const char *name);

/*
 * Runs the handshake. Returns 0 when it is complete; on a non-blocking socket
 * SOTLS_WANT_READ / SOTLS_WANT_WRITE: wait for the socket and call again.
 * A server whose certificate's private-key method is pending
 * (sotls_cert_new_external) returns SOTLS_WANT_PRIVATE_KEY, on any socket:
 * call again once the method can complete (sotls_send, sotls_recv and
 * sotls_sendfile return it too while they run the handshake).
 * Failures: SOTLS_ERR_NO_SHARED_SUITE, SOTLS_ERR_CERT_VERIFY,
 * SOTLS_ERR_PROTOCOL_VERSION, SOTLS_ERR_PEER_ALERT, SOTLS_ERR_KTLS_REQUIRED,
 * SOTLS_ERR_TRUNCATED (the peer closed), SOTLS_ERR_SYSCALL (errno),
 * SOTLS_ERR_PRIVATE_KEY_OPERATION / SOTLS_ERR_PRIVATE_KEY_CHECK (the server's
 * signature), SOTLS_ERR_HANDSHAKE (anything else; sotls_conn_error_detail()
 * says more). sotls_send/sotls_recv run it implicitly if it has not completed.
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
 * Failures are final: the connection is closed for sending and receiving,
 * except SOTLS_ERR_KEY_USAGE_LIMIT (see sotls_config_set_key_usage_limit),
 * after which sotls_recv still works.
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
 * A renegotiation attempt by the peer (HelloRequest to a client, ClientHello
 * to a server) is refused with a no_renegotiation warning and does not end
 * the connection; any other handshake message after the handshake is
 * SOTLS_ERR_UNEXPECTED_MESSAGE. Records that deliver nothing are capped
 * between data records: 32 empty records, 4 warning alerts, 8 refused
 * handshake records; past a cap SOTLS_ERR_RECORD_FLOOD. A close_notify
 * counts only as a warning; a fatal one is SOTLS_ERR_PEER_ALERT. So one call
 * processes a bounded number of records before it returns.
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
 * On the kernel TX path the same holds for a socket that times out
 * (SO_SNDTIMEO) midway: bytes already in sotls's pipe are reported as sent
 * and go out first on the next call; none is sent twice or lost.
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
 * which then costs least. On a non-blocking socket no call waits for the
 * kernel to release a buffer (which lasts until the peer has acknowledged
 * its bytes, as long as the peer reads nothing): while every group is held,
 * the records go through one more, unregistered group, read with preadv(2)
 * and sent with send(2) (mapped on first need, 68 KiB, counted in
 * sendfile_buffer_bytes), and the call returns SOTLS_WANT_WRITE when the
 * socket refuses, as sotls_send does.
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

/* How a connection's handshake went (sotls_info.resumed). */
enum sotls_resumption {
	SOTLS_RESUMED_NONE = 0,	      /* a full handshake */
	SOTLS_RESUMED_SESSION_ID = 1, /* abbreviated: the server's session cache */
	SOTLS_RESUMED_TICKET = 2,     /* abbreviated: a session ticket (RFC 5077) */
};

/* The path a direction's records take. */
enum sotls_path {
	SOTLS_PATH_NONE = 0,	  /* no handshake yet */
	SOTLS_PATH_USERSPACE = 1, /* sotls's record layer */
	SOTLS_PATH_KERNEL = 2,	  /* kernel TLS (SOL_TLS) */
};

/*
 * Facts about a connection. The struct grows at its end from one release to
 * the next without breaking binaries built against an older sotls.h: the
 * caller says how large its struct is in `size` (SOTLS_INFO_INIT does it)
 * and sotls_get_info() fills only the fields that fit in those bytes,
 * leaving the others (and `size`) as the caller set them. Fields, in order:
 *   size, suite, suite_id, version, tx_path, rx_path, tx_reason, rx_reason,
 *   aead_impl, peer_alert, tx_records, rx_records, sendfile_path,
 *   sendfile_reason, sendfile_buffer_bytes (the first part: every
 *   libsotls.so.1 fills these), then alpn, server_name, cert_index,
 *   peer_verified, peer_chain_len, max_fragment_len (0.2), resumed (0.3).
 * All strings are static and never NULL.
 */
struct sotls_info {
	/* sizeof(struct sotls_info) as the caller was compiled: set before
	 * calling sotls_get_info(). */
	size_t size;
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
	const char *aead_impl;	 /* e.g. "sotls-gcm-aes-vaes-avx512" (the CPU features pick it,
				  * less those SOTLS_CPU takes away: see the top of this
				  * file); "kernel (kTLS)" if both in the kernel */
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
	/* The protocol ALPN agreed on (RFC 7301), "" if none. Valid until
	 * sotls_conn_free. */
	const char *alpn;
	/* Server: the SNI host name the client sent, in lower case; client: the
	 * one it sent (an IP literal is not sent); "" if none. Valid until sotls_conn_free. */
	const char *server_name;
	/* Server: the index of the certificate chain sent (the order of adding,
	 * 0 the default), SOTLS_CERT_INDEX_CALLBACK if the SNI callback gave it;
	 * -1 on a client and before the handshake. */
	int cert_index;
	/* 1 if the peer presented a chain that verified (or that the verify
	 * callback accepted), 0 otherwise. */
	int peer_verified;
	/* Certificates in the peer's chain (sotls_conn_peer_cert), 0 if it
	 * sent none. */
	size_t peer_chain_len;
	/* The max_fragment_length both sides agreed on (RFC 6066 §4), in
	 * plaintext bytes per record: 512, 1024, 2048 or 4096; 0 if none (then
	 * records carry up to 2^14 bytes). */
	uint16_t max_fragment_len;
	/* Whether the handshake was abbreviated, resuming an earlier session,
	 * and how (see "Session resumption"). */
	enum sotls_resumption resumed;
};

/* A struct sotls_info ready for sotls_get_info(): size set, the rest zero. */
#define SOTLS_INFO_INIT {.size = sizeof(struct sotls_info)}

/* Fills the fields of *info that fit in info->size bytes (see above). Before
 * the handshake completes the strings are "" (paths NONE). Returns 0, or
 * SOTLS_ERR_INVALID_ARGUMENT (NULL, or info->size smaller than the first
 * part: a struct not made with SOTLS_INFO_INIT or sizeof). */
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

/* ------------------------------------------------------------------------ */
/* Trust, keys and the peer's identity                                       */
/* ------------------------------------------------------------------------ */

/*
 * Trusted CA certificates from every file of a directory whose name ends in
 * .pem, .crt or .cer, or is an OpenSSL hash name ("1a2b3c4d.0", as `openssl
 * rehash` / c_rehash make), in name order; a certificate found twice (a
 * hash link and its target, a bundle) is kept once. Adds to the CA set like
 * sotls_config_set_ca_file. Error SOTLS_ERR_CA_LOAD (nothing added) if the
 * directory cannot be read, has no such file, or one of them does not parse.
 * Hashed CRLs ("1a2b3c4d.r0") are not read: load CRLs with the calls below.
 */
SOTLS_API int sotls_config_set_ca_dir(struct sotls_config *cfg, const char *path);

/*
 * Certificate revocation lists (PEM file, or PEM/DER in memory; several may
 * be given, they add up). A certificate listed by a CRL of its issuer fails
 * with SOTLS_CERT_REVOKED (alert certificate_revoked); a CRL past its
 * nextUpdate, or not signed by a trusted CA, fails every certificate of that
 * issuer (SOTLS_CERT_CRL_EXPIRED, SOTLS_CERT_CRL_NOT_TRUSTED). A certificate
 * whose issuer has no CRL loaded is not checked for revocation. Error:
 * SOTLS_ERR_CRL_LOAD (nothing added).
 */
SOTLS_API int sotls_config_set_crl_file(struct sotls_config *cfg, const char *path);
SOTLS_API int sotls_config_set_crl_mem(struct sotls_config *cfg, const void *crl, size_t len);

/*
 * Encrypted private keys. sotls_config_set_cert_file / _mem decrypt a PKCS#8
 * "ENCRYPTED PRIVATE KEY" (PBES2: PBKDF2 with HMAC-SHA-256/384/512 and
 * AES-128/192/256-CBC, what `openssl genpkey -aes-256-cbc` and OpenSSL 3's
 * `openssl pkey -aes256` write) with the password set here, which is used for
 * every key loaded after it (a copy is kept, wiped by the next call or
 * sotls_config_free; NULL forgets it). Or a callback, asked only when a key
 * is encrypted: it writes the password into buf (size bytes, wiped after
 * use) and returns its length, or a negative value to give up. Setting one
 * clears the other. Errors of the key load: SOTLS_ERR_KEY_PASSWORD (no
 * password, or the wrong one), SOTLS_ERR_UNSUPPORTED (a legacy "Proc-Type:
 * 4,ENCRYPTED" PEM key, or a PKCS#12/DES scheme: convert it with `openssl
 * pkcs8 -topk8 -v2 aes-256-cbc`).
 */
SOTLS_API int sotls_config_set_key_password(struct sotls_config *cfg, const char *password);
typedef int (*sotls_password_fn)(char *buf, size_t size, void *arg);
SOTLS_API int sotls_config_set_key_password_cb(struct sotls_config *cfg, sotls_password_fn fn,
					       void *arg);

/* Why a chain did not verify: bits of sotls_verify_info.flags and of each
 * sotls_verify_cert.flags. */
enum sotls_cert_problem {
	SOTLS_CERT_EXPIRED = 0x01,	  /* past its notAfter */
	SOTLS_CERT_REVOKED = 0x02,	  /* listed in its issuer's CRL */
	SOTLS_CERT_NAME_MISMATCH = 0x04,  /* the leaf is not for the server name */
	SOTLS_CERT_NOT_TRUSTED = 0x08,	  /* no chain to a configured CA */
	SOTLS_CERT_CRL_NOT_TRUSTED = 0x10, /* a CRL not signed by a trusted CA */
	SOTLS_CERT_CRL_EXPIRED = 0x20,	  /* a CRL past its nextUpdate */
	SOTLS_CERT_OTHER = 0x0100,
	SOTLS_CERT_FUTURE = 0x0200,	  /* before its notBefore */
	SOTLS_CERT_CRL_FUTURE = 0x0400,
	SOTLS_CERT_KEY_USAGE = 0x0800,	  /* keyUsage does not allow this use */
	SOTLS_CERT_EXT_KEY_USAGE = 0x1000, /* extendedKeyUsage: not for this side */
	SOTLS_CERT_BAD_MD = 0x4000,	  /* signed with a hash sotls does not accept */
	SOTLS_CERT_BAD_PK = 0x8000,	  /* signed with an unsupported algorithm */
	SOTLS_CERT_BAD_KEY = 0x10000,	  /* a key too small or on a curve not allowed */
	SOTLS_CERT_CRL_BAD_MD = 0x20000,
	SOTLS_CERT_CRL_BAD_PK = 0x40000,
	SOTLS_CERT_CRL_BAD_KEY = 0x80000,
};

/* One certificate of the chain, DER. */
struct sotls_verify_cert {
	const uint8_t *der;
	size_t der_len;
	uint32_t flags; /* this certificate's problems (enum sotls_cert_problem) */
};

/* What the verify callback is shown. Valid during the call only. */
struct sotls_verify_info {
	/* Every certificate's problems (enum sotls_cert_problem), 0 if sotls
	 * would accept the chain. */
	uint32_t flags;
	const char *reason; /* flags in words, one line; "" if 0 */
	/* The chain as verification built it, chain[depth]: [0] the peer's
	 * leaf, [1] its issuer, ..., the last one the trust anchor from the
	 * CA set if one was found. */
	size_t chain_len;
	const struct sotls_verify_cert *chain;
};

/* What a verify callback returns. */
enum sotls_verdict {
	SOTLS_VERDICT_ACCEPT = 0,  /* go on, whatever the flags say */
	SOTLS_VERDICT_REJECT = 1,  /* fail: the alert for the flags, certificate_unknown if 0 */
	SOTLS_VERDICT_DEFAULT = 2, /* sotls's verdict: accept if and only if flags is 0 */
	/* Fail with this alert (RFC 5246 §7.2.2). */
	SOTLS_VERDICT_REJECT_BAD_CERTIFICATE = 42,
	SOTLS_VERDICT_REJECT_UNSUPPORTED_CERTIFICATE = 43,
	SOTLS_VERDICT_REJECT_CERTIFICATE_REVOKED = 44,
	SOTLS_VERDICT_REJECT_CERTIFICATE_EXPIRED = 45,
	SOTLS_VERDICT_REJECT_CERTIFICATE_UNKNOWN = 46,
	SOTLS_VERDICT_REJECT_UNKNOWN_CA = 48,
	SOTLS_VERDICT_REJECT_ACCESS_DENIED = 49,
};

/*
 * A verify callback, called once per handshake with the peer's chain and
 * sotls's verdict, right after the peer's Certificate message (before sotls
 * answers it), whenever the peer sent a certificate and the verify mode is
 * not SOTLS_VERIFY_NONE. It returns an enum sotls_verdict: it may accept a
 * chain that did not verify (a self-signed peer it pins) or reject one that
 * did. Any other value rejects, as SOTLS_VERDICT_REJECT. Alerts for flags,
 * in this order: name mismatch bad_certificate, key usage or key type
 * unsupported_certificate, expired or not yet valid certificate_expired,
 * revoked certificate_revoked, not trusted unknown_ca, anything else
 * certificate_unknown. A rejected handshake fails with SOTLS_ERR_CERT_VERIFY.
 * During the call c's sotls_conn_peer_* accessors already answer for this
 * chain; no other call on c is allowed. fn NULL removes it.
 */
typedef int (*sotls_verify_fn)(struct sotls_conn *c, const struct sotls_verify_info *info,
			       void *arg);
SOTLS_API int sotls_config_set_verify_callback(struct sotls_config *cfg, sotls_verify_fn fn,
					       void *arg);

/*
 * The peer's chain after the handshake (and from the verify callback on),
 * as verification built it: index 0 the peer's leaf, then each issuer, up to
 * the trust anchor if one was found (see sotls_verify_info). Kept by the
 * connection, independent of mbedTLS and of the record path (kTLS
 * included), until sotls_conn_free. Sets *der and *len and returns 1; 0 if
 * there is no certificate at index (none sent, a server in
 * SOTLS_VERIFY_NONE, before the handshake); SOTLS_ERR_INVALID_ARGUMENT for
 * NULL pointers.
 */
SOTLS_API int sotls_conn_peer_cert(const struct sotls_conn *c, size_t index, const uint8_t **der,
				   size_t *len);

/* The leaf's subject, one line, attributes in the certificate's order as
 * mbedTLS prints them ("C=KR, O=Example, CN=host"); "" if none. Valid until
 * sotls_conn_free. */
SOTLS_API const char *sotls_conn_peer_subject(const struct sotls_conn *c);

/* subjectAltName entry types (the GeneralName tags of RFC 5280 §4.2.1.6). */
enum sotls_san_type {
	SOTLS_SAN_EMAIL = 1, /* rfc822Name */
	SOTLS_SAN_DNS = 2,   /* dNSName */
	SOTLS_SAN_URI = 6,   /* uniformResourceIdentifier */
	SOTLS_SAN_IP = 7,    /* iPAddress, as inet_ntop writes it */
};

/*
 * The leaf's subjectAltName entries of the types above, in the
 * certificate's order (others, such as otherName and directoryName, are
 * skipped). A byte outside printable ASCII, and a backslash, is written as
 * \xNN, so a name with an embedded NUL never compares equal to a real one.
 * Sets *type and *value (valid until sotls_conn_free) and returns 1; 0 past
 * the last entry; SOTLS_ERR_INVALID_ARGUMENT for NULL pointers.
 */
SOTLS_API int sotls_conn_peer_san(const struct sotls_conn *c, size_t index,
				  enum sotls_san_type *type, const char **value);

/* ------------------------------------------------------------------------ */
/* Private keys sotls does not hold: HSMs and key servers                    */
/* ------------------------------------------------------------------------ */

/*
 * Server: a certificate whose private key is elsewhere (an HSM, a "keyless"
 * key server in another process or host), in the shape of BoringSSL's
 * SSL_PRIVATE_KEY_METHOD. The one private-key operation of a sotls server
 * is the TLS 1.2 ServerKeyExchange signature (RFC 5246 §7.4.3, RFC 8422
 * §5.4): sotls computes the hash
 *   Hash(ClientHello.random + ServerHello.random + ServerECDHParams)
 * with the hash the client's signature_algorithms allow, and asks the
 * method to sign that hash. sigalg names the algorithm as the TLS 1.2
 * SignatureAndHashAlgorithm, hash << 8 | signature (RFC 5246 §7.4.1.4.1),
 * one of the SOTLS_SIGALG_* values below; digest is the hash itself
 * (digest_len 32, 48 or 64 bytes), so the key holder never sees the
 * handshake and an HSM signs a digest as it would for any other protocol:
 *  - RSA: out is the k-byte PKCS#1 v1.5 signature of digest, the
 *    EMSA-PKCS1-v1_5 encoding of RFC 8017 §9.2 with the DigestInfo of the
 *    hash (PKCS#11: CKM_RSA_PKCS over DigestInfo || digest);
 *  - ECDSA: out is the DER ECDSA-Sig-Value { r, s } (RFC 8422 §5.4; an HSM
 *    that gives r || s, as PKCS#11's CKM_ECDSA does, must be re-encoded).
 * sotls checks the signature with the leaf's public key before sending it:
 * one that does not verify (a key that is not the certificate's) fails the
 * handshake with SOTLS_ERR_PRIVATE_KEY_CHECK and internal_error, and is
 * never sent.
 *
 * The callbacks run inside sotls_handshake (or the sotls_send / sotls_recv
 * that runs it), on that thread, and must not call sotls on c. They return:
 *  SOTLS_PRIVATE_KEY_SUCCESS: the signature is in out, *out_len its length
 *    (at most max_out, which is at least 1024 bytes);
 *  SOTLS_PRIVATE_KEY_PENDING: not yet (the request went to the key holder).
 *    sotls_handshake returns SOTLS_WANT_PRIVATE_KEY; once the key holder
 *    has answered (the application polls its own channel), call
 *    sotls_handshake again, and sotls calls complete, which returns one of
 *    these three values again (PENDING: SOTLS_WANT_PRIVATE_KEY once more);
 *  SOTLS_PRIVATE_KEY_FAILURE (or any other value): the handshake fails with
 *    SOTLS_ERR_PRIVATE_KEY_OPERATION and an internal_error alert to the peer.
 * sign must save digest if it needs it later: it is valid during the call
 * only. complete may be NULL for a method that never returns PENDING.
 * cancel (may be NULL) is called when a connection whose operation is
 * PENDING is freed (sotls_conn_free) or fails, so the method can drop its
 * request; complete is then not called. c identifies the connection to the
 * method (a pending request per connection at most); arg is the one given
 * to sotls_cert_new_external.
 */
enum sotls_private_key_result {
	SOTLS_PRIVATE_KEY_SUCCESS = 0,
	SOTLS_PRIVATE_KEY_PENDING = 1,
	SOTLS_PRIVATE_KEY_FAILURE = 2,
};

/* TLS 1.2 SignatureAndHashAlgorithm values sotls asks for (RFC 5246
 * §7.4.1.4.1: hash sha256(4), sha384(5), sha512(6); signature rsa(1),
 * ecdsa(3)). For ECDSA the hash is not tied to the curve in TLS 1.2. */
enum sotls_sigalg {
	SOTLS_SIGALG_RSA_PKCS1_SHA256 = 0x0401,
	SOTLS_SIGALG_RSA_PKCS1_SHA384 = 0x0501,
	SOTLS_SIGALG_RSA_PKCS1_SHA512 = 0x0601,
	SOTLS_SIGALG_ECDSA_SHA256 = 0x0403,
	SOTLS_SIGALG_ECDSA_SHA384 = 0x0503,
	SOTLS_SIGALG_ECDSA_SHA512 = 0x0603,
};

struct sotls_private_key_method {
	int (*sign)(struct sotls_conn *c, void *arg, uint16_t sigalg, const uint8_t *digest,
		    size_t digest_len, uint8_t *out, size_t *out_len, size_t max_out);
	int (*complete)(struct sotls_conn *c, void *arg, uint8_t *out, size_t *out_len,
			size_t max_out);
	void (*cancel)(struct sotls_conn *c, void *arg);
};

/*
 * A certificate chain (leaf first; PEM or DER, as sotls_cert_new_mem) with no
 * private key: method signs for it (see above). The public key is the
 * leaf's: RSA, or ECDSA on P-256, P-384 or P-521. method (with its sign
 * callback set) must stay valid as long as the certificate; a static const
 * struct is the usual way. Use it with sotls_config_add_cert or hand it out
 * from an SNI callback; it is chosen by names and key type like any other,
 * and mixes freely with certificates whose key sotls holds (those sign as
 * before). Errors: SOTLS_ERR_INVALID_ARGUMENT (NULL, no sign callback),
 * SOTLS_ERR_CERT_LOAD (the chain does not parse, or the leaf's key is of
 * another type), SOTLS_ERR_OUT_OF_MEMORY.
 */
SOTLS_API int sotls_cert_new_external(const void *chain, size_t chain_len,
				      const struct sotls_private_key_method *method, void *arg,
				      struct sotls_cert **out);

/* ------------------------------------------------------------------------ */
/* Session resumption                                                        */
/* ------------------------------------------------------------------------ */

/*
 * A client that comes back skips the public-key work: the abbreviated
 * handshake of RFC 5246 §7.3 reuses the master secret of an earlier session,
 * found by the session ID the server gave (its session cache) or carried by
 * the client itself in a session ticket the server sealed (RFC 5077).
 * sotls_info.resumed says which happened.
 *
 * Rules that hold on both sides, whatever stores the session:
 *  - Only sessions with the extended master secret (RFC 7627) are kept or
 *    offered. A server that finds a session for a ClientHello without the
 *    extension aborts with handshake_failure (RFC 7627 §5.3); a client
 *    whose resumed ServerHello lacks it does the same.
 *  - A session is resumed only under the server name it was made for (RFC
 *    6066 §3: otherwise a full handshake), with the same suite (RFC 5246
 *    §7.4.1.2), and without max_fragment_length (such sessions get full
 *    handshakes). ALPN is chosen anew in every handshake (RFC 7301 §3.1),
 *    under the same policy.
 *  - The peer's identity (sotls_conn_peer_cert, sotls_info.peer_verified)
 *    is the one verified in the full handshake; a client whose configuration
 *    requires verification does not offer a session whose server was not
 *    verified.
 *  - A session is bound to the trust that verified its peer: the verify
 *    mode, the CA and CRL sets, whether a verify callback is set, and the
 *    application's context (sotls_config_set_session_context). A session
 *    made under another trust is not resumed: a full handshake, in which a
 *    server issues a fresh ticket. So two servers that share a ticket key
 *    file or a session store but trust different client CAs never take
 *    each other's sessions, and a client never offers a session made by a
 *    configuration that trusted other CAs or skipped the name check.
 *  - A session that cannot be used (unknown, expired, tampered with, under
 *    a retired ticket key, another sotls version) gives a full handshake,
 *    never an error.
 *  - Resumed connections go to the kernel (kTLS) like full ones.
 */

/*
 * The application's part of the trust a session is bound to, up to
 * SOTLS_SESSION_CONTEXT_MAX bytes (len 0: none, the default), as OpenSSL's
 * session ID context. sotls binds every session to a digest of this and of
 * the configuration's own trust (see the rules above), so the default
 * already differs between configurations whose client-certificate trust
 * differs. Set it to tell apart what sotls cannot see: the verify
 * callback's policy (a callback counts only as present or absent, since
 * its address differs between processes), or two services that must not
 * share sessions although their trust is the same.
 * The fleet rule: servers that share a ticket key file or a session store
 * resume each other's sessions only if their trust and this context are
 * the same; services that trust different client CAs share a key file only
 * if they set the same context on purpose, and then a client verified by
 * one is taken as verified by the other.
 * A server that asks for no client certificate (SOTLS_VERIFY_NONE) has no
 * trust to bind, so its sessions depend only on the mode and this context.
 * Both roles. Errors: SOTLS_ERR_INVALID_ARGUMENT (longer than the maximum,
 * NULL with len > 0), SOTLS_ERR_BAD_STATE (in use).
 */
#define SOTLS_SESSION_CONTEXT_MAX 32
SOTLS_API int sotls_config_set_session_context(struct sotls_config *cfg, const void *ctx,
					       size_t len);

/*
 * Server: the built-in session cache, on by default with 20480 sessions,
 * 8 MiB and 7200 s. Thread-safe across the threads of one process. It is
 * asked when a client offers a session ID and no usable ticket, and fed by
 * full handshakes with clients that do not take tickets. At max_sessions
 * entries or max_bytes bytes of session data, the oldest entries go first.
 * A connection that ends with a fatal alert is removed from it (RFC 5246
 * §7.2.2). max_sessions 0 turns it off; max_bytes 0 and lifetime 0 keep
 * the current values.
 * Errors: SOTLS_ERR_INVALID_ARGUMENT (a client configuration),
 * SOTLS_ERR_BAD_STATE (in use).
 */
SOTLS_API int sotls_config_set_session_cache(struct sotls_config *cfg, size_t max_sessions,
					     size_t max_bytes, unsigned lifetime);

/*
 * Server: an external session store instead of the built-in cache (shared
 * across processes, e.g. in memcached): the three callbacks are called on
 * the handshake's thread, with the session ID (1 to 32 bytes) as the key.
 *  - put stores len bytes of data (opaque, versioned; they hold the
 *    session's master secret, so keep them as secret as the server's key)
 *    for lifetime seconds; its result is ignored.
 *  - get copies the session stored under id into buf (cap bytes, always
 *    enough for a session sotls stored) and returns its length; 0 (or a
 *    negative value, or more than cap) means none: a full handshake.
 *  - del forgets id (a connection that failed with a fatal alert).
 * NULL put and get return to the built-in cache. Errors:
 * SOTLS_ERR_INVALID_ARGUMENT (a client configuration, or only one of put
 * and get), SOTLS_ERR_BAD_STATE (in use).
 */
typedef void (*sotls_session_put_fn)(void *arg, const uint8_t *id, size_t id_len,
				     const uint8_t *data, size_t len, unsigned lifetime);
typedef ssize_t (*sotls_session_get_fn)(void *arg, const uint8_t *id, size_t id_len, uint8_t *buf,
					size_t cap);
typedef void (*sotls_session_del_fn)(void *arg, const uint8_t *id, size_t id_len);
SOTLS_API int sotls_config_set_session_store(struct sotls_config *cfg, sotls_session_put_fn put,
					     sotls_session_get_fn get, sotls_session_del_fn del,
					     void *arg);

/*
 * Session tickets (RFC 5077), on by default on both sides. A server issues
 * tickets valid for lifetime seconds (default 7200; 0 keeps the current
 * value) to clients that ask, sealed with AES-256-GCM under a ticket key; a
 * client offers them. enable 0 turns them off (a server then neither issues
 * nor accepts them). Error: SOTLS_ERR_BAD_STATE (in use).
 */
SOTLS_API int sotls_config_set_session_tickets(struct sotls_config *cfg, int enable,
					       unsigned lifetime);

/*
 * A ticket key: name is sent in the clear at the start of every ticket it
 * seals (so a server knows which key opens it); secret is the AES-256-GCM
 * key. From intro on (Unix seconds), a key may issue tickets; the newest
 * such key does. Until expiry it opens them; expiry 0: no end. A ticket
 * is refused (a full handshake) once its key expired, or once it is older
 * than the ticket lifetime.
 */
struct sotls_ticket_key {
	uint8_t name[16];
	uint8_t secret[32];
	int64_t intro;
	int64_t expiry;
};

/*
 * Server ticket keys. With none of the three calls below, a server makes
 * its own: a random key at the first handshake and a new one every
 * rotate_every seconds (sotls_config_set_ticket_rotation, default 3600);
 * each one issues until the next arrives and opens tickets for a ticket
 * lifetime longer. Those keys are in this process alone, so a ticket made
 * here opens nowhere else and not after a restart.
 *
 * A fleet (every process of a server, every machine behind a load
 * balancer) gives all its servers the same keys:
 *  - sotls_config_add_ticket_key adds one (a copy; at any time, from any
 *    thread, also while connections use cfg). Keys past their expiry are
 *    wiped and dropped.
 *  - sotls_config_set_ticket_key_file reads a key file (the format of
 *    sotls_ticket_key_file_read) now, and again whenever the file changes
 *    (checked at most once a second, at a handshake): the cron job that
 *    rotates the file (examples/sotls-ticket-keys) rotates the fleet. A
 *    later read that fails keeps the keys read before.
 *  - sotls_config_set_ticket_key_callback asks fn: with name NULL for the
 *    key to issue a ticket with (fill all of *key, return 1; 0: issue no
 *    ticket), with a name for the key of that name (fill *key, return 1;
 *    0: unknown or retired, a full handshake). A negative return counts as
 *    0. fn runs on the handshake's thread and must be thread-safe.
 * Any of them replaces the automatic keys. Keys sotls holds are wiped when
 * they expire and when cfg is freed. Errors: SOTLS_ERR_INVALID_ARGUMENT (a
 * client configuration, NULL), SOTLS_ERR_TICKET_KEYS (the file),
 * SOTLS_ERR_SYSCALL (the file cannot be read; errno), SOTLS_ERR_BAD_STATE
 * (the file or callback on a configuration in use).
 */
SOTLS_API int sotls_config_add_ticket_key(struct sotls_config *cfg,
					  const struct sotls_ticket_key *key);
SOTLS_API int sotls_config_set_ticket_key_file(struct sotls_config *cfg, const char *path);
typedef int (*sotls_ticket_key_fn)(void *arg, const uint8_t *name, struct sotls_ticket_key *key);
SOTLS_API int sotls_config_set_ticket_key_callback(struct sotls_config *cfg,
						   sotls_ticket_key_fn fn, void *arg);
SOTLS_API int sotls_config_set_ticket_rotation(struct sotls_config *cfg, unsigned rotate_every);

/*
 * Ticket key files, for a fleet. A text file, newest key first, one key a
 * line, fields separated by one space:
 *   <name: 32 lowercase hex digits> <secret: 64 lowercase hex digits> <intro> <expiry>
 * intro and expiry in decimal Unix seconds (expiry 0: none, else after
 * intro); names unique. Lines starting with '#' and empty lines are
 * ignored; at most SOTLS_TICKET_KEYS_MAX keys. The file must be a regular
 * file, not a symbolic link (its last component is opened without
 * following one: point the configuration at the real file), owned by the
 * effective user or by root, and not readable or writable by group or
 * others: whoever can write it mints tickets that resume as any peer. One
 * bad line refuses the whole file (a server then keeps the keys it had).
 * sotls_ticket_key_file_read fills keys[0 .. *n) (keys has room for max);
 * errors: SOTLS_ERR_INVALID_ARGUMENT (NULL, an empty path, max 0),
 * SOTLS_ERR_SYSCALL (errno), SOTLS_ERR_TICKET_KEYS with errno saying why:
 * EPERM (group or others may read or write it, or another user owns it),
 * EINVAL (not a regular file, a symbolic link, or a malformed line), EEXIST (a key name twice), E2BIG (more keys
 * than max or the maximum), ENODATA (no key). sotls_config_set_ticket_key_file
 * leaves the same errno.
 * sotls_ticket_key_file_write replaces path atomically (a new file in the
 * same directory, mode 0600, synced, renamed over the old one, the
 * directory synced); on failure the old file is untouched. Errors:
 * SOTLS_ERR_INVALID_ARGUMENT (n 0 or above the maximum, an empty path,
 * negative times, expiry not after intro, a name twice), SOTLS_ERR_SYSCALL
 * (errno; if only the directory's sync failed, the file is replaced).
 */
#define SOTLS_TICKET_KEYS_MAX 64
SOTLS_API int sotls_ticket_key_file_read(const char *path, struct sotls_ticket_key *keys,
					 size_t max, size_t *n);
SOTLS_API int sotls_ticket_key_file_write(const char *path, const struct sotls_ticket_key *keys,
					  size_t n);

/*
 * Client: the session of a completed handshake as opaque, versioned bytes,
 * to resume later (in this process or another) with sotls_conn_set_session.
 * They hold the session's master secret: keep them like a private key.
 * Writes up to cap bytes into buf and the length into *len; with buf NULL
 * or cap too small, only *len (SOTLS_ERR_BUFFER_TOO_SMALL). Errors:
 * SOTLS_ERR_BAD_STATE (no completed handshake, or a server),
 * SOTLS_ERR_NOT_RESUMABLE.
 */
SOTLS_API int sotls_conn_get_session(const struct sotls_conn *c, void *buf, size_t cap,
				     size_t *len);

/*
 * Client, before the handshake: offer this session (bytes from
 * sotls_conn_get_session). It is offered only to the server name it was
 * made for and while it is valid (the ticket's lifetime, or the server's
 * if it gave none, at most a day), and only under the trust it was made
 * with (see the rules above); otherwise the handshake is a full one, as it
 * is when the server does not take it. The bytes are checked as untrusted
 * input: SOTLS_ERR_SESSION for anything that is not a session of this
 * sotls version, an issue time that is negative or in the future (beyond a
 * minute of clock skew), or a lifetime over a week. Other errors:
 * SOTLS_ERR_BAD_STATE (a server, or after the handshake started),
 * SOTLS_ERR_OUT_OF_MEMORY.
 */
SOTLS_API int sotls_conn_set_session(struct sotls_conn *c, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SOTLS_H */

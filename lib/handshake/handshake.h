/*
 * The handshake side of sotls: the shared configuration, the cipher suite
 * table, the TLS 1.2 PRF and key block, and the mbedTLS glue that runs one
 * handshake on a socket and hands over keys and sequence numbers.
 */
#ifndef SOTLS_HANDSHAKE_H
#define SOTLS_HANDSHAKE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "aead.h"
#include "record.h"
#include "resume.h"
#include "rsa.h"
#include "sotls.h"
#include "wire.h"

/* ---- suites ---- */

enum sotls_prf_md {
	SOTLS_PRF_SHA256 = 1,
	SOTLS_PRF_SHA384 = 2,
};

struct sotls_suite {
	uint16_t id;
	const char *iana;
	const char *openssl;
	enum sotls_aead_alg alg;
	enum sotls_prf_md prf;
};

#define SOTLS_MAX_SUITES 8

/* The suite with this IANA number, or NULL if sotls does not support it. */
const struct sotls_suite *sotls_suite_by_id(uint16_t id);

/*
 * Parses a suite list (see sotls_config_set_suites) into ids, zero
 * terminated, without duplicates. Returns 0 or SOTLS_ERR_UNKNOWN_SUITE.
 */
int sotls_suites_parse(const char *list, int ids[SOTLS_MAX_SUITES + 1]);

/* ---- the TLS 1.2 PRF (RFC 5246 section 5) ---- */

/* out = PRF(secret, label, seed)[0 .. out_len). Returns 0 or SOTLS_ERR_INTERNAL. */
int sotls_tls12_prf(enum sotls_prf_md md, const uint8_t *secret, size_t secret_len,
		    const char *label, const uint8_t *seed, size_t seed_len, uint8_t *out,
		    size_t out_len);

/* The AEAD key block (RFC 5246 6.3; no MAC keys for AEAD suites). */
struct sotls_key_block {
	uint8_t client_key[SOTLS_AEAD_MAX_KEY_LEN];
	uint8_t server_key[SOTLS_AEAD_MAX_KEY_LEN];
	uint8_t client_salt[SOTLS_REC_SALT];
	uint8_t server_salt[SOTLS_REC_SALT];
	size_t key_len;
};

/*
 * key_block = PRF(master_secret, "key expansion", server_random +
 * client_random), split into client key, server key, client salt, server
 * salt. Returns 0 or SOTLS_ERR_INTERNAL.
 */
int sotls_derive_key_block(const struct sotls_suite *suite, const uint8_t master[48],
			   const uint8_t client_random[32], const uint8_t server_random[32],
			   struct sotls_key_block *kb);

/* ---- the shared configuration ---- */

struct sotls_config {
	atomic_int refs;
	atomic_bool frozen;
	enum sotls_role role;
	enum sotls_verify verify;
	enum sotls_ktls_policy ktls;
	enum sotls_sendfile_mode sendfile_mode;
	char *server_name;
	int suites[SOTLS_MAX_SUITES + 1];

	bool have_ca;
	mbedtls_x509_crt ca;

	/* The mbedTLS configuration every connection of this one shares,
	 * made once when the first connection freezes it. */
	pthread_mutex_t build_lock;
	atomic_bool built;
	int build_err;
	mbedtls_ssl_config conf;
	/* Records per key and direction; 0: SOTLS_REC_DEFAULT_KEY_LIMIT. */
	uint64_t key_usage_limit;

	/* ALPN (alpn.c): the protocols, most preferred first, NULL-terminated
	 * (mbedTLS's form, for a client); a server's policy and callback, of
	 * one form or the other (at most one of the two is set). */
	char **alpn;
	enum sotls_alpn_policy alpn_policy;
	sotls_alpn_select_cb alpn_cb;
	sotls_alpn_select_conn_cb alpn_conn_cb;
	void *alpn_cb_arg;

	/* Own certificates (certs.c), index 0 the default; how a server picks
	 * one per handshake (cert_select.c). */
	struct sotls_cert_entry *certs;
	size_t n_certs;
	enum sotls_sni_policy sni_policy;
	sotls_sni_cb sni_cb;
	void *sni_cb_arg;
	sotls_cert_select_cb select_cb;
	void *select_cb_arg;

	/* Revocation, key passwords and the verify callback (keys.c,
	 * verify.c). */
	bool have_crl;
	mbedtls_x509_crl crl;
	char *key_password; /* NUL-terminated copy, wiped when replaced */
	sotls_password_fn password_fn;
	void *password_arg;
	sotls_verify_fn verify_fn;
	void *verify_arg;

	/* sotls_config_set_max_fragment_length: 0 or 512 ... 4096. */
	uint16_t max_frag_len;

	/* sotls_config_set_keylog (keylog.c); NULL: none. */
	sotls_keylog_cb keylog_cb;
	void *keylog_arg;

	/* sotls_config_set_log (log.c); NULL: none. */
	sotls_log_cb log_cb;
	void *log_arg;

	/* Session cache, store and tickets (resume.c). */
	struct sotls_resume_config resume;

	/* Why the last setter that loads a file or key material failed, for
	 * sotls_config_error_detail: the input and the reason. */
	char detail[320];
};

/* A chain and its key (sotls.h). Parsed once, shared by every connection
 * on every thread: mbedTLS's THREADING_C guards the state RSA keeps in the
 * key (blinding). */
struct sotls_cert {
	atomic_int refs;
	mbedtls_x509_crt chain;
	/* Parsed once, shared by every connection on every thread: mbedTLS's
	 * THREADING_C guards the state RSA keeps in the key (blinding). An RSA
	 * key sotls's RSA code takes is an "RSA alt" context signing with rsa
	 * (rsa_key.c), whose lock guards its blinding. */
	mbedtls_pk_context key;
	struct sotls_rsa_key *rsa;
	/* A certificate made by sotls_cert_new_external: key holds the leaf's
	 * public key only, and method signs (private_key.c). NULL otherwise. */
	const struct sotls_private_key_method *method;
	void *method_arg;
};

/* A certificate of a configuration and the host names it serves: lower
 * case, "*." + name for a wildcard. */
struct sotls_cert_entry {
	struct sotls_cert *cert;
	char **names;
	size_t n_names;
};

void sotls_cert_ref(struct sotls_cert *cert);
void sotls_certs_free(struct sotls_config *cfg);
/* Puts cfg's certificates into conf (all of them, default first, for a
 * server: what mbedTLS picks from without SNI) and, on a server, the
 * per-handshake choice (cert_select.c). Returns 0 or a sotls code. */
int sotls_certs_configure(struct sotls_config *cfg, mbedtls_ssl_config *conf);

void sotls_alpn_free(struct sotls_config *cfg);

/* Tells cfg's log callback of event, with a line made from fmt (log.c);
 * callers go through SOTLS_LOG, which costs one pointer test when the
 * configuration has no callback and then evaluates no argument. */
void sotls_log_emit(const struct sotls_config *cfg, const struct sotls_conn *c,
		    enum sotls_log_event event, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define SOTLS_LOG(cfg, c, event, ...)                                          \
	do {                                                                   \
		if ((cfg)->log_cb != NULL)                                     \
			sotls_log_emit((cfg), (c), (event), __VA_ARGS__);      \
	} while (0)

/* 0 if cfg may still be changed, else SOTLS_ERR_INVALID_ARGUMENT (NULL)
 * or SOTLS_ERR_BAD_STATE (in use). */
int sotls_config_writable(struct sotls_config *cfg);
/* The same for a setter that only a server configuration has:
 * SOTLS_ERR_INVALID_ARGUMENT on a client's. */
int sotls_config_server_writable(struct sotls_config *cfg);

/*
 * Records why a setter failed (sotls_config_error_detail) and returns rc.
 * fmt names the input (a path, or "the CA certificates") and the reason;
 * cfg NULL records nothing.
 */
int sotls_config_fail(struct sotls_config *cfg, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An mbedTLS result in words: mbedTLS's own text for a negative one, the
 * count of PEM certificates that did not parse for a positive one (what
 * mbedtls_x509_crt_parse returns), or why a file held nothing. */
void sotls_mbed_reason(int mrc, char *out, size_t n);

/* The input helpers config.c and certs.c share. read_file: a whole file
 * (NULL on failure, errno set). parse_certs: PEM or DER certificates added
 * to crt; mbedTLS's result (0: all parsed). */
uint8_t *sotls_read_file(const char *path, size_t *len);
/* A whole file at path for a setter: the bytes, or NULL with cfg's detail
 * and *rc (load_err) set: the path and errno's text, or that it is empty. */
uint8_t *sotls_config_read(struct sotls_config *cfg, const char *path, int load_err, int *rc,
			   size_t *len);
/* A setter's file variant: path read whole and given to load_mem; load_err
 * if it cannot be read or is empty. A failure's detail names the path. */
int sotls_config_load_file(struct sotls_config *cfg, const char *path, int load_err,
			   int (*load_mem)(struct sotls_config *, const void *, size_t));
uint8_t *sotls_copy_input(const void *data, size_t len, size_t *out_len);
int sotls_parse_certs(mbedtls_x509_crt *crt, const void *data, size_t len);

/* Makes cfg read-only, builds its mbedTLS configuration the first time and
 * takes a reference. Returns 0, or the build's error (no reference taken). */
int sotls_config_use(struct sotls_config *cfg);

/* Parses a private key (PEM or DER, as copy_input leaves it) with cfg's
 * password or password callback (keys.c); cfg NULL: no password. Returns
 * 0, SOTLS_ERR_KEY_PASSWORD, SOTLS_ERR_UNSUPPORTED or SOTLS_ERR_KEY_LOAD,
 * with the reason in why (n bytes). */
int sotls_parse_key(const struct sotls_config *cfg, mbedtls_pk_context *pk, const uint8_t *key,
		    size_t len, char *why, size_t n);
/* Wipes and drops the key password and the password callback. */
void sotls_config_forget_password(struct sotls_config *cfg);

/*
 * If pk is an RSA key sotls's RSA code takes (rsa.h: 2048, 3072, 4096 bits,
 * balanced primes), turns pk into an mbedTLS RSA-alt context that signs with
 * it and sets *own, to be freed with sotls_rsa_key_free after pk; any other
 * key stays as it is (*own NULL). Returns 0, SOTLS_ERR_KEY_LOAD or
 * SOTLS_ERR_OUT_OF_MEMORY (pk unchanged on failure).
 */
int sotls_pk_own_rsa(mbedtls_pk_context *pk, struct sotls_rsa_key **own);

/* Server: mbedTLS's asynchronous private-key hooks on conf, which sign
 * for the certificates of sotls_cert_new_external and leave every other
 * one to its own key (private_key.c). */
void sotls_private_key_configure(mbedtls_ssl_config *conf);

/* mbedTLS's RNG callback: getrandom(2). */
int sotls_os_random(void *ctx, unsigned char *out, size_t len);

#ifdef SOTLS_TEST_SEAMS
/* Test seam (the live handshake fuzzer; test builds only): every
 * handshake's randomness from rng instead of the OS; NULL restores
 * getrandom. Not thread-safe. */
void sotls_hs_set_test_rng(int (*rng)(void *, unsigned char *, size_t), void *ctx);
#endif

/* ---- one handshake ---- */

struct sotls_hs;

/* What a finished handshake hands to the record layer. */
struct sotls_hs_result {
	const struct sotls_suite *suite;
	struct sotls_key_block kb;
	uint64_t client_seq; /* next sequence number of the client's records */
	uint64_t server_seq;
	/* What sotls_info shows (malloc'ed, NULL if none; the connection owns
	 * them from here on), and the server's certificate index. */
	char *alpn;
	char *server_name;
	int cert_index;
	/* The peer's verified chain, subject and SANs (peer_identity.h): the
	 * connection owns it from here; NULL if the peer sent no certificate. */
	struct sotls_peer *peer;
	uint16_t max_frag_len; /* negotiated (RFC 6066 §4), 0 if none */
	enum sotls_resumption resumed;
	/* Server: the session ID the cache has this session under (for its
	 * removal after a fatal alert), sid_len 0 if none. Client: the
	 * session's state without the peer (resume.h; malloc'ed, NULL if it
	 * cannot be resumed). */
	uint8_t sid[32];
	uint8_t sid_len;
	uint8_t *session;
	size_t session_len;
};

/* Sets up mbedTLS for one connection (conn: what the key log and verify
 * callbacks are shown; wire: the connection's, which outlives this).
 * Returns 0 or a negative code, with a message in detail. */
int sotls_hs_new(struct sotls_hs **out, struct sotls_config *cfg, struct sotls_conn *conn,
		 struct sotls_wire *wire, const char *server_name, char *detail,
		 size_t detail_len);

/*
 * An engine connection's bytes during the handshake. In: where received
 * ciphertext goes, at most *cap bytes (never past the record the reader is
 * reading: nothing after the peer's Finished); NULL, *cap 0 while the
 * handshake is not waiting to read; then n bytes written there (0 or
 * SOTLS_ERR_INVALID_ARGUMENT). Out: our records not yet sent (NULL, *len 0:
 * none), and n of them taken.
 */
uint8_t *sotls_hs_in_space(struct sotls_hs *hs, size_t *cap);
/* The answer to a pending certificate selection (sotls_conn_set_cert). */
int sotls_hs_set_cert(struct sotls_hs *hs, struct sotls_cert *cert);
int sotls_hs_in_added(struct sotls_hs *hs, size_t n);
const uint8_t *sotls_hs_out(const struct sotls_hs *hs, size_t *len);
int sotls_hs_out_taken(struct sotls_hs *hs, size_t n);

/* The peer's chain once it has been verified, before the handshake hands
 * it over (for the accessors during the verify callback); NULL before. */
const struct sotls_peer *sotls_hs_peer(const struct sotls_hs *hs);

/*
 * Advances the handshake: 0 when complete (res filled, mbedTLS's state
 * freed and its secrets wiped), SOTLS_WANT_READ/WRITE, or a failure code
 * with a message in detail and errno kept for SOTLS_ERR_SYSCALL.
 */
int sotls_hs_step(struct sotls_hs *hs, struct sotls_hs_result *res, char *detail,
		  size_t detail_len, int *sys_errno);

/* After a failed step: the fatal alert the peer sent, or -1 (sotls_info's
 * peer_alert for a handshake the peer ended). */
int sotls_hs_peer_alert(const struct sotls_hs *hs);

/* Client, after sotls_hs_new: offers the session in state (see
 * sotls_conn_set_session); one that does not qualify is not offered.
 * Returns 0 or SOTLS_ERR_OUT_OF_MEMORY / SOTLS_ERR_INTERNAL. */
int sotls_hs_offer_session(struct sotls_hs *hs, const uint8_t *state, size_t len);

/* Frees and wipes. NULL is ignored. */
void sotls_hs_free(struct sotls_hs *hs);

/* Frees what a completed handshake's result owns (names, the peer's chain)
 * and wipes it: for a caller that does not hand it to a connection. */
void sotls_hs_result_release(struct sotls_hs_result *res);

#endif

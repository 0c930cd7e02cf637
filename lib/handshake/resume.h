/*
 * Session resumption inside sotls: the bytes a session is kept as
 * (session_state.c), the server's built-in cache (session_cache.c), its
 * ticket keys and the sealing of tickets (ticket_keys.c), and the mbedTLS
 * glue that applies the rules of sotls.h's "Session resumption" (resume.c).
 */
#ifndef SOTLS_RESUME_H
#define SOTLS_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <mbedtls/ssl.h>

#include "sotls.h"

struct sotls_config;
struct sotls_hs;
struct sotls_peer;

/* ---- the session's bytes (session_state.c) ---- */

/*
 * One session as sotls keeps it, on a server (cache entry, ticket
 * plaintext) and on a client (sotls_conn_get_session), in one versioned
 * layout:
 *   "STLS" | version 2 | role | suite (2) | issued (8, Unix s) |
 *   lifetime (4, s) | context (32) | sni_len (1) | sni | peer_len (4) | peer |
 *   mbed_len (4) | mbed
 * context is the digest of what verified the peer (session_context.c), peer
 * the verified identity (sotls_peer_save), mbed mbedTLS's own session
 * (mbedtls_ssl_session_save, which carries its own version check).
 * Decoding points into the input; nothing is copied. Version 1 had no
 * context: such a session is refused, so it costs one full handshake.
 */
#define SOTLS_SESSION_VERSION 2
#define SOTLS_SESSION_ROLE_CLIENT 0
#define SOTLS_SESSION_ROLE_SERVER 1
/* The largest state sotls makes: a ten-certificate chain of 16 KiB each
 * does not fit, so such a session is not kept. */
#define SOTLS_SESSION_MAX 16384u
#define SOTLS_SESSION_CONTEXT_LEN 32
/* A client session whose ticket came without a lifetime hint, or a session
 * ID, is offered for at most this long (RFC 5077 §3.3: a hint of 0 means
 * "unspecified"); a hint is capped at a week (RFC 8446 §4.6.1's bound, the
 * one later TLS set), and so is any client session sotls decodes. */
#define SOTLS_SESSION_CLIENT_DEFAULT_LIFETIME 86400u
#define SOTLS_SESSION_CLIENT_MAX_LIFETIME 604800u

struct sotls_session_state {
	uint8_t role;
	uint16_t suite;
	int64_t issued; /* never negative once decoded */
	uint32_t lifetime;
	uint8_t context[SOTLS_SESSION_CONTEXT_LEN];
	char sni[256]; /* "" if none */
	const uint8_t *peer;
	size_t peer_len;
	const uint8_t *mbed;
	size_t mbed_len;
};

size_t sotls_session_state_size(const struct sotls_session_state *st);
/* Writes sotls_session_state_size(st) bytes. */
void sotls_session_state_encode(const struct sotls_session_state *st, uint8_t *out);
/* 0, or SOTLS_ERR_SESSION for anything that is not exactly one state of
 * this version: a negative issue time, or a client session that claims
 * more than SOTLS_SESSION_CLIENT_MAX_LIFETIME, included. */
int sotls_session_state_decode(struct sotls_session_state *st, const uint8_t *in, size_t len);
/* True if the session was issued after now, beyond the clock skew a fleet
 * is allowed. */
bool sotls_session_state_from_future(const struct sotls_session_state *st, int64_t now);
/* True while now is in [issued, issued + lifetime), give or take that
 * skew at the start. */
bool sotls_session_state_fresh(const struct sotls_session_state *st, int64_t now);

/* ---- the built-in cache (session_cache.c) ---- */

/*
 * A hash table of session IDs with a list in order of insertion: the oldest
 * entry is the first to expire (one lifetime for all) and the first evicted
 * at max_sessions entries or max_bytes bytes of data. One mutex: a lookup
 * is a hash and a copy. Entries are wiped when they go.
 */
struct sotls_session_cache;

struct sotls_session_cache *sotls_session_cache_new(size_t max_sessions, size_t max_bytes);
void sotls_session_cache_free(struct sotls_session_cache *cache);
/* The store callbacks of sotls.h over the built-in cache (arg: the cache). */
void sotls_session_cache_put(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
			     size_t len, unsigned lifetime);
ssize_t sotls_session_cache_get(void *arg, const uint8_t *id, size_t id_len, uint8_t *buf,
				size_t cap);
void sotls_session_cache_del(void *arg, const uint8_t *id, size_t id_len);
/* Entries and data bytes held now (for tests). */
void sotls_session_cache_usage(struct sotls_session_cache *cache, size_t *sessions,
			       size_t *bytes);
#ifdef SOTLS_TEST_SEAMS
/* Test seam (test builds only): the clock the cache and tickets read
 * (NULL: time(2)). */
void sotls_resume_set_test_clock(int64_t (*now)(void));
#endif
int64_t sotls_resume_now(void);

/* ---- ticket keys and tickets (ticket_keys.c) ---- */

/* RFC 5077 §4's layout with an AEAD: key_name (16) | nonce (12) |
 * AES-256-GCM(state) | tag (16), the key name as additional data. */
#define SOTLS_TICKET_OVERHEAD (16 + 12 + 16)

struct sotls_ticket_keyring;

/* A key's times as every source must give them (ticket_keyfile.c): not
 * negative, and an expiry (0: none) after intro. */
bool sotls_ticket_key_times_ok(const struct sotls_ticket_key *k);

struct sotls_ticket_keyring *sotls_ticket_keyring_new(void);
void sotls_ticket_keyring_free(struct sotls_ticket_keyring *ring);
/* The ticket lifetime (keys made automatically open tickets that long
 * after they stop issuing) and the automatic rotation period. */
void sotls_ticket_keyring_set_times(struct sotls_ticket_keyring *ring, unsigned lifetime,
				    unsigned rotate_every);
int sotls_ticket_keyring_add(struct sotls_ticket_keyring *ring, const struct sotls_ticket_key *k);
int sotls_ticket_keyring_set_file(struct sotls_ticket_keyring *ring, const char *path);
/* Where a failed re-read of the key file is told (one line, without a
 * newline), once per reason: the file is looked at every second while it
 * stays broken. */
void sotls_ticket_keyring_set_report(struct sotls_ticket_keyring *ring,
				     void (*report)(void *ctx, const char *line), void *ctx);
/* The refusal SOTLS_ERR_TICKET_KEYS's errno e stands for, in words
 * (ticket_keyfile.c). */
const char *sotls_ticket_key_refusal(int e);
void sotls_ticket_keyring_set_callback(struct sotls_ticket_keyring *ring, sotls_ticket_key_fn fn,
				       void *arg);
/*
 * Seals len bytes of state into out (room for len + SOTLS_TICKET_OVERHEAD)
 * under the issuing key; *hint is the lifetime hint (RFC 5077 §3.3): the
 * ticket lifetime, or less if the key expires sooner. Returns 0, or
 * SOTLS_ERR_TICKET_KEYS when no key may issue now.
 */
int sotls_ticket_seal(struct sotls_ticket_keyring *ring, const uint8_t *state, size_t len,
		      uint8_t *out, uint32_t *hint);
/*
 * Opens a ticket into out (room for len - SOTLS_TICKET_OVERHEAD bytes):
 * *state_len is set, and *renew when the key that opened it no longer
 * issues. Returns 0, or SOTLS_ERR_SESSION (unknown or expired key, too
 * short, failed authentication: out is then zero).
 */
int sotls_ticket_open(struct sotls_ticket_keyring *ring, const uint8_t *ticket, size_t len,
		      uint8_t *out, size_t *state_len, bool *renew);

/* ---- the handshake's side (resume.c) ---- */

/* What a configuration does about resumption, set before it is frozen. */
struct sotls_resume_config {
	bool tickets;		/* issue/accept (server), offer (client) */
	unsigned ticket_lifetime;
	unsigned rotate_every;	/* automatic ticket keys */
	bool cache_on;		/* server: look up session IDs */
	size_t cache_sessions, cache_bytes;
	unsigned cache_lifetime;
	sotls_session_put_fn put;
	sotls_session_get_fn get;
	sotls_session_del_fn del;
	void *store_arg;	/* the cache, or the application's */
	struct sotls_session_cache *cache; /* the built-in one, made at build */
	struct sotls_ticket_keyring *keys; /* server */
	/* sotls_config_set_session_context's bytes, and the digest every
	 * session of this configuration records and is resumed against,
	 * computed at build (session_context.c). */
	uint8_t app_context[SOTLS_SESSION_CONTEXT_MAX];
	uint8_t app_context_len;
	uint8_t context[SOTLS_SESSION_CONTEXT_LEN];
};

/* The defaults; a server's ticket keyring. 0 or SOTLS_ERR_OUT_OF_MEMORY. */
int sotls_resume_config_init(struct sotls_resume_config *rc, bool server);
void sotls_resume_config_free(struct sotls_resume_config *rc);
/* At build, once the trust is set: cfg->resume.context (session_context.c).
 * 0 or SOTLS_ERR_OUT_OF_MEMORY. */
int sotls_session_context_compute(struct sotls_config *cfg);
/* At build: the context, the cache (if built in) and mbedTLS's callbacks. */
int sotls_resume_configure(struct sotls_config *cfg, mbedtls_ssl_config *conf);

/* The handshake being stepped on this thread: mbedTLS's cache and ticket
 * callbacks are given only the configuration, and the rules need it. */
void sotls_resume_enter(struct sotls_hs *hs);
void sotls_resume_leave(void);

/* Client, at set-up: offers the session bytes if their rules allow (a
 * session that does not qualify is quietly not offered). Returns 0 or
 * SOTLS_ERR_OUT_OF_MEMORY / SOTLS_ERR_INTERNAL. */
int sotls_resume_offer(struct sotls_hs *hs, const uint8_t *state, size_t len);
/* After each mbedTLS step that changed the state from state_before: the
 * rules once a hello is in (server: after the ClientHello, before the
 * ServerHello is written, and after the ServerHello; client: after the
 * ServerHello). Returns 0 or the sotls_hs_fail code. */
int sotls_resume_after_step(struct sotls_hs *hs, int state_before);
/* A failed handshake: a session it stored leaves the store (RFC 5246
 * §7.2.2). */
void sotls_resume_failed(struct sotls_hs *hs);
/* Client, at the end of a handshake: the session without its peer (the
 * connection keeps that) into *out (malloc'd; NULL if not resumable). */
int sotls_resume_client_state(struct sotls_hs *hs, uint8_t **out, size_t *len);

/* The verified identity as bytes (NULL out: measure) and back. */
size_t sotls_peer_save(const struct sotls_peer *p, uint8_t *out);
struct sotls_peer *sotls_peer_load(const uint8_t *in, size_t len);

#endif

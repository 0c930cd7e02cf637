/*
 * Session resumption through mbedTLS 3.6 (RFC 5246 §7.3, RFC 5077), with
 * the rules of sotls.h's "Session resumption" that mbedTLS does not apply:
 * - mbedTLS does not record the extended master secret in a session, so
 *   sotls keeps only sessions that had it (RFC 7627 §5.3) and checks the
 *   new hellos for it;
 * - it resumes a ticket under whatever suite it picks afresh, so a ticket
 *   whose suite is not that one is turned into a full handshake;
 * - it keeps neither the SNI name nor sotls's view of the peer in a
 *   session, so they go into sotls's own session bytes (session_state.c)
 *   around mbedTLS's.
 * mbedTLS's cache and ticket callbacks get only the configuration; the
 * handshake they serve is the one this thread is stepping (resume_enter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ssl.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"
#include "peer_identity.h"
#include "resume.h"
#include "util.h"

static _Thread_local struct sotls_hs *tl_hs;

void sotls_resume_enter(struct sotls_hs *hs)
{
	tl_hs = hs;
}

void sotls_resume_leave(void)
{
	tl_hs = NULL;
}

/* ---- configuration ---- */

int sotls_resume_config_init(struct sotls_resume_config *rc, bool server)
{
	*rc = (struct sotls_resume_config){
		.tickets = true,
		.ticket_lifetime = 7200,
		.rotate_every = 3600,
		.cache_on = server,
		.cache_sessions = 20480,
		.cache_bytes = 8u << 20,
		.cache_lifetime = 7200,
	};
	if (server && (rc->keys = sotls_ticket_keyring_new()) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	return 0;
}

void sotls_resume_config_free(struct sotls_resume_config *rc)
{
	sotls_session_cache_free(rc->cache);
	sotls_ticket_keyring_free(rc->keys);
	rc->cache = NULL;
	rc->keys = NULL;
}

/* ---- sotls's session bytes ---- */

/*
 * session's state: mbedTLS's bytes, the peer's identity (NULL: none), the
 * name, into *out (malloc'd). A session too large to keep is
 * SOTLS_ERR_NOT_RESUMABLE.
 */
static int make_state(const struct sotls_hs *hs, const mbedtls_ssl_session *session, uint8_t role,
		      int64_t issued, uint32_t lifetime, const struct sotls_peer *peer,
		      uint8_t **out, size_t *out_len)
{
	size_t mlen = 0;
	if (mbedtls_ssl_session_save(session, NULL, 0, &mlen) != MBEDTLS_ERR_SSL_BUFFER_TOO_SMALL)
		return SOTLS_ERR_INTERNAL;
	size_t plen = peer != NULL ? sotls_peer_save(peer, NULL) : 0;
	struct sotls_session_state st = {.role = role,
					 .suite = (uint16_t)sotls_mbed_session_suite(session),
					 .issued = issued,
					 .lifetime = lifetime,
					 .peer_len = plen,
					 .mbed_len = mlen};
	memcpy(st.context, hs->cfg->resume.context, sizeof(st.context));
	snprintf(st.sni, sizeof(st.sni), "%s", hs->sni);
	size_t total = sotls_session_state_size(&st);
	if (total > SOTLS_SESSION_MAX)
		return SOTLS_ERR_NOT_RESUMABLE;
	uint8_t *scratch = malloc(mlen + plen);
	uint8_t *buf = malloc(total);
	int rc = scratch != NULL && buf != NULL ? 0 : SOTLS_ERR_OUT_OF_MEMORY;
	if (rc == 0 && mbedtls_ssl_session_save(session, scratch, mlen, &mlen) != 0)
		rc = SOTLS_ERR_INTERNAL;
	if (rc == 0) {
		if (peer != NULL)
			sotls_peer_save(peer, scratch + mlen);
		st.mbed = scratch;
		st.peer = scratch + mlen;
		sotls_session_state_encode(&st, buf);
		*out = buf;
		*out_len = total;
		buf = NULL;
	}
	if (scratch != NULL) {
		sotls_wipe(scratch, mlen + plen);
		free(scratch);
	}
	free(buf);
	return rc;
}

/* Frees what a session being considered brought along. */
static void forget_candidate(struct sotls_hs *hs)
{
	sotls_peer_free(hs->resume_peer);
	hs->resume_peer = NULL;
	hs->resume_kind = SOTLS_RESUMED_NONE;
}

/* Whether a session may carry this handshake, by the rules both sides
 * share; loads its peer into hs->resume_peer. */
static bool may_resume(struct sotls_hs *hs, const struct sotls_session_state *st, uint8_t role)
{
	const struct sotls_config *cfg = hs->cfg;
	if (st->role != role || !sotls_session_state_fresh(st, sotls_resume_now()))
		return false;
	/* A session carries its peer's identity and verdict; it carries them
	 * only into a configuration that would have reached the same verdict
	 * (the same verify mode, trust anchors, CRLs and callback, and the
	 * application's context), as OpenSSL's session ID context does. Not
	 * secret: the digest is in every session, so memcmp. */
	if (memcmp(st->context, cfg->resume.context, sizeof(st->context)) != 0) {
		SOTLS_LOG(cfg, hs->conn, SOTLS_LOG_SESSION_CONTEXT,
			  "session not resumed: it was made under another trust or session "
			  "context; a full handshake");
		return false;
	}
	/* RFC 6066 §3: a server "MUST NOT accept the request to resume the
	 * session if the server_name extension contains a different name.
	 * Instead, it proceeds with a full handshake". */
	if (strcmp(st->sni, hs->sni) != 0)
		return false;
	/* RFC 6066 §4: a negotiated length holds for the whole session, its
	 * resumptions included; sotls keeps no such session, and a hello that
	 * asks for a length gets a full handshake. */
	if (hs->mfl != 0 || cfg->max_frag_len != 0)
		return false;
	bool allowed = false;
	for (const int *id = cfg->suites; *id != 0; id++)
		allowed |= *id == st->suite;
	if (!allowed)
		return false;
	forget_candidate(hs);
	if (st->peer_len != 0 && (hs->resume_peer = sotls_peer_load(st->peer, st->peer_len)) == NULL)
		return false;
	/* The identity carries over only as far as the policy would accept it
	 * today: a side that requires a verified peer resumes only sessions
	 * whose peer was verified. */
	bool need = cfg->verify == SOTLS_VERIFY_REQUIRED || cfg->verify == SOTLS_VERIFY_CHAIN_ONLY;
	if (need && (hs->resume_peer == NULL || !hs->resume_peer->verified)) {
		forget_candidate(hs);
		return false;
	}
	return true;
}

/* A server session from st into session, if the rules allow it. */
static bool load_server(struct sotls_hs *hs, const struct sotls_session_state *st,
			mbedtls_ssl_session *session)
{
	if (!may_resume(hs, st, SOTLS_SESSION_ROLE_SERVER))
		return false;
	if (mbedtls_ssl_session_load(session, st->mbed, st->mbed_len) != 0 ||
	    sotls_mbed_session_suite(session) != st->suite) {
		forget_candidate(hs);
		return false;
	}
	hs->resume_suite = st->suite;
	hs->resume_issued = st->issued;
	return true;
}

/* ---- server: the session cache ---- */

/*
 * The session the store holds under id, decoded into st; its bytes are in
 * *buf (malloc'd, NULL if that failed), of which *used must be wiped (what
 * the store wrote), with fetched_free. False: none, or not a session.
 */
static bool cache_fetch(const struct sotls_config *cfg, const uint8_t *id, size_t id_len,
			uint8_t **buf, size_t *used, struct sotls_session_state *st)
{
	const struct sotls_resume_config *rc = &cfg->resume;
	*used = 0;
	if ((*buf = malloc(SOTLS_SESSION_MAX)) == NULL)
		return false;
	ssize_t n = rc->get(rc->store_arg, id, id_len, *buf, SOTLS_SESSION_MAX);
	if (n <= 0)
		return false;
	*used = (size_t)n < SOTLS_SESSION_MAX ? (size_t)n : SOTLS_SESSION_MAX;
	return (size_t)n <= SOTLS_SESSION_MAX && sotls_session_state_decode(st, *buf, *used) == 0;
}

static void fetched_free(uint8_t *buf, size_t used)
{
	if (buf != NULL)
		sotls_wipe(buf, used);
	free(buf);
}

static int cache_get(void *data, const unsigned char *id, size_t id_len,
		     mbedtls_ssl_session *session)
{
	struct sotls_config *cfg = data;
	struct sotls_hs *hs = tl_hs;
	if (hs == NULL || !hs->hello_ems) /* server_no_ems saw to these */
		return -1;
	uint8_t *buf;
	size_t used;
	struct sotls_session_state st;
	int rc = -1;
	if (cache_fetch(cfg, id, id_len, &buf, &used, &st) && load_server(hs, &st, session)) {
		hs->resume_kind = SOTLS_RESUMED_SESSION_ID;
		rc = 0;
	}
	fetched_free(buf, used);
	return rc;
}

/* Puts a full handshake's session in the store. */
static void cache_store(struct sotls_hs *hs, const uint8_t *id, size_t id_len,
			const mbedtls_ssl_session *session)
{
	const struct sotls_config *cfg = hs->cfg;
	if (hs->sid_len != 0 || id_len == 0 || id_len > sizeof(hs->sid) ||
	    !sotls_mbed_ems(&hs->ssl) || hs->mfl != 0)
		return; /* stored already; RFC 7627 §5.3, RFC 6066 §4: not kept */
	uint8_t *state;
	size_t len;
	if (make_state(hs, session, SOTLS_SESSION_ROLE_SERVER, sotls_resume_now(),
		       cfg->resume.cache_lifetime, hs->peer, &state, &len) != 0)
		return;
	cfg->resume.put(cfg->resume.store_arg, id, id_len, state, len, cfg->resume.cache_lifetime);
	sotls_wipe(state, len);
	free(state);
	memcpy(hs->sid, id, id_len);
	hs->sid_len = (uint8_t)id_len;
}

/* mbedTLS's own store call, at the very end: by then sotls has stored the
 * session already (sotls_resume_after_step), so this only catches a path
 * that did not. */
static int cache_set(void *data, const unsigned char *id, size_t id_len,
		     const mbedtls_ssl_session *session)
{
	(void)data;
	if (tl_hs != NULL)
		cache_store(tl_hs, id, id_len, session);
	return 0;
}

void sotls_resume_failed(struct sotls_hs *hs)
{
	const struct sotls_resume_config *rc = &hs->cfg->resume;
	if (hs->sid_len != 0 && rc->del != NULL)
		rc->del(rc->store_arg, hs->sid, hs->sid_len);
	hs->sid_len = 0;
}

/* ---- server: tickets ---- */

static int ticket_write(void *p_ticket, const mbedtls_ssl_session *session, unsigned char *start,
			const unsigned char *end, size_t *tlen, uint32_t *lifetime)
{
	struct sotls_config *cfg = p_ticket;
	struct sotls_hs *hs = tl_hs;
	*tlen = 0;
	*lifetime = 0;
	/* An error here sends an empty ticket (RFC 5077 §3.3 allows it). */
	if (hs == NULL || !sotls_mbed_ems(&hs->ssl) || hs->mfl != 0)
		return MBEDTLS_ERR_SSL_BAD_INPUT_DATA;
	/* A renewed ticket keeps the session's age: renewal must not make a
	 * session live for ever. Its peer is the session's, which the
	 * ServerHello step made hs->peer (adopt_session). */
	int64_t issued = hs->resumed != SOTLS_RESUMED_NONE ? hs->resume_issued
							   : sotls_resume_now();
	uint8_t *state;
	size_t len;
	if (make_state(hs, session, SOTLS_SESSION_ROLE_SERVER, issued, cfg->resume.ticket_lifetime,
		       hs->peer, &state, &len) != 0)
		return MBEDTLS_ERR_SSL_ALLOC_FAILED;
	int mrc = MBEDTLS_ERR_SSL_BUFFER_TOO_SMALL;
	if ((size_t)(end - start) >= len + SOTLS_TICKET_OVERHEAD && len + SOTLS_TICKET_OVERHEAD <= 65535) {
		mrc = sotls_ticket_seal(cfg->resume.keys, state, len, start, lifetime) == 0
			      ? 0
			      : MBEDTLS_ERR_SSL_INTERNAL_ERROR;
		if (mrc == 0)
			*tlen = len + SOTLS_TICKET_OVERHEAD;
	}
	sotls_wipe(state, len);
	free(state);
	return mrc;
}

static int ticket_parse(void *p_ticket, mbedtls_ssl_session *session, unsigned char *buf,
			size_t len)
{
	struct sotls_config *cfg = p_ticket;
	struct sotls_hs *hs = tl_hs;
	if (hs == NULL || len <= SOTLS_TICKET_OVERHEAD ||
	    len > SOTLS_SESSION_MAX + SOTLS_TICKET_OVERHEAD)
		return MBEDTLS_ERR_SSL_INVALID_MAC;
	size_t n = len - SOTLS_TICKET_OVERHEAD, state_len;
	uint8_t *plain = malloc(n);
	if (plain == NULL)
		return MBEDTLS_ERR_SSL_ALLOC_FAILED;
	struct sotls_session_state st;
	bool renew;
	int mrc = MBEDTLS_ERR_SSL_INVALID_MAC;
	if (sotls_ticket_open(cfg->resume.keys, buf, len, plain, &state_len, &renew) == 0 &&
	    sotls_session_state_decode(&st, plain, state_len) == 0) {
		if (!hs->hello_ems) {
			/* RFC 7627 §5.3: "If the original session used the
			 * "extended_master_secret" extension but the new
			 * ClientHello does not contain it, the server MUST abort
			 * the abbreviated handshake." */
			hs->ems_abort = true;
		} else if (load_server(hs, &st, session)) {
			hs->resume_kind = SOTLS_RESUMED_TICKET;
			hs->resume_renew = renew;
			mrc = 0;
		}
	}
	sotls_wipe(plain, n);
	free(plain);
	return mrc;
}

/* A failed re-read of the ticket key file: an event of the configuration,
 * not of the handshake that happened to look at the file. */
static void report_key_file(void *ctx, const char *line)
{
	const struct sotls_config *cfg = ctx;
	SOTLS_LOG(cfg, NULL, SOTLS_LOG_TICKET_KEY_FILE, "%s", line);
}

int sotls_resume_configure(struct sotls_config *cfg, mbedtls_ssl_config *conf)
{
	struct sotls_resume_config *rc = &cfg->resume;
	int err = sotls_session_context_compute(cfg);
	if (err != 0)
		return err;
	if (cfg->role == SOTLS_ROLE_CLIENT) {
		mbedtls_ssl_conf_session_tickets(conf, rc->tickets ? MBEDTLS_SSL_SESSION_TICKETS_ENABLED
								   : MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
		return 0;
	}
	if (rc->cache_on) {
		if (rc->get == NULL) {
			rc->cache = sotls_session_cache_new(rc->cache_sessions, rc->cache_bytes);
			if (rc->cache == NULL)
				return SOTLS_ERR_OUT_OF_MEMORY;
			rc->put = sotls_session_cache_put;
			rc->get = sotls_session_cache_get;
			rc->del = sotls_session_cache_del;
			rc->store_arg = rc->cache;
		}
		mbedtls_ssl_conf_session_cache(conf, cfg, cache_get, cache_set);
	}
	if (rc->tickets) {
		sotls_ticket_keyring_set_times(rc->keys, rc->ticket_lifetime, rc->rotate_every);
		if (cfg->log_cb != NULL)
			sotls_ticket_keyring_set_report(rc->keys, report_key_file, cfg);
		mbedtls_ssl_conf_session_tickets_cb(conf, ticket_write, ticket_parse, cfg);
	}
	return 0;
}

/* ---- the handshake's side ---- */

int sotls_resume_offer(struct sotls_hs *hs, const uint8_t *state, size_t len)
{
	struct sotls_session_state st;
	if (sotls_session_state_decode(&st, state, len) != 0 ||
	    !may_resume(hs, &st, SOTLS_SESSION_ROLE_CLIENT))
		return 0; /* not offered: a full handshake */
	mbedtls_ssl_session session;
	mbedtls_ssl_session_init(&session);
	int rc = 0;
	if (mbedtls_ssl_session_load(&session, st.mbed, st.mbed_len) != 0 ||
	    sotls_mbed_session_suite(&session) != st.suite) {
		forget_candidate(hs);
	} else {
		int mrc = mbedtls_ssl_set_session(&hs->ssl, &session);
		if (mrc == 0) {
			size_t tlen;
			uint32_t hint;
			hs->offer_ticket = sotls_mbed_session_ticket(&session, &tlen, &hint) != NULL;
			hs->resume_issued = st.issued;
			hs->offer_lifetime = st.lifetime;
		} else {
			forget_candidate(hs);
			rc = mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY
								 : SOTLS_ERR_INTERNAL;
		}
	}
	mbedtls_ssl_session_free(&session);
	return rc;
}

/* RFC 7627 §5.3: a server that finds the session of a ClientHello without
 * extended_master_secret aborts rather than resume it. */
static int server_no_ems(struct sotls_hs *hs)
{
	const struct sotls_resume_config *rc = &hs->cfg->resume;
	bool found = hs->ems_abort;
	if (!found && hs->client_sid_len != 0 && rc->cache_on && rc->get != NULL) {
		uint8_t *buf;
		size_t used;
		struct sotls_session_state st;
		found = cache_fetch(hs->cfg, hs->client_sid, hs->client_sid_len, &buf, &used, &st);
		fetched_free(buf, used);
	}
	if (found)
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "the client offered a session made with the extended master "
				     "secret in a ClientHello without it (RFC 7627 §5.3)");
	/* Nothing from this handshake could be resumed: no ticket for it. */
	sotls_mbed_set_ticket_pending(&hs->ssl, false);
	return 0;
}

static int server_after_client_hello(struct sotls_hs *hs)
{
	if (!hs->hello_ems)
		return server_no_ems(hs);
	if (!sotls_mbed_resuming(&hs->ssl))
		return 0;
	/* A ticket, taken while the ClientHello was parsed. RFC 5246
	 * §7.4.1.3: resuming, the server's cipher_suite is "the single cipher
	 * suite selected by the server ... from the list in
	 * ClientHello.cipher_suites" that the session has; mbedTLS picked
	 * afresh, so another pick means a full handshake. */
	if (sotls_mbed_negotiated_suite(&hs->ssl) != hs->resume_suite) {
		sotls_mbed_unresume(&hs->ssl);
		forget_candidate(hs);
	} else if (hs->resume_renew) {
		/* RFC 5077 §3.3: the server may renew a ticket in an
		 * abbreviated handshake; this one's key no longer issues. */
		sotls_mbed_set_ticket_pending(&hs->ssl, true);
	}
	return 0;
}

/* The peer as the session has it, once the abbreviated handshake is
 * certain. */
static void adopt_session(struct sotls_hs *hs, enum sotls_resumption kind)
{
	hs->resumed = kind;
	sotls_peer_free(hs->peer);
	hs->peer = hs->resume_peer;
	hs->resume_peer = NULL;
	hs->peer_checked = true;
}

static int client_after_server_hello(struct sotls_hs *hs)
{
	if (!sotls_mbed_resuming(&hs->ssl)) {
		forget_candidate(hs);
		return 0;
	}
	/* RFC 7627 §5.3: "If the original session used the extension but the
	 * new ServerHello does not contain the extension, the client MUST
	 * abort the handshake." */
	if (!sotls_mbed_ems(&hs->ssl))
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "the server resumed a session without the extended master "
				     "secret (RFC 7627 §5.3)");
	adopt_session(hs, hs->offer_ticket ? SOTLS_RESUMED_TICKET : SOTLS_RESUMED_SESSION_ID);
	return 0;
}

int sotls_resume_after_step(struct sotls_hs *hs, int state_before)
{
	if (!hs->server) {
		if (state_before == MBEDTLS_SSL_NEW_SESSION_TICKET)
			hs->new_ticket = true;
		if (state_before != MBEDTLS_SSL_SERVER_HELLO)
			return 0;
		hs->ems = sotls_mbed_ems(&hs->ssl);
		return client_after_server_hello(hs);
	}
	if (state_before == MBEDTLS_SSL_CLIENT_HELLO)
		return server_after_client_hello(hs);
	if (state_before == MBEDTLS_SSL_CLIENT_FINISHED && !sotls_mbed_resuming(&hs->ssl) &&
	    hs->cfg->resume.cache_on) {
		/* The session is whole once the client's Finished checks out.
		 * mbedTLS would store it only after the server's Finished has
		 * gone, and a client that comes straight back (s_client
		 * -reconnect) could then ask for it on another thread before
		 * it is there. */
		const mbedtls_ssl_session *s = sotls_mbed_session_negotiate(&hs->ssl);
		size_t id_len = 0;
		const uint8_t *id = s != NULL ? sotls_mbed_session_id(s, &id_len) : NULL;
		if (id != NULL)
			cache_store(hs, id, id_len, s);
	}
	if (state_before == MBEDTLS_SSL_SERVER_HELLO) {
		/* mbedTLS looks session IDs up while it writes the ServerHello. */
		if (sotls_mbed_resuming(&hs->ssl) && hs->resume_kind != SOTLS_RESUMED_NONE)
			adopt_session(hs, hs->resume_kind);
		else
			forget_candidate(hs);
	}
	return 0;
}

int sotls_resume_client_state(struct sotls_hs *hs, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!hs->ems || hs->mfl != 0)
		return 0;
	mbedtls_ssl_session session;
	mbedtls_ssl_session_init(&session);
	int rc = 0;
	if (mbedtls_ssl_get_session(&hs->ssl, &session) == 0) {
		size_t tlen;
		uint32_t hint;
		bool ticket = sotls_mbed_session_ticket(&session, &tlen, &hint) != NULL;
		size_t id_len;
		(void)sotls_mbed_session_id(&session, &id_len);
		if (ticket || id_len != 0) {
			uint32_t lifetime =
				hint == 0 || !ticket ? SOTLS_SESSION_CLIENT_DEFAULT_LIFETIME : hint;
			if (lifetime > SOTLS_SESSION_CLIENT_MAX_LIFETIME)
				lifetime = SOTLS_SESSION_CLIENT_MAX_LIFETIME;
			/* The same session resumed keeps its age; a new ticket
			 * starts a new one. */
			bool same = hs->resumed != SOTLS_RESUMED_NONE && !hs->new_ticket;
			rc = make_state(hs, &session, SOTLS_SESSION_ROLE_CLIENT,
					same ? hs->resume_issued : sotls_resume_now(),
					same ? hs->offer_lifetime : lifetime, NULL, out, len);
			if (rc == SOTLS_ERR_NOT_RESUMABLE)
				rc = 0;
		}
	}
	mbedtls_ssl_session_free(&session);
	return rc;
}

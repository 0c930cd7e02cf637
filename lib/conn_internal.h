/*
 * The connection's state, shared by conn.c (the fd API and the handshake)
 * and engine.c (the same connection without a socket).
 */
#ifndef SOTLS_CONN_INTERNAL_H
#define SOTLS_CONN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kconn.h"
#include "record.h"
#include "sotls.h"
#include "wire.h"

enum conn_state {
	CONN_NEW,	/* handshake not started or in progress */
	CONN_OPEN,	/* records flow */
	CONN_FAILED,	/* a fatal error; err says which */
};

/* No alert is 255 (IANA's TLS Alerts registry assigns 0-120 at most). */
#define NO_HS_ALERT 255

struct sotls_conn {
	struct sotls_config *cfg;
	struct sotls_wire wire; /* the socket, or the application's buffers */
	enum conn_state state;
	int err;
	int cert_index;
	uint16_t max_frag_len; /* negotiated (RFC 6066 §4), 0 if none */
	uint8_t resumed;       /* enum sotls_resumption */
	/* The fatal alert the peer ended the handshake with (sotls_info's
	 * peer_alert before there are records), NO_HS_ALERT if none: one byte,
	 * as alerts are (RFC 5246 §7.2). */
	uint8_t hs_alert;
	char *server_name;
	struct sotls_hs *hs;
	const struct sotls_suite *suite;
	/* Where each direction's records are made and opened, and why. */
	const char *tx_reason, *rx_reason;
	struct sotls_kconn k; /* the kernel directions (k.tx, k.rx) */
	/* The userspace record layer (keys, AEAD contexts, buffers), allocated
	 * only when a direction stays in userspace: with both directions in
	 * the kernel the connection holds no record buffers and no traffic
	 * keys (a client's session, for sotls_conn_get_session, is in
	 * session). */
	struct sotls_record *rec;
	struct sotls_io *io; /* sotls_sendfile's ring and buffers, made on first use */
	/* 240, not 256: with the peer and session pointers the connection
	 * stays in the same malloc size class (496-byte chunks) as before
	 * the identity and resumption existed. */
	char detail[240];
	struct sotls_peer *peer; /* the peer's chain, from the handshake; NULL if none */
	/* What the handshake agreed on, for sotls_info (NULL: none). */
	char *alpn;
	char *sni;
	struct conn_session *session; /* NULL: nothing to offer, export or forget */
	void *user;		      /* sotls_conn_set_user */
	struct conn_engine *eng;      /* engine connections only */
};

/* What only an engine connection (no socket) needs. */
struct conn_engine {
	/* What a failed handshake left unsent: its last records, its alert
	 * last, for the application to send before it closes. */
	uint8_t *residue;
	size_t residue_len, residue_off;
	int hs_rc; /* the last sotls_handshake result, for sotls_engine_state */
	/* The traffic keys, from the end of the handshake until the first
	 * record moves, for sotls_engine_attach_fd and
	 * sotls_engine_traffic_keys. */
	bool have_keys;
	bool handed_off; /* sotls_engine_traffic_keys gave them away */
	struct sotls_traffic_keys tx, rx;
};

/* A client's session (resume.h) to offer, then the one to export without
 * its peer (the connection holds that); a server's key in the cache. Made
 * only when there is one: most server connections never need it. */
struct conn_session {
	uint8_t *offer, *state;
	size_t offer_len, state_len;
	uint8_t sid[32];
	uint8_t sid_len;
};

#endif

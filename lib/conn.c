/*
 * The connection: runs the handshake through lib/handshake, picks the path
 * of each direction (kernel TLS or the userspace record layer, by the kTLS
 * policy: kconn.c), and routes send, recv and shutdown to that path.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn_internal.h"
#include "kconn.h"
#include "handshake.h"
#include "resume.h"
#include "io/sotls_io.h"
#include "peer_identity.h"
#include "record.h"
#include "sotls.h"
#include "util.h"

static void session_free(struct conn_session *s)
{
	if (s == NULL)
		return;
	if (s->offer != NULL) {
		sotls_wipe(s->offer, s->offer_len);
		free(s->offer);
	}
	if (s->state != NULL) {
		sotls_wipe(s->state, s->state_len);
		free(s->state);
	}
	sotls_wipe(s, sizeof(*s));
	free(s);
}

/* RFC 5246 §7.2.2: "Servers and clients MUST forget any session-identifiers,
 * keys, and secrets associated with a failed connection." A connection that
 * merely ended (no close_notify, a reset, the usage limit) did not fail. */
static void session_forget(struct sotls_conn *c, int err)
{
	struct conn_session *s = c->session;
	if (s == NULL || err == SOTLS_ERR_TRUNCATED || err == SOTLS_ERR_SYSCALL ||
	    err == SOTLS_ERR_KEY_USAGE_LIMIT || err == SOTLS_ERR_CLOSED)
		return;
	const struct sotls_resume_config *rc = &c->cfg->resume;
	if (s->sid_len != 0 && rc->del != NULL)
		rc->del(rc->store_arg, s->sid, s->sid_len);
	c->session = NULL;
	session_free(s);
}

static int conn_make(struct sotls_config *cfg, int fd, struct sotls_conn **out)
{
	if (cfg == NULL || out == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (cfg->role == SOTLS_ROLE_SERVER && cfg->n_certs == 0 && cfg->sni_cb == NULL)
		return SOTLS_ERR_BAD_STATE;
	struct sotls_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	int rc = sotls_config_use(cfg);
	if (rc != 0) {
		free(c);
		return rc;
	}
	c->cfg = cfg;
	c->wire.fd = fd;
	c->state = CONN_NEW;
	c->cert_index = -1;
	c->hs_alert = NO_HS_ALERT;
	*out = c;
	return 0;
}

SOTLS_API int sotls_conn_new(struct sotls_config *cfg, int fd, struct sotls_conn **out)
{
	if (fd < 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return conn_make(cfg, fd, out);
}

SOTLS_API int sotls_conn_new_engine(struct sotls_config *cfg, struct sotls_conn **out)
{
	struct conn_engine *eng = calloc(1, sizeof(*eng));
	if (eng == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	int rc = conn_make(cfg, -1, out);
	if (rc != 0) {
		free(eng);
		return rc;
	}
	(*out)->eng = eng;
	return 0;
}

static void engine_drop_keys(struct conn_engine *e)
{
	if (e != NULL && e->have_keys) {
		sotls_wipe(&e->tx, sizeof(e->tx));
		sotls_wipe(&e->rx, sizeof(e->rx));
		e->have_keys = false;
	}
}

SOTLS_API int sotls_conn_set_server_name(struct sotls_conn *c, const char *name)
{
	if (c == NULL || (name != NULL && (name[0] == '\0' || strlen(name) > 255)))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state != CONN_NEW || c->hs != NULL)
		return SOTLS_ERR_BAD_STATE;
	char *copy = NULL;
	if (name != NULL && (copy = strdup(name)) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	free(c->server_name);
	c->server_name = copy;
	return 0;
}

/* An engine's failed handshake: what it did not send yet (the alert last)
 * outlives the handshake, for the application to send. */
static void keep_residue(struct sotls_conn *c)
{
	size_t len;
	const uint8_t *p = sotls_hs_out(c->hs, &len);
	if (c->eng == NULL || len == 0 || c->eng->residue != NULL)
		return;
	if ((c->eng->residue = malloc(len)) == NULL)
		return; /* best effort, as the alert is on a full socket */
	memcpy(c->eng->residue, p, len);
	c->eng->residue_len = len;
	c->eng->residue_off = 0;
}

static int conn_fail(struct sotls_conn *c, int err)
{
	if (c->state != CONN_FAILED) {
		c->state = CONN_FAILED;
		c->err = err;
		session_forget(c, err);
	}
	engine_drop_keys(c->eng);
	if (c->hs != NULL) {
		keep_residue(c);
		sotls_hs_free(c->hs);
		c->hs = NULL;
	}
	return c->err;
}

/*
 * The directions the kernel took (kc) go to it, the others to the userspace
 * record layer, allocated only if one stays there: with both directions in
 * the kernel the connection holds no record buffers and no traffic keys.
 */
static int use_choice(struct sotls_conn *c, const struct sotls_kchoice *kc, enum sotls_aead_alg alg,
		      const struct sotls_dir_keys *txk, const struct sotls_dir_keys *rxk,
		      uint16_t max_frag)
{
	bool server = c->cfg->role == SOTLS_ROLE_SERVER;
	int rc = 0;
	if (!kc->tx || !kc->rx) {
		struct sotls_dir_keys t = {txk->key, txk->salt, txk->seq};
		struct sotls_dir_keys r = {rxk->key, rxk->salt, rxk->seq};
		c->rec = malloc(sizeof(*c->rec));
		rc = c->rec == NULL ? SOTLS_ERR_OUT_OF_MEMORY
				    : sotls_record_init(c->rec, &c->wire, alg, &t, &r, NULL, 0);
		if (rc != 0) {
			free(c->rec); /* sotls_record_init cleaned up after itself */
			c->rec = NULL;
			snprintf(c->detail, sizeof(c->detail), "record layer set-up failed: %s",
				 sotls_strerror(rc));
			return rc;
		}
		/* The kernel's half is not kept in userspace. */
		sotls_record_set_policy(c->rec, server, c->cfg->key_usage_limit);
		if (kc->tx) {
			sotls_aead_clear(&c->rec->tx.aead);
			c->rec->alert_out = sotls_kconn_alert_out;
			c->rec->alert_ctx = &c->k;
		}
		if (kc->rx)
			sotls_aead_clear(&c->rec->rx.aead);
		if (max_frag != 0)
			c->rec->max_plain = max_frag;
	}
	struct sotls_kconn_setup ks = {kc->tx, kc->rx, server, alg, c->cfg->key_usage_limit,
				       txk->seq, rxk->seq};
	sotls_kconn_init(&c->k, c->wire.fd, &ks, c->rec);
	c->tx_reason = kc->tx_reason;
	c->rx_reason = kc->rx_reason;
	if (kc->tx_fallback || kc->rx_fallback)
		SOTLS_LOG(c->cfg, c, SOTLS_LOG_KTLS_FALLBACK, "kTLS: %s%s%s%s%s%s",
			  kc->tx_fallback ? "TX stays in userspace: " : "",
			  kc->tx_fallback ? kc->tx_reason : "",
			  kc->tx_fallback && kc->rx_fallback ? "; " : "",
			  kc->rx_fallback ? "RX stays in userspace: " : "",
			  kc->rx_fallback ? kc->rx_reason : "",
			  c->cfg->ktls == SOTLS_KTLS_REQUIRE
				  ? " (kTLS is required: the connection fails)"
				  : "");
	return 0;
}

/* A direction's keys as an engine hands them over. */
static void traffic_keys(struct sotls_traffic_keys *out, const struct sotls_suite *suite,
			 const uint8_t *key, const uint8_t *salt, uint64_t seq)
{
	out->suite_id = suite->id;
	out->key_len = (uint8_t)sotls_aead_key_len(suite->alg);
	memcpy(out->key, key, out->key_len);
	memcpy(out->salt, salt, sizeof(out->salt));
	out->seq = seq;
}

/*
 * Keys and sequence numbers from the handshake into the kernel (per
 * direction, by the policy) and into the userspace record layer for what the
 * kernel did not take. An engine connection has no socket: both directions
 * start in userspace, and the keys wait for sotls_engine_attach_fd.
 *
 * Nothing is pending in userspace at this point: mbedTLS has flushed its last
 * flight before the handshake returns and no record has been sealed yet, so
 * TLS_TX starts at the next sequence number with an empty userspace send
 * buffer. Nothing of the record stream has been read ahead: the handshake BIO
 * reads only what mbedTLS asks for and sotls_hs_step has checked that mbedTLS
 * holds no byte past the peer's Finished, so TLS_RX parses the socket's
 * receive queue from the first record after Finished (data the peer sent
 * right behind its Finished included).
 */
static int start_records(struct sotls_conn *c, struct sotls_hs_result *res)
{
	bool server = c->cfg->role == SOTLS_ROLE_SERVER;
	struct sotls_dir_keys client = {res->kb.client_key, res->kb.client_salt, res->client_seq};
	struct sotls_dir_keys server_k = {res->kb.server_key, res->kb.server_salt,
					   res->server_seq};
	const struct sotls_dir_keys *txk = server ? &server_k : &client;
	const struct sotls_dir_keys *rxk = server ? &client : &server_k;
	struct sotls_kchoice kc = {.tx_reason = SOTLS_KREASON_ENGINE,
				    .rx_reason = SOTLS_KREASON_ENGINE};

	if (c->eng == NULL) {
		sotls_kconn_install(c->wire.fd, c->cfg->ktls, res->suite->alg, txk, rxk,
				    res->max_frag_len, &kc);
	} else {
		traffic_keys(&c->eng->tx, res->suite, txk->key, txk->salt, txk->seq);
		traffic_keys(&c->eng->rx, res->suite, rxk->key, rxk->salt, rxk->seq);
		c->eng->have_keys = true;
	}
	int rc = use_choice(c, &kc, res->suite->alg, txk, rxk, res->max_frag_len);
	sotls_wipe(&res->kb, sizeof(res->kb));
	if (rc != 0)
		return rc;
	c->suite = res->suite;
	c->max_frag_len = res->max_frag_len;
	return 0;
}

/* SOTLS_KTLS_REQUIRE: both directions in the kernel, or the connection
 * fails (the peer learns it from an internal_error alert). */
static int check_required(struct sotls_conn *c)
{
	if (c->cfg->ktls != SOTLS_KTLS_REQUIRE || (c->k.tx && c->k.rx))
		return 0;
	snprintf(c->detail, sizeof(c->detail),
		 "kernel TLS required by configuration, but the kernel did not take%s%s%s%s%s",
		 c->k.tx ? "" : " TX (", c->k.tx ? "" : c->tx_reason, c->k.tx ? "" : ")",
		 c->k.rx ? "" : c->k.tx ? " RX (" : " and RX (", c->k.rx ? "" : c->rx_reason);
	if (!c->k.rx)
		strncat(c->detail, ")", sizeof(c->detail) - strlen(c->detail) - 1);
	sotls_kconn_fatal(&c->k, SOTLS_ALERT_INTERNAL_ERROR, SOTLS_ERR_KTLS_REQUIRED);
	return conn_fail(c, SOTLS_ERR_KTLS_REQUIRED);
}

/* What a completed handshake leaves to resume or forget the session by. */
static int keep_session(struct sotls_conn *c, struct sotls_hs_result *res)
{
	struct conn_session *s = c->session;
	if (s == NULL && res->session == NULL && res->sid_len == 0)
		return 0;
	if (s == NULL && (s = c->session = calloc(1, sizeof(*s))) == NULL) {
		if (res->session != NULL) {
			sotls_wipe(res->session, res->session_len);
			free(res->session);
		}
		sotls_wipe(&res->kb, sizeof(res->kb));
		return SOTLS_ERR_OUT_OF_MEMORY;
	}
	if (s->offer != NULL) {
		sotls_wipe(s->offer, s->offer_len);
		free(s->offer);
		s->offer = NULL;
	}
	s->state = res->session;
	s->state_len = res->session_len;
	res->session = NULL;
	memcpy(s->sid, res->sid, sizeof(s->sid));
	s->sid_len = res->sid_len;
	return 0;
}

SOTLS_API int sotls_handshake(struct sotls_conn *c)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_OPEN)
		return 0;
	if (c->state == CONN_FAILED)
		return c->err;

	if (c->hs == NULL) {
		const char *name = c->server_name ? c->server_name : c->cfg->server_name;
		int rc = sotls_hs_new(&c->hs, c->cfg, c, &c->wire, name, c->detail,
				      sizeof(c->detail));
		if (rc == 0 && c->session != NULL && c->session->offer != NULL)
			rc = sotls_hs_offer_session(c->hs, c->session->offer, c->session->offer_len);
		if (rc != 0)
			return conn_fail(c, rc);
	}

	struct sotls_hs_result res;
	int sys_errno = 0;
	int rc = sotls_hs_step(c->hs, &res, c->detail, sizeof(c->detail), &sys_errno);
	if (c->eng != NULL)
		c->eng->hs_rc = rc;
	if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE || rc == SOTLS_WANT_PRIVATE_KEY ||
	    rc == SOTLS_WANT_CERTIFICATE)
		return rc;
	/* Done either way: mbedTLS's state and secrets go now. */
	int hs_alert = sotls_hs_peer_alert(c->hs);
	c->hs_alert = hs_alert >= 0 && hs_alert < NO_HS_ALERT ? (uint8_t)hs_alert : NO_HS_ALERT;
	keep_residue(c);
	sotls_hs_free(c->hs);
	c->hs = NULL;
	if (rc != 0) {
		conn_fail(c, rc);
		if (rc == SOTLS_ERR_SYSCALL)
			errno = sys_errno;
		return rc;
	}
	c->alpn = res.alpn;
	c->sni = res.server_name;
	c->cert_index = res.cert_index;
	c->peer = res.peer;
	c->resumed = (uint8_t)res.resumed;
	rc = keep_session(c, &res);
	if (rc == 0)
		rc = start_records(c, &res);
	if (rc != 0)
		return conn_fail(c, rc);
	c->state = CONN_OPEN;
	/* An engine's kernel directions are chosen at sotls_engine_attach_fd. */
	return c->eng == NULL ? check_required(c) : 0;
}

/* Runs the handshake first if needed; 0 when records may flow. Records
 * moving end an engine's chance to hand its keys over. */
static int ready(struct sotls_conn *c)
{
	if (c->state == CONN_OPEN) {
		if (c->eng != NULL && c->eng->handed_off)
			return SOTLS_ERR_BAD_STATE;
		engine_drop_keys(c->eng);
		return 0;
	}
	return sotls_handshake(c);
}

/* The record policy (policy.h) ended the connection over what the peer
 * sent: told to the log, with the detail just written. Ends the peer chose
 * (its alert, a reset, a truncation) are not the library's decision. */
static void log_cut_off(struct sotls_conn *c, int err)
{
	enum sotls_log_event event;
	switch (err) {
	case SOTLS_ERR_RECORD_FLOOD:
		event = SOTLS_LOG_RECORD_FLOOD;
		break;
	case SOTLS_ERR_KEY_USAGE_LIMIT:
		event = SOTLS_LOG_KEY_USAGE_LIMIT;
		break;
	case SOTLS_ERR_BAD_RECORD_MAC:
		event = SOTLS_LOG_BAD_RECORD_MAC;
		break;
	case SOTLS_ERR_DECODE:
	case SOTLS_ERR_UNEXPECTED_MESSAGE:
	case SOTLS_ERR_RECORD_OVERFLOW:
	case SOTLS_ERR_PROTOCOL_VERSION:
		event = SOTLS_LOG_PEER_FAULT;
		break;
	default:
		return;
	}
	SOTLS_LOG(c->cfg, c, event, "peer cut off: %s: %s", sotls_strerror(err), c->detail);
}

/*
 * Records a failure of either record path on the connection, from that
 * path's policy state (policy.h): what sotls_conn_error_detail says, errno
 * for SOTLS_ERR_SYSCALL. The usage limit closing the send direction is not
 * a failure (what the peer sends can still be read), nor are the caller's
 * mistakes. kernel: the path is the kernel's, whose socket errors read
 * differently.
 */
static ssize_t path_result(struct sotls_conn *c, ssize_t rc, const struct sotls_policy *p,
			   bool kernel)
{
	if (rc >= 0 || rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
		return rc;
	if (rc == SOTLS_ERR_CLOSED || rc == SOTLS_ERR_INVALID_ARGUMENT)
		return rc;
	int saved = errno;
	if (rc == SOTLS_ERR_KEY_USAGE_LIMIT && p->tx_limited && p->err == 0) {
		snprintf(c->detail, sizeof(c->detail),
			 "the AEAD usage limit of %llu records for this connection's sending key "
			 "was reached: sotls sent close_notify; reconnect to send more",
			 (unsigned long long)p->key_limit);
		return rc;
	}
	if (p->why.what != NULL)
		snprintf(c->detail, sizeof(c->detail), "%s %llu; sent fatal alert %d to the peer",
			 p->why.what, (unsigned long long)p->why.value, p->sent_alert);
	else if (rc == SOTLS_ERR_PEER_ALERT)
		snprintf(c->detail, sizeof(c->detail), "alert %d from the peer", p->peer_alert);
	else if (rc == SOTLS_ERR_SYSCALL)
		snprintf(c->detail, sizeof(c->detail), "%s%s%s", kernel ? "kernel TLS socket: " : "",
			 strerror(p->sys_errno),
			 kernel && p->sys_errno == EIO
				 ? " (the kernel refused a record it could not hand over; the "
				   "connection is unusable)"
				 : "");
	else if (p->sent_alert > 0)
		snprintf(c->detail, sizeof(c->detail), "sent fatal alert %d to the peer",
			 p->sent_alert);
	else
		c->detail[0] = '\0';
	if (rc == SOTLS_ERR_SYSCALL)
		saved = p->sys_errno;
	if (c->state != CONN_FAILED)
		log_cut_off(c, (int)rc);
	conn_fail(c, (int)rc);
	errno = saved;
	return rc;
}

static ssize_t rec_result(struct sotls_conn *c, ssize_t rc)
{
	return path_result(c, rc, &c->rec->pol, false);
}

static ssize_t k_result(struct sotls_conn *c, ssize_t rc)
{
	return path_result(c, rc, &c->k.pol, true);
}

/* A syscall on the kernel TX socket failed outside kconn.c (sendfile's
 * pipe): the stream is broken. */
static ssize_t kernel_syscall_failed(struct sotls_conn *c, int err)
{
	if (c->k.pol.err == 0)
		c->k.pol.sys_errno = err;
	sotls_policy_fail(&c->k.pol, SOTLS_ERR_SYSCALL);
	return k_result(c, SOTLS_ERR_SYSCALL);
}

/* Kernel TX: what sotls_sendfile left in its pipe goes before anything else. */
static ssize_t kernel_flush(struct sotls_conn *c)
{
	int rc = sotls_io_kernel_flush(c->io, c->wire.fd);
	return rc != SOTLS_ERR_SYSCALL ? rc : kernel_syscall_failed(c, errno);
}

SOTLS_API ssize_t sotls_send(struct sotls_conn *c, const void *buf, size_t len)
{
	if (c == NULL || (buf == NULL && len > 0))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED)
		return c->err;
	int rc = ready(c);
	if (rc != 0)
		return rc;
	if (c->k.tx) {
		ssize_t n = kernel_flush(c);
		return n != 0 ? n : k_result(c, sotls_kconn_send(&c->k, buf, len));
	}
	return rec_result(c, sotls_record_send(c->rec, buf, len));
}

SOTLS_API ssize_t sotls_recv(struct sotls_conn *c, void *buf, size_t len)
{
	if (c == NULL || buf == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED && !(c->rec != NULL && c->rec->plain_len > 0))
		return c->err;
	int rc = ready(c);
	if (rc != 0)
		return rc;
	if (c->k.rx)
		return k_result(c, sotls_kconn_recv(&c->k, buf, len));
	return rec_result(c, sotls_record_recv(c->rec, buf, len));
}

/* ---- an engine's records, handed over ---- */

/* Whether no record has moved since the handshake, so the keys and
 * sequence numbers it ended with still describe the stream. */
static bool untouched(const struct sotls_conn *c)
{
	const struct sotls_record *r = c->rec;
	size_t out;
	return c->state == CONN_OPEN && c->eng != NULL && c->eng->have_keys &&
	       (r == NULL || (r->tx_records == 0 && r->rx_records == 0 && r->rx_head == r->rx_tail &&
			      r->plain_len == 0 && sotls_record_out(r, &out) == NULL));
}

SOTLS_API int sotls_engine_traffic_keys(struct sotls_conn *c, struct sotls_traffic_keys *tx,
					struct sotls_traffic_keys *rx)
{
	if (c == NULL || tx == NULL || rx == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (!untouched(c))
		return SOTLS_ERR_BAD_STATE;
	*tx = c->eng->tx;
	*rx = c->eng->rx;
	engine_drop_keys(c->eng);
	c->eng->handed_off = true;
	/* The application owns the records now: none is made or opened here. */
	if (c->rec != NULL) {
		sotls_record_free(c->rec);
		free(c->rec);
		c->rec = NULL;
	}
	return 0;
}

SOTLS_API int sotls_engine_attach_fd(struct sotls_conn *c, int fd)
{
	if (c == NULL || fd < 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (!untouched(c))
		return SOTLS_ERR_BAD_STATE;
	struct conn_engine *e = c->eng;
	struct sotls_dir_keys txk = {e->tx.key, e->tx.salt, e->tx.seq};
	struct sotls_dir_keys rxk = {e->rx.key, e->rx.salt, e->rx.seq};
	struct sotls_kchoice kc;
	sotls_kconn_install(fd, c->cfg->ktls, c->suite->alg, &txk, &rxk, c->max_frag_len, &kc);
	/* From here on the connection is one on fd, as if sotls_conn_new had
	 * made it: the record layer is set up again for what stays in
	 * userspace (nothing had moved through it). */
	c->wire.fd = fd;
	if (c->rec != NULL) {
		sotls_record_free(c->rec);
		free(c->rec);
		c->rec = NULL;
	}
	int rc = use_choice(c, &kc, c->suite->alg, &txk, &rxk, c->max_frag_len);
	engine_drop_keys(e);
	free(e);
	c->eng = NULL;
	if (rc != 0)
		return conn_fail(c, rc);
	return check_required(c);
}

SOTLS_API int sotls_conn_set_cert(struct sotls_conn *c, struct sotls_cert *cert)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return c->hs != NULL ? sotls_hs_set_cert(c->hs, cert) : SOTLS_ERR_BAD_STATE;
}

SOTLS_API size_t sotls_pending(const struct sotls_conn *c)
{
	if (c == NULL)
		return 0;
	if (c->k.rx)
		return c->k.small_len;
	return c->rec != NULL ? c->rec->plain_len : 0;
}

SOTLS_API void sotls_conn_set_user(struct sotls_conn *c, void *user)
{
	if (c != NULL)
		c->user = user;
}

SOTLS_API void *sotls_conn_user(const struct sotls_conn *c)
{
	return c == NULL ? NULL : c->user;
}

/* sotls_sendfile: the engines are in lib/io. */
SOTLS_API ssize_t sotls_sendfile(struct sotls_conn *c, int file_fd, off_t *offset, size_t count)
{
	if (c == NULL || file_fd < 0 || (offset != NULL && *offset < 0))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED)
		return c->err;
	if (sotls_wire_is_engine(&c->wire))
		return SOTLS_ERR_UNSUPPORTED; /* no socket to send the file to */
	int rc = ready(c);
	if (rc != 0)
		return rc;
	off_t pos = 0, *at = offset;
	if (at == NULL) {
		pos = lseek(file_fd, 0, SEEK_CUR);
		if (pos < 0)
			return SOTLS_ERR_SYSCALL; /* the file's errno; the connection goes on */
		at = &pos;
	}
	if (count > (size_t)0x7ffff000)
		count = 0x7ffff000; /* as sendfile(2) */
	ssize_t n;
	if (c->k.tx) {
		if (c->k.pol.err != 0)
			return c->k.pol.err;
		if (c->k.pol.tx_closed && !c->k.pol.tx_limited)
			return SOTLS_ERR_CLOSED;
		/* Never more bytes than the kernel may make records of. */
		size_t allow = c->k.pol.tx_limited ? 0
				: sotls_kconn_tx_budget(&c->k, count, sotls_io_unsent(c->io));
		if (allow == 0 && count > 0) {
			n = kernel_flush(c);
			return n != 0 ? n : k_result(c, sotls_kconn_limit_close(&c->k));
		}
		int file_failed = 0;
		n = sotls_io_sendfile_kernel(&c->io, c->cfg->sendfile_mode, c->wire.fd, file_fd, at, allow, &file_failed);
		if (n > 0)
			sotls_kconn_tx_account(&c->k, (size_t)n);
		if (n == SOTLS_ERR_SYSCALL && !file_failed) {
			n = kernel_syscall_failed(c, errno);
		}
	} else {
		n = sotls_io_sendfile_user(&c->io, c->cfg->sendfile_mode, c->rec, c->wire.fd, file_fd, at, count);
		/* Whatever did not fail the record layer (the file cannot be
		 * read, no memory for the ring, an unfinished sotls_send) leaves
		 * the connection as it was. */
		if (!(n < 0 && n != SOTLS_WANT_WRITE && c->rec->pol.err == 0) ||
		    n == SOTLS_ERR_KEY_USAGE_LIMIT)
			n = rec_result(c, n);
	}
	if (offset == NULL && n > 0) {
		int saved = errno;
		(void)lseek(file_fd, pos, SEEK_SET);
		errno = saved;
	}
	return n;
}

SOTLS_API int sotls_shutdown(struct sotls_conn *c)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_OPEN)
		return SOTLS_ERR_BAD_STATE;
	int rc = ready(c);
	if (rc != 0)
		return rc;
	if (c->k.tx) {
		ssize_t n = kernel_flush(c);
		return (int)(n != 0 ? n : k_result(c, sotls_kconn_shutdown(&c->k)));
	}
	return (int)rec_result(c, sotls_record_shutdown(c->rec));
}

SOTLS_API void sotls_conn_free(struct sotls_conn *c)
{
	if (c == NULL)
		return;
	sotls_hs_free(c->hs);
	sotls_io_free(c->io);
	if (c->rec != NULL) {
		sotls_record_free(c->rec);
		free(c->rec);
	}
	sotls_peer_free(c->peer);
	session_free(c->session);
	sotls_config_free(c->cfg);
	free(c->server_name);
	free(c->alpn);
	free(c->sni);
	if (c->eng != NULL) {
		engine_drop_keys(c->eng);
		free(c->eng->residue);
		free(c->eng);
	}
	sotls_wipe(c, sizeof(*c));
	free(c);
}

/* The first part of struct sotls_info: what every caller's struct holds. */
#define INFO_FIRST_PART                                                                  \
	(offsetof(struct sotls_info, sendfile_buffer_bytes) +                              \
	 sizeof(((struct sotls_info *)0)->sendfile_buffer_bytes))
/* Whether a caller's struct of `size` bytes holds the whole field. */
#define INFO_HAS(size, field)                                                             \
	(offsetof(struct sotls_info, field) + sizeof(((struct sotls_info *)0)->field) <= (size))

/* Every field this library knows. */
static void info_fill(const struct sotls_conn *c, struct sotls_info *info)
{
	info->size = sizeof(*info);
	info->max_fragment_len = c->max_frag_len;
	info->resumed = (enum sotls_resumption)c->resumed;
	info->suite = "";
	info->version = "";
	info->tx_reason = "";
	info->rx_reason = "";
	info->aead_impl = "";
	info->peer_alert = c->hs_alert == NO_HS_ALERT ? -1 : c->hs_alert;
	info->sendfile_path = sotls_io_path(c->io);
	info->sendfile_reason = sotls_io_reason(c->io);
	info->sendfile_buffer_bytes = sotls_io_buffer_bytes(c->io);
	info->alpn = c->alpn != NULL ? c->alpn : "";
	info->server_name = c->sni != NULL ? c->sni : "";
	info->cert_index = c->cert_index;
	if (c->suite == NULL)
		return;
	info->suite = c->suite->iana;
	info->suite_id = c->suite->id;
	info->version = "TLSv1.2";
	info->tx_path = c->k.tx ? SOTLS_PATH_KERNEL : SOTLS_PATH_USERSPACE;
	info->rx_path = c->k.rx ? SOTLS_PATH_KERNEL : SOTLS_PATH_USERSPACE;
	info->tx_reason = c->tx_reason;
	info->rx_reason = c->rx_reason;
	if (!c->k.tx)
		info->aead_impl = sotls_aead_impl_name(&c->rec->tx.aead);
	else if (!c->k.rx)
		info->aead_impl = sotls_aead_impl_name(&c->rec->rx.aead);
	else
		info->aead_impl = "kernel (kTLS)";
	info->peer_alert = c->k.rx ? c->k.pol.peer_alert : c->rec->pol.peer_alert;
	/* Records are counted on the userspace path only. */
	info->tx_records = c->k.tx ? 0 : c->rec->tx_records;
	info->rx_records = c->k.rx ? 0 : c->rec->rx_records;
	info->peer_verified = c->peer != NULL && c->peer->verified;
	info->peer_chain_len = c->peer != NULL ? c->peer->n_certs : 0;
}

SOTLS_API int sotls_get_info(const struct sotls_conn *c, struct sotls_info *info)
{
	if (c == NULL || info == NULL || info->size < INFO_FIRST_PART)
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* Built whole here, then only what fits goes to the caller, whose
	 * struct may be older (shorter) than this library's. */
	size_t size = info->size;
	struct sotls_info full;
	memset(&full, 0, sizeof(full));
	info_fill(c, &full);
	memcpy(info, &full, INFO_FIRST_PART);
	info->size = size;
	/* The fields after the first part, in their order. */
	if (INFO_HAS(size, alpn))
		info->alpn = full.alpn;
	if (INFO_HAS(size, server_name))
		info->server_name = full.server_name;
	if (INFO_HAS(size, cert_index))
		info->cert_index = full.cert_index;
	if (INFO_HAS(size, peer_verified))
		info->peer_verified = full.peer_verified;
	if (INFO_HAS(size, peer_chain_len))
		info->peer_chain_len = full.peer_chain_len;
	if (INFO_HAS(size, max_fragment_len))
		info->max_fragment_len = full.max_fragment_len;
	if (INFO_HAS(size, resumed))
		info->resumed = full.resumed;
	return 0;
}

/* The peer's identity: the connection's copy, or during the verify
 * callback the handshake's. */
static const struct sotls_peer *conn_peer(const struct sotls_conn *c)
{
	if (c == NULL)
		return NULL;
	return c->peer != NULL ? c->peer : c->hs != NULL ? sotls_hs_peer(c->hs) : NULL;
}

SOTLS_API int sotls_conn_peer_cert(const struct sotls_conn *c, size_t index, const uint8_t **der,
				   size_t *len)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return sotls_peer_cert(conn_peer(c), index, der, len);
}

SOTLS_API const char *sotls_conn_peer_subject(const struct sotls_conn *c)
{
	return sotls_peer_subject(conn_peer(c));
}

SOTLS_API int sotls_conn_peer_san(const struct sotls_conn *c, size_t index,
				  enum sotls_san_type *type, const char **value)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return sotls_peer_san(conn_peer(c), index, type, value);
}

SOTLS_API const char *sotls_conn_error_detail(const struct sotls_conn *c)
{
	return c == NULL ? "" : c->detail;
}

/* ---- client sessions (sotls.h "Session resumption") ---- */

SOTLS_API int sotls_conn_get_session(const struct sotls_conn *c, void *buf, size_t cap,
				     size_t *len)
{
	if (c == NULL || len == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->cfg->role != SOTLS_ROLE_CLIENT || (c->state != CONN_OPEN && c->state != CONN_FAILED))
		return SOTLS_ERR_BAD_STATE;
	const struct conn_session *s = c->session;
	struct sotls_session_state st;
	if (c->state == CONN_FAILED || s == NULL || s->state == NULL ||
	    sotls_session_state_decode(&st, s->state, s->state_len) != 0)
		return SOTLS_ERR_NOT_RESUMABLE;
	uint8_t *peer = NULL;
	if (c->peer != NULL) {
		st.peer_len = sotls_peer_save(c->peer, NULL);
		if ((peer = malloc(st.peer_len)) == NULL)
			return SOTLS_ERR_OUT_OF_MEMORY;
		sotls_peer_save(c->peer, peer);
		st.peer = peer;
	}
	*len = sotls_session_state_size(&st);
	int rc = 0;
	if (*len > SOTLS_SESSION_MAX)
		rc = SOTLS_ERR_NOT_RESUMABLE;
	else if (buf == NULL || cap < *len)
		rc = SOTLS_ERR_BUFFER_TOO_SMALL;
	else
		sotls_session_state_encode(&st, buf);
	free(peer);
	return rc;
}

SOTLS_API int sotls_conn_set_session(struct sotls_conn *c, const void *data, size_t len)
{
	if (c == NULL || data == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->cfg->role != SOTLS_ROLE_CLIENT || c->state != CONN_NEW || c->hs != NULL)
		return SOTLS_ERR_BAD_STATE;
	struct sotls_session_state st;
	if (sotls_session_state_decode(&st, data, len) != 0 || st.role != SOTLS_SESSION_ROLE_CLIENT ||
	    sotls_session_state_from_future(&st, sotls_resume_now()))
		return SOTLS_ERR_SESSION;
	struct conn_session *s = c->session;
	if (s == NULL && (s = c->session = calloc(1, sizeof(*s))) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	uint8_t *copy = malloc(len);
	if (copy == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	memcpy(copy, data, len);
	if (s->offer != NULL) {
		sotls_wipe(s->offer, s->offer_len);
		free(s->offer);
	}
	s->offer = copy;
	s->offer_len = len;
	return 0;
}

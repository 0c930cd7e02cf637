/*
 * One TLS 1.2 handshake through mbedTLS 3.6, then the hand-over to sotls's
 * record layer.
 *
 * - The mbedtls_ssl_context uses its sotls_config's shared mbedTLS
 *   configuration (mbed_config.c); the key export callback and the
 *   certificate check are set on the context, so they carry this
 *   connection.
 * - The BIO is hs_reader.c: it frames what mbedTLS reads and sees what it
 *   writes (hs_internal.h states its invariants).
 * - mbedTLS is stepped one state at a time, so sotls can act between the
 *   hello and the next message (see after_step).
 * - Keys: the export callback saves the master secret and randoms (and
 *   hands them to the key log, keylog.c); the key block is derived with the
 *   suite's PRF (prf.c).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/error.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"
#include "peer_identity.h"
#include "util.h"

/* ---- key export ---- */

static void export_keys(void *ctx, mbedtls_ssl_key_export_type type, const unsigned char *secret,
			size_t secret_len, const unsigned char client_random[32],
			const unsigned char server_random[32], mbedtls_tls_prf_types prf)
{
	struct sotls_hs *hs = ctx;
	(void)prf;
	if (type != MBEDTLS_SSL_KEY_EXPORT_TLS12_MASTER_SECRET || secret_len != sizeof(hs->master))
		return;
	memcpy(hs->master, secret, sizeof(hs->master));
	memcpy(hs->client_random, client_random, 32);
	memcpy(hs->server_random, server_random, 32);
	hs->exported = true;
	sotls_hs_keylog(hs);
}

/* ---- the server's name ---- */

/* Is name an IPv4 or IPv6 literal? Then ip and ip_len hold its bytes. */
static bool ip_literal(const char *name, uint8_t ip[16], size_t *ip_len)
{
	if (inet_pton(AF_INET, name, ip) == 1) {
		*ip_len = 4;
		return true;
	}
	if (inet_pton(AF_INET6, name, ip) == 1) {
		*ip_len = 16;
		return true;
	}
	return false;
}

static int set_name(struct sotls_hs *hs, const char *name, char *detail, size_t detail_len)
{
	enum sotls_verify verify = hs->cfg->verify;
	if (verify == SOTLS_VERIFY_REQUIRED && name == NULL) {
		/* Without a name, any certificate the CA signed for anyone
		 * would do (CVE-2025-27809): refuse before anything is sent. */
		snprintf(detail, detail_len,
			 "certificate verification is on but no server name is set: set one "
			 "(sotls_config_set_server_name or sotls_conn_set_server_name), or choose "
			 "SOTLS_VERIFY_CHAIN_ONLY to accept any name the CA vouches for");
		return SOTLS_ERR_HOSTNAME;
	}
	hs->chain_only = verify == SOTLS_VERIFY_CHAIN_ONLY;
	hs->check_ip = name != NULL && ip_literal(name, hs->ip, &hs->ip_len);
	/* The name goes out as SNI unless it is an address; mbedTLS checks it
	 * unless sotls_hs_verify_name does. NULL is mbedTLS's explicit "no
	 * name check". */
	int mrc = mbedtls_ssl_set_hostname(&hs->ssl, hs->check_ip ? NULL : name);
	if (mrc != 0) {
		snprintf(detail, detail_len, "mbedTLS refused the server name");
		return mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY
							   : SOTLS_ERR_INVALID_ARGUMENT;
	}
	/* The name, an address too, is what a session is bound to
	 * (resume.c); only a host name is sent and shown as SNI. */
	if (name != NULL)
		snprintf(hs->sni, sizeof(hs->sni), "%s", name);
	hs->sni_present = name != NULL && !hs->check_ip;
	return 0;
}

/* ---- set-up ---- */

int sotls_hs_new(struct sotls_hs **out, struct sotls_config *cfg, struct sotls_conn *conn,
		 struct sotls_wire *wire, const char *server_name, char *detail,
		 size_t detail_len)
{
	struct sotls_hs *hs = calloc(1, sizeof(*hs));
	if (hs == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	hs->cfg = cfg;
	hs->conn = conn;
	hs->wire = wire;
	hs->server = cfg->role == SOTLS_ROLE_SERVER;
	hs->fail_alert = -1;
	hs->peer_alert = -1;
	hs->cert_index = hs->server ? 0 : -1;
	mbedtls_ssl_init(&hs->ssl);

	int rc = 0;
	int mrc = mbedtls_ssl_setup(&hs->ssl, &cfg->conf);
	if (mrc != 0) {
		rc = mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY : SOTLS_ERR_INTERNAL;
		char msg[120];
		mbedtls_strerror(mrc, msg, sizeof(msg));
		snprintf(detail, detail_len, "mbedTLS setup: %s", msg);
	} else if (!hs->server) {
		rc = set_name(hs, server_name, detail, detail_len);
	}
	if (rc != 0) {
		sotls_hs_free(hs);
		return rc;
	}
	mbedtls_ssl_set_user_data_p(&hs->ssl, hs); /* for the certificate choice */
	mbedtls_ssl_set_export_keys_cb(&hs->ssl, export_keys, hs);
	mbedtls_ssl_set_verify(&hs->ssl, sotls_hs_verify_chain, hs);
	mbedtls_ssl_set_bio(&hs->ssl, hs, sotls_hs_bio_send, sotls_hs_bio_recv, NULL);
	*out = hs;
	return 0;
}

int sotls_hs_offer_session(struct sotls_hs *hs, const uint8_t *state, size_t len)
{
	return sotls_resume_offer(hs, state, len);
}

void sotls_hs_free(struct sotls_hs *hs)
{
	if (hs == NULL)
		return;
	mbedtls_ssl_free(&hs->ssl);
	sotls_hs_reader_free(&hs->rd);
	sotls_hs_drop_hello(hs);
	free(hs->sh);
	sotls_cert_free(hs->cb_cert);
	sotls_pk_op_free(hs->pk_op); /* after mbedtls_ssl_free, which cancels it */
	sotls_peer_free(hs->peer);
	sotls_peer_free(hs->resume_peer);
	free(hs->frag);
	free(hs->flight); /* records as sent: sealed, or public */
	sotls_wipe(hs, sizeof(*hs));
	free(hs);
}

void sotls_hs_result_release(struct sotls_hs_result *res)
{
	free(res->alpn);
	free(res->server_name);
	sotls_peer_free(res->peer);
	if (res->session != NULL) {
		sotls_wipe(res->session, res->session_len);
		free(res->session);
	}
	sotls_wipe(res, sizeof(*res));
}

/* ---- running it ---- */

/* Between mbedTLS's steps: what must happen right after a hello, and the
 * decision on the peer's certificate right after its Certificate message. */
static int after_step(struct sotls_hs *hs, int state_before)
{
	if (sotls_mbed_state(&hs->ssl) == state_before)
		return 0;
	int rc = sotls_resume_after_step(hs, state_before);
	if (rc != 0)
		return rc;
	int peer_cert = hs->server ? MBEDTLS_SSL_CLIENT_CERTIFICATE : MBEDTLS_SSL_SERVER_CERTIFICATE;
	if (state_before == peer_cert)
		return sotls_hs_check_peer(hs);
	if (state_before != (hs->server ? MBEDTLS_SSL_CLIENT_HELLO : MBEDTLS_SSL_SERVER_HELLO))
		return 0;
	/* RFC 8422 §5.1.2: "Uncompressed points ... are the only valid
	 * representation" in TLS 1.2, whatever the peer listed first. */
	sotls_mbed_uncompressed_points(&hs->ssl);
	if (hs->server) {
		/* Written into the ServerHello by mbedTLS, next step. */
		sotls_mbed_set_alpn(&hs->ssl, hs->alpn[0] != '\0' ? hs->alpn : NULL);
		sotls_cert_note_choice(hs);
	}
	if (hs->real_hello == NULL)
		return 0;
	int mrc = hs->hello_rewritten ? sotls_mbed_rehash(&hs->ssl, hs->real_hello,
							   hs->real_hello_len, NULL, 0)
				      : 0;
	/* The SNI acknowledgement rebuilds the transcript again from it. */
	if (hs->sni_ack != SNI_ACK_PENDING)
		sotls_hs_drop_hello(hs);
	return mrc;
}

/* What sotls_info shows, handed to the connection. */
static int hand_over_names(struct sotls_hs *hs, struct sotls_hs_result *res)
{
	const char *alpn = hs->server ? hs->alpn : mbedtls_ssl_get_alpn_protocol(&hs->ssl);
	res->cert_index = hs->cert_index;
	if (alpn != NULL && alpn[0] != '\0' && (res->alpn = strdup(alpn)) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	if (hs->sni_present && (res->server_name = strdup(hs->sni)) == NULL) {
		free(res->alpn);
		res->alpn = NULL;
		return SOTLS_ERR_OUT_OF_MEMORY;
	}
	return 0;
}

/* A failed handshake: the alert RFC 5246 §7.2.2 names, unless mbedTLS sent
 * one; then nothing more. */
static int failed(struct sotls_hs *hs, int mrc, char *detail, size_t detail_len, int *sys_errno)
{
	int alert;
	int rc = sotls_hs_map_error(hs, mrc, &alert, detail, detail_len, sys_errno);
	sotls_resume_failed(hs);
	if (alert >= 0 && !hs->alert_sent) {
		/* Best effort: a full send buffer loses it, as it would at
		 * any peer. The reader is failed, so nothing more is read. */
		if (hs->fail_err == 0)
			hs->fail_err = rc;
		(void)mbedtls_ssl_send_alert_message(&hs->ssl, MBEDTLS_SSL_ALERT_LEVEL_FATAL,
						     (unsigned char)alert);
		size_t n = strlen(detail);
		if (n < detail_len)
			snprintf(detail + n, detail_len - n, " (sent %s)", sotls_alert_name(alert));
	}
	/* The alert (ours or mbedTLS's), behind what was gathered. */
	(void)sotls_hs_flush(hs);
	return rc;
}

int sotls_hs_step(struct sotls_hs *hs, struct sotls_hs_result *res, char *detail,
		  size_t detail_len, int *sys_errno)
{
	int mrc = 0;
	sotls_resume_enter(hs);
	while (!mbedtls_ssl_is_handshake_over(&hs->ssl)) {
		int before = sotls_mbed_state(&hs->ssl);
		mrc = mbedtls_ssl_handshake_step(&hs->ssl);
		if (mrc == 0)
			mrc = after_step(hs, before);
		if (mrc != 0)
			break;
	}
	sotls_resume_leave();
	/* The last flight (the handshake has ended, or mbedTLS waits for the
	 * private-key method). A full socket buffer: the caller waits for
	 * it to drain and calls again, which lands here again. */
	if (mrc == 0 || mrc == MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS) {
		int frc = sotls_hs_flush(hs);
		if (frc != 0 && frc != MBEDTLS_ERR_SSL_WANT_WRITE)
			mrc = frc;
		else if (frc != 0 && mrc == 0)
			return SOTLS_WANT_WRITE;
	}
	if (mrc == MBEDTLS_ERR_SSL_WANT_READ)
		return hs->select == SELECT_PENDING ? SOTLS_WANT_CERTIFICATE : SOTLS_WANT_READ;
	if (mrc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return SOTLS_WANT_WRITE;
	if (mrc == MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS)
		return SOTLS_WANT_PRIVATE_KEY; /* private_key.c: the method is pending */
	if (mrc != 0)
		return failed(hs, mrc, detail, detail_len, sys_errno);

	/* Complete. Nothing may be left inside mbedTLS or the reader: the
	 * record layer starts at the first byte after the peer's Finished. */
	if (sotls_mbed_unread(&hs->ssl) != 0 || hs->rd.msg_len != 0) {
		sotls_hs_fail(hs, SOTLS_ERR_UNEXPECTED_MESSAGE, SOTLS_ALERT_UNEXPECTED_MESSAGE,
			      "the peer sent data inside its last handshake record");
		return failed(hs, MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE, detail, detail_len, sys_errno);
	}
	if (!hs->peer_checked) {
		sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
			      "the handshake ended without a decision on the peer's certificate");
		return failed(hs, MBEDTLS_ERR_SSL_INTERNAL_ERROR, detail, detail_len, sys_errno);
	}
	int id = mbedtls_ssl_get_ciphersuite_id_from_ssl(&hs->ssl);
	const struct sotls_suite *suite = sotls_suite_by_id((uint16_t)id);
	if (!hs->exported || suite == NULL ||
	    mbedtls_ssl_get_version_number(&hs->ssl) != MBEDTLS_SSL_VERSION_TLS1_2) {
		sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
			      hs->exported ? "negotiated an unsupported suite 0x%04x or version"
					   : "mbedTLS did not export this handshake's keys (suite 0x%04x)",
			      id);
		return failed(hs, MBEDTLS_ERR_SSL_INTERNAL_ERROR, detail, detail_len, sys_errno);
	}

	if (hs->server && hs->mfl != 0 &&
	    mbedtls_ssl_get_max_out_record_payload(&hs->ssl) != (int)hs->mfl) {
		/* msg_check.c took the client's request as agreed. */
		sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
			      "mbedTLS did not agree to max_fragment_length %u", hs->mfl);
		return failed(hs, MBEDTLS_ERR_SSL_INTERNAL_ERROR, detail, detail_len, sys_errno);
	}

	memset(res, 0, sizeof(*res));
	res->suite = suite;
	res->max_frag_len = hs->mfl;
	int rc = sotls_hs_key_block(hs, suite);
	if (rc == 0)
		res->kb = hs->kb;
	sotls_wipe(hs->master, sizeof(hs->master));
	if (rc != 0) {
		snprintf(detail, detail_len, "key block derivation failed");
		return rc;
	}
	uint64_t out_seq, in_seq;
	sotls_mbed_next_seqs(&hs->ssl, &out_seq, &in_seq);
	/* mbedTLS counted the records the reader sealed again for it, one per
	 * message; the peer's own records go on from how many it sent. */
	in_seq = hs->rd.peer.seq;
	res->server_seq = hs->server ? out_seq : in_seq;
	res->client_seq = hs->server ? in_seq : out_seq;
	res->resumed = hs->resumed;
	memcpy(res->sid, hs->sid, sizeof(res->sid));
	res->sid_len = hs->sid_len;
	rc = hs->server ? 0 : sotls_resume_client_state(hs, &res->session, &res->session_len);
	if (rc == 0)
		rc = hand_over_names(hs, res);
	if (rc != 0) {
		sotls_hs_result_release(res);
		snprintf(detail, detail_len, "no memory for the negotiated names and session");
		return rc;
	}
	res->peer = hs->peer;
	hs->peer = NULL;
	return 0;
}

int sotls_hs_peer_alert(const struct sotls_hs *hs)
{
	return hs->peer_alert;
}


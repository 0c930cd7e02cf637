/*
 * Every place where sotls reaches into mbedTLS 3.6's private state, kept in
 * this one file (its own folder, below lib/crypto and lib/handshake, which
 * both call it) so that an mbedTLS update has one place to check; what it
 * relies on is checked when it compiles (below the includes). Each has no
 * public API in 3.6:
 * - the next record sequence numbers after the handshake (kTLS and the
 *   userspace record layer start from them);
 * - whether mbedTLS still holds received bytes (it must not: the record
 *   layer reads from the first byte after the peer's Finished);
 * - the handshake state, to act between steps;
 * - the transcript, put back to the real ClientHello (RFC 5246 E.1; see
 *   hs_internal.h, real_hello) and to the ServerHello as sent with the SNI
 *   acknowledgement (sni_ack.c);
 * - the ALPN protocol a server writes in its ServerHello: sotls chooses it
 *   (alpn.c), mbedTLS only by a list fixed in the shared configuration;
 * - the chain mbedTLS chose for the suite, for sotls_info.cert_index;
 * - the ECDHE group the server chose, to check the client's share against;
 * - the point format of our ECDHE share: mbedTLS adopts the peer's first
 *   listed format, compressed included, and RFC 8422 §5.1.2 allows only
 *   uncompressed in TLS 1.2;
 * - resumption: whether mbedTLS resumes, whether extended_master_secret was
 *   agreed (RFC 7627 §5.3 makes resumption depend on it, and mbedTLS does
 *   not record it in the session), the ticket to come, and undoing a
 *   ticket's resumption whose suite is not the one negotiated (mbedTLS 3.6
 *   resumes a ticket under whatever suite it picks afresh);
 * - the alert a peer ended the handshake with (the record mbedTLS read);
 * - for lib/crypto's ALT hooks: a point's X and Z (ECDH's shared secret,
 *   ECDSA's r, X25519's key), an MPI's limbs and sign (the constant-time
 *   scalar arithmetic of ecdsa_scalar.c reads them without branching on
 *   their value, which mbedTLS's accessors would), and SHA-256's state (the
 *   compression hook updates it).
 */
#include "library/ssl_misc.h" /* first: it sets MBEDTLS_ALLOW_PRIVATE_ACCESS */

#include <mbedtls/platform.h>

#include "mbedtls_internals.h"
#include "util.h"

/* What this file relies on, checked when it compiles: the version whose
 * private state it was written against, and the shapes it reads. A new
 * 3.6.x that keeps them builds as it is; anything else stops here. */
#if MBEDTLS_VERSION_NUMBER < 0x03060000 || MBEDTLS_VERSION_NUMBER >= 0x03070000
#error "mbedtls_internals.c reads mbedTLS 3.6's private state: check each access against this version before widening the bound"
#endif
_Static_assert(sizeof(((mbedtls_ssl_context *)0)->in_ctr) == 8 &&
		       sizeof(((mbedtls_ssl_context *)0)->cur_out_ctr) == 8,
	       "the record counters are 8 big-endian bytes (sotls_mbed_next_seqs)");
_Static_assert(sizeof(mbedtls_mpi_uint) == 8, "64-bit limbs (ecdsa_scalar.c)");
_Static_assert(sizeof(((mbedtls_sha256_context *)0)->state) == 8 * sizeof(uint32_t),
	       "SHA-256's state is eight 32-bit words (sha256_mbedtls_alt.c)");

int sotls_mbed_state(const mbedtls_ssl_context *ssl)
{
	return ssl->state;
}

size_t sotls_mbed_unread(const mbedtls_ssl_context *ssl)
{
	return ssl->in_left + (mbedtls_ssl_check_pending(ssl) != 0 ? 1 : 0);
}

void sotls_mbed_next_seqs(const mbedtls_ssl_context *ssl, uint64_t *out_seq, uint64_t *in_seq)
{
	*out_seq = sotls_load_be64(ssl->cur_out_ctr);
	*in_seq = sotls_load_be64(ssl->in_ctr);
}

int sotls_mbed_rehash(mbedtls_ssl_context *ssl, const uint8_t *msg, size_t len,
		      const uint8_t *msg2, size_t len2)
{
	if (ssl->handshake == NULL)
		return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
	int rc = mbedtls_ssl_reset_checksum(ssl);
	if (rc == 0)
		rc = ssl->handshake->update_checksum(ssl, msg, len);
	if (rc == 0 && msg2 != NULL)
		rc = ssl->handshake->update_checksum(ssl, msg2, len2);
	return rc;
}

void sotls_mbed_set_alpn(mbedtls_ssl_context *ssl, const char *protocol)
{
	ssl->alpn_chosen = protocol;
}

const mbedtls_x509_crt *sotls_mbed_own_chain(const mbedtls_ssl_context *ssl)
{
	if (ssl->handshake == NULL || ssl->handshake->key_cert == NULL)
		return NULL;
	return ssl->handshake->key_cert->cert;
}

void sotls_mbed_uncompressed_points(mbedtls_ssl_context *ssl)
{
	if (ssl->handshake != NULL)
		ssl->handshake->ecdh_ctx.point_format = MBEDTLS_ECP_PF_UNCOMPRESSED;
}

mbedtls_ecp_group_id sotls_mbed_kex_group(const mbedtls_ssl_context *ssl)
{
	return ssl->handshake != NULL ? ssl->handshake->ecdh_ctx.grp_id : MBEDTLS_ECP_DP_NONE;
}

bool sotls_mbed_resuming(const mbedtls_ssl_context *ssl)
{
	return ssl->handshake != NULL && ssl->handshake->resume != 0;
}

bool sotls_mbed_ems(const mbedtls_ssl_context *ssl)
{
	return ssl->handshake != NULL &&
	       ssl->handshake->extended_ms == MBEDTLS_SSL_EXTENDED_MS_ENABLED;
}

int sotls_mbed_negotiated_suite(const mbedtls_ssl_context *ssl)
{
	return ssl->session_negotiate != NULL ? ssl->session_negotiate->ciphersuite : 0;
}

bool sotls_mbed_ticket_pending(const mbedtls_ssl_context *ssl)
{
	return ssl->handshake != NULL && ssl->handshake->new_session_ticket != 0;
}

void sotls_mbed_set_ticket_pending(mbedtls_ssl_context *ssl, bool pending)
{
	if (ssl->handshake != NULL)
		ssl->handshake->new_session_ticket = pending ? 1 : 0;
}

void sotls_mbed_unresume(mbedtls_ssl_context *ssl)
{
	mbedtls_ssl_session *s = ssl->session_negotiate;
	if (ssl->handshake == NULL || s == NULL)
		return;
	ssl->handshake->resume = 0;
	ssl->handshake->new_session_ticket = 1;
	sotls_wipe(s->master, sizeof(s->master));
	s->verify_result = 0;
	if (s->peer_cert_digest != NULL) {
		mbedtls_free(s->peer_cert_digest);
		s->peer_cert_digest = NULL;
		s->peer_cert_digest_len = 0;
		s->peer_cert_digest_type = MBEDTLS_MD_NONE;
	}
}

const uint8_t *sotls_mbed_session_ticket(const mbedtls_ssl_session *s, size_t *len,
					 uint32_t *hint)
{
	*len = s->ticket_len;
	*hint = s->ticket_lifetime;
	return s->ticket_len != 0 ? s->ticket : NULL;
}

const uint8_t *sotls_mbed_session_id(const mbedtls_ssl_session *s, size_t *len)
{
	*len = s->id_len;
	return s->id;
}

const mbedtls_ssl_session *sotls_mbed_session_negotiate(const mbedtls_ssl_context *ssl)
{
	return ssl->session_negotiate;
}

int sotls_mbed_session_suite(const mbedtls_ssl_session *s)
{
	return s->ciphersuite;
}

int sotls_mbed_received_alert(const mbedtls_ssl_context *ssl)
{
	return ssl->in_msg != NULL && ssl->in_msgtype == MBEDTLS_SSL_MSG_ALERT ? ssl->in_msg[1] : -1;
}

/* ---- lib/crypto's ALT hooks ---- */

const mbedtls_mpi *sotls_mbed_point_x(const mbedtls_ecp_point *p)
{
	return &p->X;
}

const mbedtls_mpi *sotls_mbed_point_z(const mbedtls_ecp_point *p)
{
	return &p->Z;
}

const mbedtls_mpi_uint *sotls_mbed_mpi_limbs(const mbedtls_mpi *x, size_t *n)
{
	*n = x->n;
	return x->p;
}

int sotls_mbed_mpi_sign(const mbedtls_mpi *x)
{
	return x->s;
}

uint32_t *sotls_mbed_sha256_state(mbedtls_sha256_context *ctx)
{
	return ctx->state;
}

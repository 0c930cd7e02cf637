/*
 * The few places where sotls reaches into mbedTLS 3.6's private state,
 * kept in this one file so that an mbedTLS update has one place to check.
 * Each has no public API in 3.6:
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
 *   uncompressed in TLS 1.2.
 */
#include "library/ssl_misc.h" /* first: it sets MBEDTLS_ALLOW_PRIVATE_ACCESS */

#include "mbedtls_internals.h"
#include "util.h"

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

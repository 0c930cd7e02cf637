/*
 * One TLS 1.2 handshake through mbedTLS, then the hand-over to sotls's
 * record layer.
 *
 * - Each connection gets its own mbedtls_ssl_config pointing at the shared,
 *   read-only certificates of the sotls_config, its own parsed private key,
 *   and the OS random generator (getrandom) as RNG, so connections on
 *   different threads share no mutable mbedTLS state and take no locks.
 * - The BIO passes mbedTLS's read lengths straight to recv(): in stream mode
 *   mbedTLS asks for the 5-byte header and then exactly the body, so no byte
 *   after the peer's Finished is ever read.
 * - The export-keys callback (set on this connection's config, so it can
 *   only be this connection's handshake; the client random is checked too)
 *   saves the master secret and randoms; the key block is derived with the
 *   suite's PRF and checked against mbedTLS's own.
 * - The next sequence numbers come from mbedTLS's state (cur_out_ctr,
 *   in_ctr): 2.28 has no getter for them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_internal.h> /* handshake->randbytes, for the export check */
#include <mbedtls/x509.h>

#include "handshake.h"
#include "util.h"

struct sotls_hs {
	struct sotls_config *cfg;
	int fd;
	int bio_errno; /* errno of a failed send/recv, 0 if none */
	mbedtls_ssl_config conf;
	mbedtls_ssl_context ssl;
	mbedtls_pk_context key;
	int suites[SOTLS_MAX_SUITES + 1];

	/* Filled by the export callback. */
	bool exported;
	bool export_mismatch;
	uint8_t master[48];
	uint8_t client_random[32];
	uint8_t server_random[32];
	uint8_t mbed_kb[2 * SOTLS_AEAD_MAX_KEY_LEN + 2 * SOTLS_REC_SALT];
	size_t mbed_keylen, mbed_ivlen, mbed_maclen;
};

/* ---- RNG and BIO ---- */

static const mbedtls_ecp_group_id KEX_CURVES[] = {
	MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP384R1,
	MBEDTLS_ECP_DP_SECP521R1, MBEDTLS_ECP_DP_NONE,
};

static int os_random(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	while (len > 0) {
		ssize_t n = getrandom(out, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
		}
		out += n;
		len -= (size_t)n;
	}
	return 0;
}

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct sotls_hs *hs = ctx;
	for (;;) {
		ssize_t n = send(hs->fd, buf, len, MSG_NOSIGNAL);
		if (n >= 0)
			return (int)n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return MBEDTLS_ERR_SSL_WANT_WRITE;
		hs->bio_errno = errno;
		return MBEDTLS_ERR_NET_SEND_FAILED;
	}
}

/* Reads at most len bytes: exactly what mbedTLS asked for, never more. */
static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct sotls_hs *hs = ctx;
	for (;;) {
		ssize_t n = recv(hs->fd, buf, len, 0);
		if (n >= 0)
			return (int)n; /* 0: EOF */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return MBEDTLS_ERR_SSL_WANT_READ;
		hs->bio_errno = errno;
		return MBEDTLS_ERR_NET_RECV_FAILED;
	}
}

/* ---- key export ---- */

static int export_keys(void *ctx, const unsigned char *ms, const unsigned char *kb, size_t maclen,
		       size_t keylen, size_t ivlen, const unsigned char client_random[32],
		       const unsigned char server_random[32], mbedtls_tls_prf_types prf)
{
	struct sotls_hs *hs = ctx;
	(void)prf;

	/* This config belongs to one connection; still make sure the
	 * randoms are the ones of the handshake in progress (at this point
	 * mbedTLS holds them as server_random || client_random). */
	if (hs->ssl.handshake == NULL ||
	    sotls_ct_memcmp(hs->ssl.handshake->randbytes + 32, client_random, 32) != 0 ||
	    sotls_ct_memcmp(hs->ssl.handshake->randbytes, server_random, 32) != 0) {
		hs->export_mismatch = true;
		return 0;
	}
	memcpy(hs->master, ms, sizeof(hs->master));
	memcpy(hs->client_random, client_random, 32);
	memcpy(hs->server_random, server_random, 32);
	hs->mbed_maclen = maclen;
	hs->mbed_keylen = keylen;
	hs->mbed_ivlen = ivlen;
	size_t kb_len = 2 * maclen + 2 * keylen + 2 * ivlen;
	if (maclen == 0 && keylen <= SOTLS_AEAD_MAX_KEY_LEN && ivlen >= SOTLS_REC_SALT &&
	    2 * keylen + 2 * SOTLS_REC_SALT <= sizeof(hs->mbed_kb)) {
		/* mbedTLS lays the block out as client key, server key, client
		 * IV, server IV (fixed_ivlen = 4 for GCM). */
		memcpy(hs->mbed_kb, kb, 2 * keylen);
		memcpy(hs->mbed_kb + 2 * keylen, kb + 2 * keylen, SOTLS_REC_SALT);
		memcpy(hs->mbed_kb + 2 * keylen + SOTLS_REC_SALT, kb + 2 * keylen + ivlen,
		       SOTLS_REC_SALT);
		hs->exported = ivlen == SOTLS_REC_SALT && kb_len > 0;
	}
	return 0;
}

/* ---- set-up ---- */

static void set_detail(char *detail, size_t len, const char *fmt, const char *arg, int mbed_err)
{
	char buf[160] = "";
	if (mbed_err != 0)
		mbedtls_strerror(mbed_err, buf, sizeof(buf));
	snprintf(detail, len, fmt, arg != NULL ? arg : buf);
}

int sotls_hs_new(struct sotls_hs **out, struct sotls_config *cfg, int fd,
		 const char *server_name, char *detail, size_t detail_len)
{
	struct sotls_hs *hs = calloc(1, sizeof(*hs));
	if (hs == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	hs->cfg = cfg;
	hs->fd = fd;
	mbedtls_ssl_config_init(&hs->conf);
	mbedtls_ssl_init(&hs->ssl);
	mbedtls_pk_init(&hs->key);
	memcpy(hs->suites, cfg->suites, sizeof(hs->suites));

	bool server = cfg->role == SOTLS_ROLE_SERVER;
	int rc = SOTLS_ERR_INTERNAL;
	int mrc = mbedtls_ssl_config_defaults(&hs->conf,
					      server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
					      MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (mrc != 0) {
		set_detail(detail, detail_len, "mbedTLS config: %s", NULL, mrc);
		goto fail;
	}
	mbedtls_ssl_conf_min_version(&hs->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
				     MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_max_version(&hs->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
				     MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_ciphersuites(&hs->conf, hs->suites);
	mbedtls_ssl_conf_rng(&hs->conf, os_random, NULL);
	/* Secure renegotiation (RFC 5746) is signalled; renegotiation itself
	 * is refused, here and in the record layer. */
	mbedtls_ssl_conf_renegotiation(&hs->conf, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
	mbedtls_ssl_conf_legacy_renegotiation(&hs->conf, MBEDTLS_SSL_LEGACY_NO_RENEGOTIATION);
	mbedtls_ssl_conf_extended_master_secret(&hs->conf, MBEDTLS_SSL_EXTENDED_MS_ENABLED);
	if (!server)
		mbedtls_ssl_conf_session_tickets(&hs->conf, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
	mbedtls_ssl_conf_export_keys_ext_cb(&hs->conf, export_keys, hs);
	/* mbedTLS's default order starts with P-521, several times slower than
	 * P-256 and X25519 for the same handshake; the others stay for peers'
	 * certificates and for clients that offer nothing else. */
	mbedtls_ssl_conf_curves(&hs->conf, KEX_CURVES);

	if (cfg->verify == SOTLS_VERIFY_REQUIRED) {
		mbedtls_ssl_conf_authmode(&hs->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
		mbedtls_ssl_conf_ca_chain(&hs->conf, cfg->have_ca ? &cfg->ca : NULL, NULL);
	} else {
		mbedtls_ssl_conf_authmode(&hs->conf, MBEDTLS_SSL_VERIFY_NONE);
	}
	if (cfg->have_chain) {
		mrc = mbedtls_pk_parse_key(&hs->key, cfg->key_buf, cfg->key_len, NULL, 0);
		if (mrc == 0)
			mrc = mbedtls_ssl_conf_own_cert(&hs->conf, &cfg->chain, &hs->key);
		if (mrc != 0) {
			rc = SOTLS_ERR_KEY_LOAD;
			set_detail(detail, detail_len, "own certificate: %s", NULL, mrc);
			goto fail;
		}
	} else if (server) {
		rc = SOTLS_ERR_BAD_STATE;
		set_detail(detail, detail_len, "%s", "a server configuration needs a certificate", 0);
		goto fail;
	}

	mrc = mbedtls_ssl_setup(&hs->ssl, &hs->conf);
	if (mrc == 0 && !server && server_name != NULL)
		mrc = mbedtls_ssl_set_hostname(&hs->ssl, server_name);
	if (mrc != 0) {
		rc = mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY : SOTLS_ERR_INTERNAL;
		set_detail(detail, detail_len, "mbedTLS setup: %s", NULL, mrc);
		goto fail;
	}
	mbedtls_ssl_set_bio(&hs->ssl, hs, bio_send, bio_recv, NULL);
	*out = hs;
	return 0;
fail:
	sotls_hs_free(hs);
	return rc;
}

void sotls_hs_free(struct sotls_hs *hs)
{
	if (hs == NULL)
		return;
	mbedtls_ssl_free(&hs->ssl);
	mbedtls_ssl_config_free(&hs->conf);
	mbedtls_pk_free(&hs->key);
	sotls_wipe(hs, sizeof(*hs));
	free(hs);
}

/* ---- running it ---- */

static const char *alert_name(int desc)
{
	switch (desc) {
	case 0: return "close_notify";
	case 10: return "unexpected_message";
	case 20: return "bad_record_mac";
	case 22: return "record_overflow";
	case 40: return "handshake_failure";
	case 42: return "bad_certificate";
	case 43: return "unsupported_certificate";
	case 44: return "certificate_revoked";
	case 45: return "certificate_expired";
	case 46: return "certificate_unknown";
	case 47: return "illegal_parameter";
	case 48: return "unknown_ca";
	case 50: return "decode_error";
	case 51: return "decrypt_error";
	case 70: return "protocol_version";
	case 71: return "insufficient_security";
	case 80: return "internal_error";
	case 100: return "no_renegotiation";
	case 112: return "unrecognized_name";
	}
	return "unknown alert";
}

/* Turns an mbedTLS handshake failure into a sotls code and a message. */
static int map_error(struct sotls_hs *hs, int mrc, char *detail, size_t len, int *sys_errno)
{
	char msg[160] = "";
	mbedtls_strerror(mrc, msg, sizeof(msg));

	switch (mrc) {
	case MBEDTLS_ERR_NET_SEND_FAILED:
	case MBEDTLS_ERR_NET_RECV_FAILED:
		*sys_errno = hs->bio_errno;
		snprintf(detail, len, "handshake I/O failed: %s", strerror(hs->bio_errno));
		return SOTLS_ERR_SYSCALL;
	case MBEDTLS_ERR_SSL_CONN_EOF:
		snprintf(detail, len, "the peer closed the connection during the handshake");
		return SOTLS_ERR_TRUNCATED;
	case MBEDTLS_ERR_SSL_NO_CIPHER_CHOSEN:
	case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
		snprintf(detail, len, "mbedTLS: %s", msg);
		return SOTLS_ERR_NO_SHARED_SUITE;
	case MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION:
		snprintf(detail, len, "mbedTLS: %s", msg);
		return SOTLS_ERR_PROTOCOL_VERSION;
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
	case MBEDTLS_ERR_SSL_CA_CHAIN_REQUIRED:
	case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE: {
		char info[200] = "";
		uint32_t flags = mbedtls_ssl_get_verify_result(&hs->ssl);
		if (flags != 0 && flags != (uint32_t)-1) {
			mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
			size_t n = strlen(info);
			while (n > 0 && info[n - 1] == '\n')
				info[--n] = '\0';
			for (char *p = info; *p; p++)
				if (*p == '\n')
					*p = ';';
		}
		snprintf(detail, len, "certificate verification failed: %s%s",
			 info[0] ? info : msg,
			 hs->cfg->have_ca || hs->cfg->verify == SOTLS_VERIFY_NONE
				 ? ""
				 : " (no CA certificates configured)");
		return SOTLS_ERR_CERT_VERIFY;
	}
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE: {
		int desc = hs->ssl.in_msg != NULL ? hs->ssl.in_msg[1] : -1;
		snprintf(detail, len, "the peer sent fatal alert %s (%d)%s", alert_name(desc), desc,
			 desc == 40 ? ": probably no cipher suite in common" : "");
		if (desc == 70)
			return SOTLS_ERR_PROTOCOL_VERSION;
		return SOTLS_ERR_PEER_ALERT;
	}
	case MBEDTLS_ERR_SSL_ALLOC_FAILED:
		snprintf(detail, len, "out of memory in the handshake");
		return SOTLS_ERR_OUT_OF_MEMORY;
	}
	snprintf(detail, len, "handshake failed: %s", msg);
	return SOTLS_ERR_HANDSHAKE;
}

int sotls_hs_step(struct sotls_hs *hs, struct sotls_hs_result *res, char *detail,
		  size_t detail_len, int *sys_errno)
{
	int mrc = mbedtls_ssl_handshake(&hs->ssl);
	if (mrc == MBEDTLS_ERR_SSL_WANT_READ)
		return SOTLS_WANT_READ;
	if (mrc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return SOTLS_WANT_WRITE;
	if (mrc != 0)
		return map_error(hs, mrc, detail, detail_len, sys_errno);

	/* Complete. Nothing may be left inside mbedTLS: the record layer
	 * starts reading at the first byte after the peer's Finished. */
	if (mbedtls_ssl_check_pending(&hs->ssl) != 0 || hs->ssl.in_left != 0) {
		snprintf(detail, detail_len, "the peer sent data inside its last handshake record");
		return SOTLS_ERR_UNEXPECTED_MESSAGE;
	}
	if (hs->export_mismatch || !hs->exported) {
		snprintf(detail, detail_len, "mbedTLS did not export this handshake's keys");
		return SOTLS_ERR_INTERNAL;
	}
	int id = mbedtls_ssl_get_ciphersuite_id(mbedtls_ssl_get_ciphersuite(&hs->ssl));
	const struct sotls_suite *suite = sotls_suite_by_id((uint16_t)id);
	if (suite == NULL || hs->mbed_keylen != sotls_aead_key_len(suite->alg)) {
		snprintf(detail, detail_len, "negotiated an unsupported suite 0x%04x", id);
		return SOTLS_ERR_INTERNAL;
	}
	if (mbedtls_ssl_get_version(&hs->ssl) == NULL ||
	    strcmp(mbedtls_ssl_get_version(&hs->ssl), "TLSv1.2") != 0) {
		snprintf(detail, detail_len, "negotiated a version other than TLS 1.2");
		return SOTLS_ERR_PROTOCOL_VERSION;
	}

	memset(res, 0, sizeof(*res));
	res->suite = suite;
	int rc = sotls_derive_key_block(suite, hs->master, hs->client_random, hs->server_random,
					&res->kb);
	if (rc == 0) {
		/* Our PRF and mbedTLS's must agree on every byte. */
		size_t k = res->kb.key_len;
		uint8_t mine[sizeof(hs->mbed_kb)];
		memcpy(mine, res->kb.client_key, k);
		memcpy(mine + k, res->kb.server_key, k);
		memcpy(mine + 2 * k, res->kb.client_salt, SOTLS_REC_SALT);
		memcpy(mine + 2 * k + SOTLS_REC_SALT, res->kb.server_salt, SOTLS_REC_SALT);
		if (sotls_ct_memcmp(mine, hs->mbed_kb, 2 * k + 2 * SOTLS_REC_SALT) != 0)
			rc = SOTLS_ERR_INTERNAL;
		sotls_wipe(mine, sizeof(mine));
	}
	if (rc != 0) {
		sotls_wipe(&res->kb, sizeof(res->kb));
		snprintf(detail, detail_len, "key block derivation disagrees with mbedTLS");
		return SOTLS_ERR_INTERNAL;
	}

	/* The next sequence numbers, from mbedTLS's own counters. */
	uint64_t out_seq = sotls_load_be64(hs->ssl.cur_out_ctr);
	uint64_t in_seq = sotls_load_be64(hs->ssl.in_ctr);
	if (hs->cfg->role == SOTLS_ROLE_SERVER) {
		res->server_seq = out_seq;
		res->client_seq = in_seq;
	} else {
		res->client_seq = out_seq;
		res->server_seq = in_seq;
	}
	sotls_wipe(hs->master, sizeof(hs->master));
	sotls_wipe(hs->mbed_kb, sizeof(hs->mbed_kb));
	return 0;
}

/*
 * The decision on the peer's certificate chain.
 *
 * mbedTLS runs with authmode OPTIONAL whenever a chain is to be checked (a
 * server in SOTLS_VERIFY_NONE does not ask for one): it verifies, records
 * the flags and goes on, and never decides or alerts itself. While it
 * verifies, sotls_hs_verify_chain sees each certificate of the chain it
 * built (top first, the leaf last) and copies the chain out
 * (peer_identity.c). Right after the Certificate message sotls_hs_check_peer
 * takes the final flags (mbedTLS adds key usage and curve checks after the
 * chain), asks the verify callback, and accepts or fails with the alert of
 * RFC 5246 §7.2.2 before sotls answers the message. hs.c checks at the end
 * of the handshake that this decision was made.
 */
#include <stdio.h>
#include <string.h>

#include <mbedtls/ssl.h>
#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>

#include "hs_internal.h"
#include "peer_identity.h"

/* sotls's flags are mbedTLS's, passed through unchanged. */
_Static_assert(SOTLS_CERT_EXPIRED == MBEDTLS_X509_BADCERT_EXPIRED &&
		       SOTLS_CERT_REVOKED == MBEDTLS_X509_BADCERT_REVOKED &&
		       SOTLS_CERT_NAME_MISMATCH == MBEDTLS_X509_BADCERT_CN_MISMATCH &&
		       SOTLS_CERT_NOT_TRUSTED == MBEDTLS_X509_BADCERT_NOT_TRUSTED &&
		       SOTLS_CERT_CRL_NOT_TRUSTED == MBEDTLS_X509_BADCRL_NOT_TRUSTED &&
		       SOTLS_CERT_CRL_EXPIRED == MBEDTLS_X509_BADCRL_EXPIRED &&
		       SOTLS_CERT_OTHER == MBEDTLS_X509_BADCERT_OTHER &&
		       SOTLS_CERT_FUTURE == MBEDTLS_X509_BADCERT_FUTURE &&
		       SOTLS_CERT_CRL_FUTURE == MBEDTLS_X509_BADCRL_FUTURE &&
		       SOTLS_CERT_KEY_USAGE == MBEDTLS_X509_BADCERT_KEY_USAGE &&
		       SOTLS_CERT_EXT_KEY_USAGE == MBEDTLS_X509_BADCERT_EXT_KEY_USAGE &&
		       SOTLS_CERT_BAD_MD == MBEDTLS_X509_BADCERT_BAD_MD &&
		       SOTLS_CERT_BAD_PK == MBEDTLS_X509_BADCERT_BAD_PK &&
		       SOTLS_CERT_BAD_KEY == MBEDTLS_X509_BADCERT_BAD_KEY &&
		       SOTLS_CERT_CRL_BAD_MD == MBEDTLS_X509_BADCRL_BAD_MD &&
		       SOTLS_CERT_CRL_BAD_PK == MBEDTLS_X509_BADCRL_BAD_PK &&
		       SOTLS_CERT_CRL_BAD_KEY == MBEDTLS_X509_BADCRL_BAD_KEY,
	       "enum sotls_cert_problem must equal mbedTLS's MBEDTLS_X509_BAD* flags");
_Static_assert(SOTLS_HS_MAX_CHAIN == MBEDTLS_X509_MAX_VERIFY_CHAIN_SIZE,
	       "the chain buffer of struct sotls_hs must hold mbedTLS's longest chain");

SOTLS_API int sotls_config_set_verify_callback(struct sotls_config *cfg, sotls_verify_fn fn,
					       void *arg)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->verify_fn = fn;
	cfg->verify_arg = fn != NULL ? arg : NULL;
	return 0;
}

const struct sotls_peer *sotls_hs_peer(const struct sotls_hs *hs)
{
	return hs->peer;
}

void sotls_verify_reason(uint32_t flags, char *out, size_t len)
{
	out[0] = '\0';
	if (flags == 0 || mbedtls_x509_crt_verify_info(out, len, "", flags) < 0)
		return;
	/* mbedTLS writes one line per flag. */
	size_t n = strlen(out);
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ';';
}

int sotls_verify_alert(uint32_t flags)
{
	/* RFC 5246 §7.2.2, most specific first (mbedTLS's order). */
	if (flags & SOTLS_CERT_NAME_MISMATCH)
		return SOTLS_ALERT_BAD_CERTIFICATE;
	if (flags & (SOTLS_CERT_KEY_USAGE | SOTLS_CERT_EXT_KEY_USAGE | SOTLS_CERT_BAD_PK |
		     SOTLS_CERT_BAD_KEY))
		return SOTLS_ALERT_UNSUPPORTED_CERTIFICATE;
	if (flags & (SOTLS_CERT_EXPIRED | SOTLS_CERT_FUTURE))
		return SOTLS_ALERT_CERTIFICATE_EXPIRED; /* "expired or is not currently valid" */
	if (flags & SOTLS_CERT_REVOKED)
		return SOTLS_ALERT_CERTIFICATE_REVOKED;
	if (flags & SOTLS_CERT_NOT_TRUSTED)
		return SOTLS_ALERT_UNKNOWN_CA;
	return SOTLS_ALERT_CERTIFICATE_UNKNOWN;
}

int sotls_hs_verify_chain(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	struct sotls_hs *hs = ctx;
	if (depth < 0 || depth >= SOTLS_HS_MAX_CHAIN)
		return MBEDTLS_ERR_X509_FATAL_ERROR;
	if (depth == 0)
		sotls_hs_verify_name(hs, crt, flags);
	/* mbedTLS calls from the top of the chain down: the first call gives
	 * the length. */
	if (hs->vchain_len == 0)
		hs->vchain_len = (size_t)depth + 1;
	hs->vchain[depth] = crt;
	hs->vflags[depth] = *flags;
	if (depth != 0)
		return 0;
	sotls_peer_free(hs->peer);
	hs->peer = sotls_peer_new(hs->vchain, hs->vflags, hs->vchain_len, &hs->cfg->ca);
	hs->vchain_len = 0;
	return hs->peer == NULL ? MBEDTLS_ERR_X509_ALLOC_FAILED : 0;
}

static bool is_alert_verdict(int v)
{
	return (v >= SOTLS_VERDICT_REJECT_BAD_CERTIFICATE &&
		v <= SOTLS_VERDICT_REJECT_CERTIFICATE_UNKNOWN) ||
	       v == SOTLS_VERDICT_REJECT_UNKNOWN_CA || v == SOTLS_VERDICT_REJECT_ACCESS_DENIED;
}

int sotls_hs_check_peer(struct sotls_hs *hs)
{
	const struct sotls_config *cfg = hs->cfg;
	hs->peer_checked = true;
	if (hs->server && cfg->verify == SOTLS_VERIFY_NONE)
		return 0; /* no certificate was asked for */
	struct sotls_peer *p = hs->peer;
	if (p == NULL) {
		/* RFC 5246 §7.4.6: without a client certificate the server
		 * "MAY ... continue the handshake without client
		 * authentication, or respond with a fatal handshake_failure
		 * alert". A server always sends one in sotls's suites
		 * (mbedTLS fails the handshake before). */
		if (hs->server && cfg->verify == SOTLS_VERIFY_OPTIONAL)
			return 0;
		return sotls_hs_fail(hs, SOTLS_ERR_CERT_VERIFY, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "the %s sent no certificate, and one is required",
				     hs->server ? "client" : "server");
	}

	uint32_t flags = mbedtls_ssl_get_verify_result(&hs->ssl);
	/* What mbedTLS checked after the chain (key usage, the key's curve)
	 * concerns the leaf. */
	uint32_t seen = 0;
	for (size_t i = 0; i < p->n_certs; i++)
		seen |= p->certs[i].flags;
	p->certs[0].flags |= flags & ~seen;
	p->flags = flags;

	char reason[256];
	sotls_verify_reason(flags, reason, sizeof(reason));
	bool enforce = hs->server || cfg->verify != SOTLS_VERIFY_NONE;
	int verdict = flags == 0 || !enforce ? SOTLS_VERDICT_ACCEPT : SOTLS_VERDICT_REJECT;
	bool asked = enforce && cfg->verify_fn != NULL;
	if (asked) {
		struct sotls_verify_info info = {.flags = flags,
						 .reason = reason,
						 .chain_len = p->n_certs,
						 .chain = p->certs};
		int v = cfg->verify_fn(hs->conn, &info, cfg->verify_arg);
		if (v != SOTLS_VERDICT_DEFAULT)
			verdict = v;
	}
	if (verdict == SOTLS_VERDICT_ACCEPT) {
		p->verified = flags == 0 || asked;
		return 0;
	}
	int alert = is_alert_verdict(verdict) ? verdict : sotls_verify_alert(flags);
	if (asked && flags == 0)
		return sotls_hs_fail(hs, SOTLS_ERR_CERT_VERIFY, alert,
				     "the verify callback rejected the %s's chain, which verified",
				     hs->server ? "client" : "server");
	return sotls_hs_fail(hs, SOTLS_ERR_CERT_VERIFY, alert,
			     "certificate verification failed%s: %s%s",
			     asked ? " (the verify callback agreed)" : "", reason,
			     cfg->have_ca ? "" : " (no CA certificates configured)");
}

static bool san_has_ip(const mbedtls_x509_crt *crt, const uint8_t *ip, size_t ip_len)
{
	for (const mbedtls_x509_sequence *s = &crt->subject_alt_names; s != NULL; s = s->next) {
		mbedtls_x509_subject_alternative_name san;
		if (s->buf.p == NULL || mbedtls_x509_parse_subject_alt_name(&s->buf, &san) != 0)
			continue;
		bool match = san.type == MBEDTLS_X509_SAN_IP_ADDRESS &&
			     san.san.unstructured_name.len == ip_len &&
			     memcmp(san.san.unstructured_name.p, ip, ip_len) == 0;
		mbedtls_x509_free_subject_alt_name(&san);
		if (match)
			return true;
	}
	return false;
}

/*
 * The leaf's name check where mbedTLS does not do it: an IP literal, which
 * is not sent as SNI (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not
 * permitted in HostName") and must match an iPAddress SAN (RFC 6125 §1.7.2,
 * RFC 5280 §4.2.1.6); and SOTLS_VERIFY_CHAIN_ONLY, which asked for no name
 * check.
 */
void sotls_hs_verify_name(struct sotls_hs *hs, const mbedtls_x509_crt *leaf, uint32_t *flags)
{
	if (hs->chain_only)
		*flags &= ~(uint32_t)MBEDTLS_X509_BADCERT_CN_MISMATCH;
	else if (hs->check_ip && !san_has_ip(leaf, hs->ip, hs->ip_len))
		*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
}

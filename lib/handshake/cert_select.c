/*
 * Which certificate a server sends, per handshake. mbedTLS 3.6 calls the
 * certificate callback once the ClientHello's extensions are parsed and
 * before it picks the suite; the callback lists the chains the SNI host
 * name allows (mbedtls_ssl_set_hs_own_cert), and mbedTLS takes, for each
 * suite in sotls's order, the first of them whose key fits the suite, the
 * client's signature_algorithms and its curves. Without a usable name the
 * configuration's own list is used: every certificate, the default first.
 */
#include <string.h>

#include "hs_internal.h"
#include "mbedtls_internals.h"

static int select_cert(mbedtls_ssl_context *ssl);

int sotls_certs_configure(struct sotls_config *cfg, mbedtls_ssl_config *conf)
{
	bool server = cfg->role == SOTLS_ROLE_SERVER;
	/* A client sends the first (mbedTLS uses no other). */
	size_t n = server ? cfg->n_certs : cfg->n_certs > 0;
	for (size_t i = 0; i < n; i++) {
		int mrc = mbedtls_ssl_conf_own_cert(conf, &cfg->certs[i].cert->chain,
						    &cfg->certs[i].cert->key);
		if (mrc != 0)
			return mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY
								   : SOTLS_ERR_KEY_LOAD;
	}
	if (server)
		mbedtls_ssl_conf_cert_cb(conf, select_cert);
	return 0;
}

/* RFC 6125 §6.4.3: "*.example.com" stands for one whole leftmost label. */
static bool name_matches(const char *pattern, const char *host, bool wildcard)
{
	if (wildcard != (pattern[0] == '*'))
		return false;
	if (!wildcard)
		return strcmp(pattern, host) == 0;
	const char *dot = strchr(host, '.');
	return dot != NULL && dot != host && strcmp(dot + 1, pattern + 2) == 0;
}

static bool serves(const struct sotls_cert_entry *e, const char *host, bool wildcard)
{
	for (size_t i = 0; i < e->n_names; i++)
		if (name_matches(e->names[i], host, wildcard))
			return true;
	return false;
}

static int offer(struct sotls_hs *hs, struct sotls_cert *cert)
{
	int mrc = mbedtls_ssl_set_hs_own_cert(&hs->ssl, &cert->chain, &cert->key);
	if (mrc != 0)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the certificate choice");
	return 0;
}

/* The chains the name allows: exact matches, then wildcard ones (a
 * certificate that matched exactly is not listed twice). */
static int offer_by_name(struct sotls_hs *hs, size_t *found)
{
	const struct sotls_config *cfg = hs->cfg;
	*found = 0;
	for (int wildcard = 0; wildcard < 2; wildcard++) {
		for (size_t i = 0; i < cfg->n_certs; i++) {
			const struct sotls_cert_entry *e = &cfg->certs[i];
			if (!serves(e, hs->sni, wildcard) || (wildcard && serves(e, hs->sni, false)))
				continue;
			int rc = offer(hs, e->cert);
			if (rc != 0)
				return rc;
			++*found;
		}
	}
	return 0;
}

/* The SNI callback's answer: 1 if it gave a chain, 0 if not, or a failure. */
static int ask_callback(struct sotls_hs *hs)
{
	struct sotls_cert *cert = NULL;
	if (hs->cfg->sni_cb(hs->cfg->sni_cb_arg, hs->sni, &cert) < 0)
		/* RFC 6066 §3: a server that "does not recognize the server
		 * name" may "abort the handshake by sending a fatal-level
		 * unrecognized_name(112) alert". */
		return sotls_hs_fail(hs, SOTLS_ERR_UNRECOGNIZED_NAME, SOTLS_ALERT_UNRECOGNIZED_NAME,
				     "the SNI callback refused the name %s", hs->sni);
	if (cert == NULL)
		return 0;
	sotls_cert_ref(cert);
	hs->cb_cert = cert;
	int rc = offer(hs, cert);
	return rc != 0 ? rc : 1;
}

int sotls_cert_select_ask(struct sotls_hs *hs)
{
	const struct sotls_config *cfg = hs->cfg;
	if (cfg->select_cb == NULL || hs->select != SELECT_NONE)
		return 0;
	struct sotls_cert *cert = NULL;
	int rc = cfg->select_cb(hs->conn, cfg->select_cb_arg, hs->sni_present ? hs->sni : "", &cert);
	if (rc == SOTLS_CERT_PENDING) {
		hs->select = SELECT_PENDING;
		return 1;
	}
	hs->select = SELECT_DONE;
	if (rc < 0)
		/* RFC 6066 §3: the server "MAY abort the handshake by sending a
		 * fatal-level unrecognized_name(112) alert". */
		return sotls_hs_fail(hs, SOTLS_ERR_UNRECOGNIZED_NAME, SOTLS_ALERT_UNRECOGNIZED_NAME,
				     "the certificate selection callback refused the name \"%s\"",
				     hs->sni_present ? hs->sni : "");
	if (cert != NULL) {
		sotls_cert_ref(cert);
		hs->cb_cert = cert;
	}
	return 0;
}

int sotls_hs_set_cert(struct sotls_hs *hs, struct sotls_cert *cert)
{
	if (hs->select != SELECT_PENDING)
		return SOTLS_ERR_BAD_STATE;
	if (cert != NULL) {
		sotls_cert_ref(cert);
		hs->cb_cert = cert;
	}
	hs->select = SELECT_ANSWERED;
	return 0;
}

static int select_cert(mbedtls_ssl_context *ssl)
{
	struct sotls_hs *hs = mbedtls_ssl_get_user_data_p(ssl);
	const struct sotls_config *cfg = hs->cfg;
	if (cfg->select_cb != NULL && hs->cb_cert != NULL) {
		/* The selection callback's chain (sotls_cert_select_ask). */
		int rc = offer(hs, hs->cb_cert);
		if (rc == 0 && hs->sni_present)
			hs->sni_ack = SNI_ACK_PENDING;
		return rc;
	}
	if (hs->sni_present) {
		size_t found = 0;
		int rc = cfg->sni_cb != NULL && cfg->select_cb == NULL ? ask_callback(hs) : 0;
		if (rc == 1)
			found = 1;
		else if (rc == 0)
			rc = offer_by_name(hs, &found);
		if (rc < 0)
			return rc;
		if (found > 0) {
			/* RFC 6066 §3: a server that used the name "SHALL
			 * include an extension of type "server_name" in the
			 * (extended) server hello". */
			hs->sni_ack = SNI_ACK_PENDING;
			return 0;
		}
		if (cfg->sni_policy == SOTLS_SNI_REFUSE_UNKNOWN)
			return sotls_hs_fail(hs, SOTLS_ERR_UNRECOGNIZED_NAME,
					     SOTLS_ALERT_UNRECOGNIZED_NAME,
					     "no certificate for the name %s the client asked for",
					     hs->sni);
	}
	if (cfg->n_certs == 0)
		/* RFC 5246 §7.4.2: every sotls suite needs a server
		 * certificate; with none there is no acceptable choice. */
		return sotls_hs_fail(hs, SOTLS_ERR_HANDSHAKE, SOTLS_ALERT_HANDSHAKE_FAILURE,
				     "no certificate for %s%s: the SNI callback gave none and the "
				     "configuration has none",
				     hs->sni_present ? "the name " : "a client without SNI", hs->sni);
	return 0;
}

/* The index of the certificate whose chain is chain: SOTLS_CERT_INDEX_CALLBACK
 * for the SNI callback's, -1 if none. */
static int index_of(const struct sotls_hs *hs, const mbedtls_x509_crt *chain)
{
	if (hs->cb_cert != NULL && chain == &hs->cb_cert->chain)
		return SOTLS_CERT_INDEX_CALLBACK;
	for (size_t i = 0; i < hs->cfg->n_certs; i++)
		if (chain == &hs->cfg->certs[i].cert->chain)
			return (int)i;
	return -1;
}

void sotls_cert_note_choice(struct sotls_hs *hs)
{
	int i = index_of(hs, sotls_mbed_own_chain(&hs->ssl));
	if (i != -1)
		hs->cert_index = i;
}

struct sotls_cert *sotls_hs_cert_of(const struct sotls_hs *hs, const mbedtls_x509_crt *chain)
{
	int i = index_of(hs, chain);
	return i == SOTLS_CERT_INDEX_CALLBACK ? hs->cb_cert
	       : i >= 0			      ? hs->cfg->certs[i].cert
					      : NULL;
}

SOTLS_API int sotls_config_set_sni_policy(struct sotls_config *cfg, enum sotls_sni_policy policy)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (policy != SOTLS_SNI_DEFAULT_CERT && policy != SOTLS_SNI_REFUSE_UNKNOWN)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->sni_policy = policy;
	return 0;
}

SOTLS_API int sotls_config_set_cert_select(struct sotls_config *cfg, sotls_cert_select_cb cb,
					   void *arg)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->select_cb = cb;
	cfg->select_cb_arg = cb != NULL ? arg : NULL;
	return 0;
}

SOTLS_API int sotls_config_set_sni_callback(struct sotls_config *cfg, sotls_sni_cb cb, void *arg)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->sni_cb = cb;
	cfg->sni_cb_arg = cb != NULL ? arg : NULL;
	return 0;
}

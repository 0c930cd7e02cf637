/*
 * The shared configuration. Built by one thread with the setters, then
 * frozen (read-only) when the first connection takes a reference.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/random.h>

#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>

#include "handshake.h"
#include "record.h"
#include "util.h"

/*
 * The default: every supported suite. ARIA first (what sotls is for), then
 * AES-GCM, so a peer without ARIA (a stock OpenSSL, a browser) still finds a
 * suite in common; within each, ECDSA before RSA, 128-bit before 256-bit
 * keys. A server picks by this order, not the client's (mbedTLS's default).
 */
static const int DEFAULT_SUITES[] = {0xC05C, 0xC060, 0xC05D, 0xC061,
				     0xC02B, 0xC02F, 0xC02C, 0xC030, 0};
_Static_assert(sizeof(DEFAULT_SUITES) / sizeof(DEFAULT_SUITES[0]) <= SOTLS_MAX_SUITES + 1,
	       "DEFAULT_SUITES does not fit sotls_config.suites");

SOTLS_API struct sotls_config *sotls_config_new(enum sotls_role role)
{
	if (role != SOTLS_ROLE_CLIENT && role != SOTLS_ROLE_SERVER)
		return NULL;
	struct sotls_config *cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return NULL;
	atomic_init(&cfg->refs, 1);
	atomic_init(&cfg->frozen, false);
	cfg->role = role;
	cfg->verify = role == SOTLS_ROLE_CLIENT ? SOTLS_VERIFY_REQUIRED : SOTLS_VERIFY_NONE;
	cfg->ktls = SOTLS_KTLS_AUTO;
	memcpy(cfg->suites, DEFAULT_SUITES, sizeof(DEFAULT_SUITES));
	mbedtls_x509_crt_init(&cfg->ca);
	mbedtls_x509_crl_init(&cfg->crl);
	mbedtls_ssl_config_init(&cfg->conf);
	if (pthread_mutex_init(&cfg->build_lock, NULL) != 0) {
		free(cfg);
		return NULL;
	}
	if (sotls_resume_config_init(&cfg->resume, role == SOTLS_ROLE_SERVER) != 0) {
		sotls_config_free(cfg);
		return NULL;
	}
	return cfg;
}

SOTLS_API void sotls_config_free(struct sotls_config *cfg)
{
	if (cfg == NULL || atomic_fetch_sub(&cfg->refs, 1) != 1)
		return;
	mbedtls_ssl_config_free(&cfg->conf);
	mbedtls_x509_crt_free(&cfg->ca);
	sotls_certs_free(cfg);
	sotls_alpn_free(cfg);
	mbedtls_x509_crl_free(&cfg->crl);
	pthread_mutex_destroy(&cfg->build_lock);
	free(cfg->server_name);
	sotls_config_forget_password(cfg);
	sotls_resume_config_free(&cfg->resume);
	sotls_wipe(cfg, sizeof(*cfg));
	free(cfg);
}

SOTLS_API const char *sotls_config_error_detail(const struct sotls_config *cfg)
{
	return cfg == NULL ? "" : cfg->detail;
}

SOTLS_API int sotls_config_set_ca_mem(struct sotls_config *cfg, const void *ca, size_t len)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (ca == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* Parse into a scratch chain first so a bad file changes nothing. */
	mbedtls_x509_crt tmp;
	mbedtls_x509_crt_init(&tmp);
	int mrc = sotls_parse_certs(&tmp, ca, len);
	mbedtls_x509_crt_free(&tmp);
	if (mrc == 0)
		mrc = sotls_parse_certs(&cfg->ca, ca, len);
	if (mrc != 0) {
		char why[200];
		sotls_mbed_reason(mrc, why, sizeof(why));
		return sotls_config_fail(cfg, SOTLS_ERR_CA_LOAD, "CA certificates: %s", why);
	}
	cfg->have_ca = true;
	return 0;
}

SOTLS_API int sotls_config_set_ca_file(struct sotls_config *cfg, const char *path)
{
	return sotls_config_load_file(cfg, path, SOTLS_ERR_CA_LOAD, sotls_config_set_ca_mem);
}

SOTLS_API int sotls_config_set_verify(struct sotls_config *cfg, enum sotls_verify mode)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (mode != SOTLS_VERIFY_NONE && mode != SOTLS_VERIFY_REQUIRED &&
	    mode != SOTLS_VERIFY_CHAIN_ONLY &&
	    !(mode == SOTLS_VERIFY_OPTIONAL && cfg->role == SOTLS_ROLE_SERVER))
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->verify = mode;
	return 0;
}

SOTLS_API int sotls_config_set_server_name(struct sotls_config *cfg, const char *name)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	char *copy = NULL;
	if (name != NULL) {
		if (name[0] == '\0' || strlen(name) > 255)
			return SOTLS_ERR_INVALID_ARGUMENT;
		copy = strdup(name);
		if (copy == NULL)
			return SOTLS_ERR_OUT_OF_MEMORY;
	}
	free(cfg->server_name);
	cfg->server_name = copy;
	return 0;
}

SOTLS_API int sotls_config_set_suites(struct sotls_config *cfg, const char *list)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (list == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return sotls_suites_parse(list, cfg->suites);
}

SOTLS_API int sotls_config_set_ktls(struct sotls_config *cfg, enum sotls_ktls_policy policy)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (policy != SOTLS_KTLS_AUTO && policy != SOTLS_KTLS_OFF && policy != SOTLS_KTLS_REQUIRE &&
	    policy != SOTLS_KTLS_TX_ONLY && policy != SOTLS_KTLS_RX_ONLY)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->ktls = policy;
	return 0;
}

SOTLS_API int sotls_config_set_sendfile_mode(struct sotls_config *cfg,
					     enum sotls_sendfile_mode mode)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if ((unsigned)mode > SOTLS_SENDFILE_PLAIN)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->sendfile_mode = mode;
	return 0;
}

SOTLS_API int sotls_config_set_key_usage_limit(struct sotls_config *cfg, uint64_t records)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	/* The default is the safe bound for AES-GCM and ARIA-GCM (record.h):
	 * only a lower limit makes sense. */
	if (records == 0 || records > SOTLS_REC_DEFAULT_KEY_LIMIT)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->key_usage_limit = records;
	return 0;
}

SOTLS_API int sotls_config_set_max_fragment_length(struct sotls_config *cfg, unsigned len)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	/* RFC 6066 §4: "The allowed values for this field are: 2^9, 2^10,
	 * 2^11, and 2^12"; only a client asks for one. */
	if (cfg->role != SOTLS_ROLE_CLIENT ||
	    (len != 0 && len != 512 && len != 1024 && len != 2048 && len != 4096))
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->max_frag_len = (uint16_t)len;
	return 0;
}

SOTLS_API int sotls_config_set_keylog(struct sotls_config *cfg, sotls_keylog_cb cb, void *arg)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->keylog_cb = cb;
	cfg->keylog_arg = cb != NULL ? arg : NULL;
	return 0;
}

/*
 * The one mbedTLS configuration a sotls_config's connections share: built
 * once, when the first connection freezes the sotls_config, and read-only
 * from then on, so connections on any thread use it without a lock (mbedTLS
 * documents a configuration as shareable once set up). Per connection there
 * is only an mbedtls_ssl_context, and it lives for the handshake alone.
 */
#include <mbedtls/ssl.h>

#include "handshake.h"
#include "util.h"

/* The ECDHE groups, fastest first: mbedTLS's default order starts with
 * P-521, several times slower than P-256 and X25519 for the same handshake.
 * msg_check.c refuses a client that has none of them. */
static const uint16_t KEX_GROUPS[] = {
	MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
	MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1, MBEDTLS_SSL_IANA_TLS_GROUP_SECP521R1,
	MBEDTLS_SSL_IANA_TLS_GROUP_NONE,
};

/* The OS's generator: no state, so nothing to share or lock between
 * threads, and nothing to reseed after fork(). */
int sotls_os_random(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	return sotls_getrandom(out, len) == 0 ? 0 : MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

#ifdef SOTLS_TEST_SEAMS
/* Test builds only (tests/fuzz): a deterministic generator, so one fuzz
 * input replays the same handshake. */
static int (*g_test_rng)(void *, unsigned char *, size_t);
static void *g_test_rng_ctx;

void sotls_hs_set_test_rng(int (*rng)(void *, unsigned char *, size_t), void *ctx)
{
	g_test_rng = rng;
	g_test_rng_ctx = ctx;
}

static int conf_random(void *ctx, unsigned char *out, size_t len)
{
	if (g_test_rng != NULL)
		return g_test_rng(g_test_rng_ctx, out, len);
	return sotls_os_random(ctx, out, len);
}
#else
#define conf_random sotls_os_random
#endif

static int build(struct sotls_config *cfg)
{
	mbedtls_ssl_config *conf = &cfg->conf;
	bool server = cfg->role == SOTLS_ROLE_SERVER;
	int mrc = mbedtls_ssl_config_defaults(conf,
					      server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
					      MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (mrc != 0)
		return mrc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? SOTLS_ERR_OUT_OF_MEMORY
							   : SOTLS_ERR_INTERNAL;
	mbedtls_ssl_conf_min_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_2);
	mbedtls_ssl_conf_max_tls_version(conf, MBEDTLS_SSL_VERSION_TLS1_2);
	mbedtls_ssl_conf_ciphersuites(conf, cfg->suites);
	mbedtls_ssl_conf_rng(conf, conf_random, NULL);
	/* Secure renegotiation (RFC 5746) is signalled by mbedTLS even
	 * without MBEDTLS_SSL_RENEGOTIATION; renegotiation itself is refused
	 * by the record layer. */
	mbedtls_ssl_conf_extended_master_secret(conf, MBEDTLS_SSL_EXTENDED_MS_ENABLED);
	mbedtls_ssl_conf_groups(conf, KEX_GROUPS);
	if (server) {
		/* RFC 5246 §7.4.1.3: the server picks; sotls by its order. */
		mbedtls_ssl_conf_preference_order(conf, MBEDTLS_SSL_SRV_CIPHERSUITE_ORDER_SERVER);
		/* Always: an SNI callback may hand out an external certificate. */
		sotls_private_key_configure(conf);
	}

	/* mbedTLS verifies and records; verify.c decides (and a client
	 * records the server's chain even in SOTLS_VERIFY_NONE). A server in
	 * NONE sends no CertificateRequest. */
	if (server && cfg->verify == SOTLS_VERIFY_NONE) {
		mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_NONE);
	} else {
		mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
		mbedtls_ssl_conf_ca_chain(conf, cfg->have_ca ? &cfg->ca : NULL,
					  cfg->have_crl ? &cfg->crl : NULL);
	}
	if (cfg->max_frag_len != 0) {
		/* RFC 6066 §4 codes: 2^(8+code) bytes. */
		unsigned char code = 1;
		while ((512u << (code - 1)) < cfg->max_frag_len)
			code++;
		if (mbedtls_ssl_conf_max_frag_len(conf, code) != 0)
			return SOTLS_ERR_INTERNAL;
	}
	/* A server chooses its protocol itself (alpn.c); mbedTLS's list is
	 * what a client offers. */
	if (!server && cfg->alpn != NULL &&
	    mbedtls_ssl_conf_alpn_protocols(conf, (const char **)cfg->alpn) != 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	int rc = sotls_resume_configure(cfg, conf);
	return rc != 0 ? rc : sotls_certs_configure(cfg, conf);
}

int sotls_config_use(struct sotls_config *cfg)
{
	atomic_store(&cfg->frozen, true);
	if (!atomic_load_explicit(&cfg->built, memory_order_acquire)) {
		pthread_mutex_lock(&cfg->build_lock);
		if (!atomic_load_explicit(&cfg->built, memory_order_relaxed)) {
			cfg->build_err = build(cfg);
			atomic_store_explicit(&cfg->built, true, memory_order_release);
		}
		pthread_mutex_unlock(&cfg->build_lock);
	}
	if (cfg->build_err != 0)
		return cfg->build_err;
	atomic_fetch_add(&cfg->refs, 1);
	return 0;
}

/*
 * The shared configuration. Built by one thread with the setters, then
 * frozen (read-only) when the first connection takes a reference.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/random.h>

#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>

#include "handshake.h"
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
	mbedtls_x509_crt_init(&cfg->chain);
	mbedtls_x509_crt_init(&cfg->ca);
	mbedtls_pk_init(&cfg->key);
	mbedtls_ssl_config_init(&cfg->conf);
	if (pthread_mutex_init(&cfg->build_lock, NULL) != 0) {
		free(cfg);
		return NULL;
	}
	return cfg;
}

SOTLS_API void sotls_config_free(struct sotls_config *cfg)
{
	if (cfg == NULL || atomic_fetch_sub(&cfg->refs, 1) != 1)
		return;
	mbedtls_ssl_config_free(&cfg->conf);
	mbedtls_x509_crt_free(&cfg->chain);
	mbedtls_x509_crt_free(&cfg->ca);
	mbedtls_pk_free(&cfg->key);
	sotls_rsa_key_free(cfg->rsa);
	pthread_mutex_destroy(&cfg->build_lock);
	free(cfg->server_name);
	sotls_wipe(cfg, sizeof(*cfg));
	free(cfg);
}

/* 0 if cfg may still be changed. */
static int writable(struct sotls_config *cfg)
{
	if (cfg == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return atomic_load(&cfg->frozen) ? SOTLS_ERR_BAD_STATE : 0;
}

/* Copies data, adding a NUL after PEM text that lacks one (mbedTLS wants the
 * NUL counted in the length of PEM input). */
static uint8_t *copy_input(const void *data, size_t len, size_t *out_len)
{
	const uint8_t *d = data;
	bool pem = len > 0 && memmem(d, len, "-----BEGIN", 10) != NULL;
	bool add_nul = pem && d[len - 1] != '\0';
	uint8_t *buf = malloc(len + 1);
	if (buf == NULL)
		return NULL;
	memcpy(buf, d, len);
	buf[len] = '\0';
	*out_len = len + (add_nul ? 1 : 0);
	return buf;
}

/* Reads a whole file into memory; NULL on failure (errno set). */
static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 4096;
			uint8_t *nb = realloc(buf, ncap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int parse_certs(mbedtls_x509_crt *crt, const void *data, size_t len)
{
	size_t n;
	uint8_t *buf = copy_input(data, len, &n);
	if (buf == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	/* For PEM, 0 means every certificate parsed; > 0 counts failures. */
	int rc = mbedtls_x509_crt_parse(crt, buf, n);
	free(buf);
	return rc == 0 ? 0 : -1;
}

SOTLS_API int sotls_config_set_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (chain == NULL || key == NULL || chain_len == 0 || key_len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;

	mbedtls_x509_crt crt;
	mbedtls_pk_context pk;
	size_t klen;
	uint8_t *kbuf = NULL;

	mbedtls_x509_crt_init(&crt);
	mbedtls_pk_init(&pk);
	if (parse_certs(&crt, chain, chain_len) != 0) {
		rc = SOTLS_ERR_CERT_LOAD;
		goto out;
	}
	kbuf = copy_input(key, key_len, &klen);
	if (kbuf == NULL) {
		rc = SOTLS_ERR_OUT_OF_MEMORY;
		goto out;
	}
	/* Parsed once, here, so a bad or mismatched key fails now and no
	 * connection parses it again. */
	if (mbedtls_pk_parse_key(&pk, kbuf, klen, NULL, 0, sotls_os_random, NULL) != 0 ||
	    mbedtls_pk_check_pair(&crt.pk, &pk, sotls_os_random, NULL) != 0) {
		rc = SOTLS_ERR_KEY_LOAD;
		goto out;
	}
	struct sotls_rsa_key *rsa;
	rc = sotls_pk_own_rsa(&pk, &rsa);
	if (rc != 0)
		goto out;
	mbedtls_x509_crt_free(&cfg->chain);
	cfg->chain = crt;
	mbedtls_x509_crt_init(&crt);
	mbedtls_pk_free(&cfg->key);
	sotls_rsa_key_free(cfg->rsa);
	cfg->key = pk;
	cfg->rsa = rsa;
	mbedtls_pk_init(&pk);
	cfg->have_chain = true;
	rc = 0;
out:
	mbedtls_x509_crt_free(&crt);
	mbedtls_pk_free(&pk);
	if (kbuf != NULL) {
		sotls_wipe(kbuf, klen);
		free(kbuf);
	}
	return rc;
}

SOTLS_API int sotls_config_set_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (chain_path == NULL || key_path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	size_t clen, klen;
	uint8_t *chain = read_file(chain_path, &clen);
	if (chain == NULL)
		return SOTLS_ERR_CERT_LOAD;
	uint8_t *key = read_file(key_path, &klen);
	if (key == NULL) {
		free(chain);
		return SOTLS_ERR_KEY_LOAD;
	}
	rc = clen && klen ? sotls_config_set_cert_mem(cfg, chain, clen, key, klen)
			  : SOTLS_ERR_CERT_LOAD;
	free(chain);
	sotls_wipe(key, klen);
	free(key);
	return rc;
}

SOTLS_API int sotls_config_set_ca_mem(struct sotls_config *cfg, const void *ca, size_t len)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (ca == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* Parse into a scratch chain first so a bad file changes nothing. */
	mbedtls_x509_crt tmp;
	mbedtls_x509_crt_init(&tmp);
	rc = parse_certs(&tmp, ca, len);
	mbedtls_x509_crt_free(&tmp);
	if (rc != 0)
		return SOTLS_ERR_CA_LOAD;
	if (parse_certs(&cfg->ca, ca, len) != 0)
		return SOTLS_ERR_CA_LOAD;
	cfg->have_ca = true;
	return 0;
}

SOTLS_API int sotls_config_set_ca_file(struct sotls_config *cfg, const char *path)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	size_t len;
	uint8_t *buf = read_file(path, &len);
	if (buf == NULL || len == 0) {
		free(buf);
		return SOTLS_ERR_CA_LOAD;
	}
	rc = sotls_config_set_ca_mem(cfg, buf, len);
	free(buf);
	return rc;
}

SOTLS_API int sotls_config_set_verify(struct sotls_config *cfg, enum sotls_verify mode)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (mode != SOTLS_VERIFY_NONE && mode != SOTLS_VERIFY_REQUIRED &&
	    mode != SOTLS_VERIFY_CHAIN_ONLY)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->verify = mode;
	return 0;
}

SOTLS_API int sotls_config_set_server_name(struct sotls_config *cfg, const char *name)
{
	int rc = writable(cfg);
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
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (list == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return sotls_suites_parse(list, cfg->suites);
}

SOTLS_API int sotls_config_set_ktls(struct sotls_config *cfg, enum sotls_ktls_policy policy)
{
	int rc = writable(cfg);
	if (rc != 0)
		return rc;
	if (policy != SOTLS_KTLS_AUTO && policy != SOTLS_KTLS_OFF && policy != SOTLS_KTLS_REQUIRE)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->ktls = policy;
	return 0;
}

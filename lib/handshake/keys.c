/*
 * Trust and key material beyond one PEM file: a CA directory, certificate
 * revocation lists, and encrypted private keys (a password or a callback).
 * Everything is parsed into scratch structures first, so a call that fails
 * leaves the configuration as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "handshake.h"
#include "util.h"

/* ---- CA directory ---- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* OpenSSL's hashed names for certificates: 8 hex digits, '.', a number
 * ("1a2b3c4d.0"); "1a2b3c4d.r0" is a CRL and is not taken. */
static bool hash_name(const char *s)
{
	for (int i = 0; i < 8; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	if (s[8] != '.' || s[9] == '\0')
		return false;
	for (const char *p = s + 9; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static int ca_file_filter(const struct dirent *e)
{
	const char *n = e->d_name;
	return n[0] != '.' && (ends_with(n, ".pem") || ends_with(n, ".crt") ||
			       ends_with(n, ".cer") || hash_name(n));
}

/* Parses one directory entry into crt; 1 if it was a regular file that
 * parsed, 0 if it is not a regular file, -1 on failure (cfg's detail
 * says which file and why). */
static int load_ca_entry(struct sotls_config *cfg, mbedtls_x509_crt *crt, const char *dir,
			 const char *name)
{
	char path[4096];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return sotls_config_fail(cfg, -1, "%s/%s: the path is too long", dir, name);
	/* A dangling hash link is a broken directory. */
	if (stat(path, &st) != 0)
		return sotls_config_fail(cfg, -1, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return 0;
	size_t len;
	int rc;
	uint8_t *buf = sotls_config_read(cfg, path, -1, &rc, &len);
	if (buf == NULL)
		return rc;
	int mrc = sotls_parse_certs(crt, buf, len);
	free(buf);
	if (mrc == 0)
		return 1;
	char why[200];
	sotls_mbed_reason(mrc, why, sizeof(why));
	return sotls_config_fail(cfg, -1, "%s: %s", path, why);
}

static bool have_cert(const mbedtls_x509_crt *list, const mbedtls_x509_crt *c)
{
	for (; list != NULL && list->raw.p != NULL; list = list->next)
		if (list->raw.len == c->raw.len && memcmp(list->raw.p, c->raw.p, c->raw.len) == 0)
			return true;
	return false;
}

SOTLS_API int sotls_config_set_ca_dir(struct sotls_config *cfg, const char *path)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (path == NULL || path[0] == '\0')
		return SOTLS_ERR_INVALID_ARGUMENT;
	struct dirent **names;
	int n = scandir(path, &names, ca_file_filter, alphasort);
	if (n < 0)
		return sotls_config_fail(cfg, SOTLS_ERR_CA_LOAD, "%s: %s", path, strerror(errno));

	mbedtls_x509_crt tmp;
	mbedtls_x509_crt_init(&tmp);
	int files = 0;
	rc = 0;
	for (int i = 0; i < n; i++) {
		int r = rc == 0 ? load_ca_entry(cfg, &tmp, path, names[i]->d_name) : 0;
		if (r < 0)
			rc = SOTLS_ERR_CA_LOAD;
		files += r > 0;
		free(names[i]);
	}
	free(names);
	if (rc == 0 && files == 0) /* nothing would be trusted */
		rc = sotls_config_fail(cfg, SOTLS_ERR_CA_LOAD,
				       "%s: no certificate file (*.pem, *.crt, *.cer or a hash name)",
				       path);
	/* Hash links point at files of the same directory, and bundles repeat
	 * single files: each certificate once keeps the CA list (sent in every
	 * CertificateRequest) and the search for issuers short. */
	for (const mbedtls_x509_crt *c = &tmp; rc == 0 && c != NULL; c = c->next) {
		if (have_cert(&cfg->ca, c))
			continue;
		int mrc = mbedtls_x509_crt_parse_der(&cfg->ca, c->raw.p, c->raw.len);
		if (mrc != 0)
			rc = mrc == MBEDTLS_ERR_X509_ALLOC_FAILED
				     ? SOTLS_ERR_OUT_OF_MEMORY
				     : sotls_config_fail(cfg, SOTLS_ERR_CA_LOAD,
							 "%s: a certificate parsed once does not again",
							 path);
		else
			cfg->have_ca = true;
	}
	mbedtls_x509_crt_free(&tmp);
	return rc;
}

/* ---- CRLs ---- */

static int parse_crl(struct sotls_config *cfg, mbedtls_x509_crl *crl, const void *data,
		     size_t len)
{
	size_t n;
	uint8_t *buf = sotls_copy_input(data, len, &n);
	if (buf == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	int mrc = mbedtls_x509_crl_parse(crl, buf, n);
	free(buf);
	if (mrc == 0)
		return 0;
	char why[200];
	sotls_mbed_reason(mrc, why, sizeof(why));
	return sotls_config_fail(cfg, SOTLS_ERR_CRL_LOAD, "CRL: %s", why);
}

SOTLS_API int sotls_config_set_crl_mem(struct sotls_config *cfg, const void *crl, size_t len)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (crl == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* mbedTLS appends CRL by CRL and stops at the first bad one: try a
	 * scratch list first so a bad input adds nothing. */
	mbedtls_x509_crl tmp;
	mbedtls_x509_crl_init(&tmp);
	rc = parse_crl(cfg, &tmp, crl, len);
	mbedtls_x509_crl_free(&tmp);
	if (rc == 0)
		rc = parse_crl(cfg, &cfg->crl, crl, len);
	if (rc == 0)
		cfg->have_crl = true;
	return rc;
}

SOTLS_API int sotls_config_set_crl_file(struct sotls_config *cfg, const char *path)
{
	return sotls_config_load_file(cfg, path, SOTLS_ERR_CRL_LOAD, sotls_config_set_crl_mem);
}

/* ---- encrypted keys ---- */

void sotls_config_forget_password(struct sotls_config *cfg)
{
	if (cfg->key_password != NULL) {
		sotls_wipe(cfg->key_password, strlen(cfg->key_password));
		free(cfg->key_password);
		cfg->key_password = NULL;
	}
	cfg->password_fn = NULL;
	cfg->password_arg = NULL;
}

SOTLS_API int sotls_config_set_key_password(struct sotls_config *cfg, const char *password)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	char *copy = NULL;
	if (password != NULL && (copy = strdup(password)) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	sotls_config_forget_password(cfg);
	cfg->key_password = copy;
	return 0;
}

SOTLS_API int sotls_config_set_key_password_cb(struct sotls_config *cfg, sotls_password_fn fn,
					       void *arg)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	sotls_config_forget_password(cfg);
	cfg->password_fn = fn;
	cfg->password_arg = fn != NULL ? arg : NULL;
	return 0;
}

static int key_error(int mrc, char *why, size_t n)
{
	if (mrc == 0)
		return 0;
	if (mrc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED)
		snprintf(why, n, "the key is encrypted and no password was given");
	else if (mrc == MBEDTLS_ERR_PK_PASSWORD_MISMATCH)
		snprintf(why, n, "the key is encrypted and the password is wrong");
	else
		sotls_mbed_reason(mrc, why, n);
	if (mrc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED || mrc == MBEDTLS_ERR_PK_PASSWORD_MISMATCH)
		return SOTLS_ERR_KEY_PASSWORD;
	/* A legacy encrypted PEM (no MD5 / DES in this build), or a PKCS#8
	 * scheme other than PBES2 with AES-CBC. */
	if (mrc == MBEDTLS_ERR_PEM_FEATURE_UNAVAILABLE || mrc == MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE ||
	    mrc == MBEDTLS_ERR_PEM_UNKNOWN_ENC_ALG)
		return SOTLS_ERR_UNSUPPORTED;
	return SOTLS_ERR_KEY_LOAD;
}

int sotls_parse_key(const struct sotls_config *cfg, mbedtls_pk_context *pk, const uint8_t *key,
		    size_t len, char *why, size_t why_len)
{
	const char *pw = cfg != NULL ? cfg->key_password : NULL;
	int mrc = mbedtls_pk_parse_key(pk, key, len, (const unsigned char *)pw, pw ? strlen(pw) : 0,
				       sotls_os_random, NULL);
	if (mrc != MBEDTLS_ERR_PK_PASSWORD_REQUIRED || cfg == NULL || cfg->password_fn == NULL)
		return key_error(mrc, why, why_len);

	/* Encrypted, and only the callback knows the password. */
	char buf[1024];
	int n = cfg->password_fn(buf, sizeof(buf), cfg->password_arg);
	if (n < 0 || (size_t)n > sizeof(buf)) {
		sotls_wipe(buf, sizeof(buf));
		snprintf(why, why_len, "the key is encrypted and the password callback gave none");
		return SOTLS_ERR_KEY_PASSWORD;
	}
	mbedtls_pk_free(pk);
	mbedtls_pk_init(pk);
	mrc = mbedtls_pk_parse_key(pk, key, len, (const unsigned char *)buf, (size_t)n,
				   sotls_os_random, NULL);
	sotls_wipe(buf, sizeof(buf));
	return key_error(mrc, why, why_len);
}

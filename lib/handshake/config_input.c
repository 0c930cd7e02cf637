/*
 * Reading what a configuration is given: its inputs in memory or in files
 * (PEM or DER, a NUL added where mbedTLS wants one), whether it may still
 * change, and the detail of the last failure (file and reason). The feature
 * files (certs.c, keys.c, alpn.c, resume_config.c, ...) call these; config.c
 * calls them, and they call nothing of theirs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/error.h>

#include "handshake.h"

int sotls_config_writable(struct sotls_config *cfg)
{
	if (cfg == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return atomic_load(&cfg->frozen) ? SOTLS_ERR_BAD_STATE : 0;
}

int sotls_config_server_writable(struct sotls_config *cfg)
{
	int rc = sotls_config_writable(cfg);
	if (rc == 0 && cfg->role != SOTLS_ROLE_SERVER)
		rc = SOTLS_ERR_INVALID_ARGUMENT;
	return rc;
}

/* Copies data, adding a NUL after PEM text that lacks one (mbedTLS wants the
 * NUL counted in the length of PEM input). */
uint8_t *sotls_copy_input(const void *data, size_t len, size_t *out_len)
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
uint8_t *sotls_read_file(const char *path, size_t *len)
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

int sotls_parse_certs(mbedtls_x509_crt *crt, const void *data, size_t len)
{
	size_t n;
	uint8_t *buf = sotls_copy_input(data, len, &n);
	if (buf == NULL)
		return MBEDTLS_ERR_X509_ALLOC_FAILED;
	/* For PEM, 0 means every certificate parsed; > 0 counts failures. */
	int rc = mbedtls_x509_crt_parse(crt, buf, n);
	free(buf);
	return rc;
}

int sotls_config_fail(struct sotls_config *cfg, int rc, const char *fmt, ...)
{
	if (cfg == NULL)
		return rc;
	char text[sizeof(cfg->detail)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* fmt may name cfg->detail itself (a path put before its reason). */
	memcpy(cfg->detail, text, sizeof(text));
	return rc;
}

void sotls_mbed_reason(int mrc, char *out, size_t n)
{
	if (mrc > 0)
		snprintf(out, n, "%d PEM certificate%s did not parse", mrc, mrc == 1 ? "" : "s");
	else
		mbedtls_strerror(mrc, out, n);
}

uint8_t *sotls_config_read(struct sotls_config *cfg, const char *path, int load_err, int *rc,
			   size_t *len)
{
	uint8_t *buf = sotls_read_file(path, len);
	if (buf != NULL && *len != 0)
		return buf;
	*rc = sotls_config_fail(cfg, load_err, "%s: %s", path,
				buf != NULL ? "the file is empty" : strerror(errno));
	free(buf);
	return NULL;
}

int sotls_config_load_file(struct sotls_config *cfg, const char *path, int load_err,
			   int (*load_mem)(struct sotls_config *, const void *, size_t))
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	size_t len;
	uint8_t *buf = sotls_config_read(cfg, path, load_err, &rc, &len);
	if (buf == NULL)
		return rc;
	rc = load_mem(cfg, buf, len);
	free(buf);
	/* load_mem said what was wrong with the bytes; say where they came from. */
	return rc != 0 ? sotls_config_fail(cfg, rc, "%s: %s", path, cfg->detail) : 0;
}

/*
 * Own certificates: the chain + key objects (struct sotls_cert), and the
 * list a configuration keeps of them with the host names each serves.
 * Index 0 is the default; sotls_config_set_cert_* replaces it, the add
 * functions append. cert_select.c chooses among them per handshake.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/x509.h>

#include "handshake.h"
#include "util.h"

/* RFC 1035 §2.3.4: a name is at most 255 octets on the wire, 253 as text. */
#define MAX_HOST_NAME 253

/* cfg: whose key password (keys.c) opens an encrypted key, and whose
 * detail says what failed, the inputs named chain_name and key_name; NULL
 * for none. */
static int cert_new_mem(struct sotls_config *cfg, const void *chain, size_t chain_len,
			const void *key, size_t key_len, struct sotls_cert **out,
			const char *chain_name, const char *key_name)
{
	if (out == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (chain == NULL || key == NULL || chain_len == 0 || key_len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	struct sotls_cert *cert = calloc(1, sizeof(*cert));
	if (cert == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	atomic_init(&cert->refs, 1);
	mbedtls_x509_crt_init(&cert->chain);
	mbedtls_pk_init(&cert->key);

	int rc = 0;
	size_t klen = 0;
	uint8_t *kbuf = NULL;
	char why[200];
	int mrc = sotls_parse_certs(&cert->chain, chain, chain_len);
	if (mrc != 0) {
		sotls_mbed_reason(mrc, why, sizeof(why));
		rc = sotls_config_fail(cfg, SOTLS_ERR_CERT_LOAD, "%s: %s", chain_name, why);
		goto out;
	}
	kbuf = sotls_copy_input(key, key_len, &klen);
	if (kbuf == NULL) {
		rc = SOTLS_ERR_OUT_OF_MEMORY;
		goto out;
	}
	/* Parsed once, here, so a bad or mismatched key fails now and no
	 * connection parses it again. */
	rc = sotls_parse_key(cfg, &cert->key, kbuf, klen, why, sizeof(why));
	if (rc != 0)
		sotls_config_fail(cfg, rc, "%s: %s", key_name, why);
	else if (mbedtls_pk_check_pair(&cert->chain.pk, &cert->key, sotls_os_random, NULL) != 0)
		rc = sotls_config_fail(cfg, SOTLS_ERR_KEY_LOAD,
				       "%s: the key does not match the public key of the leaf in %s",
				       key_name, chain_name);
	else if ((rc = sotls_pk_own_rsa(&cert->key, &cert->rsa)) != 0)
		sotls_config_fail(cfg, rc, "%s: %s", key_name, sotls_strerror(rc));
out:
	if (kbuf != NULL) {
		sotls_wipe(kbuf, klen);
		free(kbuf);
	}
	if (rc != 0)
		sotls_cert_free(cert);
	else
		*out = cert;
	return rc;
}

SOTLS_API int sotls_cert_new_mem(const void *chain, size_t chain_len, const void *key,
				 size_t key_len, struct sotls_cert **out)
{
	return cert_new_mem(NULL, chain, chain_len, key, key_len, out, NULL, NULL);
}

static int cert_new_file(struct sotls_config *cfg, const char *chain_path, const char *key_path,
			 struct sotls_cert **out)
{
	if (out == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (chain_path == NULL || key_path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	size_t clen, klen = 0;
	int rc;
	uint8_t *chain = sotls_config_read(cfg, chain_path, SOTLS_ERR_CERT_LOAD, &rc, &clen);
	if (chain == NULL)
		return rc;
	uint8_t *key = sotls_config_read(cfg, key_path, SOTLS_ERR_KEY_LOAD, &rc, &klen);
	if (key != NULL)
		rc = cert_new_mem(cfg, chain, clen, key, klen, out, chain_path, key_path);
	free(chain);
	if (key != NULL) {
		sotls_wipe(key, klen);
		free(key);
	}
	return rc;
}

SOTLS_API int sotls_cert_new_file(const char *chain_path, const char *key_path,
				  struct sotls_cert **out)
{
	return cert_new_file(NULL, chain_path, key_path, out);
}

void sotls_cert_ref(struct sotls_cert *cert)
{
	atomic_fetch_add(&cert->refs, 1);
}

SOTLS_API void sotls_cert_free(struct sotls_cert *cert)
{
	if (cert == NULL || atomic_fetch_sub(&cert->refs, 1) != 1)
		return;
	mbedtls_x509_crt_free(&cert->chain);
	mbedtls_pk_free(&cert->key);
	sotls_rsa_key_free(cert->rsa);
	free(cert);
}

/* ---- the names a certificate serves ---- */

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A host name as the configuration keeps it: lower case. RFC 6125 §6.4.3:
 * a wildcard is the whole leftmost label ("*." + a name without '*'). */
static int add_name(char ***names, size_t *n, const char *name, size_t len)
{
	if (len == 0 || len > MAX_HOST_NAME || memchr(name, '\0', len) != NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	const char *rest = len > 2 && name[0] == '*' && name[1] == '.' ? name + 2 : name;
	if (memchr(rest, '*', len - (size_t)(rest - name)) != NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	char **grown = realloc(*names, (*n + 1) * sizeof(**names));
	if (grown == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	*names = grown;
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	for (size_t i = 0; i < len; i++)
		copy[i] = (char)tolower((unsigned char)name[i]);
	copy[len] = '\0';
	grown[(*n)++] = copy;
	return 0;
}

/* The dNSName entries of the leaf's subjectAltName (RFC 5280 §4.2.1.6);
 * ones sotls would refuse as explicit names are skipped. */
static int san_names(const mbedtls_x509_crt *leaf, char ***names, size_t *n)
{
	for (const mbedtls_x509_sequence *s = &leaf->subject_alt_names; s != NULL; s = s->next) {
		mbedtls_x509_subject_alternative_name san;
		if (s->buf.p == NULL || mbedtls_x509_parse_subject_alt_name(&s->buf, &san) != 0)
			continue;
		int rc = san.type != MBEDTLS_X509_SAN_DNS_NAME
				 ? 0
				 : add_name(names, n, (const char *)san.san.unstructured_name.p,
					    san.san.unstructured_name.len);
		mbedtls_x509_free_subject_alt_name(&san);
		if (rc == SOTLS_ERR_OUT_OF_MEMORY)
			return rc;
	}
	return 0;
}

/* Puts cert (a new reference) at index at (replacing) or at the end. */
static int put_cert(struct sotls_config *cfg, size_t at, struct sotls_cert *cert,
		    const char *const *names, size_t n_names)
{
	if (n_names > 0 && names == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	struct sotls_cert_entry e = {.cert = cert};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n_names; i++)
		rc = names[i] == NULL ? SOTLS_ERR_INVALID_ARGUMENT
				      : add_name(&e.names, &e.n_names, names[i], strlen(names[i]));
	if (rc == 0 && n_names == 0)
		rc = san_names(&cert->chain, &e.names, &e.n_names);
	if (rc == 0 && at == cfg->n_certs) {
		struct sotls_cert_entry *grown =
			realloc(cfg->certs, (cfg->n_certs + 1) * sizeof(*cfg->certs));
		if (grown == NULL)
			rc = SOTLS_ERR_OUT_OF_MEMORY;
		else {
			cfg->certs = grown;
			cfg->n_certs++;
		}
	} else if (rc == 0) {
		sotls_cert_free(cfg->certs[at].cert);
		free_names(cfg->certs[at].names, cfg->certs[at].n_names);
	}
	if (rc != 0) {
		free_names(e.names, e.n_names);
		return rc;
	}
	sotls_cert_ref(cert);
	cfg->certs[at] = e;
	return (int)at;
}

void sotls_certs_free(struct sotls_config *cfg)
{
	for (size_t i = 0; i < cfg->n_certs; i++) {
		sotls_cert_free(cfg->certs[i].cert);
		free_names(cfg->certs[i].names, cfg->certs[i].n_names);
	}
	free(cfg->certs);
	cfg->certs = NULL;
	cfg->n_certs = 0;
}

/* ---- the setters ---- */

/* Server only: a client uses one certificate (mbedTLS sends the first it
 * has), which sotls_config_set_cert_file or _mem gives it. */
SOTLS_API int sotls_config_add_cert(struct sotls_config *cfg, struct sotls_cert *cert,
				    const char *const *names, size_t n_names)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (cert == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return put_cert(cfg, cfg->n_certs, cert, names, n_names);
}

/* Puts a certificate just loaded at index at, and drops the loader's
 * reference. */
static int put_loaded(struct sotls_config *cfg, size_t at, struct sotls_cert *cert,
		      const char *const *names, size_t n_names)
{
	int rc = put_cert(cfg, at, cert, names, n_names);
	sotls_cert_free(cert);
	return rc;
}

SOTLS_API int sotls_config_add_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path, const char *const *names,
					 size_t n_names)
{
	struct sotls_cert *cert;
	int rc = sotls_config_server_writable(cfg);
	if (rc == 0)
		rc = cert_new_file(cfg, chain_path, key_path, &cert);
	return rc != 0 ? rc : put_loaded(cfg, cfg->n_certs, cert, names, n_names);
}

SOTLS_API int sotls_config_add_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len,
					const char *const *names, size_t n_names)
{
	struct sotls_cert *cert;
	int rc = sotls_config_server_writable(cfg);
	if (rc == 0)
		rc = cert_new_mem(cfg, chain, chain_len, key, key_len, &cert,
				  "the certificate chain", "the private key");
	return rc != 0 ? rc : put_loaded(cfg, cfg->n_certs, cert, names, n_names);
}

/* The default certificate: index 0, replaced or added. */
SOTLS_API int sotls_config_set_cert_mem(struct sotls_config *cfg, const void *chain,
					size_t chain_len, const void *key, size_t key_len)
{
	struct sotls_cert *cert;
	int rc = sotls_config_writable(cfg);
	if (rc == 0)
		rc = cert_new_mem(cfg, chain, chain_len, key, key_len, &cert,
				  "the certificate chain", "the private key");
	if (rc == 0)
		rc = put_loaded(cfg, 0, cert, NULL, 0);
	return rc < 0 ? rc : 0;
}

SOTLS_API int sotls_config_set_cert_file(struct sotls_config *cfg, const char *chain_path,
					 const char *key_path)
{
	struct sotls_cert *cert;
	int rc = sotls_config_writable(cfg);
	if (rc == 0)
		rc = cert_new_file(cfg, chain_path, key_path, &cert);
	if (rc == 0)
		rc = put_loaded(cfg, 0, cert, NULL, 0);
	return rc < 0 ? rc : 0;
}

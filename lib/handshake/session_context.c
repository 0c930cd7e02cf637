/*
 * What a session is bound to (sotls.h, sotls_config_set_session_context):
 * the digest of everything that decided the peer's verdict when the session
 * was made. A session records the verdict ("verified") and the identity;
 * resuming it skips the verification, so it may only be resumed where the
 * same verification would have run. Two services that share a ticket key
 * file or a session store but trust different client CAs must not accept
 * each other's sessions, nor a client that trusts the real CA a session
 * made by one that trusted a private CA without the name check.
 *
 * The digest is SHA-256 over, in order:
 *   "sotls session context 1" | role | verify mode | verify callback (0/1) |
 *   CA set | CRL set | application context length (1) | application context
 * A set is its member count (4 bytes) then the SHA-256 of each member's DER,
 * sorted: the order in which files were loaded changes nothing, so a fleet
 * whose machines load the same CAs in another order shares sessions. The
 * callback counts by presence, not address: its address differs between
 * the processes of a fleet, and what it decides is the application's to
 * name in the context. A server that asks for no client certificate
 * (SOTLS_VERIFY_NONE) has no trust to bind: its digest covers only the mode
 * and the application's context.
 */
#include <stdlib.h>
#include <string.h>

#include "handshake.h"
#include "resume.h"
#include "sha256.h"

_Static_assert(SOTLS_SESSION_CONTEXT_MAX <= 255, "the context's length is one byte");
_Static_assert(sizeof(((struct sotls_resume_config *)0)->app_context) == SOTLS_SESSION_CONTEXT_MAX,
	       "room for the longest application context");

SOTLS_API int sotls_config_set_session_context(struct sotls_config *cfg, const void *ctx,
					       size_t len)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if ((ctx == NULL && len != 0) || len > SOTLS_SESSION_CONTEXT_MAX)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (len != 0)
		memcpy(cfg->resume.app_context, ctx, len);
	cfg->resume.app_context_len = (uint8_t)len;
	return 0;
}

static void put_u32(struct sotls_sha256 *h, size_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	sotls_sha256_update(h, b, sizeof(b));
}

static int by_bytes(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* The set's n members, hashed into d[0 .. n) by the caller, into h. */
static void put_set(struct sotls_sha256 *h, uint8_t (*d)[32], size_t n)
{
	qsort(d, n, sizeof(*d), by_bytes);
	put_u32(h, n);
	sotls_sha256_update(h, (const uint8_t *)d, n * sizeof(*d));
}

static void digest(const uint8_t *p, size_t len, uint8_t out[32])
{
	struct sotls_sha256 h;
	sotls_sha256_init(&h, NULL);
	sotls_sha256_update(&h, p, len);
	sotls_sha256_final(&h, out);
}

int sotls_session_context_compute(struct sotls_config *cfg)
{
	enum sotls_verify mode = cfg->verify;
	/* sotls.h: on a server CHAIN_ONLY is REQUIRED. */
	if (cfg->role == SOTLS_ROLE_SERVER && mode == SOTLS_VERIFY_CHAIN_ONLY)
		mode = SOTLS_VERIFY_REQUIRED;
	bool trust = !(cfg->role == SOTLS_ROLE_SERVER && mode == SOTLS_VERIFY_NONE);
	size_t n_ca = 0, n_crl = 0;
	/* An initialised, empty list has no raw bytes in its first element. */
	for (const mbedtls_x509_crt *c = &cfg->ca; trust && c != NULL && c->raw.p != NULL;
	     c = c->next)
		n_ca++;
	for (const mbedtls_x509_crl *c = &cfg->crl; trust && c != NULL && c->raw.p != NULL;
	     c = c->next)
		n_crl++;
	uint8_t(*d)[32] = malloc((n_ca + n_crl + 1) * sizeof(*d));
	if (d == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	size_t i = 0;
	for (const mbedtls_x509_crt *c = &cfg->ca; i < n_ca; c = c->next)
		digest(c->raw.p, c->raw.len, d[i++]);
	for (const mbedtls_x509_crl *c = &cfg->crl; i < n_ca + n_crl; c = c->next)
		digest(c->raw.p, c->raw.len, d[i++]);

	static const char LABEL[] = "sotls session context 1";
	struct sotls_sha256 h;
	sotls_sha256_init(&h, NULL);
	sotls_sha256_update(&h, (const uint8_t *)LABEL, sizeof(LABEL) - 1);
	uint8_t fixed[3] = {(uint8_t)cfg->role, (uint8_t)mode,
			    (uint8_t)(trust && cfg->verify_fn != NULL)};
	sotls_sha256_update(&h, fixed, sizeof(fixed));
	put_set(&h, d, n_ca);
	put_set(&h, d + n_ca, n_crl);
	const struct sotls_resume_config *rc = &cfg->resume;
	sotls_sha256_update(&h, &rc->app_context_len, 1);
	sotls_sha256_update(&h, rc->app_context, rc->app_context_len);
	sotls_sha256_final(&h, cfg->resume.context);
	free(d);
	return 0;
}

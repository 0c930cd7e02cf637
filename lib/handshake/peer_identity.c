/*
 * The peer's identity, copied out of mbedTLS's parsed chain into one block
 * (peer_identity.h says why). Sized in a first pass, filled in a second.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>

#include "hs_internal.h" /* SOTLS_HS_MAX_CHAIN */
#include "peer_identity.h"
#include "resume.h"

static bool in_list(const mbedtls_x509_crt *list, const mbedtls_x509_crt *c)
{
	for (; list != NULL; list = list->next)
		if (list == c)
			return true;
	return false;
}

/*
 * One SAN value as text into out (NULL: only measure); returns its length.
 * A byte outside printable ASCII, or a backslash, becomes \xNN, so that
 * "evil.example\0.good.example" can never equal a name the application
 * compares with. An iPAddress is inet_ntop's text (RFC 5280 §4.2.1.6: 4
 * bytes IPv4, 16 bytes IPv6); any other length is all \xNN.
 */
static size_t san_text(enum sotls_san_type type, const uint8_t *p, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char ip[INET6_ADDRSTRLEN];
	if (type == SOTLS_SAN_IP && (len == 4 || len == 16) &&
	    inet_ntop(len == 4 ? AF_INET : AF_INET6, p, ip, sizeof(ip)) != NULL) {
		size_t n = strlen(ip);
		if (out != NULL)
			memcpy(out, ip, n + 1);
		return n;
	}
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t b = p[i];
		if (type != SOTLS_SAN_IP && b >= 0x20 && b < 0x7f && b != '\\') {
			if (out != NULL)
				out[n] = (char)b;
			n++;
			continue;
		}
		if (out != NULL) {
			out[n] = '\\';
			out[n + 1] = 'x';
			out[n + 2] = hex[b >> 4];
			out[n + 3] = hex[b & 15];
		}
		n += 4;
	}
	if (out != NULL)
		out[n] = '\0';
	return n;
}

/*
 * Walks the leaf's SANs of the types sotls reports. Measuring (p NULL):
 * counts them into *count and their text bytes (NULs included) into
 * *bytes. Filling: writes p->sans and the texts at *pool.
 */
static void walk_sans(const mbedtls_x509_crt *leaf, struct sotls_peer *p, char **pool,
		      size_t *count, size_t *bytes)
{
	for (const mbedtls_x509_sequence *s = &leaf->subject_alt_names; s != NULL; s = s->next) {
		mbedtls_x509_subject_alternative_name san;
		if (s->buf.p == NULL || mbedtls_x509_parse_subject_alt_name(&s->buf, &san) != 0)
			continue; /* a type mbedTLS does not parse (x400, EDI, registeredID) */
		enum sotls_san_type type = (enum sotls_san_type)san.type;
		if (type == SOTLS_SAN_EMAIL || type == SOTLS_SAN_DNS || type == SOTLS_SAN_URI ||
		    type == SOTLS_SAN_IP) {
			const mbedtls_x509_buf *v = &san.san.unstructured_name;
			if (p == NULL) {
				*bytes += san_text(type, v->p, v->len, NULL) + 1;
			} else {
				p->sans[*count] = (struct sotls_peer_san){type, *pool};
				*pool += san_text(type, v->p, v->len, *pool) + 1;
			}
			++*count;
		}
		mbedtls_x509_free_subject_alt_name(&san);
	}
}

/* The subject as mbedTLS prints it, in a malloc'd string; NULL if out of
 * memory. */
static char *subject_text(const mbedtls_x509_crt *leaf)
{
	for (size_t cap = 512; cap <= 65536; cap *= 2) {
		char *buf = malloc(cap);
		if (buf == NULL)
			return NULL;
		/* mbedTLS writes nothing, not even the NUL, for a name with
		 * no attribute it prints (an empty or OID-less subject from the
		 * peer): terminate it here, whatever it wrote. */
		buf[0] = '\0';
		int n = mbedtls_x509_dn_gets(buf, cap, &leaf->subject);
		if (n >= 0) {
			buf[(size_t)n < cap ? (size_t)n : cap - 1] = '\0';
			return buf;
		}
		free(buf);
		if (n != MBEDTLS_ERR_X509_BUFFER_TOO_SMALL)
			break;
	}
	return strdup("");
}

struct sotls_peer *sotls_peer_new(mbedtls_x509_crt *const *chain, const uint32_t *flags, size_t n,
				  const mbedtls_x509_crt *ca)
{
	if (n == 0)
		return NULL;
	char *subject = subject_text(chain[0]);
	if (subject == NULL)
		return NULL;
	size_t subject_len = strlen(subject) + 1;
	size_t der_bytes = 0, n_sans = 0, san_bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (!in_list(ca, chain[i]))
			der_bytes += chain[i]->raw.len;
	walk_sans(chain[0], NULL, NULL, &n_sans, &san_bytes);

	size_t total = sizeof(struct sotls_peer) + n * sizeof(struct sotls_verify_cert) +
		       n_sans * sizeof(struct sotls_peer_san) + der_bytes + subject_len + san_bytes;
	struct sotls_peer *p = malloc(total);
	if (p == NULL) {
		free(subject);
		return NULL;
	}
	*p = (struct sotls_peer){.n_certs = n, .n_sans = n_sans};
	p->certs = (struct sotls_verify_cert *)(p + 1);
	p->sans = (struct sotls_peer_san *)(p->certs + n);
	uint8_t *pool = (uint8_t *)(p->sans + n_sans);
	for (size_t i = 0; i < n; i++) {
		const mbedtls_x509_crt *c = chain[i];
		p->certs[i] = (struct sotls_verify_cert){c->raw.p, c->raw.len, flags[i]};
		if (!in_list(ca, c) && c->raw.len > 0) {
			memcpy(pool, c->raw.p, c->raw.len);
			p->certs[i].der = pool;
			pool += c->raw.len;
		}
	}
	memcpy(pool, subject, subject_len);
	p->subject = (const char *)pool;
	pool += subject_len;
	free(subject);
	char *texts = (char *)pool;
	size_t count = 0;
	walk_sans(chain[0], p, &texts, &count, NULL);
	return p;
}

void sotls_peer_free(struct sotls_peer *p)
{
	free(p);
}

int sotls_peer_cert(const struct sotls_peer *p, size_t index, const uint8_t **der, size_t *len)
{
	if (der == NULL || len == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (p == NULL || index >= p->n_certs)
		return 0;
	*der = p->certs[index].der;
	*len = p->certs[index].der_len;
	return 1;
}

const char *sotls_peer_subject(const struct sotls_peer *p)
{
	return p == NULL ? "" : p->subject;
}

int sotls_peer_san(const struct sotls_peer *p, size_t index, enum sotls_san_type *type,
		   const char **value)
{
	if (type == NULL || value == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (p == NULL || index >= p->n_sans)
		return 0;
	*type = p->sans[index].type;
	*value = p->sans[index].value;
	return 1;
}

/* ---- as bytes, for a session (resume.h) ----
 * flags (4) | verified (1) | n (1) | n x (flags (4) | der_len (4) | der).
 * Loading parses the certificates again: the subject and SANs come out as
 * they did the first time. */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t sotls_peer_save(const struct sotls_peer *p, uint8_t *out)
{
	size_t n = 6;
	for (size_t i = 0; i < p->n_certs; i++)
		n += 8 + p->certs[i].der_len;
	if (out == NULL)
		return n;
	out = put32(out, p->flags);
	*out++ = p->verified ? 1 : 0;
	*out++ = (uint8_t)p->n_certs;
	for (size_t i = 0; i < p->n_certs; i++) {
		out = put32(out, p->certs[i].flags);
		out = put32(out, (uint32_t)p->certs[i].der_len);
		memcpy(out, p->certs[i].der, p->certs[i].der_len);
		out += p->certs[i].der_len;
	}
	return n;
}

struct sotls_peer *sotls_peer_load(const uint8_t *in, size_t len)
{
	if (in == NULL || len < 6 || in[4] > 1 || in[5] == 0 || in[5] > SOTLS_HS_MAX_CHAIN)
		return NULL;
	size_t n = in[5];
	mbedtls_x509_crt crts[SOTLS_HS_MAX_CHAIN];
	mbedtls_x509_crt *chain[SOTLS_HS_MAX_CHAIN];
	uint32_t flags[SOTLS_HS_MAX_CHAIN];
	for (size_t i = 0; i < n; i++) {
		mbedtls_x509_crt_init(&crts[i]);
		chain[i] = &crts[i];
	}
	const uint8_t *p = in + 6, *end = in + len;
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		ok = end - p >= 8;
		uint32_t der_len = ok ? get32(p + 4) : 0;
		ok = ok && der_len <= (size_t)(end - p - 8) &&
		     mbedtls_x509_crt_parse_der_nocopy(&crts[i], p + 8, der_len) == 0;
		if (ok) {
			flags[i] = get32(p);
			p += 8 + der_len;
		}
	}
	struct sotls_peer *peer = NULL;
	if (ok && p == end && (peer = sotls_peer_new(chain, flags, n, NULL)) != NULL) {
		peer->flags = get32(in);
		peer->verified = in[4] == 1;
	}
	for (size_t i = 0; i < n; i++)
		mbedtls_x509_crt_free(&crts[i]);
	return peer;
}

/*
 * The bytes a session is kept as (resume.h gives the layout). Decoding is
 * strict: every length must fit exactly, so a cache entry, a ticket's
 * plaintext or an application's saved session either is one whole state of
 * this version or is refused.
 */
#include <string.h>
#include <time.h>

#include "resume.h"
#include "util.h"

static const uint8_t MAGIC[4] = {'S', 'T', 'L', 'S'};
/* magic, version, role, suite, issued, lifetime, context, sni_len,
 * peer_len, mbed_len */
#define FIXED (4 + 1 + 1 + 2 + 8 + 4 + SOTLS_SESSION_CONTEXT_LEN + 1 + 4 + 4)

size_t sotls_session_state_size(const struct sotls_session_state *st)
{
	return FIXED + strlen(st->sni) + st->peer_len + st->mbed_len;
}

static uint8_t *put_be(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

static uint64_t get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

void sotls_session_state_encode(const struct sotls_session_state *st, uint8_t *out)
{
	size_t sni_len = strlen(st->sni);
	memcpy(out, MAGIC, 4);
	uint8_t *p = out + 4;
	*p++ = SOTLS_SESSION_VERSION;
	*p++ = st->role;
	p = put_be(p, st->suite, 2);
	p = put_be(p, (uint64_t)st->issued, 8);
	p = put_be(p, st->lifetime, 4);
	memcpy(p, st->context, SOTLS_SESSION_CONTEXT_LEN);
	p += SOTLS_SESSION_CONTEXT_LEN;
	*p++ = (uint8_t)sni_len;
	memcpy(p, st->sni, sni_len);
	p += sni_len;
	p = put_be(p, st->peer_len, 4);
	if (st->peer_len != 0)
		memcpy(p, st->peer, st->peer_len);
	p += st->peer_len;
	p = put_be(p, st->mbed_len, 4);
	memcpy(p, st->mbed, st->mbed_len);
}

/* A length-prefixed field at *p, within end; advances *p. */
static bool field(const uint8_t **p, const uint8_t *end, unsigned prefix, const uint8_t **f,
		  size_t *len)
{
	if ((size_t)(end - *p) < prefix)
		return false;
	uint64_t n = get_be(*p, prefix);
	*p += prefix;
	if (n > (uint64_t)(end - *p))
		return false;
	*f = *p;
	*len = (size_t)n;
	*p += n;
	return true;
}

int sotls_session_state_decode(struct sotls_session_state *st, const uint8_t *in, size_t len)
{
	if (st == NULL || in == NULL || len < FIXED || len > SOTLS_SESSION_MAX ||
	    memcmp(in, MAGIC, 4) != 0 || in[4] != SOTLS_SESSION_VERSION ||
	    (in[5] != SOTLS_SESSION_ROLE_CLIENT && in[5] != SOTLS_SESSION_ROLE_SERVER))
		return SOTLS_ERR_SESSION;
	const uint8_t *p = in + 6, *end = in + len, *sni;
	size_t sni_len;
	memset(st, 0, sizeof(*st));
	st->role = in[5];
	st->suite = (uint16_t)get_be(p, 2);
	st->issued = (int64_t)get_be(p + 2, 8);
	st->lifetime = (uint32_t)get_be(p + 10, 4);
	memcpy(st->context, p + 14, SOTLS_SESSION_CONTEXT_LEN);
	p += 14 + SOTLS_SESSION_CONTEXT_LEN;
	/* Session bytes may come from a file the application read
	 * (sotls_conn_set_session): times that no clock gives, or a client
	 * session longer-lived than sotls ever makes one, are not a session,
	 * and must not reach the freshness arithmetic. */
	if (st->issued < 0 || (st->role == SOTLS_SESSION_ROLE_CLIENT &&
			       st->lifetime > SOTLS_SESSION_CLIENT_MAX_LIFETIME))
		return SOTLS_ERR_SESSION;
	if (!field(&p, end, 1, &sni, &sni_len) || memchr(sni, 0, sni_len) != NULL ||
	    !field(&p, end, 4, &st->peer, &st->peer_len) ||
	    !field(&p, end, 4, &st->mbed, &st->mbed_len) || p != end || st->mbed_len == 0)
		return SOTLS_ERR_SESSION;
	memcpy(st->sni, sni, sni_len);
	st->sni[sni_len] = '\0';
	return 0;
}

/* The clocks of a fleet's machines differ a little: a session issued by
 * one whose clock runs ahead is not refused by the next for being from the
 * future. */
#define CLOCK_SKEW 60

/* Both times are at least 0 (decode refuses a negative issue time, and a
 * clock before 1970 is no clock), so neither difference can overflow. */
bool sotls_session_state_from_future(const struct sotls_session_state *st, int64_t now)
{
	return now < 0 || st->issued < 0 || st->issued - now > CLOCK_SKEW;
}

bool sotls_session_state_fresh(const struct sotls_session_state *st, int64_t now)
{
	return !sotls_session_state_from_future(st, now) &&
	       now - st->issued < (int64_t)st->lifetime;
}

/* ---- the clock ---- */

#ifdef SOTLS_TEST_SEAMS
static int64_t (*g_test_clock)(void);

void sotls_resume_set_test_clock(int64_t (*now)(void))
{
	g_test_clock = now;
}
#endif

int64_t sotls_resume_now(void)
{
#ifdef SOTLS_TEST_SEAMS
	if (g_test_clock != NULL)
		return g_test_clock();
#endif
	return (int64_t)time(NULL);
}

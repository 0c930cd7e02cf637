/*
 * The server's built-in session cache (resume.h). Session IDs are ones this
 * server made at random, so the table needs no defence against chosen
 * keys on insertion; a client only looks up. The table doubles as it fills,
 * so an idle server holds a few hundred bytes, not the bound.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "resume.h"
#include "util.h"

struct entry {
	struct entry *chain;	  /* next in the bucket */
	struct entry *older, *newer; /* the insertion list */
	int64_t expires;
	size_t len;
	uint8_t id_len;
	uint8_t id[32];
	uint8_t data[];
};

struct sotls_session_cache {
	pthread_mutex_t lock;
	size_t max_sessions, max_bytes;
	size_t n, bytes;
	struct entry **buckets;
	size_t n_buckets; /* a power of two, or 0 before the first entry */
	struct entry *oldest, *newest;
	uint64_t seed;
};

struct sotls_session_cache *sotls_session_cache_new(size_t max_sessions, size_t max_bytes)
{
	struct sotls_session_cache *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return NULL;
	}
	c->max_sessions = max_sessions;
	c->max_bytes = max_bytes;
	(void)sotls_getrandom(&c->seed, sizeof(c->seed));
	return c;
}

static size_t bucket_of(const struct sotls_session_cache *c, const uint8_t *id, size_t id_len)
{
	uint64_t h = c->seed ^ 0xcbf29ce484222325u; /* FNV-1a */
	for (size_t i = 0; i < id_len; i++)
		h = (h ^ id[i]) * 0x100000001b3u;
	return (size_t)(h ^ h >> 29) & (c->n_buckets - 1);
}

static struct entry **find(struct sotls_session_cache *c, const uint8_t *id, size_t id_len)
{
	if (c->n_buckets == 0)
		return NULL;
	struct entry **e = &c->buckets[bucket_of(c, id, id_len)];
	for (; *e != NULL; e = &(*e)->chain)
		if ((*e)->id_len == id_len && memcmp((*e)->id, id, id_len) == 0)
			return e;
	return e;
}

/* Unlinks *link (a bucket slot holding e) and frees e. */
static void drop(struct sotls_session_cache *c, struct entry **link)
{
	struct entry *e = *link;
	*link = e->chain;
	if (e->older != NULL)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	if (e->newer != NULL)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	c->n--;
	c->bytes -= e->len;
	sotls_wipe(e, sizeof(*e) + e->len);
	free(e);
}

static void drop_oldest(struct sotls_session_cache *c)
{
	struct entry *e = c->oldest;
	drop(c, find(c, e->id, e->id_len));
}

/* Doubles the table once it holds as many entries as buckets; a failed
 * allocation keeps the old one (longer chains, still correct). */
static void grow(struct sotls_session_cache *c)
{
	if (c->n < c->n_buckets)
		return;
	size_t nb = c->n_buckets == 0 ? 64 : c->n_buckets * 2;
	struct entry **b = calloc(nb, sizeof(*b));
	if (b == NULL)
		return;
	struct entry **old = c->buckets;
	c->buckets = b;
	c->n_buckets = nb;
	for (struct entry *e = c->oldest; e != NULL; e = e->newer) {
		size_t i = bucket_of(c, e->id, e->id_len);
		e->chain = b[i];
		b[i] = e;
	}
	free(old);
}

void sotls_session_cache_put(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
			     size_t len, unsigned lifetime)
{
	struct sotls_session_cache *c = arg;
	if (c == NULL || id == NULL || id_len == 0 || id_len > 32 || data == NULL || len == 0 ||
	    len > c->max_bytes || c->max_sessions == 0)
		return;
	struct entry *e = malloc(sizeof(*e) + len);
	if (e == NULL)
		return;
	int64_t now = sotls_resume_now();
	*e = (struct entry){.expires = now + lifetime, .len = len, .id_len = (uint8_t)id_len};
	memcpy(e->id, id, id_len);
	memcpy(e->data, data, len);

	pthread_mutex_lock(&c->lock);
	struct entry **same = find(c, id, id_len);
	if (same != NULL && *same != NULL)
		drop(c, same);
	/* One lifetime for every entry of a configuration: the oldest entry
	 * expires first. */
	while (c->oldest != NULL && c->oldest->expires <= now)
		drop_oldest(c);
	while (c->n > 0 && (c->n >= c->max_sessions || c->bytes + len > c->max_bytes))
		drop_oldest(c);
	grow(c);
	if (c->n_buckets == 0) {
		pthread_mutex_unlock(&c->lock);
		sotls_wipe(e, sizeof(*e) + len);
		free(e);
		return;
	}
	size_t i = bucket_of(c, id, id_len);
	e->chain = c->buckets[i];
	c->buckets[i] = e;
	e->older = c->newest;
	if (c->newest != NULL)
		c->newest->newer = e;
	else
		c->oldest = e;
	c->newest = e;
	c->n++;
	c->bytes += len;
	pthread_mutex_unlock(&c->lock);
}

ssize_t sotls_session_cache_get(void *arg, const uint8_t *id, size_t id_len, uint8_t *buf,
				size_t cap)
{
	struct sotls_session_cache *c = arg;
	if (c == NULL || id == NULL || id_len == 0 || id_len > 32 || buf == NULL)
		return 0;
	ssize_t n = 0;
	pthread_mutex_lock(&c->lock);
	struct entry **e = find(c, id, id_len);
	if (e != NULL && *e != NULL) {
		if ((*e)->expires <= sotls_resume_now()) {
			drop(c, e);
		} else if ((*e)->len <= cap) {
			memcpy(buf, (*e)->data, (*e)->len);
			n = (ssize_t)(*e)->len;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

void sotls_session_cache_del(void *arg, const uint8_t *id, size_t id_len)
{
	struct sotls_session_cache *c = arg;
	if (c == NULL || id == NULL || id_len == 0 || id_len > 32)
		return;
	pthread_mutex_lock(&c->lock);
	struct entry **e = find(c, id, id_len);
	if (e != NULL && *e != NULL)
		drop(c, e);
	pthread_mutex_unlock(&c->lock);
}

void sotls_session_cache_usage(struct sotls_session_cache *c, size_t *sessions, size_t *bytes)
{
	pthread_mutex_lock(&c->lock);
	*sessions = c->n;
	*bytes = c->bytes;
	pthread_mutex_unlock(&c->lock);
}

void sotls_session_cache_free(struct sotls_session_cache *c)
{
	if (c == NULL)
		return;
	while (c->oldest != NULL)
		drop_oldest(c);
	free(c->buckets);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

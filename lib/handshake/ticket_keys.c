/*
 * A server's ticket keys and the sealing of tickets (resume.h). The keys
 * come from one of four places, the first set of them winning: the
 * application's callback, a key file (re-read when it changes), keys added
 * one by one, or, with none of those, keys made here and rotated by time.
 * The set changes while connections run, so it has a lock; a key is copied
 * out under it and used outside it, and every copy is wiped after use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aead.h"
#include "crypto_result.h"
#include "resume.h"
#include "util.h"

#define NAME_LEN 16
#define NONCE_LEN SOTLS_AEAD_NONCE_LEN

struct sotls_ticket_keyring {
	pthread_mutex_t lock;
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX];
	size_t n;
	bool automatic; /* no key given: make and rotate them here */
	unsigned lifetime, rotate_every;
	sotls_ticket_key_fn fn;
	void *fn_arg;
	/* The key file, and what it looked like when last read. */
	char *path;
	int64_t checked;
	struct stat seen;
	/* Where a failed re-read is told, and the failure told last (rc 0:
	 * none since the last good read). */
	void (*report)(void *ctx, const char *line);
	void *report_ctx;
	int failed_rc, failed_errno;
};

struct sotls_ticket_keyring *sotls_ticket_keyring_new(void)
{
	struct sotls_ticket_keyring *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r);
		return NULL;
	}
	r->automatic = true;
	r->lifetime = 7200;
	r->rotate_every = 3600;
	return r;
}

void sotls_ticket_keyring_free(struct sotls_ticket_keyring *r)
{
	if (r == NULL)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->path);
	sotls_wipe(r, sizeof(*r));
	free(r);
}

void sotls_ticket_keyring_set_times(struct sotls_ticket_keyring *r, unsigned lifetime,
				    unsigned rotate_every)
{
	pthread_mutex_lock(&r->lock);
	r->lifetime = lifetime;
	r->rotate_every = rotate_every;
	pthread_mutex_unlock(&r->lock);
}

static bool expired(const struct sotls_ticket_key *k, int64_t now)
{
	return k->expiry != 0 && now >= k->expiry;
}

/* Wipes and drops the keys past their expiry. Under the lock. */
static void drop_expired(struct sotls_ticket_keyring *r, int64_t now)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (expired(&r->keys[i], now))
			continue;
		if (kept != i)
			r->keys[kept] = r->keys[i];
		kept++;
	}
	sotls_wipe(r->keys + kept, (r->n - kept) * sizeof(r->keys[0]));
	r->n = kept;
}

/* Replaces a key of the same name, else puts k first (newest). */
static int insert(struct sotls_ticket_keyring *r, const struct sotls_ticket_key *k)
{
	for (size_t i = 0; i < r->n; i++) {
		if (memcmp(r->keys[i].name, k->name, NAME_LEN) == 0) {
			r->keys[i] = *k;
			return 0;
		}
	}
	if (r->n == SOTLS_TICKET_KEYS_MAX)
		return SOTLS_ERR_TICKET_KEYS;
	memmove(r->keys + 1, r->keys, r->n * sizeof(r->keys[0]));
	r->keys[0] = *k;
	r->n++;
	return 0;
}

int sotls_ticket_keyring_add(struct sotls_ticket_keyring *r, const struct sotls_ticket_key *k)
{
	if (r == NULL || k == NULL || !sotls_ticket_key_times_ok(k))
		return SOTLS_ERR_INVALID_ARGUMENT;
	pthread_mutex_lock(&r->lock);
	if (r->automatic) {
		sotls_wipe(r->keys, sizeof(r->keys));
		r->n = 0;
		r->automatic = false;
	}
	drop_expired(r, sotls_resume_now());
	int rc = insert(r, k);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Whether the file behind st is the one read last time. */
static bool same_file(const struct stat *st, const struct stat *seen)
{
	return st->st_ino == seen->st_ino && st->st_dev == seen->st_dev &&
	       st->st_size == seen->st_size && st->st_mtim.tv_sec == seen->st_mtim.tv_sec &&
	       st->st_mtim.tv_nsec == seen->st_mtim.tv_nsec;
}

/*
 * Reads the key file at path into the set, unless (force false) it is the
 * file read last time. Called without the lock: a file read must not hold
 * up the handshakes of other threads, which go on with the old keys; the
 * new set is swapped in under the lock. A failed read keeps the keys read
 * before.
 */
static int reload(struct sotls_ticket_keyring *r, const char *path, bool force)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return SOTLS_ERR_SYSCALL;
	pthread_mutex_lock(&r->lock);
	bool same = !force && same_file(&st, &r->seen);
	pthread_mutex_unlock(&r->lock);
	if (same)
		return 0;
	struct sotls_ticket_key *keys = malloc(sizeof(r->keys));
	if (keys == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	size_t n = 0;
	int rc = sotls_ticket_key_file_read(path, keys, SOTLS_TICKET_KEYS_MAX, &n);
	int saved = errno;
	if (rc == 0) {
		pthread_mutex_lock(&r->lock);
		sotls_wipe(r->keys, sizeof(r->keys));
		memcpy(r->keys, keys, n * sizeof(keys[0]));
		r->n = n;
		r->seen = st;
		r->automatic = false;
		pthread_mutex_unlock(&r->lock);
	}
	sotls_wipe(keys, sizeof(r->keys));
	free(keys);
	errno = saved;
	return rc;
}

int sotls_ticket_keyring_set_file(struct sotls_ticket_keyring *r, const char *path)
{
	if (r == NULL || path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	char *copy = strdup(path);
	if (copy == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	/* Only while the configuration is built (sotls.h): no handshake reads
	 * path yet. */
	int rc = reload(r, copy, true);
	if (rc != 0) {
		int saved = errno;
		free(copy);
		errno = saved;
		return rc;
	}
	pthread_mutex_lock(&r->lock);
	free(r->path);
	r->path = copy;
	r->checked = sotls_resume_now();
	pthread_mutex_unlock(&r->lock);
	return 0;
}

void sotls_ticket_keyring_set_callback(struct sotls_ticket_keyring *r, sotls_ticket_key_fn fn,
				       void *arg)
{
	pthread_mutex_lock(&r->lock);
	r->fn = fn;
	r->fn_arg = arg;
	if (fn != NULL)
		r->automatic = false;
	pthread_mutex_unlock(&r->lock);
}

/* Automatic keys: a new one when the newest has issued for rotate_every
 * seconds; each opens tickets for a lifetime after its successor came. */
static int rotate(struct sotls_ticket_keyring *r, int64_t now)
{
	if (r->n != 0 && now < r->keys[0].intro + (int64_t)r->rotate_every)
		return 0;
	struct sotls_ticket_key k = {.intro = now,
				     .expiry = now + (int64_t)r->rotate_every + r->lifetime};
	if (sotls_getrandom(k.name, sizeof(k.name)) != 0 ||
	    sotls_getrandom(k.secret, sizeof(k.secret)) != 0)
		return SOTLS_ERR_SYSCALL;
	if (r->n == SOTLS_TICKET_KEYS_MAX) /* a rotation period far below the lifetime */
		r->n--;
	int rc = insert(r, &k);
	sotls_wipe(&k, sizeof(k));
	return rc;
}

/* Brings the set up to date for now: rotation, expiries. Under the lock. */
static void refresh(struct sotls_ticket_keyring *r, int64_t now)
{
	if (r->automatic)
		(void)rotate(r, now);
	drop_expired(r, now);
}

void sotls_ticket_keyring_set_report(struct sotls_ticket_keyring *r,
				     void (*report)(void *ctx, const char *line), void *ctx)
{
	pthread_mutex_lock(&r->lock);
	r->report = report;
	r->report_ctx = ctx;
	pthread_mutex_unlock(&r->lock);
}

/* A re-read's outcome (rc, errno e) for the report: a failure is news
 * unless it is the one told last, so a file that stays broken is told of
 * once, not every second. */
static void report_reload(struct sotls_ticket_keyring *r, const char *path, int rc, int e)
{
	pthread_mutex_lock(&r->lock);
	bool news = rc != 0 && (rc != r->failed_rc || e != r->failed_errno);
	r->failed_rc = rc;
	r->failed_errno = rc != 0 ? e : 0;
	void (*report)(void *, const char *) = r->report;
	void *ctx = r->report_ctx;
	pthread_mutex_unlock(&r->lock);
	if (!news || report == NULL)
		return;
	char line[512];
	snprintf(line, sizeof(line), "ticket key file %s not re-read: %s; the keys read before stay "
		 "in use", path, rc == SOTLS_ERR_TICKET_KEYS ? sotls_ticket_key_refusal(e)
		 : rc == SOTLS_ERR_SYSCALL ? strerror(e) : sotls_strerror(rc));
	report(ctx, line);
}

/* The key file, looked at once a second at most (outside the lock). */
static void check_file(struct sotls_ticket_keyring *r, int64_t now)
{
	pthread_mutex_lock(&r->lock);
	bool due = r->path != NULL && r->fn == NULL && now != r->checked;
	if (due)
		r->checked = now;
	const char *path = r->path; /* set while building, then fixed */
	pthread_mutex_unlock(&r->lock);
	if (!due)
		return;
	int rc = reload(r, path, false);
	report_reload(r, path, rc, errno);
}

/* The key that issues now: the latest intro not in the future. */
static const struct sotls_ticket_key *issuing(const struct sotls_ticket_keyring *r, int64_t now)
{
	const struct sotls_ticket_key *best = NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct sotls_ticket_key *k = &r->keys[i];
		if (k->intro <= now && !expired(k, now) && (best == NULL || k->intro > best->intro))
			best = k;
	}
	return best;
}

/* The key to seal with (name NULL) or the key named name, into *out.
 * Returns 1 if found; *current says whether it is the issuing key. */
static int take_key(struct sotls_ticket_keyring *r, const uint8_t *name,
		    struct sotls_ticket_key *out, bool *current)
{
	int64_t now = sotls_resume_now();
	int found = 0;
	*current = false;
	check_file(r, now);
	pthread_mutex_lock(&r->lock);
	sotls_ticket_key_fn fn = r->fn;
	void *arg = r->fn_arg;
	if (fn == NULL) {
		refresh(r, now);
		const struct sotls_ticket_key *iss = issuing(r, now);
		if (name == NULL && iss != NULL) {
			*out = *iss;
			found = 1;
		}
		for (size_t i = 0; name != NULL && i < r->n; i++) {
			if (memcmp(r->keys[i].name, name, NAME_LEN) == 0) {
				*out = r->keys[i];
				found = 1;
				break;
			}
		}
		*current = found && iss != NULL && memcmp(out->name, iss->name, NAME_LEN) == 0;
	}
	pthread_mutex_unlock(&r->lock);
	if (fn == NULL)
		return found;

	/* The application's keys: asked outside the lock (it may block). */
	found = fn(arg, name, out) == 1 && !expired(out, now) &&
		(name == NULL || memcmp(out->name, name, NAME_LEN) == 0);
	if (found && name != NULL) {
		struct sotls_ticket_key iss;
		*current = fn(arg, NULL, &iss) == 1 && memcmp(iss.name, name, NAME_LEN) == 0;
		sotls_wipe(&iss, sizeof(iss));
	} else {
		*current = found;
	}
	return found;
}

int sotls_ticket_seal(struct sotls_ticket_keyring *r, const uint8_t *state, size_t len,
		      uint8_t *out, uint32_t *hint)
{
	struct sotls_ticket_key k;
	bool current;
	if (take_key(r, NULL, &k, &current) != 1) {
		sotls_wipe(&k, sizeof(k));
		return SOTLS_ERR_TICKET_KEYS;
	}
	int64_t now = sotls_resume_now();
	int64_t left = k.expiry == 0 ? (int64_t)r->lifetime : k.expiry - now;
	*hint = (uint32_t)(left < (int64_t)r->lifetime ? left : (int64_t)r->lifetime);

	struct sotls_aead aead;
	memcpy(out, k.name, NAME_LEN);
	int rc = sotls_getrandom(out + NAME_LEN, NONCE_LEN) == 0 ? 0 : SOTLS_CRYPTO_NO_RANDOM;
	if (rc == 0)
		rc = sotls_aead_init(&aead, SOTLS_AEAD_AES_256_GCM, k.secret, sizeof(k.secret));
	sotls_wipe(&k, sizeof(k));
	if (rc != 0)
		return sotls_err_from_crypto(rc);
	uint8_t *ct = out + NAME_LEN + NONCE_LEN;
	rc = sotls_aead_seal(&aead, out + NAME_LEN, out, NAME_LEN, state, len, ct, ct + len);
	sotls_aead_clear(&aead);
	return sotls_err_from_crypto(rc);
}

int sotls_ticket_open(struct sotls_ticket_keyring *r, const uint8_t *ticket, size_t len,
		      uint8_t *out, size_t *state_len, bool *renew)
{
	if (len <= SOTLS_TICKET_OVERHEAD)
		return SOTLS_ERR_SESSION;
	struct sotls_ticket_key k;
	bool current;
	if (take_key(r, ticket, &k, &current) != 1) {
		sotls_wipe(&k, sizeof(k));
		return SOTLS_ERR_SESSION;
	}
	struct sotls_aead aead;
	int rc = sotls_aead_init(&aead, SOTLS_AEAD_AES_256_GCM, k.secret, sizeof(k.secret));
	sotls_wipe(&k, sizeof(k));
	if (rc != 0)
		return SOTLS_ERR_SESSION;
	size_t n = len - SOTLS_TICKET_OVERHEAD;
	const uint8_t *ct = ticket + NAME_LEN + NONCE_LEN;
	rc = sotls_aead_open(&aead, ticket + NAME_LEN, ticket, NAME_LEN, ct, n, ct + n, out);
	sotls_aead_clear(&aead);
	if (rc != 0)
		return SOTLS_ERR_SESSION;
	*state_len = n;
	*renew = !current;
	return 0;
}

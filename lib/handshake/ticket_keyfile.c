/*
 * Ticket key files (sotls_ticket_key_file_read / _write, sotls.h), the text a
 * fleet's servers share: one key a line, newest first,
 *   <name: 32 hex> <secret: 64 hex> <intro> <expiry>
 * The reader is strict (lowercase hex, single spaces, plain decimal, no
 * trailing bytes) and refuses the whole file for one bad line: a server that
 * fails a read keeps the keys it had, which is better than a half-read set.
 * The writer renames a synced temporary file over the old one, so a reader
 * opens either the old file or the new one, never a mix.
 *
 * The file is read with read(2) into buffers wiped here, not with stdio,
 * whose buffer would keep the secrets' hex after fclose. Hex digits of
 * secrets are converted without branches or table lookups on their value.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sotls.h"
#include "resume.h"
#include "util.h"

#define NAME_HEX (2 * sizeof(((struct sotls_ticket_key *)0)->name))
#define SECRET_HEX (2 * sizeof(((struct sotls_ticket_key *)0)->secret))
/* INT64_MAX has 19 digits. */
#define DECIMAL_MAX 19
/* The longest key line, without its newline. */
#define KEY_LINE_MAX (NAME_HEX + 1 + SECRET_HEX + 1 + DECIMAL_MAX + 1 + DECIMAL_MAX)

static const char HEADER[] = "# sotls ticket keys: newest first; name secret intro expiry\n";

/* ---- hex ---- */

/* 1 if lo <= v <= hi, else 0, from the sign bits of v - lo and hi - v. */
static uint32_t in_range(uint32_t v, uint32_t lo, uint32_t hi)
{
	return 1 ^ (((v - lo) | (hi - v)) >> 31);
}

/* A lowercase hex digit's value, or 0x100 for any other byte. */
static uint32_t hex_value(uint8_t c)
{
	uint32_t digit = 0u - in_range(c, '0', '9');
	uint32_t letter = 0u - in_range(c, 'a', 'f');
	return (digit & (c - (uint32_t)'0')) | (letter & (c - (uint32_t)'a' + 10)) |
	       (~(digit | letter) & 0x100);
}

/* Decodes 2 * len hex digits; false if one is not a lowercase hex digit
 * (every digit is decoded either way). */
static bool hex_decode(uint8_t *out, const char *in, size_t len)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < len; i++) {
		uint32_t hi = hex_value((uint8_t)in[2 * i]);
		uint32_t lo = hex_value((uint8_t)in[2 * i + 1]);
		bad |= (hi | lo) & 0x100;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return bad == 0;
}

/* x (0..15) as a lowercase hex digit: past 9, add the gap from ':' to 'a'. */
static char hex_digit(uint32_t x)
{
	return (char)('0' + x + ((0u - ((9u - x) >> 31)) & ('a' - '9' - 1)));
}

static char *hex_encode(char *out, const uint8_t *in, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		*out++ = hex_digit(in[i] >> 4);
		*out++ = hex_digit(in[i] & 15u);
	}
	return out;
}

/* ---- rules both directions check ---- */

/* Times a key may have: not negative, and an expiry (0: none) after intro,
 * since a key that stops before it starts opens nothing and is a mistake. */
bool sotls_ticket_key_times_ok(const struct sotls_ticket_key *k)
{
	return k->intro >= 0 && k->expiry >= 0 && (k->expiry == 0 || k->expiry > k->intro);
}

/* Whether name is among keys[0 .. n). RFC 5077 §4: the key name is how a
 * server recognizes which of its keys protects a ticket, so two keys may not
 * share one. */
static bool name_taken(const struct sotls_ticket_key *keys, size_t n, const uint8_t *name)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(keys[i].name, name, sizeof(keys[i].name)) == 0)
			return true;
	return false;
}

/* ---- reading ---- */

/* Decimal digits from p (at least one, the value within int64_t); the byte
 * after them, or NULL. No sign is taken: times are never negative. */
static const char *parse_decimal(const char *p, const char *end, int64_t *out)
{
	const char *start = p;
	int64_t v = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		int d = *p - '0';
		if (v > (INT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

/* One key line, exactly "<name> <secret> <intro> <expiry>" over [p, end). */
static bool parse_key(const char *p, const char *end, struct sotls_ticket_key *k)
{
	if ((size_t)(end - p) < NAME_HEX + 1 + SECRET_HEX + 1 || p[NAME_HEX] != ' ' ||
	    p[NAME_HEX + 1 + SECRET_HEX] != ' ')
		return false;
	bool hex_ok = hex_decode(k->name, p, sizeof(k->name));
	hex_ok &= hex_decode(k->secret, p + NAME_HEX + 1, sizeof(k->secret));
	p = parse_decimal(p + NAME_HEX + 1 + SECRET_HEX + 1, end, &k->intro);
	if (p == NULL || p == end || *p != ' ')
		return false;
	p = parse_decimal(p + 1, end, &k->expiry);
	return hex_ok && p == end && sotls_ticket_key_times_ok(k);
}

/* The key file's lines as they arrive: a comment is skipped without being
 * kept, so its length is not limited; a key line is kept in line[]. */
struct key_parser {
	struct sotls_ticket_key *keys;
	size_t max, n;
	char line[KEY_LINE_MAX];
	size_t used;
	bool comment;
};

/* SOTLS_ERR_TICKET_KEYS, with errno saying which refusal (sotls.h). */
static int refuse(int e)
{
	errno = e;
	return SOTLS_ERR_TICKET_KEYS;
}

const char *sotls_ticket_key_refusal(int e)
{
	switch (e) {
	case EPERM: return "group or others may read or write it, or another user owns it";
	case EINVAL: return "not a regular file, a symbolic link, or a malformed line";
	case EEXIST: return "a key name is there twice";
	case E2BIG: return "more keys than the maximum";
	case ENODATA: return "no key in it";
	}
	return strerror(e);
}

static int end_line(struct key_parser *kp)
{
	bool skip = kp->comment || kp->used == 0;
	size_t used = kp->used;
	kp->used = 0;
	kp->comment = false;
	if (skip)
		return 0;
	if (kp->n == kp->max)
		return refuse(E2BIG);
	struct sotls_ticket_key *k = &kp->keys[kp->n];
	if (!parse_key(kp->line, kp->line + used, k))
		return refuse(EINVAL);
	if (name_taken(kp->keys, kp->n, k->name))
		return refuse(EEXIST);
	kp->n++;
	return 0;
}

static int feed(struct key_parser *kp, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\n') {
			int rc = end_line(kp);
			if (rc != 0)
				return rc;
			continue;
		}
		if (kp->used == 0 && p[i] == '#')
			kp->comment = true;
		if (kp->comment)
			continue;
		if (kp->used == sizeof(kp->line))
			return refuse(EINVAL);
		kp->line[kp->used++] = p[i];
	}
	return 0;
}

static int read_keys(int fd, struct key_parser *kp)
{
	char chunk[4096];
	ssize_t got;
	int rc = 0;
	while (rc == 0 && (got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0) {
			if (errno != EINTR)
				rc = SOTLS_ERR_SYSCALL;
			continue;
		}
		rc = feed(kp, chunk, (size_t)got);
	}
	sotls_wipe(chunk, sizeof(chunk));
	/* A last line without its newline counts like any other. */
	if (rc == 0)
		rc = end_line(kp);
	if (rc == 0 && kp->n == 0)
		return refuse(ENODATA);
	return rc;
}

/* Opens path for reading if it is a regular file, not a symbolic link,
 * that only its owner (this process's effective user, or root) may read or
 * write; -1 with *rc set otherwise. Whoever can write the file mints
 * tickets with a master secret and a "verified" peer of their choosing. */
static int open_key_file(const char *path, int *rc)
{
	/* O_NONBLOCK: a FIFO put in the key file's place must not block a
	 * server's handshake in open(); it is refused below. O_NOFOLLOW: a
	 * link would hand the choice of file to whoever may write the
	 * directory it sits in. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		*rc = errno == ELOOP ? refuse(EINVAL) : SOTLS_ERR_SYSCALL;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*rc = SOTLS_ERR_SYSCALL;
	} else if (!S_ISREG(st.st_mode)) {
		*rc = refuse(EINVAL);
	} else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0 ||
		   (st.st_uid != geteuid() && st.st_uid != 0)) {
		*rc = refuse(EPERM);
	} else {
		return fd;
	}
	int saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

SOTLS_API int sotls_ticket_key_file_read(const char *path, struct sotls_ticket_key *keys,
					 size_t max, size_t *n)
{
	if (path == NULL || *path == '\0' || keys == NULL || n == NULL || max == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*n = 0;
	int rc;
	int fd = open_key_file(path, &rc);
	if (fd < 0)
		return rc;
	struct key_parser kp = {
		.keys = keys,
		.max = max < SOTLS_TICKET_KEYS_MAX ? max : SOTLS_TICKET_KEYS_MAX,
	};
	rc = read_keys(fd, &kp);
	int saved = errno;
	close(fd);
	errno = saved;
	sotls_wipe(kp.line, sizeof(kp.line));
	if (rc != 0) {
		/* The key that failed to parse may hold part of its secret. */
		size_t touched = kp.n < kp.max ? kp.n + 1 : kp.max;
		sotls_wipe(keys, touched * sizeof(*keys));
		return rc;
	}
	*n = kp.n;
	return 0;
}

/* ---- writing ---- */

static size_t format_key(char *out, const struct sotls_ticket_key *k)
{
	char *p = hex_encode(out, k->name, sizeof(k->name));
	*p++ = ' ';
	p = hex_encode(p, k->secret, sizeof(k->secret));
	p += sprintf(p, " %" PRId64 " %" PRId64 "\n", k->intro, k->expiry);
	return (size_t)(p - out);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The whole file into fd, synced and closed (fd is closed either way). */
static int fill_temp(int fd, const struct sotls_ticket_key *keys, size_t n)
{
	char text[sizeof(HEADER) + SOTLS_TICKET_KEYS_MAX * (KEY_LINE_MAX + 1)];
	size_t len = sizeof(HEADER) - 1;
	memcpy(text, HEADER, len);
	for (size_t i = 0; i < n; i++)
		len += format_key(text + len, &keys[i]);
	/* 0600 whatever the umask, so the owner can always read it back. */
	int failed = fchmod(fd, S_IRUSR | S_IWUSR) != 0 || write_all(fd, text, len) != 0 ||
		     fsync(fd) != 0;
	sotls_wipe(text, len);
	int saved = errno;
	if (close(fd) != 0 && !failed) {
		failed = 1;
		saved = errno;
	}
	errno = saved;
	return failed ? SOTLS_ERR_SYSCALL : 0;
}

/* Makes the rename durable: fsync of the directory that holds path. */
static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
	if (len == 0)
		strcpy(dir, ".");
	else {
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return SOTLS_ERR_SYSCALL;
	/* EINVAL: a file system that cannot sync a directory; the rename is
	 * done and nothing more can be asked of it. */
	int failed = fsync(fd) != 0 && errno != EINVAL;
	int saved = errno;
	close(fd);
	errno = saved;
	return failed ? SOTLS_ERR_SYSCALL : 0;
}

SOTLS_API int sotls_ticket_key_file_write(const char *path, const struct sotls_ticket_key *keys,
					  size_t n)
{
	if (path == NULL || *path == '\0' || keys == NULL || n == 0 || n > SOTLS_TICKET_KEYS_MAX)
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* Nothing the reader would refuse is written. */
	for (size_t i = 0; i < n; i++)
		if (!sotls_ticket_key_times_ok(&keys[i]) || name_taken(keys, i, keys[i].name))
			return SOTLS_ERR_INVALID_ARGUMENT;
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return SOTLS_ERR_SYSCALL;
	}
	/* In path's directory, so the rename stays on one file system. */
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return SOTLS_ERR_SYSCALL;
	int rc = fill_temp(fd, keys, n);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = SOTLS_ERR_SYSCALL;
	if (rc != 0) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		return rc;
	}
	return sync_dir(path);
}

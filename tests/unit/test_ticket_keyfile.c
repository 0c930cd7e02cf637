/*
 * Ticket key files (lib/handshake/ticket_keyfile.c) through the public API:
 * the round trip against an independent rendering of the text, every way a
 * line can be malformed, the mode and file type checks, the argument rules,
 * and that a replacement is atomic: a write that fails (file size limit,
 * unwritable or missing directory, a directory in the way) leaves the old
 * file as it was and no temporary file behind, and concurrent readers only
 * ever see a whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sotls.h"

#define NOBODY 65534

static char g_dir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	strcpy(g_dir, "/tmp/test_ticket_keyfile.XXXXXX");
	return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	chmod(g_dir, 0700);
	return nftw(g_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

struct path {
	char s[256];
};

static struct path path_join(const char *dir, const char *name)
{
	struct path p;
	int n = snprintf(p.s, sizeof(p.s), "%s/%s", dir, name);
	assert_true(n > 0 && (size_t)n < sizeof(p.s));
	return p;
}

static struct path path_in(const char *name)
{
	return path_join(g_dir, name);
}

/* A fresh directory of the test's own, to count what is left in it. */
static struct path dir_in(const char *name)
{
	struct path p = path_in(name);
	assert_int_equal(mkdir(p.s, 0700), 0);
	return p;
}

/* Writes text to path with mode, as an editor or another tool would. */
static void put_file(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	close(fd);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Key i of a set whose secrets take every byte value, names distinct. */
static void make_key(struct sotls_ticket_key *k, unsigned i)
{
	for (unsigned j = 0; j < sizeof(k->name); j++)
		k->name[j] = (uint8_t)(j == 0 ? i : 0xf0 + j - i * 7);
	for (unsigned j = 0; j < sizeof(k->secret); j++)
		k->secret[j] = (uint8_t)(i * 32 + j);
	k->intro = 1700000000 - (int64_t)i * 3600;
	k->expiry = i == 0 ? 0 : 1700000000 + 7200 - (int64_t)(i - 1) * 3600;
}

static void make_keys(struct sotls_ticket_key *keys, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		make_key(&keys[i], i);
}

/* The line the format says key k takes, rendered with printf's %02x. */
static size_t expected_line(char *out, const struct sotls_ticket_key *k)
{
	size_t n = 0;
	for (size_t j = 0; j < sizeof(k->name); j++)
		n += (size_t)sprintf(out + n, "%02x", k->name[j]);
	out[n++] = ' ';
	for (size_t j = 0; j < sizeof(k->secret); j++)
		n += (size_t)sprintf(out + n, "%02x", k->secret[j]);
	n += (size_t)sprintf(out + n, " %" PRId64 " %" PRId64 "\n", k->intro, k->expiry);
	return n;
}

static const char HEADER[] = "# sotls ticket keys: newest first; name secret intro expiry\n";

static void assert_keys_equal(const struct sotls_ticket_key *a, const struct sotls_ticket_key *b,
			      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_memory_equal(a[i].name, b[i].name, sizeof(a[i].name));
		assert_memory_equal(a[i].secret, b[i].secret, sizeof(a[i].secret));
		assert_int_equal(a[i].intro, b[i].intro);
		assert_int_equal(a[i].expiry, b[i].expiry);
	}
}

/* ---- round trip ---- */

static void test_round_trip(void **state)
{
	(void)state;
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX], back[SOTLS_TICKET_KEYS_MAX];
	make_keys(keys, SOTLS_TICKET_KEYS_MAX);
	/* The largest times the format allows. */
	keys[1].intro = INT64_MAX - 1;
	keys[1].expiry = INT64_MAX;
	struct path p = path_in("round-trip");
	const char *path = p.s;
	static const size_t counts[] = {1, 2, SOTLS_TICKET_KEYS_MAX};
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c], got = 99;
		assert_int_equal(sotls_ticket_key_file_write(path, keys, n), 0);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);

		static char want[sizeof(HEADER) + SOTLS_TICKET_KEYS_MAX * 160];
		size_t len = strlen(strcpy(want, HEADER));
		for (size_t i = 0; i < n; i++)
			len += expected_line(want + len, &keys[i]);
		size_t file_len;
		const char *text = slurp(path, &file_len);
		assert_int_equal(file_len, len);
		assert_memory_equal(text, want, len);

		memset(back, 0xaa, sizeof(back));
		assert_int_equal(sotls_ticket_key_file_read(path, back, SOTLS_TICKET_KEYS_MAX, &got), 0);
		assert_int_equal(got, n);
		assert_keys_equal(back, keys, n);
	}
	/* A caller's max above the format's limit is no error. */
	size_t got;
	struct sotls_ticket_key many[SOTLS_TICKET_KEYS_MAX + 8];
	assert_int_equal(sotls_ticket_key_file_read(path, many, SOTLS_TICKET_KEYS_MAX + 8, &got), 0);
	assert_int_equal(got, SOTLS_TICKET_KEYS_MAX);
	/* Fewer room than keys: refused, not cut short. */
	assert_int_equal(sotls_ticket_key_file_read(path, many, 3, &got), SOTLS_ERR_TICKET_KEYS);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(got, 0);
}

/* What a hand-edited file may hold besides keys: comments of any length,
 * empty lines, no newline at the end. */
static void test_comments_and_blank_lines(void **state)
{
	(void)state;
	struct sotls_ticket_key keys[2], back[4];
	make_keys(keys, 2);
	static char text[200000];
	size_t len = 0;
	len += (size_t)sprintf(text + len, "\n# a comment\n#\n\n");
	len += expected_line(text + len, &keys[0]);
	text[len++] = '#';
	memset(text + len, 'x', 150000); /* longer than any buffer of the reader */
	len += 150000;
	len += (size_t)sprintf(text + len, "\n\n");
	len += expected_line(text + len, &keys[1]) - 1; /* no final newline */
	struct path p = path_in("comments");
	const char *path = p.s;
	put_file(path, text, len, 0600);
	size_t got;
	assert_int_equal(sotls_ticket_key_file_read(path, back, 4, &got), 0);
	assert_int_equal(got, 2);
	assert_keys_equal(back, keys, 2);
}

/* ---- refusals ---- */

#define NAME "00112233445566778899aabbccddeeff"
#define SECRET "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define GOOD NAME " " SECRET " 100 200"

/* Every malformed line, each after a good line and before another (so a
 * reader that stops early, or skips a bad line, is caught). */
static const char *const MALFORMED[] = {
	"00112233445566778899aabbccddeef " SECRET " 100 200",	   /* name 31 digits */
	"00112233445566778899aabbccddeeff0 " SECRET " 100 200",	   /* name 33 */
	NAME " 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1 100 200",
	NAME " 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0 100 200",
	"00112233445566778899AABBCCDDEEFF " SECRET " 100 200",	   /* uppercase name */
	NAME " 000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f 100 200",
	"0011223344556677889gaabbccddeeff " SECRET " 100 200",	   /* non-hex name */
	"001122334455/6778899aabbccddeeff " SECRET " 100 200",	   /* '0' - 1 */
	"0011223344556677`899aabbccddeeff " SECRET " 100 200",	   /* 'a' - 1 */
	"00112233445566778899aabbccddeefG " SECRET " 100 200",
	NAME " 00010203040506070809za0b0c0d0e0f101112131415161718191a1b1c1d1e1f 100 200",
	NAME " 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e:f 100 200",
	NAME "  " SECRET " 100 200",				   /* two spaces */
	NAME "\t" SECRET " 100 200",				   /* a tab */
	NAME " " SECRET "  100 200",
	NAME " " SECRET " 100  200",
	" " GOOD,						   /* leading space */
	GOOD " ",						   /* trailing space */
	GOOD "x",						   /* trailing junk */
	GOOD "\r",						   /* CRLF */
	GOOD " 300",						   /* a fifth field */
	NAME " " SECRET " 100",					   /* no expiry */
	NAME " " SECRET " 100 ",
	NAME " " SECRET,					   /* no times */
	NAME " " SECRET " ",
	NAME,
	NAME " " SECRET " -1 200",				   /* negative */
	NAME " " SECRET " 100 -200",
	NAME " " SECRET " +100 200",
	NAME " " SECRET " 1.5 200",				   /* not decimal */
	NAME " " SECRET " 0x64 200",
	NAME " " SECRET " 100 2e3",
	NAME " " SECRET " 9223372036854775808 0",		   /* INT64_MAX + 1 */
	NAME " " SECRET " 100 99999999999999999999",
	NAME " " SECRET " 100 100",				   /* expiry at intro */
	NAME " " SECRET " 100 99",				   /* expiry before intro */
	"  ",							   /* blanks only */
	"x",
	" # not a comment: it does not start the line",
};

static void assert_refused(const char *path, int want, int want_errno)
{
	struct sotls_ticket_key keys[4];
	memset(keys, 0xaa, sizeof(keys));
	size_t n = 99;
	errno = 0;
	assert_int_equal(sotls_ticket_key_file_read(path, keys, 4, &n), want);
	if (want_errno != 0)
		assert_int_equal(errno, want_errno); /* which refusal (sotls.h) */
	assert_int_equal(n, 0);
	/* Each key untouched or wiped: a key read before the bad line, or the
	 * part of the bad one parsed, is not left behind. */
	for (size_t k = 0; k < 4; k++) {
		const uint8_t *b = (const uint8_t *)&keys[k];
		for (size_t i = 1; i < sizeof(keys[k]); i++)
			assert_true(b[i] == b[0] && (b[0] == 0 || b[0] == 0xaa));
	}
}

static void test_malformed_lines(void **state)
{
	(void)state;
	struct path p = path_in("malformed");
	const char *path = p.s;
	static const char other[] = "ffeeddccbbaa99887766554433221100 " SECRET " 100 0";
	char text[1024];
	for (size_t i = 0; i < sizeof(MALFORMED) / sizeof(MALFORMED[0]); i++) {
		int len = snprintf(text, sizeof(text), "%s\n%s\n%s\n", GOOD, MALFORMED[i], other);
		put_file(path, text, (size_t)len, 0600);
		print_message("line %zu: \"%s\"\n", i, MALFORMED[i]);
		assert_refused(path, SOTLS_ERR_TICKET_KEYS, EINVAL);
	}
	/* The same lines pass with the bad one left out: the refusals above are
	 * the bad line's. */
	int len = snprintf(text, sizeof(text), "%s\n%s\n", GOOD, other);
	put_file(path, text, (size_t)len, 0600);
	struct sotls_ticket_key keys[2];
	size_t n;
	assert_int_equal(sotls_ticket_key_file_read(path, keys, 2, &n), 0);
	assert_int_equal(n, 2);
}

static void test_malformed_bytes(void **state)
{
	(void)state;
	struct path p = path_in("bytes");
	const char *path = p.s;
	/* A NUL inside a line. */
	char text[300];
	int len = snprintf(text, sizeof(text), "%s\n", GOOD);
	text[40] = '\0';
	put_file(path, text, (size_t)len, 0600);
	assert_refused(path, SOTLS_ERR_TICKET_KEYS, EINVAL);
	/* A line far longer than any key line. */
	char *long_line = malloc(100000);
	assert_non_null(long_line);
	memset(long_line, 'a', 100000);
	memcpy(long_line, GOOD "\n", sizeof(GOOD));
	put_file(path, long_line, 100000, 0600);
	free(long_line);
	assert_refused(path, SOTLS_ERR_TICKET_KEYS, EINVAL);
}

static void test_no_keys(void **state)
{
	(void)state;
	struct path p = path_in("empty");
	const char *path = p.s;
	static const char *const texts[] = {"", "\n\n", "# only a comment\n", HEADER};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		put_file(path, texts[i], strlen(texts[i]), 0600);
		assert_refused(path, SOTLS_ERR_TICKET_KEYS, ENODATA);
	}
}

static void test_duplicate_names(void **state)
{
	(void)state;
	struct path p = path_in("duplicate");
	const char *path = p.s;
	/* Same name, other secret and times. */
	static const char text[] = GOOD "\n" NAME
		" 1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100 5 0\n";
	put_file(path, text, sizeof(text) - 1, 0600);
	assert_refused(path, SOTLS_ERR_TICKET_KEYS, EEXIST);
}

static void test_too_many(void **state)
{
	(void)state;
	struct path p = path_in("too-many");
	const char *path = p.s;
	static char text[sizeof(HEADER) + (SOTLS_TICKET_KEYS_MAX + 1) * 160];
	size_t len = 0;
	for (unsigned i = 0; i <= SOTLS_TICKET_KEYS_MAX; i++) {
		struct sotls_ticket_key k;
		make_key(&k, i);
		len += expected_line(text + len, &k);
	}
	put_file(path, text, len, 0600);
	struct sotls_ticket_key back[SOTLS_TICKET_KEYS_MAX + 1];
	size_t n = 99;
	assert_int_equal(sotls_ticket_key_file_read(path, back, SOTLS_TICKET_KEYS_MAX + 1, &n),
			 SOTLS_ERR_TICKET_KEYS);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(n, 0);
}

/* Any group or other bit refuses the file; the owner's bits do not matter. */
static void test_mode(void **state)
{
	(void)state;
	struct path p = path_in("mode");
	const char *path = p.s;
	static const char text[] = GOOD "\n";
	for (unsigned bit = 0; bit < 6; bit++) {
		put_file(path, text, sizeof(text) - 1, 0600 | (1u << bit));
		print_message("mode %04o\n", 0600 | (1u << bit));
		assert_refused(path, SOTLS_ERR_TICKET_KEYS, EPERM);
	}
	static const mode_t fine[] = {0400, 0600, 0700};
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		put_file(path, text, sizeof(text) - 1, fine[i]);
		struct sotls_ticket_key k;
		size_t n;
		assert_int_equal(sotls_ticket_key_file_read(path, &k, 1, &n), 0);
		assert_int_equal(n, 1);
	}
}

/* A file another user owns is refused whatever its mode: its owner could
 * mint tickets. Root's files are accepted (a service that drops privileges
 * after reading root's key file). Needs root to give the file away, as CI
 * and make check run. */
static void test_owner(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct path p = path_in("owner");
	static const char text[] = GOOD "\n";
	put_file(p.s, text, sizeof(text) - 1, 0600);
	assert_int_equal(chown(p.s, 65534, 65534), 0);
	assert_refused(p.s, SOTLS_ERR_TICKET_KEYS, EPERM);
	assert_int_equal(chown(p.s, 0, 0), 0);
	struct sotls_ticket_key k;
	size_t n;
	assert_int_equal(sotls_ticket_key_file_read(p.s, &k, 1, &n), 0);
	assert_int_equal(n, 1);
}

/* A symbolic link to a good key file is refused (EINVAL, not a regular
 * file): the link's target is chosen by whoever may write its directory.
 * A link higher up the path is the directory's owner's business. */
static void test_symlink(void **state)
{
	(void)state;
	struct path target = path_in("target");
	static const char text[] = GOOD "\n";
	put_file(target.s, text, sizeof(text) - 1, 0600);
	struct path link = path_in("link");
	assert_int_equal(symlink(target.s, link.s), 0);
	assert_refused(link.s, SOTLS_ERR_TICKET_KEYS, EINVAL);
	struct path dir_link = path_in("dir-link");
	assert_int_equal(symlink(g_dir, dir_link.s), 0);
	struct path through = path_join(dir_link.s, "target");
	struct sotls_ticket_key k;
	size_t n;
	assert_int_equal(sotls_ticket_key_file_read(through.s, &k, 1, &n), 0);
	assert_int_equal(n, 1);
}

/* A directory or a FIFO in the file's place: refused, and the FIFO (no
 * writer) must not block the reader in open(). */
static void test_not_a_file(void **state)
{
	(void)state;
	struct path dir = dir_in("a-directory");
	assert_refused(dir.s, SOTLS_ERR_TICKET_KEYS, EINVAL);
	struct path fifo = path_in("a-fifo");
	assert_int_equal(mkfifo(fifo.s, 0600), 0);
	assert_refused(fifo.s, SOTLS_ERR_TICKET_KEYS, EINVAL);
	struct path missing = path_in("missing");
	errno = 0;
	assert_refused(missing.s, SOTLS_ERR_SYSCALL, ENOENT);
	assert_int_equal(errno, ENOENT);
}

static void test_arguments(void **state)
{
	(void)state;
	struct path p = path_in("arguments");
	const char *path = p.s;
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX + 1];
	make_keys(keys, SOTLS_TICKET_KEYS_MAX + 1);
	assert_int_equal(sotls_ticket_key_file_write(path, keys, 2), 0);
	size_t before_len;
	char before[4096];
	const char *text = slurp(path, &before_len);
	memcpy(before, text, before_len);

	size_t n;
	assert_int_equal(sotls_ticket_key_file_read(NULL, keys, 1, &n), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_read("", keys, 1, &n), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_read(path, NULL, 1, &n), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_read(path, keys, 1, NULL),
			 SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_read(path, keys, 0, &n), SOTLS_ERR_INVALID_ARGUMENT);

	assert_int_equal(sotls_ticket_key_file_write(NULL, keys, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_write("", keys, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_write(path, NULL, 1), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_write(path, keys, 0), SOTLS_ERR_INVALID_ARGUMENT);
	assert_int_equal(sotls_ticket_key_file_write(path, keys, SOTLS_TICKET_KEYS_MAX + 1),
			 SOTLS_ERR_INVALID_ARGUMENT);
	/* Keys the reader would refuse are not written either. */
	struct sotls_ticket_key bad[2];
	memcpy(bad, keys, sizeof(bad));
	bad[1].expiry = bad[1].intro;
	assert_int_equal(sotls_ticket_key_file_write(path, bad, 2), SOTLS_ERR_INVALID_ARGUMENT);
	memcpy(bad, keys, sizeof(bad));
	bad[0].intro = -1;
	assert_int_equal(sotls_ticket_key_file_write(path, bad, 2), SOTLS_ERR_INVALID_ARGUMENT);
	memcpy(bad, keys, sizeof(bad));
	bad[1].expiry = -1;
	assert_int_equal(sotls_ticket_key_file_write(path, bad, 2), SOTLS_ERR_INVALID_ARGUMENT);
	memcpy(bad, keys, sizeof(bad));
	memcpy(bad[1].name, bad[0].name, sizeof(bad[0].name));
	assert_int_equal(sotls_ticket_key_file_write(path, bad, 2), SOTLS_ERR_INVALID_ARGUMENT);

	size_t after_len;
	const char *after = slurp(path, &after_len);
	assert_int_equal(after_len, before_len);
	assert_memory_equal(after, before, before_len);
}

/* ---- atomic replacement ---- */

/* The directory holds exactly the given number of entries (no temp file
 * left over). */
static void assert_entries(const char *dir, int want)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq %d", dir, want);
	assert_int_equal(system(cmd), 0);
}

static void assert_intact(const char *path, const char *text, size_t len)
{
	size_t now_len;
	const char *now = slurp(path, &now_len);
	assert_int_equal(now_len, len);
	assert_memory_equal(now, text, len);
	struct sotls_ticket_key keys[4];
	size_t n;
	assert_int_equal(sotls_ticket_key_file_read(path, keys, 4, &n), 0);
}

static void test_failed_write_keeps_old_file(void **state)
{
	(void)state;
	struct path d = dir_in("atomic");
	const char *dir = d.s;
	struct path p = path_join(dir, "keys");
	const char *path = p.s;
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX];
	make_keys(keys, SOTLS_TICKET_KEYS_MAX);
	assert_int_equal(sotls_ticket_key_file_write(path, keys, 2), 0);
	size_t old_len;
	char old[4096];
	const char *text = slurp(path, &old_len);
	memcpy(old, text, old_len);

	/* The new file cannot be written whole: a file size limit (it binds
	 * root too) makes write() fail part way with EFBIG. */
	struct rlimit saved, small = {.rlim_cur = 1000};
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
	small.rlim_max = saved.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	errno = 0;
	int rc = sotls_ticket_key_file_write(path, keys, SOTLS_TICKET_KEYS_MAX);
	int err = errno;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, SOTLS_ERR_SYSCALL);
	assert_int_equal(err, EFBIG);
	assert_intact(path, old, old_len);
	assert_entries(dir, 1);

	/* A directory that is not writable, for a user who is not root: the
	 * child drops to nobody when it runs as root. */
	assert_int_equal(chmod(g_dir, 0711), 0);
	assert_int_equal(chmod(dir, 0555), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
			_exit(3);
		errno = 0;
		int crc = sotls_ticket_key_file_write(path, keys, 1);
		_exit(crc == SOTLS_ERR_SYSCALL && errno == EACCES ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(chmod(g_dir, 0700), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_intact(path, old, old_len);
	assert_entries(dir, 1);

	/* A directory in the file's place: the rename fails, the temporary
	 * file goes, the directory stays. */
	struct path in_the_way = path_join(dir, "sub");
	assert_int_equal(mkdir(in_the_way.s, 0700), 0);
	struct path inner = path_join(in_the_way.s, "x");
	put_file(inner.s, "x", 1, 0600);
	errno = 0;
	assert_int_equal(sotls_ticket_key_file_write(in_the_way.s, keys, 1), SOTLS_ERR_SYSCALL);
	assert_true(errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST);
	assert_entries(dir, 2);
	assert_entries(in_the_way.s, 1);

	/* No directory at all. */
	struct path nowhere = path_join(dir, "none/keys");
	errno = 0;
	assert_int_equal(sotls_ticket_key_file_write(nowhere.s, keys, 1), SOTLS_ERR_SYSCALL);
	assert_int_equal(errno, ENOENT);
	assert_intact(path, old, old_len);
}

/* The new file is 0600 whatever the umask, and whatever mode the file it
 * replaces had. */
static void test_written_mode(void **state)
{
	(void)state;
	struct path p = path_in("written-mode");
	const char *path = p.s;
	put_file(path, GOOD "\n", sizeof(GOOD), 0644);
	struct sotls_ticket_key k;
	make_key(&k, 0);
	static const mode_t masks[] = {0, 022, 0277};
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		mode_t old = umask(masks[i]);
		int rc = sotls_ticket_key_file_write(path, &k, 1);
		umask(old);
		assert_int_equal(rc, 0);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
}

/* ---- concurrent readers ---- */

#define ROUNDS 300

struct race {
	const char *path;
	struct sotls_ticket_key a[3], b[5];
	atomic_int done;
	int reads, failures, wrong, saw_a, saw_b;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->done)) {
		struct sotls_ticket_key keys[8];
		size_t n;
		int rc = sotls_ticket_key_file_read(r->path, keys, 8, &n);
		r->reads++;
		if (rc != 0) {
			r->failures++;
			continue;
		}
		if (n == 3 && memcmp(keys, r->a, sizeof(r->a)) == 0)
			r->saw_a++;
		else if (n == 5 && memcmp(keys, r->b, sizeof(r->b)) == 0)
			r->saw_b++;
		else
			r->wrong++;
	}
	return NULL;
}

/* A reader sees the file before a replacement or after it, whole. */
static void test_concurrent_readers(void **state)
{
	(void)state;
	static struct race r;
	memset(&r, 0, sizeof(r));
	struct path d = dir_in("race"), p = path_join(d.s, "keys");
	r.path = p.s;
	for (unsigned i = 0; i < 5; i++) {
		if (i < 3)
			make_key(&r.a[i], i);
		make_key(&r.b[i], 10 + i);
	}
	assert_int_equal(sotls_ticket_key_file_write(r.path, r.a, 3), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
	for (int i = 0; i < ROUNDS; i++) {
		assert_int_equal(sotls_ticket_key_file_write(r.path, i % 2 ? r.a : r.b, i % 2 ? 3 : 5),
				 0);
		/* Let the reader in between some of the writes. */
		if (i % 16 == 0)
			usleep(1000);
	}
	atomic_store(&r.done, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	print_message("%d reads: %d of 3 keys, %d of 5\n", r.reads, r.saw_a, r.saw_b);
	assert_int_equal(r.failures, 0);
	assert_int_equal(r.wrong, 0);
	assert_true(r.saw_a > 0 && r.saw_b > 0);
	assert_entries(d.s, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_comments_and_blank_lines),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_malformed_bytes),
		cmocka_unit_test(test_no_keys),
		cmocka_unit_test(test_duplicate_names),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_symlink),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_failed_write_keeps_old_file),
		cmocka_unit_test(test_written_mode),
		cmocka_unit_test(test_concurrent_readers),
	};
	return cmocka_run_group_tests_name("ticket_keyfile", tests, setup, teardown);
}

/*
 * libFuzzer target: the ticket key file reader (lib/handshake/ticket_keyfile.c,
 * sotls_ticket_key_file_read). The reader takes a path only, and it checks
 * what the path is (a regular file its owner alone may use), so the input is
 * written to a file of mode 0600 in a private directory (on /dev/shm when it
 * can: no disk I/O per execution) and read from there.
 *
 * Oracles beyond the sanitizers:
 *  - a file it accepts has 1 to SOTLS_TICKET_KEYS_MAX keys with distinct
 *    names and valid times (sotls_ticket_key_times_ok); written back with
 *    sotls_ticket_key_file_write and read again, it gives the same keys;
 *    read with room for one key fewer, it is refused with E2BIG;
 *  - a file it refuses is refused with SOTLS_ERR_TICKET_KEYS and one of the
 *    errno values sotls.h lists, and leaves no byte of any key behind in the
 *    caller's array (a half-parsed secret must not stay there).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resume.h"
#include "sotls.h"

static char g_dir[256], g_path[300], g_copy[300];
static int g_fd = -1;

/* An oracle's failure: says which, then crashes for libFuzzer. */
static _Noreturn void fail(const char *why)
{
	fprintf(stderr, "fuzz-ticket-keyfile: %s\n", why);
	abort();
}

static void cleanup(void)
{
	if (g_fd >= 0)
		close(g_fd);
	unlink(g_path);
	unlink(g_copy);
	rmdir(g_dir);
}

static void setup(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	if (base == NULL)
		base = "/tmp";
	snprintf(g_dir, sizeof(g_dir), "%s/sotls-fuzz-keyfile-XXXXXX", base);
	if (mkdtemp(g_dir) == NULL)
		fail("no private directory");
	snprintf(g_path, sizeof(g_path), "%s/keys", g_dir);
	snprintf(g_copy, sizeof(g_copy), "%s/copy", g_dir);
	g_fd = open(g_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (g_fd < 0 || fchmod(g_fd, 0600) != 0)
		fail("cannot make the key file");
	atexit(cleanup);
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* Read with room for max keys into a zeroed array: the refusal rules. */
static int read_keys(const char *path, struct sotls_ticket_key *keys, size_t max, size_t *n)
{
	memset(keys, 0, SOTLS_TICKET_KEYS_MAX * sizeof(*keys));
	int rc = sotls_ticket_key_file_read(path, keys, max, n);
	if (rc != 0) {
		int e = errno;
		if (rc != SOTLS_ERR_TICKET_KEYS ||
		    (e != EINVAL && e != EEXIST && e != E2BIG && e != ENODATA))
			fail("refused with an undocumented error");
		if (!all_zero(keys, SOTLS_TICKET_KEYS_MAX * sizeof(*keys)))
			fail("a refused file left key bytes behind");
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_fd < 0)
		setup();
	if (ftruncate(g_fd, 0) != 0 ||
	    (size > 0 && pwrite(g_fd, data, size, 0) != (ssize_t)size))
		fail("cannot write the input");

	static struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX], again[SOTLS_TICKET_KEYS_MAX];
	size_t n = 0, n2 = 0;
	if (read_keys(g_path, keys, SOTLS_TICKET_KEYS_MAX, &n) != 0)
		return 0;
	if (n == 0 || n > SOTLS_TICKET_KEYS_MAX)
		fail("key count out of range");
	for (size_t i = 0; i < n; i++) {
		if (!sotls_ticket_key_times_ok(&keys[i]))
			fail("a key with times the rules refuse");
		for (size_t j = 0; j < i; j++)
			if (memcmp(keys[i].name, keys[j].name, sizeof(keys[i].name)) == 0)
				fail("two keys with one name");
	}
	if (!all_zero(keys + n, (SOTLS_TICKET_KEYS_MAX - n) * sizeof(*keys)))
		fail("written past the keys it reports");

	/* What it read, written by the writer, reads back the same. */
	if (sotls_ticket_key_file_write(g_copy, keys, n) != 0 ||
	    read_keys(g_copy, again, SOTLS_TICKET_KEYS_MAX, &n2) != 0 || n2 != n ||
	    memcmp(again, keys, n * sizeof(*keys)) != 0)
		fail("what it read does not write and read back the same");

	/* One key more than the caller has room for is refused whole. */
	if (n > 1 && (read_keys(g_path, again, n - 1, &n2) != SOTLS_ERR_TICKET_KEYS ||
		      errno != E2BIG))
		fail("one key too many not refused with E2BIG");
	return 0;
}

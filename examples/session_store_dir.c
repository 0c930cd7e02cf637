#include "session_store_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "secret_file.h"

/* A file starts with the magic and the expiry; what follows is sotls's. */
#define MAGIC "sotlsss1"
#define MAGIC_LEN 8
#define HEADER_LEN (MAGIC_LEN + 8)
/* sotls gives session IDs of 1 to 32 bytes (RFC 5246 §7.4.1.2:
 * SessionID<0..32>; an empty one is never stored). */
#define ID_MAX 32

/* The file name of a session: its ID in hex. 0 if the ID cannot be one. */
static int id_name(const uint8_t *id, size_t id_len, char name[2 * ID_MAX + 1])
{
	static const char hex[] = "0123456789abcdef";
	if (id == NULL || id_len == 0 || id_len > ID_MAX)
		return 0;
	for (size_t i = 0; i < id_len; i++) {
		name[2 * i] = hex[id[i] >> 4];
		name[2 * i + 1] = hex[id[i] & 15];
	}
	name[2 * id_len] = '\0';
	return 1;
}

static void put(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data, size_t len,
		unsigned lifetime)
{
	struct session_store_dir *s = arg;
	char name[2 * ID_MAX + 1];
	uint8_t expiry[8];
	uint64_t t = (uint64_t)time(NULL) + lifetime;
	if (!id_name(id, id_len, name) || data == NULL || len == 0)
		return;
	for (int i = 7; i >= 0; i--, t >>= 8)
		expiry[i] = (uint8_t)t;
	struct iovec iov[] = {
		{.iov_base = (void *)MAGIC, .iov_len = MAGIC_LEN},
		{.iov_base = expiry, .iov_len = sizeof(expiry)},
		{.iov_base = (void *)data, .iov_len = len},
	};
	/* Only a full handshake is lost if this fails, but a store that never
	 * works should not stay silent. */
	if (secret_file_write(s->dirfd, name, iov, 3) != 0)
		fprintf(stderr, "--session-store: writing %s: %s\n", name, strerror(errno));
}

static ssize_t get(void *arg, const uint8_t *id, size_t id_len, uint8_t *buf, size_t cap)
{
	struct session_store_dir *s = arg;
	char name[2 * ID_MAX + 1];
	size_t len;
	if (!id_name(id, id_len, name) || buf == NULL)
		return 0;
	uint8_t *file = secret_file_read(s->dirfd, name, &len);
	if (file == NULL)
		return 0;
	ssize_t got = 0;
	bool session = len > HEADER_LEN && len - HEADER_LEN <= cap &&
		       memcmp(file, MAGIC, MAGIC_LEN) == 0;
	uint64_t expiry = 0;
	for (size_t i = MAGIC_LEN; session && i < HEADER_LEN; i++)
		expiry = expiry << 8 | file[i];
	/* Stale, or not a session (sotls's never exceed cap): gone for all. */
	if (!session || (uint64_t)time(NULL) >= expiry) {
		unlinkat(s->dirfd, name, 0);
	} else {
		memcpy(buf, file + HEADER_LEN, len - HEADER_LEN);
		got = (ssize_t)(len - HEADER_LEN);
	}
	secret_file_free(file, len);
	return got;
}

static void del(void *arg, const uint8_t *id, size_t id_len)
{
	struct session_store_dir *s = arg;
	char name[2 * ID_MAX + 1];
	if (id_name(id, id_len, name))
		unlinkat(s->dirfd, name, 0);
}

int session_store_dir_open(struct session_store_dir *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		close(fd);
		return SESSION_STORE_BAD_MODE;
	}
	s->dirfd = fd;
	return 0;
}

int session_store_dir_use(struct sotls_config *cfg, struct session_store_dir *s)
{
	return sotls_config_set_session_store(cfg, put, get, del, s);
}

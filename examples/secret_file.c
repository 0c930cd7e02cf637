#include "secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary names differ between processes (the pid) and between threads
 * of one process (the counter); O_EXCL catches a stale one of a dead
 * process that had the same pid. */
static atomic_uint g_seq;

static int write_all(int fd, const struct iovec *iov, int iovcnt)
{
	for (int i = 0; i < iovcnt; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left > 0) {
			ssize_t n = write(fd, p, left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -1;
			p += n;
			left -= (size_t)n;
		}
	}
	return 0;
}

int secret_file_write(int dirfd, const char *name, const struct iovec *iov, int iovcnt)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", name, (long)getpid(),
			     atomic_fetch_add(&g_seq, 1)) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	/* No fsync: these files are caches; after a crash a short one is
	 * refused by its reader, and the client makes a full handshake. */
	int rc = write_all(fd, iov, iovcnt);
	int err = errno;
	/* Closed once only: another thread may get the number at once. */
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0) {
		rc = -1;
		err = errno;
	}
	if (rc != 0) {
		unlinkat(dirfd, tmp, 0);
		errno = err;
	}
	return rc;
}

void *secret_file_read(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	int err = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0)
		err = errno;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	else if ((size_t)st.st_size > SECRET_FILE_MAX)
		err = EFBIG;
	size_t cap = err == 0 ? (size_t)st.st_size : 0, have = 0;
	uint8_t *buf = err == 0 ? malloc(cap > 0 ? cap : 1) : NULL;
	if (err == 0 && buf == NULL)
		err = ENOMEM;
	while (err == 0 && have < cap) {
		ssize_t n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = errno;
		else if (n == 0) /* shorter than fstat said: a writer that does not rename */
			err = EIO;
		else
			have += (size_t)n;
	}
	close(fd);
	if (err != 0) {
		secret_file_free(buf, cap);
		errno = err;
		return NULL;
	}
	*len = cap;
	return buf;
}

void secret_file_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	explicit_bzero(p, len);
	free(p);
}

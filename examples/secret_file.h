/* Small files that hold secrets (a TLS session holds its master secret):
 * mode 0600 from the moment they exist, and replaced whole, so that a
 * reader in another process sees the old file or the new one, never a part
 * of either. */
#ifndef SOTLS_EXAMPLES_SECRET_FILE_H
#define SOTLS_EXAMPLES_SECRET_FILE_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The largest file secret_file_read takes. */
#define SECRET_FILE_MAX ((size_t)1 << 20)

/* Writes the iovcnt parts of iov to name, relative to the directory dirfd
 * (AT_FDCWD: the working directory), through a temporary file next to it
 * (name.tmp.PID.N, created exclusively, mode 0600) renamed over name.
 * Returns 0, or -1 with errno (the temporary file removed). */
int secret_file_write(int dirfd, const char *name, const struct iovec *iov, int iovcnt);

/* The whole of name (relative to dirfd) in a new buffer (free it, after
 * wiping, with secret_file_free) of *len bytes. A symbolic link is not
 * followed. Returns the buffer, or NULL with errno (EFBIG above
 * SECRET_FILE_MAX). */
void *secret_file_read(int dirfd, const char *name, size_t *len);

/* Wipes len bytes of p, then frees it. */
void secret_file_free(void *p, size_t len);

#endif

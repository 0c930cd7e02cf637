/* See http_files.h. */
#include "http_files.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Non-blocking: opening a FIFO (or a device) must not wait for a writer;
 * the caller then refuses whatever is not a regular file. Symlinks inside
 * the root are served, so no O_NOFOLLOW: RESOLVE_BENEATH keeps them in. */
#define FILE_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

int http_root_open(struct http_root *root, const char *dir)
{
	root->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root->fd < 0)
		return -1;
	if (realpath(dir, root->real) == NULL) {
		int err = errno;
		close(root->fd);
		root->fd = -1;
		errno = err;
		return -1;
	}
	return 0;
}

/* Opens rel (relative, already free of "..") beneath the root. */
static int open_beneath(const struct http_root *root, const char *rel)
{
	const char *name = rel[0] != '\0' ? rel : ".";
	struct open_how how = {
		.flags = FILE_OPEN_FLAGS,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root->fd, name, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
	/* No openat2 (or a seccomp filter refuses it): resolve and compare. */
	char full[PATH_MAX * 2], real[PATH_MAX];
	snprintf(full, sizeof(full), "%s/%s", root->real, rel);
	if (realpath(full, real) == NULL)
		return -1;
	size_t n = strlen(root->real);
	if (strncmp(real, root->real, n) != 0 || (real[n] != '/' && real[n] != '\0')) {
		errno = EXDEV;
		return -1;
	}
	return open(real, FILE_OPEN_FLAGS);
}

int http_open_file(const struct http_root *root, const char *rel, struct stat *st,
		   char *name_buf, size_t name_size, bool *not_regular)
{
	int fd = open_beneath(root, rel);
	snprintf(name_buf, name_size, "%s", rel);
	if (fd >= 0 && fstat(fd, st) == 0 && S_ISDIR(st->st_mode)) {
		/* A directory: its index.html, if any. */
		snprintf(name_buf, name_size, "%s%sindex.html", rel, rel[0] ? "/" : "");
		close(fd);
		fd = open_beneath(root, name_buf);
	}
	*not_regular = false;
	if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
		*not_regular = true;
		close(fd);
		fd = -1;
	}
	return fd;
}

const char *http_content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".html", "text/html; charset=utf-8"}, {".htm", "text/html; charset=utf-8"},
		{".txt", "text/plain; charset=utf-8"}, {".css", "text/css"},
		{".js", "text/javascript"},	       {".json", "application/json"},
		{".png", "image/png"},		       {".jpg", "image/jpeg"},
		{".svg", "image/svg+xml"},
	};
	const char *dot = strrchr(name, '.');
	if (dot != NULL && strchr(dot, '/') == NULL)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

int http_status_response(char *buf, size_t size, int code, const char *reason, bool head,
			 bool keep_alive, const char *extra)
{
	char body[128];
	int blen = snprintf(body, sizeof(body), "%d %s\n", code, reason);
	return snprintf(buf, size,
			"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			"Content-Length: %d\r\n%sConnection: %s\r\n\r\n%s",
			code, reason, blen, extra ? extra : "", keep_alive ? "keep-alive" : "close",
			head ? "" : body);
}

int http_ok_head(char *buf, size_t size, const char *type, long long len, bool keep_alive)
{
	return snprintf(buf, size,
			"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
			"Connection: %s\r\n\r\n",
			type, len, keep_alive ? "keep-alive" : "close");
}

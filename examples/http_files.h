/* What the example HTTPS servers share about files and responses: opening
 * a request's file beneath the root and nowhere else, its content type, and
 * the response heads they write. The threaded server (sotls-https-server)
 * and the io_uring one (sotls-uring-server) answer alike through these. */
#ifndef SOTLS_EXAMPLES_HTTP_FILES_H
#define SOTLS_EXAMPLES_HTTP_FILES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "http_request.h"

struct http_root {
	int fd;			/* the directory, O_PATH-like: the base of every open */
	char real[PATH_MAX];	/* its real path, for kernels without openat2 */
};

/* Opens dir as the root. Returns 0, or -1 with errno. */
int http_root_open(struct http_root *root, const char *dir);

/* Opens rel (http_relative_path's result) beneath the root: a directory
 * means its index.html; only a regular file is served. Returns the
 * descriptor (non-blocking, CLOEXEC) with *st filled and *name the path
 * served (its content type; in name_buf, name_size bytes), or -1: nothing
 * to serve (*not_regular says whether something was there but is not a
 * regular file). */
int http_open_file(const struct http_root *root, const char *rel, struct stat *st,
		   char *name_buf, size_t name_size, bool *not_regular);

/* The Content-Type for a file name, by its extension. */
const char *http_content_type(const char *name);

/* A short response with a text body (none for HEAD) into buf: its length. */
int http_status_response(char *buf, size_t size, int code, const char *reason, bool head,
			 bool keep_alive, const char *extra);

/* The head of a 200 response for a body of len bytes into buf: its length. */
int http_ok_head(char *buf, size_t size, const char *type, long long len, bool keep_alive);

#endif

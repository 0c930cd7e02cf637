/*
 * A small, strict HTTP/1.x request-head parser for the example HTTPS file
 * server, kept apart so that it can be tested and fuzzed on its own. No
 * allocation, no I/O: it looks at bytes and says what they are.
 */
#ifndef SOTLS_EXAMPLES_HTTP_REQUEST_H
#define SOTLS_EXAMPLES_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

/* Longest request head (request line + headers) accepted. */
#define HTTP_MAX_HEAD 8192
/* Longest decoded path. */
#define HTTP_MAX_PATH 1024

enum http_method {
	HTTP_GET = 1,
	HTTP_HEAD = 2,
	HTTP_OTHER = 3, /* a well-formed method we do not serve (405) */
};

enum http_parse_result {
	HTTP_PARSE_OK = 1,	    /* a whole request head is in req */
	HTTP_PARSE_INCOMPLETE = 0, /* need more bytes */
	HTTP_PARSE_BAD = -1,	    /* malformed: answer 400 and close */
	HTTP_PARSE_TOO_LONG = -2,  /* head or path too long: 400 (431) and close */
};

struct http_request {
	enum http_method method;
	int minor;	       /* HTTP/1.<minor>: 0 or 1 */
	bool keep_alive;       /* by version and the Connection header */
	size_t head_len;       /* bytes of the head, final empty line included */
	/* The target's path, percent-decoded, query and fragment dropped:
	 * starts with '/', holds no NUL and no control character. */
	char path[HTTP_MAX_PATH + 1];
};

/*
 * Parses the request head at the start of buf[0, len). Request bodies are
 * refused (Content-Length other than 0, any Transfer-Encoding: HTTP_PARSE_BAD)
 * since GET and HEAD take none. Lines end in CRLF or LF.
 */
enum http_parse_result http_parse_request(const char *buf, size_t len, struct http_request *req);

/*
 * Turns a decoded path into a relative path under the server's root, in rel
 * (rel_size bytes): "/a/./b//c" -> "a/b/c", "/" -> "". Refuses (returns -1)
 * any ".." segment, a backslash, and anything that does not fit. The caller
 * still opens it with the root as the only base (openat2 RESOLVE_BENEATH) so
 * symlinks cannot lead out either.
 */
int http_relative_path(const char *path, char *rel, size_t rel_size);

#endif

/*
 * libFuzzer target: the HTTP request-head parser of the example file server
 * (examples/http_request.c), and the path-to-relative-path step after it.
 * Checks beyond the sanitizers: a parsed head lies inside the input, its path
 * starts with '/' and holds no control character, parsing just the head
 * again gives the same answer, and a relative path never climbs out
 * (no ".." segment, no leading '/', no backslash).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes: any read past it is caught by ASan. */
	char *buf = malloc(size ? size : 1);
	if (buf == NULL)
		abort();
	memcpy(buf, data, size);

	struct http_request req;
	memset(&req, 0xa5, sizeof(req));
	enum http_parse_result r = http_parse_request(buf, size, &req);
	if (r != HTTP_PARSE_OK && r != HTTP_PARSE_INCOMPLETE && r != HTTP_PARSE_BAD &&
	    r != HTTP_PARSE_TOO_LONG)
		abort();
	if (r == HTTP_PARSE_OK) {
		if (req.head_len == 0 || req.head_len > size || req.head_len > HTTP_MAX_HEAD)
			abort();
		if (req.method != HTTP_GET && req.method != HTTP_HEAD && req.method != HTTP_OTHER)
			abort();
		if (req.minor != 0 && req.minor != 1)
			abort();
		size_t plen = strnlen(req.path, sizeof(req.path));
		if (plen == 0 || plen > HTTP_MAX_PATH || req.path[0] != '/')
			abort();
		for (size_t i = 0; i < plen; i++)
			if ((unsigned char)req.path[i] < 0x20 || req.path[i] == 0x7f)
				abort();
		/* The head alone parses the same. */
		struct http_request again;
		if (http_parse_request(buf, req.head_len, &again) != HTTP_PARSE_OK ||
		    again.head_len != req.head_len || strcmp(again.path, req.path) != 0)
			abort();

		char rel[HTTP_MAX_PATH + 1];
		if (http_relative_path(req.path, rel, sizeof(rel)) == 0) {
			size_t n = strnlen(rel, sizeof(rel));
			if (n == sizeof(rel) || (n > 0 && rel[0] == '/') || strchr(rel, '\\'))
				abort();
			for (const char *s = rel; *s;) {
				const char *e = strchr(s, '/');
				size_t seg = e ? (size_t)(e - s) : strlen(s);
				if ((seg == 2 && s[0] == '.' && s[1] == '.') || seg == 0 ||
				    (seg == 1 && s[0] == '.'))
					abort();
				s += seg + (e ? 1 : 0);
			}
		}
	}
	/* The path step on its own, with a NUL-terminated copy of the input. */
	if (size <= HTTP_MAX_PATH) {
		char path[HTTP_MAX_PATH + 1], rel[64];
		memcpy(path, data, size);
		path[size] = '\0';
		(void)http_relative_path(path, rel, sizeof(rel));
	}
	free(buf);
	return 0;
}

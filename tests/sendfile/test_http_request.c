/* The example server's request parser (examples/http_request.c). */
#include <stdio.h>
#include <string.h>

#include "http_request.h"

static int g_failures;
#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			g_failures++;                                              \
		}                                                                  \
	} while (0)

static enum http_parse_result parse(const char *s, struct http_request *r)
{
	return http_parse_request(s, strlen(s), r);
}

int main(void)
{
	struct http_request r;
	CHECK(parse("GET /a/b.txt?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", &r) == HTTP_PARSE_OK);
	CHECK(r.method == HTTP_GET && strcmp(r.path, "/a/b.txt") == 0 && r.keep_alive &&
	      r.minor == 1 && r.head_len == strlen("GET /a/b.txt?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"));
	CHECK(parse("HEAD /%41%2f HTTP/1.0\n\n", &r) == HTTP_PARSE_OK);
	CHECK(r.method == HTTP_HEAD && strcmp(r.path, "/A/") == 0 && !r.keep_alive);
	CHECK(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r) == HTTP_PARSE_OK &&
	      r.keep_alive);
	CHECK(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n", &r) ==
		      HTTP_PARSE_OK &&
	      !r.keep_alive);
	CHECK(parse("DELETE / HTTP/1.1\r\nHost: h\r\n\r\n", &r) == HTTP_PARSE_OK &&
	      r.method == HTTP_OTHER);
	CHECK(parse("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &r) == HTTP_PARSE_OK);
	/* Incomplete, then complete with pipelined bytes behind. */
	CHECK(parse("GET / HTTP/1.1\r\nHost: h\r\n", &r) == HTTP_PARSE_INCOMPLETE);
	CHECK(parse("", &r) == HTTP_PARSE_INCOMPLETE);
	const char *two = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\n";
	CHECK(parse(two, &r) == HTTP_PARSE_OK && strcmp(r.path, "/1") == 0 &&
	      r.head_len == strlen("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"));
	/* Malformed. */
	const char *bad[] = {
		"GARBAGE\r\n\r\n",
		"GET\r\n\r\n",
		"GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n", /* no Host */
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET http://x/ HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET * HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /%00 HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /%0a HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /% HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n",
		"GET / HTTP/1.1\r\nno colon\r\n\r\n",
		"GET /\x80 HTTP/1.1\r\nHost: h\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &r) != HTTP_PARSE_BAD) {
			fprintf(stderr, "FAIL: accepted bad request %zu\n", i);
			g_failures++;
		}
	}
	/* Too long. */
	static char big[HTTP_MAX_HEAD + 64];
	memset(big, 'a', sizeof(big) - 1);
	CHECK(http_parse_request(big, sizeof(big) - 1, &r) == HTTP_PARSE_TOO_LONG);

	/* Relative paths under the root. */
	char rel[64];
	CHECK(http_relative_path("/a/./b//c", rel, sizeof(rel)) == 0 && strcmp(rel, "a/b/c") == 0);
	CHECK(http_relative_path("/", rel, sizeof(rel)) == 0 && strcmp(rel, "") == 0);
	CHECK(http_relative_path("//etc/passwd", rel, sizeof(rel)) == 0 &&
	      strcmp(rel, "etc/passwd") == 0);
	CHECK(http_relative_path("/..", rel, sizeof(rel)) == -1);
	CHECK(http_relative_path("/a/../b", rel, sizeof(rel)) == -1);
	CHECK(http_relative_path("/a/..", rel, sizeof(rel)) == -1);
	CHECK(http_relative_path("/..\\x", rel, sizeof(rel)) == -1);
	CHECK(http_relative_path("/a/...", rel, sizeof(rel)) == 0 && strcmp(rel, "a/...") == 0);
	CHECK(http_relative_path("/0123456789012345678901234567890123456789012345678901234567890123",
				 rel, sizeof(rel)) == -1);
	printf("http_request: %d failure(s)\n", g_failures);
	return g_failures == 0 ? 0 : 1;
}

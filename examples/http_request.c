/* See http_request.h. */
#include "http_request.h"

#include <string.h>
#include <strings.h>

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char ch)
{
	if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
		return true;
	return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Finds the end of the head: the index just past the empty line, or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Decodes the origin-form target [t, t + n) into req->path. */
static enum http_parse_result decode_target(const char *t, size_t n, struct http_request *req)
{
	if (n == 0 || t[0] != '/')
		return HTTP_PARSE_BAD; /* absolute-form, authority-form, '*': not served */
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)t[i];
		if (ch == '?' || ch == '#')
			break;
		if (ch <= 0x20 || ch >= 0x7f)
			return HTTP_PARSE_BAD;
		if (ch == '%') {
			if (i + 2 >= n)
				return HTTP_PARSE_BAD;
			int hi = hexval((unsigned char)t[i + 1]), lo = hexval((unsigned char)t[i + 2]);
			if (hi < 0 || lo < 0)
				return HTTP_PARSE_BAD;
			ch = (unsigned char)(hi << 4 | lo);
			if (ch < 0x20 || ch == 0x7f)
				return HTTP_PARSE_BAD; /* NUL and control characters */
			i += 2;
		}
		if (o >= HTTP_MAX_PATH)
			return HTTP_PARSE_TOO_LONG;
		req->path[o++] = (char)ch;
	}
	req->path[o] = '\0';
	return HTTP_PARSE_OK;
}

/* Is the comma-separated header value v (n bytes) carrying token tok? */
static bool has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t s = i;
		while (i < n && v[i] != ',')
			i++;
		size_t e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
			return true;
	}
	return false;
}

enum http_parse_result http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	memset(req, 0, sizeof(*req));
	size_t end = head_end(buf, len);
	if (end == 0)
		return len >= HTTP_MAX_HEAD ? HTTP_PARSE_TOO_LONG : HTTP_PARSE_INCOMPLETE;
	if (end > HTTP_MAX_HEAD)
		return HTTP_PARSE_TOO_LONG;
	req->head_len = end;

	/* Request line: method SP target SP HTTP/1.x */
	size_t i = 0;
	while (i < end && is_tchar((unsigned char)buf[i]))
		i++;
	size_t mlen = i;
	if (mlen == 0 || mlen > 16 || buf[i] != ' ')
		return HTTP_PARSE_BAD;
	if (mlen == 3 && memcmp(buf, "GET", 3) == 0)
		req->method = HTTP_GET;
	else if (mlen == 4 && memcmp(buf, "HEAD", 4) == 0)
		req->method = HTTP_HEAD;
	else
		req->method = HTTP_OTHER;
	size_t ts = ++i;
	while (i < end && buf[i] != ' ' && buf[i] != '\r' && buf[i] != '\n')
		i++;
	if (buf[i] != ' ')
		return HTTP_PARSE_BAD;
	enum http_parse_result rc = decode_target(buf + ts, i - ts, req);
	if (rc != HTTP_PARSE_OK)
		return rc;
	i++;
	if (end - i < 9 || memcmp(buf + i, "HTTP/1.", 7) != 0 ||
	    (buf[i + 7] != '0' && buf[i + 7] != '1'))
		return HTTP_PARSE_BAD;
	req->minor = buf[i + 7] - '0';
	i += 8;
	if (buf[i] == '\r')
		i++;
	if (buf[i] != '\n')
		return HTTP_PARSE_BAD;
	i++;
	req->keep_alive = req->minor == 1;

	/* Header fields up to the empty line. */
	bool have_host = false;
	for (;;) {
		if (buf[i] == '\n' || (buf[i] == '\r' && buf[i + 1] == '\n'))
			break; /* the empty line: end is just past it */
		size_t ns = i;
		while (i < end && is_tchar((unsigned char)buf[i]))
			i++;
		size_t nlen = i - ns;
		if (nlen == 0 || buf[i] != ':')
			return HTTP_PARSE_BAD; /* no name, or space before the colon */
		i++;
		while (buf[i] == ' ' || buf[i] == '\t')
			i++;
		size_t vs = i;
		while (i < end && buf[i] != '\r' && buf[i] != '\n') {
			unsigned char ch = (unsigned char)buf[i];
			if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
				return HTTP_PARSE_BAD;
			i++;
		}
		size_t ve = i;
		while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
			ve--;
		if (buf[i] == '\r') {
			if (buf[i + 1] != '\n')
				return HTTP_PARSE_BAD; /* bare CR */
			i++;
		}
		i++; /* the LF */
		const char *name = buf + ns, *val = buf + vs;
		size_t vlen = ve - vs;
		if (nlen == 4 && strncasecmp(name, "host", 4) == 0) {
			if (have_host)
				return HTTP_PARSE_BAD; /* RFC 9112 3.2 */
			have_host = true;
		} else if (nlen == 10 && strncasecmp(name, "connection", 10) == 0) {
			if (has_token(val, vlen, "close"))
				req->keep_alive = false;
			else if (has_token(val, vlen, "keep-alive"))
				req->keep_alive = true;
		} else if (nlen == 14 && strncasecmp(name, "content-length", 14) == 0) {
			for (size_t k = 0; k < vlen; k++)
				if (val[k] != '0')
					return HTTP_PARSE_BAD; /* no bodies here */
			if (vlen == 0)
				return HTTP_PARSE_BAD;
		} else if (nlen == 17 && strncasecmp(name, "transfer-encoding", 17) == 0) {
			return HTTP_PARSE_BAD;
		}
	}
	if (req->minor == 1 && !have_host)
		return HTTP_PARSE_BAD; /* RFC 9112 3.2: HTTP/1.1 needs Host */
	return HTTP_PARSE_OK;
}

int http_relative_path(const char *path, char *rel, size_t rel_size)
{
	size_t o = 0;
	const char *p = path;
	if (rel_size == 0)
		return -1;
	while (*p != '\0') {
		while (*p == '/')
			p++;
		const char *s = p;
		while (*p != '\0' && *p != '/')
			p++;
		size_t n = (size_t)(p - s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return -1;
		if (memchr(s, '\\', n) != NULL)
			return -1;
		if (o + (o > 0) + n + 1 > rel_size)
			return -1;
		if (o > 0)
			rel[o++] = '/';
		memcpy(rel + o, s, n);
		o += n;
	}
	rel[o] = '\0';
	return 0;
}

#include "wycheproof_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "crypto_testutil.h"

json_t *wp_read_file(const char *dir, const char *name)
{
	char path[4096];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	json_t *root = json_load_file(path, 0, &err);
	if (root == NULL)
		fail_msg("cannot read %s: %s (line %d)", path, err.text, err.line);
	return root;
}

const char *wp_string(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (s == NULL)
		fail_msg("vector without \"%s\"", key);
	return s;
}

size_t wp_hex(json_t *o, const char *key, uint8_t *buf, size_t cap)
{
	const char *s = wp_string(o, key);
	const size_t n = strlen(s) / 2;

	if (strlen(s) % 2 != 0 || n > cap)
		fail_msg("field \"%s\" too long or odd (%zu hex digits)", key, strlen(s));
	hex_decode(s, buf, cap);
	return n;
}

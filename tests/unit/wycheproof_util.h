/*
 * Reading Project Wycheproof's JSON files (../shared/vectors/wycheproof/,
 * read in place) for the tests that check sotls against them. A missing or
 * unreadable file, a missing field or a malformed hex string fails the test
 * through cmocka: a vector that cannot be read is never a pass.
 */
#ifndef SOTLS_TESTS_WYCHEPROOF_UTIL_H
#define SOTLS_TESTS_WYCHEPROOF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* dir/name, parsed; the caller json_decref's it. */
json_t *wp_read_file(const char *dir, const char *name);
/* The string member key of o. */
const char *wp_string(json_t *o, const char *key);
/* The hex string member key of o decoded into buf (cap bytes); its length. */
size_t wp_hex(json_t *o, const char *key, uint8_t *buf, size_t cap);

#endif

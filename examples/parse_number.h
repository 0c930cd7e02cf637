/* Whole numbers on the examples' command lines, one rule for all of them. */
#ifndef SOTLS_EXAMPLES_PARSE_NUMBER_H
#define SOTLS_EXAMPLES_PARSE_NUMBER_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* Strict decimal in [lo, hi]: digits only (a '-' only if lo < 0), nothing
 * after them, no overflow. */
static inline bool parse_number(const char *s, long long lo, long long hi, long long *out)
{
	if (s == NULL || *s == '\0' || (*s == '-' ? lo >= 0 : (*s < '0' || *s > '9')))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

#endif

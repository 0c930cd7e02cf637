/* Numbers on the examples' command lines, one rule for all of them: what
 * is not exactly a number in range is refused, never read as 0 or as a
 * prefix ("--port abc" must not listen on a random port). */
#ifndef SOTLS_EXAMPLES_PARSE_NUMBER_H
#define SOTLS_EXAMPLES_PARSE_NUMBER_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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

/* Strict non-negative decimal fraction in [lo, hi]: digits, then at most one
 * '.' and digits ("0.25", "3", "2."); no sign, exponent, hex, "inf" or
 * spaces, all of which strtod alone would take. */
static inline bool parse_decimal(const char *s, double lo, double hi, double *out)
{
	const char *p = s;
	bool digits = false;
	if (s == NULL)
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		digits = true;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits = true;
	if (!digits || *p != '\0')
		return false;
	double v = strtod(s, NULL);
	if (!(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

/* parse_number for the value of --flag, saying on stderr what is wanted
 * when arg is not it; the caller exits with status 2. */
static inline bool parse_number_flag(const char *flag, const char *arg, long long lo,
				     long long hi, long long *out)
{
	if (parse_number(arg, lo, hi, out))
		return true;
	fprintf(stderr, "--%s %s: a whole number from %lld to %lld\n", flag, arg, lo, hi);
	return false;
}

/* parse_decimal for the value of --flag, the same way. */
static inline bool parse_decimal_flag(const char *flag, const char *arg, double lo, double hi,
				      double *out)
{
	if (parse_decimal(arg, lo, hi, out))
		return true;
	fprintf(stderr, "--%s %s: a decimal number from %g to %g\n", flag, arg, lo, hi);
	return false;
}

#endif

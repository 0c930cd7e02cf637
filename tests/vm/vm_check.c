#include "vm_check.h"

#include <stdarg.h>
#include <stdio.h>

int check_passed, check_failed;

void check(int ok, const char *fmt, ...)
{
	va_list ap;
	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		check_passed++;
	else
		check_failed++;
}

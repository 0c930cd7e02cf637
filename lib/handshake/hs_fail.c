/* The first failure sotls finds in a handshake, kept with its alert and
 * detail (hs_internal.h); the files that check the peer's messages call it,
 * and it calls nothing of theirs. */
#include <stdarg.h>
#include <stdio.h>

#include "hs_internal.h"

int sotls_hs_fail(struct sotls_hs *hs, int err, int alert, const char *fmt, ...)
{
	if (hs->fail_err == 0) {
		hs->fail_err = err;
		hs->fail_alert = alert;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(hs->fail_detail, sizeof(hs->fail_detail), fmt, ap);
		va_end(ap);
	}
	return SOTLS_HS_READER_FAILED;
}

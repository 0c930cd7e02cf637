/* How the examples print sotls_info.resumed: "resumed: no|session-id|ticket"
 * in every server's and the client's log, the words tests look for. */
#ifndef SOTLS_EXAMPLES_RESUMED_NAME_H
#define SOTLS_EXAMPLES_RESUMED_NAME_H

#include "sotls.h"

static inline const char *resumed_name(enum sotls_resumption r)
{
	switch (r) {
	case SOTLS_RESUMED_SESSION_ID: return "session-id";
	case SOTLS_RESUMED_TICKET: return "ticket";
	default: return "no";
	}
}

#endif

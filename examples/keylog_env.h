/* SSLKEYLOGFILE for the examples: the convention of browsers, curl and
 * OpenSSL's tools, so Wireshark can decrypt what they capture. */
#ifndef SOTLS_EXAMPLES_KEYLOG_ENV_H
#define SOTLS_EXAMPLES_KEYLOG_ENV_H

#include <stdio.h>

#include "sotls.h"

/* If SSLKEYLOGFILE names a file, opens it (append, created 0600) and has
 * cfg log every connection's secrets there, a line each, saying so on
 * stderr; unset or empty: nothing. Returns 0, or -1 (the file cannot be
 * opened, or cfg refused; the message is on stderr). */
int keylog_from_env(struct sotls_config *cfg);

/* --help's ENVIRONMENT section, for the programs that call the above. */
void keylog_env_usage(FILE *f);

#endif

/*
 * The configuration of the servers that take certificates, suites and kTLS
 * from flags (sotls-https-server, sotls-uring-server): built at start from
 * the flags, and again on SIGHUP from the same files.
 */
#ifndef SOTLS_EXAMPLES_SERVER_CONFIG_H
#define SOTLS_EXAMPLES_SERVER_CONFIG_H

#include <pthread.h>
#include <stdbool.h>

#include "server_resume.h"
#include "sotls.h"

#define SERVER_MAX_CERTS 16

struct server_config_opts {
	const char *cert[SERVER_MAX_CERTS], *key[SERVER_MAX_CERTS];
	int n_cert, n_key;
	const char *cipher;
	enum sotls_ktls_policy ktls;
	enum sotls_sendfile_mode sendfile;
	bool require_alpn, sni_strict;
	struct server_resume resume;
};
#define SERVER_CONFIG_OPTS_DEFAULT {.ktls = SOTLS_KTLS_AUTO, .resume = SERVER_RESUME_DEFAULT}

/* A configuration from o: the certificates (the first pair the default; an
 * ephemeral one without, said on stdout if say_ephemeral), ALPN http/1.1 if
 * http, suites, kTLS, the sendfile path, SSLKEYLOGFILE, the log callback,
 * resumption. NULL, the reason on stderr, if any part fails. */
struct sotls_config *server_config_build(struct server_config_opts *o, bool http,
					 bool say_ephemeral);

/* SIGHUP: a new configuration from the same files replaces *cur under lock
 * (connections that hold the old one finish on it); a failed one keeps
 * *cur. Says which on stdout or stderr. */
void server_config_reload(struct server_config_opts *o, bool http, bool say_ephemeral,
			  pthread_mutex_t *lock, struct sotls_config **cur);

#endif

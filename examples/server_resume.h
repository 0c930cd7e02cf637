/* Session resumption in the example servers, in one place: the flags
 * (--ticket-key-file, --ticket-lifetime, --no-tickets, --session-cache,
 * --session-store), their --help lines, and setting them on a
 * configuration. Without any of them a server has sotls's defaults: the
 * built-in cache and tickets under keys of its own. */
#ifndef SOTLS_EXAMPLES_SERVER_RESUME_H
#define SOTLS_EXAMPLES_SERVER_RESUME_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "session_store_dir.h"
#include "sotls.h"

struct server_resume {
	const char *ticket_key_file;
	unsigned ticket_lifetime; /* seconds; 0: sotls's default */
	bool no_tickets;
	bool cache_set; /* --session-cache given */
	size_t cache_sessions; /* 0: no cache */
	const char *store_path;
	bool store_open;
	struct session_store_dir store; /* --session-store, opened by server_resume_setup */
};

#define SERVER_RESUME_DEFAULT {.ticket_key_file = NULL}

/* getopt_long values of the flags: above any character and the limits'. */
enum {
	RESUME_OPT_TICKET_KEY_FILE = 0x1100,
	RESUME_OPT_TICKET_LIFETIME,
	RESUME_OPT_NO_TICKETS,
	RESUME_OPT_SESSION_CACHE,
	RESUME_OPT_SESSION_STORE,
};

/* The entries for a server's struct option table. */
#define SERVER_RESUME_OPTIONS                                                                      \
	{"ticket-key-file", required_argument, NULL, RESUME_OPT_TICKET_KEY_FILE},                 \
		{"ticket-lifetime", required_argument, NULL, RESUME_OPT_TICKET_LIFETIME},         \
		{"no-tickets", no_argument, NULL, RESUME_OPT_NO_TICKETS},                         \
		{"session-cache", required_argument, NULL, RESUME_OPT_SESSION_CACHE},             \
		{"session-store", required_argument, NULL, RESUME_OPT_SESSION_STORE}

/* Handles getopt's opt (with its arg) if it is one of these flags. Returns
 * 1 if it was (r updated), 0 if not, -1 (message on stderr) for a bad
 * value. */
int server_resume_option(struct server_resume *r, int opt, const char *arg);

/* The --help lines of the flags. */
void server_resume_usage(FILE *f);

/* After the flags are parsed: refuses flags that contradict each other and
 * opens the --session-store directory. Returns 0, or -1 (message on
 * stderr). */
int server_resume_setup(struct server_resume *r);

/* Sets the flags on cfg (a server configuration, before its first
 * connection); may be called for several configurations (a reload).
 * Returns 0, or a sotls error (message on stderr). */
int server_resume_apply(struct sotls_config *cfg, struct server_resume *r);

#endif

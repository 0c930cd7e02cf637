#include "server_resume.h"

#include "help_text.h"
#include "parse_number.h"
#include "server_setup.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* sotls's defaults (sotls.h, "Session resumption"): the cache's room in
 * bytes grows with --session-cache at the default's bytes per session. */
#define DEFAULT_CACHE_SESSIONS 20480
#define DEFAULT_CACHE_BYTES ((uint64_t)8 << 20)
#define MAX_CACHE_SESSIONS 10000000L
/* A week: long enough for any deployment, and what TLS 1.3 allows a ticket
 * at most (RFC 8446 §4.6.1), a sane bound for a hint to clients. */
#define MAX_TICKET_LIFETIME 604800L

int server_resume_option(struct server_resume *r, int opt, const char *arg)
{
	long long v;
	switch (opt) {
	case RESUME_OPT_TICKET_KEY_FILE: r->ticket_key_file = arg; return 1;
	case RESUME_OPT_NO_TICKETS: r->no_tickets = true; return 1;
	case RESUME_OPT_SESSION_STORE: r->store_path = arg; return 1;
	case RESUME_OPT_TICKET_LIFETIME:
		if (!parse_number_flag("ticket-lifetime", arg, 1, MAX_TICKET_LIFETIME, &v))
			return -1;
		r->ticket_lifetime = (unsigned)v;
		return 1;
	case RESUME_OPT_SESSION_CACHE:
		if (!parse_number_flag("session-cache", arg, 0, MAX_CACHE_SESSIONS, &v))
			return -1;
		r->cache_set = true;
		r->cache_sessions = (size_t)v;
		return 1;
	default: return 0;
	}
}

void server_resume_usage(FILE *f)
{
	char cache[160];
	help_option(f, "--ticket-key-file FILE",
		    "session ticket keys from FILE (sotls-ticket-keys makes it), re-read when it "
		    "changes: give every server of a fleet the same file and each resumes the "
		    "others' tickets (default: keys of this process alone, a new one every hour)");
	help_option(f, "--ticket-lifetime S", "seconds a ticket is valid (default 7200)");
	help_option(f, "--no-tickets", "neither issue nor accept session tickets");
	snprintf(cache, sizeof(cache),
		 "sessions the built-in cache keeps for resumption by session ID (default %d; 0: "
		 "none)",
		 DEFAULT_CACHE_SESSIONS);
	help_option(f, "--session-cache N", cache);
	help_option(f, "--session-store DIR",
		    "keep sessions for resumption by session ID in DIR, one file each, instead of "
		    "the built-in cache: servers given the same DIR share them (DIR: the user's "
		    "own, mode 0700)");
}

int server_resume_setup(struct server_resume *r)
{
	if (r->no_tickets && (r->ticket_key_file != NULL || r->ticket_lifetime != 0)) {
		fprintf(stderr, "--no-tickets: no --ticket-key-file or --ticket-lifetime with it\n");
		return -1;
	}
	if (r->store_path != NULL && r->cache_set) {
		fprintf(stderr, "--session-store replaces the built-in cache: no --session-cache "
				"with it\n");
		return -1;
	}
	if (r->store_path == NULL)
		return 0;
	int rc = session_store_dir_open(&r->store, r->store_path);
	if (rc == SESSION_STORE_BAD_MODE)
		fprintf(stderr, "--session-store %s: must be a directory of this user that group "
				"and others cannot enter (chmod 700)\n",
			r->store_path);
	else if (rc != 0)
		fprintf(stderr, "--session-store %s: %s\n", r->store_path, strerror(errno));
	r->store_open = rc == 0;
	return rc == 0 ? 0 : -1;
}

int server_resume_apply(struct sotls_config *cfg, struct server_resume *r)
{
	int rc = 0;
	const char *what = "";
	if (r->store_open) {
		what = "--session-store";
		rc = session_store_dir_use(cfg, &r->store);
	} else if (r->cache_set) {
		what = "--session-cache";
		size_t bytes = (size_t)(DEFAULT_CACHE_BYTES * r->cache_sessions / DEFAULT_CACHE_SESSIONS);
		rc = sotls_config_set_session_cache(cfg, r->cache_sessions, bytes, 0);
	}
	if (rc == 0 && (r->no_tickets || r->ticket_lifetime != 0)) {
		what = r->no_tickets ? "--no-tickets" : "--ticket-lifetime";
		rc = sotls_config_set_session_tickets(cfg, !r->no_tickets, r->ticket_lifetime);
	}
	if (rc == 0 && r->ticket_key_file != NULL) {
		what = "--ticket-key-file";
		rc = sotls_config_set_ticket_key_file(cfg, r->ticket_key_file);
	}
	/* The key file's detail names it and the refusal in words. */
	if (rc != 0)
		print_config_error(what, cfg, rc);
	return rc;
}

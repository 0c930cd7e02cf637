/* The event servers' statistics at exit (sotls-event-echo-server,
 * sotls-uring-server): the same three lines from both, so scripts/load.sh
 * and the tests parse either. */
#ifndef SOTLS_EXAMPLES_SERVER_STATS_H
#define SOTLS_EXAMPLES_SERVER_STATS_H

#include "server_limits.h"
#include "sotls.h"

struct server_stats {
	unsigned long long accepted, peak_held, done_clean, failed, hs_failed;
	unsigned long long dropped, dropped_in_hs; /* still open at exit, in the handshake */
	unsigned long long bytes;
	unsigned long long resumed[SOTLS_RESUMED_TICKET + 1]; /* by enum sotls_resumption */
	unsigned long long hs_expired, idle_expired, pauses, yields;
	long rss_kb; /* VmRSS before the connections still open were freed */
};

/* Adds the counters of b to a (peaks: the larger). */
void server_stats_add(struct server_stats *a, const struct server_stats *b);

/* Prints the lines on stdout, with rss_kb and this process's peak RSS. */
void server_stats_print(const struct server_stats *s, const struct server_limits *l);

/* The exit status they mean: 0 if no connection failed after its
 * handshake and none was open after it (or allow_errors), else 1. */
int server_stats_status(const struct server_stats *s, bool allow_errors);

#endif

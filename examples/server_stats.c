/* See server_stats.h. */
#include "server_stats.h"

#include <stdio.h>

#include "proc_status.h"

void server_stats_add(struct server_stats *a, const struct server_stats *b)
{
	a->accepted += b->accepted;
	if (b->peak_held > a->peak_held)
		a->peak_held = b->peak_held;
	a->done_clean += b->done_clean;
	a->failed += b->failed;
	a->hs_failed += b->hs_failed;
	a->dropped += b->dropped;
	a->dropped_in_hs += b->dropped_in_hs;
	a->bytes += b->bytes;
	for (size_t i = 0; i < sizeof(a->resumed) / sizeof(a->resumed[0]); i++)
		a->resumed[i] += b->resumed[i];
	a->hs_expired += b->hs_expired;
	a->idle_expired += b->idle_expired;
	a->pauses += b->pauses;
	a->yields += b->yields;
	a->rss_kb = b->rss_kb;
}

void server_stats_print(const struct server_stats *s, const struct server_limits *l)
{
	printf("served %llu connections (peak %llu at once): %llu closed cleanly, %llu failed "
	       "after the handshake, %llu failed in it, %llu still open at exit (%llu of them in the "
	       "handshake); %llu bytes echoed; RSS %ld KiB, peak RSS %ld KiB\n",
	       s->accepted, s->peak_held, s->done_clean, s->failed, s->hs_failed, s->dropped,
	       s->dropped_in_hs, s->bytes, s->rss_kb,
	       proc_status_kb("/proc/self/status", "VmHWM"));
	printf("resumption: %llu full handshakes, %llu resumed by session ID, %llu by ticket\n",
	       s->resumed[SOTLS_RESUMED_NONE], s->resumed[SOTLS_RESUMED_SESSION_ID],
	       s->resumed[SOTLS_RESUMED_TICKET]);
	printf("limits: %llu dropped at --handshake-timeout, %llu at --idle/--send-timeout; "
	       "accept paused %llu times at --max-conns %d; %llu turns cut by --event-budget %zu\n",
	       s->hs_expired, s->idle_expired, s->pauses, l->max_conns, s->yields, l->budget);
}

int server_stats_status(const struct server_stats *s, bool allow_errors)
{
	return (s->failed == 0 && s->dropped == s->dropped_in_hs) || allow_errors ? 0 : 1;
}

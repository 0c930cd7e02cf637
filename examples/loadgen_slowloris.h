/* sotls-loadgen's slowloris scenario: many peers that trickle a TLS
 * ClientHello one byte at a time, and a few honest clients that must be
 * served anyway, while the trickling peers are held; each of those must be
 * dropped at the server's handshake deadline, not held forever. */
#ifndef SOTLS_EXAMPLES_LOADGEN_SLOWLORIS_H
#define SOTLS_EXAMPLES_LOADGEN_SLOWLORIS_H

#include <netinet/in.h>

#include "sotls.h"

struct slowloris_plan {
	long peers;	       /* trickling connections */
	double interval;       /* seconds between two of their bytes */
	long honest;	       /* honest clients, one after the other */
	double honest_max;     /* seconds each may take (connect to verified echo) */
	double expect_drop;    /* seconds after which the server must drop a peer */
	double drop_slack;     /* ... at most this much later */
};

/* Runs the scenario against the echo server at a (cfg: a client
 * configuration), prints its figures, and returns 0 if every honest client
 * was served in time and every peer was dropped within [expect_drop,
 * expect_drop + drop_slack] seconds of its connect; 1 otherwise. */
int slowloris_run(const struct slowloris_plan *p, const struct sockaddr_in *a,
		  struct sotls_config *cfg);

#endif

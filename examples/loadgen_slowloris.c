#include "loadgen_slowloris.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The start of a ClientHello whose record claims 512 bytes: the server can
 * only wait for the rest, which comes a byte per interval. */
static const uint8_t k_trickle[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc,
				    0x03, 0x03, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};

#define HONEST_MSG 16384

struct peer {
	int fd;
	double t_connect, t_dropped; /* t_dropped 0: still held */
	size_t sent;
};

struct honest_run {
	const struct slowloris_plan *p;
	const struct sockaddr_in *a;
	struct sotls_config *cfg;
	double *took; /* seconds per client, -1 if it failed */
	double t_done; /* when the last one ended */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* One honest client: connect, handshake, one echo verified, close_notify
 * both ways. Returns 0 or -1. */
static int honest_once(const struct sockaddr_in *a, struct sotls_config *cfg, double limit)
{
	static uint8_t out[HONEST_MSG], in[HONEST_MSG];
	struct timeval tv = {.tv_sec = (time_t)limit + 5};
	struct sotls_conn *c = NULL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = -1, one = 1;
	size_t got = 0;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 131 + 7);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) != 0 ||
	    sotls_conn_new(cfg, fd, &c) != 0 || sotls_handshake(c) != 0 ||
	    sotls_send(c, out, sizeof(out)) != (ssize_t)sizeof(out))
		goto out;
	while (got < sizeof(in)) {
		ssize_t n = sotls_recv(c, in + got, sizeof(in) - got);
		if (n <= 0)
			goto out;
		got += (size_t)n;
	}
	if (memcmp(in, out, sizeof(in)) == 0 && sotls_shutdown(c) == 0 &&
	    sotls_recv(c, in, sizeof(in)) == 0)
		rc = 0;
out:
	if (rc != 0 && c != NULL)
		fprintf(stderr, "slowloris: honest client: %s\n", sotls_conn_error_detail(c));
	sotls_conn_free(c);
	close(fd);
	return rc;
}

static void *honest_main(void *arg)
{
	struct honest_run *h = arg;
	for (long i = 0; i < h->p->honest; i++) {
		double t0 = now_s();
		h->took[i] = honest_once(h->a, h->cfg, h->p->honest_max) == 0 ? now_s() - t0 : -1;
	}
	h->t_done = now_s();
	return NULL;
}

/* Opens the peers and sends each its first byte. */
static int open_peers(struct peer *peers, long n, const struct sockaddr_in *a, int ep)
{
	for (long i = 0; i < n; i++) {
		struct peer *pe = &peers[i];
		pe->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (pe->fd < 0 || connect(pe->fd, (const struct sockaddr *)a, sizeof(*a)) != 0 ||
		    send(pe->fd, k_trickle, 1, MSG_NOSIGNAL) != 1) {
			perror("slowloris: peer");
			return -1;
		}
		pe->t_connect = now_s();
		pe->sent = 1;
		struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = pe};
		epoll_ctl(ep, EPOLL_CTL_ADD, pe->fd, &e);
	}
	return 0;
}

/* Trickles the peers' bytes and notes when the server drops each, until all
 * are dropped or the latest a drop may come has passed. */
static void trickle(struct peer *peers, long n, const struct slowloris_plan *p, int ep)
{
	struct epoll_event evs[256];
	long held = n;
	double give_up = now_s() + p->expect_drop + p->drop_slack + 1;
	while (held > 0 && now_s() < give_up) {
		int k = epoll_wait(ep, evs, 256, 20);
		for (int i = 0; i < k; i++) {
			struct peer *pe = evs[i].data.ptr;
			char b[64];
			if (recv(pe->fd, b, sizeof(b), MSG_DONTWAIT) > 0)
				continue; /* an alert, perhaps: the close comes next */
			pe->t_dropped = now_s();
			epoll_ctl(ep, EPOLL_CTL_DEL, pe->fd, NULL);
			held--;
		}
		double now = now_s();
		for (long i = 0; i < n; i++) {
			struct peer *pe = &peers[i];
			if (pe->t_dropped == 0 && pe->sent < sizeof(k_trickle) &&
			    now >= pe->t_connect + p->interval * (double)pe->sent &&
			    send(pe->fd, k_trickle + pe->sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
				pe->sent++;
		}
	}
}

int slowloris_run(const struct slowloris_plan *p, const struct sockaddr_in *a,
		  struct sotls_config *cfg)
{
	struct peer *peers = calloc((size_t)p->peers + 1, sizeof(*peers));
	double *took = calloc((size_t)p->honest + 1, sizeof(*took));
	double *drops = calloc((size_t)p->peers + 1, sizeof(*drops));
	int ep = epoll_create1(EPOLL_CLOEXEC), status = 1;
	pthread_t t;

	if (peers == NULL || took == NULL || drops == NULL || ep < 0 ||
	    open_peers(peers, p->peers, a, ep) != 0)
		goto out;
	struct honest_run h = {.p = p, .a = a, .cfg = cfg, .took = took};
	if (pthread_create(&t, NULL, honest_main, &h) != 0)
		goto out;
	trickle(peers, p->peers, p, ep);
	pthread_join(t, NULL);

	long ndrop = 0, early = 0, late = 0, held_throughout = 0;
	for (long i = 0; i < p->peers; i++) {
		held_throughout += peers[i].t_dropped == 0 || peers[i].t_dropped > h.t_done;
		if (peers[i].t_dropped == 0) {
			late++;
			continue;
		}
		double d = peers[i].t_dropped - peers[i].t_connect;
		drops[ndrop++] = d;
		early += d < p->expect_drop - 0.1;
		late += d > p->expect_drop + p->drop_slack;
	}
	qsort(drops, (size_t)ndrop, sizeof(*drops), cmp_double);
	long served = 0, slow = 0;
	for (long i = 0; i < p->honest; i++) {
		served += took[i] >= 0;
		slow += took[i] < 0 || took[i] > p->honest_max;
	}
	qsort(took, (size_t)p->honest, sizeof(*took), cmp_double);
	printf("slowloris: %ld peers trickling a ClientHello byte every %.2f s: %ld dropped by the "
	       "server, after %.2f s min, %.2f s median, %.2f s max (deadline %.2f s; %ld early, "
	       "%ld late or never)\n",
	       p->peers, p->interval, ndrop, ndrop ? drops[0] : -1.0,
	       ndrop ? drops[ndrop / 2] : -1.0, ndrop ? drops[ndrop - 1] : -1.0, p->expect_drop,
	       early, late);
	printf("slowloris: %ld of %ld honest clients served (handshake + %d-byte echo + "
	       "close_notify), %.1f ms median, %.1f ms max (limit %.0f ms); %ld of the %ld peers "
	       "still held when the last one was done\n",
	       served, p->honest, HONEST_MSG, p->honest ? took[p->honest / 2] * 1e3 : 0.0,
	       p->honest ? took[p->honest - 1] * 1e3 : 0.0, p->honest_max * 1e3,
	       held_throughout, p->peers);
	status = served == p->honest && slow == 0 && early == 0 && late == 0 ? 0 : 1;
out:
	for (long i = 0; peers != NULL && i < p->peers; i++)
		if (peers[i].fd > 0)
			close(peers[i].fd);
	if (ep >= 0)
		close(ep);
	free(peers);
	free(took);
	free(drops);
	return status;
}

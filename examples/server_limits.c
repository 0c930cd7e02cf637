#include "server_limits.h"

#include "help_text.h"
#include "parse_number.h"
#include "server_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const struct {
	unsigned bit;
	int opt;
	const char *flag, *arg, *text;
} k_flags[] = {
	{LIMIT_MAX_CONNS, LIMIT_OPT_MAX_CONNS, "max-conns", "N",
	 "clients at once; at the cap, accept waits"},
	{LIMIT_HANDSHAKE, LIMIT_OPT_HANDSHAKE, "handshake-timeout", "S",
	 "seconds for the whole TLS handshake"},
	{LIMIT_IDLE, LIMIT_OPT_IDLE, "idle-timeout", "S",
	 "seconds a client may stay silent"},
	{LIMIT_HEADER, LIMIT_OPT_HEADER, "header-timeout", "S",
	 "seconds for a whole request head, from its first byte, however slowly it comes"},
	{LIMIT_SEND, LIMIT_OPT_SEND, "send-timeout", "S",
	 "seconds a client may take none of the bytes sent to it"},
	{LIMIT_BUDGET, LIMIT_OPT_BUDGET, "event-budget", "BYTES",
	 "bytes a connection may echo before the others get their turn"},
};

static const struct server_limits k_default = SERVER_LIMITS_DEFAULT;

/* A timeout flag: seconds, 1 ms to a day. */
static int parse_seconds(const char *arg, int *ms)
{
	double s;
	if (!parse_decimal(arg, 0.001, 86400, &s))
		return -1;
	*ms = (int)(s * 1000 + 0.5);
	return 0;
}

static int parse_count(const char *arg, long max, long *v)
{
	long long n;
	if (!parse_number(arg, 1, max, &n))
		return -1;
	*v = (long)n;
	return 0;
}

int server_limits_option(struct server_limits *l, unsigned which, int opt, const char *arg)
{
	size_t i = 0;
	while (i < sizeof(k_flags) / sizeof(k_flags[0]) && k_flags[i].opt != opt)
		i++;
	if (i == sizeof(k_flags) / sizeof(k_flags[0]) || !(which & k_flags[i].bit))
		return 0;
	long v = 0;
	int bad;
	switch (opt) {
	case LIMIT_OPT_MAX_CONNS:
		bad = parse_count(arg, 1000000, &v);
		l->max_conns = (int)v;
		break;
	case LIMIT_OPT_BUDGET:
		bad = parse_count(arg, 1L << 30, &v);
		l->budget = (size_t)v;
		break;
	case LIMIT_OPT_HANDSHAKE: bad = parse_seconds(arg, &l->handshake_ms); break;
	case LIMIT_OPT_IDLE: bad = parse_seconds(arg, &l->idle_ms); break;
	case LIMIT_OPT_HEADER: bad = parse_seconds(arg, &l->header_ms); break;
	default: bad = parse_seconds(arg, &l->send_ms); break;
	}
	if (bad != 0) {
		fprintf(stderr, "--%s %s: %s\n", k_flags[i].flag, arg,
			k_flags[i].arg[0] == 'S' ? "seconds, from 0.001 to 86400"
						 : "a whole number, at least 1");
		return -1;
	}
	return 1;
}

void server_limits_usage(FILE *f, unsigned which)
{
	const struct server_limits *d = &k_default;
	for (size_t i = 0; i < sizeof(k_flags) / sizeof(k_flags[0]); i++) {
		if (!(which & k_flags[i].bit))
			continue;
		char def[32];
		switch (k_flags[i].opt) {
		case LIMIT_OPT_MAX_CONNS: snprintf(def, sizeof(def), "%d", d->max_conns); break;
		case LIMIT_OPT_BUDGET: snprintf(def, sizeof(def), "%zu", d->budget); break;
		case LIMIT_OPT_HANDSHAKE: snprintf(def, sizeof(def), "%g", d->handshake_ms / 1e3); break;
		case LIMIT_OPT_IDLE: snprintf(def, sizeof(def), "%g", d->idle_ms / 1e3); break;
		case LIMIT_OPT_HEADER: snprintf(def, sizeof(def), "%g", d->header_ms / 1e3); break;
		default: snprintf(def, sizeof(def), "%g", d->send_ms / 1e3); break;
		}
		char option[64], meaning[160];
		snprintf(option, sizeof(option), "--%s %s", k_flags[i].flag, k_flags[i].arg);
		snprintf(meaning, sizeof(meaning), "%s (default %s)", k_flags[i].text, def);
		help_option(f, option, meaning);
	}
}

int64_t limits_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int limits_fit_fd(struct server_limits *l, int reserve)
{
	rlim_t need = (rlim_t)l->max_conns + (rlim_t)reserve;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) != 0)
			return -1;
	}
	if (rl.rlim_cur < need) {
		if (rl.rlim_cur <= (rlim_t)reserve)
			return -1;
		fprintf(stderr, "descriptor limit %llu: --max-conns lowered from %d to %llu\n",
			(unsigned long long)rl.rlim_cur, l->max_conns,
			(unsigned long long)(rl.rlim_cur - (rlim_t)reserve));
		l->max_conns = (int)(rl.rlim_cur - (rlim_t)reserve);
	}
	return 0;
}

int limits_prepare_socket(int fd, int send_ms)
{
	unsigned int uto = (unsigned int)send_ms;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return -1;
	return setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
}

int limits_wait(int fd, int rc, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = rc == SOTLS_WANT_WRITE ? POLLOUT : POLLIN};
	for (;;) {
		int64_t left = deadline - limits_now_ms();
		if (left <= 0)
			return LIMIT_EXPIRED;
		int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return SOTLS_ERR_SYSCALL;
	}
}

static bool wants_io(ssize_t rc)
{
	return rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE;
}

int limits_handshake(struct sotls_conn *c, int fd, int64_t deadline)
{
	for (;;) {
		int rc = sotls_handshake(c);
		if (!wants_io(rc))
			return rc;
		if ((rc = limits_wait(fd, rc, deadline)) != 0)
			return rc;
	}
}

ssize_t limits_recv(struct sotls_conn *c, int fd, void *buf, size_t len, int64_t deadline)
{
	for (;;) {
		ssize_t n = sotls_recv(c, buf, len);
		if (!wants_io(n))
			return n;
		int rc = limits_wait(fd, (int)n, deadline);
		if (rc != 0)
			return rc;
	}
}

int limits_send_all(struct sotls_conn *c, int fd, const void *p, size_t n, int send_ms)
{
	const char *q = p;
	for (;;) {
		/* With n == 0 this only flushes what sotls still holds sealed. */
		ssize_t k = sotls_send(c, n > 0 ? q : NULL, n);
		if (k >= 0 && (size_t)k == n)
			return 0;
		if (k > 0) {
			q += k;
			n -= (size_t)k;
			continue;
		}
		if (!wants_io(k))
			return (int)k;
		int rc = limits_wait(fd, (int)k, limits_now_ms() + send_ms);
		if (rc != 0)
			return rc;
	}
}

ssize_t limits_sendfile(struct sotls_conn *c, int fd, int file_fd, off_t *off, size_t count,
			int send_ms)
{
	size_t done = 0;
	while (done < count) {
		ssize_t k = sotls_sendfile(c, file_fd, off, count - done);
		if (k == 0)
			break; /* end of file */
		if (k > 0) {
			done += (size_t)k;
			continue;
		}
		if (!wants_io(k))
			return k;
		int rc = limits_wait(fd, (int)k, limits_now_ms() + send_ms);
		if (rc != 0)
			return rc;
	}
	/* Bytes reported as sent may still sit sealed in sotls: they go now,
	 * not with the next response (the client waits for them first). */
	int rc = limits_send_all(c, fd, NULL, 0, send_ms);
	return rc != 0 ? rc : (ssize_t)done;
}

int limits_shutdown(struct sotls_conn *c, int fd, int send_ms)
{
	int64_t deadline = limits_now_ms() + send_ms;
	for (;;) {
		int rc = sotls_shutdown(c);
		if (!wants_io(rc))
			return rc;
		if ((rc = limits_wait(fd, rc, deadline)) != 0)
			return rc;
	}
}

const char *limits_strerror(int rc)
{
	return rc == LIMIT_EXPIRED ? "timed out (a limit ran out)" : sotls_strerror(rc);
}

void conn_slots_init(struct conn_slots *s, int max)
{
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->freed, NULL);
	s->used = 0;
	s->max = max;
}

void conn_slots_take(struct conn_slots *s)
{
	pthread_mutex_lock(&s->mu);
	while (s->used >= s->max)
		pthread_cond_wait(&s->freed, &s->mu);
	s->used++;
	pthread_mutex_unlock(&s->mu);
}

void conn_slots_give(struct conn_slots *s)
{
	pthread_mutex_lock(&s->mu);
	s->used--;
	pthread_cond_signal(&s->freed);
	pthread_mutex_unlock(&s->mu);
}

struct spawned {
	struct conn_slots *slots;
	void (*serve)(void *);
	void *arg;
};

static void *spawned_main(void *p)
{
	struct spawned sp = *(struct spawned *)p;
	free(p);
	sp.serve(sp.arg);
	conn_slots_give(sp.slots);
	return NULL;
}

int conn_slots_spawn(struct conn_slots *s, void (*serve)(void *), void *arg)
{
	struct spawned *sp = malloc(sizeof(*sp));
	pthread_attr_t attr;
	pthread_t t;
	int rc = -1;

	if (sp != NULL && pthread_attr_init(&attr) == 0) {
		*sp = (struct spawned){.slots = s, .serve = serve, .arg = arg};
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, spawned_main, sp) == 0 ? 0 : -1;
		pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		free(sp);
		conn_slots_give(s);
	}
	return rc;
}

int conn_slots_serve_fds(struct conn_slots *s, int ls, void (*serve)(void *), const char *who)
{
	for (;;) {
		conn_slots_take(s);
		int fd = accept_client(ls, NULL, NULL);
		if (fd < 0) {
			fprintf(stderr, "%s: accept: %s\n", who, strerror(errno));
			return -1;
		}
		if (conn_slots_spawn(s, serve, (void *)(intptr_t)fd) != 0) {
			fprintf(stderr, "%s: no thread for a client\n", who);
			close(fd);
		}
	}
}

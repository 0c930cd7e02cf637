/*
 * sotls-uring-server: a TLS 1.2 server that owns its io_uring rings and
 * drives sotls's engine (sotls_conn_new_engine): sotls gets no socket,
 * except at the kTLS handoff (sotls_engine_attach_fd). Echo, as
 * sotls-event-echo-server, or static files over HTTP/1.1 with --root, as
 * sotls-https-server; the same flags, port file, output and exit status as
 * those, so either can be swapped for it.
 *
 * One thread per CPU, each with its own ring and its own SO_REUSEPORT
 * listening socket under a multishot accept. One listener per thread
 * rather than one shared by all: the kernel spreads clients over the
 * threads' accept queues by their address hash, so no thread's accept
 * competes with another's and a thread's ring alone touches its socket;
 * the cost is that a client queued on a busy thread waits for that thread
 * even when another is idle.
 *
 * A turn of a thread's loop: one io_uring_submit_and_wait (every SQE
 * prepared during the previous turn goes in that one call), its
 * completions, the connections out of --event-budget (they go on after
 * everyone else's events), and every SWEEP_MS the deadlines. The
 * connections themselves are uring_conn.c.
 *
 * Signals are read from a signalfd through thread 0's ring (blocked in
 * every thread, no handler): SIGINT/SIGTERM drain every thread, SIGHUP
 * builds a new configuration that new connections get.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "proc_status.h"
#include "server_resume.h"
#include "server_config.h"
#include "server_setup.h"
#include "uring_server.h"

#define URING_LIMITS                                                                          \
	(LIMIT_MAX_CONNS | LIMIT_HANDSHAKE | LIMIT_IDLE | LIMIT_HEADER | LIMIT_SEND | LIMIT_BUDGET)
#define MAX_THREADS 256
/* How often deadlines are checked: their precision. */
#define SWEEP_MS 100
/* SIGTERM: how long connections in the middle of a request or an echo get
 * to finish before they are dropped, unless --drain-timeout says: as long as
 * --send-timeout's default, so a client still reading at all is not cut. */
#define DRAIN_MS_DEFAULT 30000
/* Per thread: the ring, provided buffers for recv (a TLS record and its
 * header fit in one), and file buffers (a 64 KiB read each). */
#define RING_ENTRIES 4096
#define RECV_BUFS 512
#define RECV_BUF_SIZE 16384
#define FILE_BUFS 16
#define FILE_BUF_SIZE 65536
/*
 * --zc-min's default. Measured on loopback (Linux 6.18, 2 shared cores,
 * --ktls off, one thread), sotls-echo-client --bytes 128M: --zc-min 1
 * 4.9 to 5.2 s, 16384 4.3 to 4.9 s, 32768 or 65536 0.50 to 0.52 s, never
 * 0.55 to 1.0 s. Zero copy does not pay on loopback at any size: the pages
 * are copied anyway, and the engine's send buffer may only be released at
 * the notification, which loopback posts once the peer has read them, so
 * each send waits a round trip for the previous one. 65536 sends the
 * engine's fullest batch (4 full records, 65 KiB and a little) with
 * SEND_ZC and all else with SEND, as fast as never; over a NIC with
 * scatter-gather the notification comes at the ACK and the crossover is
 * lower (measure there: --zc-min).
 */
#define ZC_MIN_DEFAULT 65536

struct uring_options g_opt = {
	.limits = SERVER_LIMITS_DEFAULT, .zc_min = ZC_MIN_DEFAULT, .drain_ms = DRAIN_MS_DEFAULT};
atomic_int g_held;
atomic_int g_next_id = 1;
static atomic_int g_stop;

/* What the configuration is built from, at start and on each SIGHUP. */
static struct server_config_opts g_cfg_opt = SERVER_CONFIG_OPTS_DEFAULT;

static struct sotls_config *g_cfg;
static pthread_mutex_t g_cfg_lock = PTHREAD_MUTEX_INITIALIZER;

static void usage(FILE *f)
{
	char zc[200];
	help_section(f, "NAME");
	help_text(f, "sotls-uring-server - a TLS 1.2 echo or HTTPS file server on io_uring, "
		     "driving the sotls engine");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-uring-server",
		      "[--root DIR] [--port N] [--bind ADDR] [--threads N] "
		      "[--cert FILE --key FILE]... [--sni-strict] [--require-alpn] "
		      "[--cipher LIST] [--ktls MODE] [--sendfile MODE] [--zc-min BYTES] "
		      "[--drain-timeout S] "
		      "[--port-file FILE] [--allow-errors] [--verbose] [--quiet] [limits] "
		      "[session resumption]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Echoes over TLS (as sotls-event-echo-server), or with --root serves GET "
		     "and HEAD for the regular files under DIR over HTTP/1.1 with keep-alive and "
		     "ALPN http/1.1 (as sotls-https-server: nothing outside DIR, anything else a "
		     "404). Each thread has its own io_uring and SO_REUSEPORT listening socket: "
		     "multishot accept, multishot recv into a provided-buffer ring whose buffers "
		     "go straight to the sotls engine, sends batched per loop turn, SEND_ZC for "
		     "large ones. With --ktls other than off each connection is handed to its "
		     "socket after the handshake (kernel TLS where the kernel takes the cipher; "
		     "bodies then go file to pipe to socket with io_uring splice; where the "
		     "kernel refuses TX, through sotls_sendfile, sealed in place). With --ktls "
		     "off, the engine to the end, bodies are read with READ_FIXED into "
		     "registered buffers and sealed by sotls_send (one copy: the engine seals "
		     "only into its own buffer).\n\n"
		     "SIGINT or SIGTERM: accepting stops, idle connections get close_notify, the "
		     "others get --drain-timeout to finish their request or echo; then the statistics "
		     "of sotls-event-echo-server are printed (in file mode the bytes are those of "
		     "bodies sent). SIGHUP builds a new configuration from the same files "
		     "(certificates, ticket keys): new connections get it, open ones finish on "
		     "the old one.\n\n" SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--root DIR", "serve the files under DIR over HTTPS (default: echo)");
	help_option(f, "--port N", "TCP port (default 4433, with --root 4443; 0 picks one)");
	help_option(f, "--bind ADDR", "IPv4 address (default 127.0.0.1)");
	help_option(f, "--threads N", "threads, each with its ring (default: the online CPUs)");
	help_option(f, "--cert FILE", "certificate chain, PEM (with --key)");
	help_option(f, "--key FILE",
		    "private key, PEM. Repeat the pair for more (up to 16), chosen by SNI and by "
		    "key type; the first pair is the default. Without --cert/--key an ephemeral "
		    "self-signed ECDSA P-256 certificate for CN=localhost is made in memory");
	help_option(f, "--sni-strict",
		    "refuse a server name no certificate has (unrecognized_name)");
	help_option(f, "--require-alpn", "with --root: refuse clients that offer no ALPN");
	help_option(f, "--cipher LIST", "allowed suites (default: all sotls supports, ARIA first)");
	help_option(f, "--ktls MODE", KTLS_FLAG_HELP " (default auto)");
	help_option(f, "--sendfile MODE",
		    "with --root and kTLS refused for TX: " SENDFILE_FLAG_HELP);
	snprintf(zc, sizeof(zc),
		 "send with SEND_ZC from this many bytes of ciphertext, plain SEND below "
		 "(default %d: on loopback zero copy pays at no size, since the notification "
		 "waits for the peer's read)",
		 ZC_MIN_DEFAULT);
	help_option(f, "--zc-min BYTES", zc);
	help_option(f, "--drain-timeout S",
		    "after SIGINT or SIGTERM, seconds a connection in the middle of a request or "
		    "an echo gets to finish before it is dropped (default 30)");
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--allow-errors",
		    "exit 0 even if connections failed after their handshake");
	help_option(f, "--verbose", "a line on stderr for each connection that fails or expires");
	help_option(f, "--quiet", "with --root: print only errors, no line per request");
	help_option(f, "--help", "this text");
	server_limits_usage(f, URING_LIMITS);
	server_resume_usage(f);
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: stopped by a signal with no connection failed after its handshake and "
		     "none open after the drain (or --allow-errors); 1: otherwise, or it could "
		     "not start; 2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-uring-server --port 4433 --max-conns 2000 &\n"
		      "sotls-loadgen --port 4433 --conns 1000 --seconds 60\n"
		      "kill -TERM %1   # statistics on stdout\n"
		      "sotls-uring-server --root /srv/www --port 8443 --ktls off");
}

/* ---- configuration ----------------------------------------------------------- */

int uring_new_engine(struct sotls_conn **out)
{
	pthread_mutex_lock(&g_cfg_lock);
	int rc = sotls_conn_new_engine(g_cfg, out);
	pthread_mutex_unlock(&g_cfg_lock);
	return rc;
}

/* SIGHUP, on thread 0: open connections hold a reference to the old
 * configuration and finish on it; a failed reload keeps it. */
static void reload(void)
{
	server_config_reload(&g_cfg_opt, g_opt.http, g_opt.http && !g_opt.quiet, &g_cfg_lock,
			     &g_cfg);
}

/* ---- accepting --------------------------------------------------------------- */

static void arm_accept(struct worker *w)
{
	if (w->accept_armed || w->accept_paused || w->draining ||
	    limits_now_ms() < w->accept_retry)
		return;
	struct io_uring_sqe *sqe = uring_sqe(&w->loop);
	if (sqe == NULL)
		return; /* tried again next turn */
	io_uring_prep_multishot_accept(sqe, w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, uring_tag(w, OP_ACCEPT));
	w->accept_armed = true;
}

static void cancel_accept(struct worker *w)
{
	struct io_uring_sqe *sqe;
	if (!w->accept_armed || (sqe = uring_sqe(&w->loop)) == NULL)
		return;
	io_uring_prep_cancel64(sqe, uring_tag(w, OP_ACCEPT), 0);
	io_uring_sqe_set_data64(sqe, OP_IGNORE);
}

/* At the cap accept stops, and new clients wait in the listen backlog. */
static void pause_accept(struct worker *w)
{
	if (w->accept_paused)
		return;
	w->accept_paused = true;
	w->st.pauses++;
	cancel_accept(w);
}

/* One of the --max-conns slots, shared by all threads. */
static bool take_slot(struct worker *w)
{
	int held = atomic_fetch_add(&g_held, 1) + 1;
	if (held > g_opt.limits.max_conns) {
		atomic_fetch_sub(&g_held, 1);
		return false;
	}
	w->held++;
	if ((unsigned long long)held > w->st.peak_held)
		w->st.peak_held = (unsigned long long)held;
	if (held == g_opt.limits.max_conns)
		pause_accept(w);
	return true;
}

/* A client the multishot accept took while the threads were at the cap
 * together (its cancel was on its way): it waits, unanswered like one in
 * the backlog, for a slot. */
static void park(struct worker *w, int fd)
{
	if (w->n_parked == w->parked_cap) {
		size_t cap = w->parked_cap ? w->parked_cap * 2 : 16;
		int *p = realloc(w->parked, cap * sizeof(*p));
		if (p == NULL) {
			close(fd);
			return;
		}
		w->parked = p;
		w->parked_cap = cap;
	}
	w->parked[w->n_parked++] = fd;
}

static void accept_complete(struct worker *w, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		w->accept_armed = false;
	if (cqe->res < 0) {
		/* Cancelled at the cap, or a failure such as EMFILE that would
		 * only come back at once: a sweep later. */
		if (cqe->res != -ECANCELED)
			w->accept_retry = limits_now_ms() + SWEEP_MS;
		return;
	}
	if (w->draining) {
		close(cqe->res);
	} else if (w->n_parked == 0 && take_slot(w)) {
		conn_start(w, cqe->res);
	} else {
		park(w, cqe->res);
		pause_accept(w);
	}
}

/* Below the cap again: parked clients first, then accept. */
static void resume_accept(struct worker *w)
{
	if (!w->accept_paused || w->draining)
		return;
	while (w->n_parked > 0 && take_slot(w)) {
		int fd = w->parked[0];
		memmove(w->parked, w->parked + 1, --w->n_parked * sizeof(*w->parked));
		conn_start(w, fd);
	}
	if (w->n_parked == 0 && atomic_load(&g_held) < g_opt.limits.max_conns)
		w->accept_paused = false;
}

/* ---- signals and the drain --------------------------------------------------- */

static void arm_signal_read(struct worker *w)
{
	struct io_uring_sqe *sqe = uring_sqe(&w->loop);
	if (sqe == NULL)
		return;
	io_uring_prep_read(sqe, w->sigfd, &w->si, sizeof(w->si), 0);
	io_uring_sqe_set_data64(sqe, uring_tag(w, OP_SIGNAL));
}

static void signal_complete(struct worker *w, const struct io_uring_cqe *cqe)
{
	if (cqe->res == (int)sizeof(w->si)) {
		if (w->si.ssi_signo == SIGHUP)
			reload();
		else
			atomic_store(&g_stop, 1);
	} else if (cqe->res < 0 && cqe->res != -EINTR) {
		fprintf(stderr, "signalfd: %s: stopping\n", strerror(-cqe->res));
		atomic_store(&g_stop, 1);
		return;
	}
	arm_signal_read(w);
}

static void start_drain(struct worker *w)
{
	w->draining = true;
	w->drain_end = limits_now_ms() + g_opt.drain_ms;
	cancel_accept(w);
	while (w->n_parked > 0)
		close(w->parked[--w->n_parked]);
	conn_drain_all(w);
}

/* ---- a thread ------------------------------------------------------------------ */

static void handle(struct worker *w, const struct io_uring_cqe *cqe)
{
	switch (uring_tag_op(cqe->user_data)) {
	case OP_IGNORE: break;
	case OP_ACCEPT: accept_complete(w, cqe); break;
	case OP_SIGNAL: signal_complete(w, cqe); break;
	default: conn_complete(w, cqe); break;
	}
}

/* Waits for completions (at most timeout_ms) and handles them. Returns
 * 0, or -errno when the ring fails. */
static int turn(struct worker *w, int timeout_ms)
{
	struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
				       .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
	struct io_uring_cqe *cqe;
	int rc = io_uring_submit_and_wait_timeout(&w->loop.ring, &cqe, 1, &ts, NULL);
	if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY)
		return rc;
	unsigned head, n = 0;
	w->turn_no++;
	io_uring_for_each_cqe(&w->loop.ring, head, cqe)
	{
		handle(w, cqe);
		n++;
	}
	io_uring_cq_advance(&w->loop.ring, n);
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const char *what = "";
	int rc = uring_loop_init(&w->loop, RING_ENTRIES, RECV_BUFS, RECV_BUF_SIZE, FILE_BUFS,
				 FILE_BUF_SIZE, &what);
	if (rc != 0) {
		fprintf(stderr, "thread %d: %s: %s\n", w->index, what, strerror(-rc));
		atomic_store(&g_stop, 1);
		w->st.failed++; /* the exit status says it */
		return NULL;
	}
	if (w->sigfd >= 0)
		arm_signal_read(w);
	int64_t last_sweep = limits_now_ms();
	for (;;) {
		int64_t now = limits_now_ms();
		if (!w->draining && atomic_load(&g_stop))
			start_drain(w);
		if (w->draining && (w->conns == NULL || now >= w->drain_end))
			break;
		resume_accept(w);
		arm_accept(w);
		/* Connections out of budget go on at once, after new events. */
		if ((rc = turn(w, w->ready_head != NULL ? 0 : SWEEP_MS)) != 0) {
			fprintf(stderr, "thread %d: io_uring_submit_and_wait: %s: stopping\n",
				w->index, strerror(-rc));
			atomic_store(&g_stop, 1);
			w->st.failed++;
			break;
		}
		/* One more turn for each that was waiting; who runs out of budget
		 * again goes to the back. */
		for (size_t k = w->n_ready; k > 0 && w->ready_head != NULL; k--)
			conn_run_ready(w);
		if ((now = limits_now_ms()) - last_sweep >= SWEEP_MS) {
			conn_sweep(w, now);
			last_sweep = now;
		}
		conn_reap(w);
	}
	/* Whatever is still open is dropped and counted; their operations end
	 * with the shutdown of their sockets, and then their memory goes. */
	w->st.rss_kb = proc_status_kb("/proc/self/status", "VmRSS");
	conn_drop_all(w);
	conn_reap(w);
	int64_t end = limits_now_ms() + 1000;
	while (w->zombies > 0 && limits_now_ms() < end && turn(w, SWEEP_MS) == 0)
		;
	uring_loop_free(&w->loop);
	conn_spares_free(w);
	free(w->parked);
	return NULL;
}

/* ---- main ------------------------------------------------------------------------ */

/* Flags. Returns -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, long long *port, const char **bind_addr,
		       const char **port_file, const char **root, long long *threads)
{
	static const struct option opts[] = {
		{"root", required_argument, NULL, 'r'},	   {"port", required_argument, NULL, 'p'},
		{"bind", required_argument, NULL, 'b'},	   {"threads", required_argument, NULL, 'T'},
		{"cert", required_argument, NULL, 'c'},	   {"key", required_argument, NULL, 'k'},
		{"cipher", required_argument, NULL, 's'},  {"ktls", required_argument, NULL, 't'},
		{"sendfile", required_argument, NULL, 'F'}, {"zc-min", required_argument, NULL, 'z'},
		{"drain-timeout", required_argument, NULL, 'D'},
		{"sni-strict", no_argument, NULL, 'S'},	   {"require-alpn", no_argument, NULL, 'A'},
		{"port-file", required_argument, NULL, 'f'}, {"allow-errors", no_argument, NULL, 'e'},
		{"verbose", no_argument, NULL, 'v'},	   {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},	   SERVER_LIMITS_OPTIONS,
		SERVER_RESUME_OPTIONS,			   {NULL, 0, NULL, 0},
	};
	long long zc;
	double drain;
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_opt.limits, URING_LIMITS, opt, optarg);
		if (lim == 0)
			lim = server_resume_option(&g_cfg_opt.resume, opt, optarg);
		if (lim != 0) {
			if (lim < 0)
				return 2;
			continue;
		}
		switch (opt) {
		case 'r': *root = optarg; break;
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, port))
				return 2;
			break;
		case 'b': *bind_addr = optarg; break;
		case 'T':
			if (!parse_number_flag("threads", optarg, 1, MAX_THREADS, threads))
				return 2;
			break;
		case 'c':
		case 'k': {
			int *n = opt == 'c' ? &g_cfg_opt.n_cert : &g_cfg_opt.n_key;
			if (*n == SERVER_MAX_CERTS) {
				fprintf(stderr, "--%s: at most %d\n", opt == 'c' ? "cert" : "key",
					SERVER_MAX_CERTS);
				return 2;
			}
			(opt == 'c' ? g_cfg_opt.cert : g_cfg_opt.key)[(*n)++] = optarg;
			break;
		}
		case 's': g_cfg_opt.cipher = optarg; break;
		case 't':
			if (parse_ktls_policy(optarg, &g_cfg_opt.ktls) != 0) {
				fputs(KTLS_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'F':
			if (parse_sendfile_mode(optarg, &g_cfg_opt.sendfile) != 0) {
				fputs(SENDFILE_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'z':
			if (!parse_number_flag("zc-min", optarg, 1, 1 << 30, &zc))
				return 2;
			g_opt.zc_min = (size_t)zc;
			break;
		case 'D':
			if (!parse_decimal_flag("drain-timeout", optarg, 0.001, 86400, &drain))
				return 2;
			g_opt.drain_ms = (int)(drain * 1000 + 0.5);
			break;
		case 'S': g_cfg_opt.sni_strict = true; break;
		case 'A': g_cfg_opt.require_alpn = true; break;
		case 'f': *port_file = optarg; break;
		case 'e': g_opt.allow_errors = true; break;
		case 'v': g_opt.verbose = true; break;
		case 'q': g_opt.quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || g_cfg_opt.n_cert != g_cfg_opt.n_key ||
	    (g_cfg_opt.require_alpn && *root == NULL)) {
		usage(stderr);
		return 2;
	}
	return server_resume_setup(&g_cfg_opt.resume) != 0 ? 2 : -1;
}

/* The threads' listening sockets on one port: the first picks it (port
 * 0), the others join it. Returns 0, or 1 (the message on stderr). */
static int listen_all(struct worker *ws, int n, const char *bind_addr, int port, int *bound)
{
	for (int i = 0; i < n; i++) {
		ws[i].lfd = listen_tcp4_reuseport(bind_addr, i == 0 ? port : *bound, SOCK_NONBLOCK,
						  4096, bound);
		if (ws[i].lfd == LISTEN_BAD_ADDRESS) {
			fprintf(stderr, "--bind %s: not an IPv4 address\n", bind_addr);
			return 1;
		}
		if (ws[i].lfd < 0) {
			fprintf(stderr, "listen on %s:%d: %s\n", bind_addr, i == 0 ? port : *bound,
				strerror(errno));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	long long port = -1, threads = sysconf(_SC_NPROCESSORS_ONLN);
	const char *bind_addr = "127.0.0.1", *port_file = NULL, *root = NULL;
	int rc = parse_flags(argc, argv, &port, &bind_addr, &port_file, &root, &threads);
	if (rc >= 0)
		return rc;
	if (threads < 1 || threads > MAX_THREADS)
		threads = threads < 1 ? 1 : MAX_THREADS;
	g_opt.http = root != NULL;
	g_opt.attach = g_cfg_opt.ktls != SOTLS_KTLS_OFF;
	if (port < 0)
		port = g_opt.http ? 4443 : 4433;
	signal(SIGPIPE, SIG_IGN);
	if (g_opt.http) {
		setvbuf(stdout, NULL, _IOLBF, 0); /* one line per request, as it happens */
		if (http_root_open(&g_opt.root, root) != 0) {
			fprintf(stderr, "--root %s: %s\n", root, strerror(errno));
			return 1;
		}
	}
	/* Besides a descriptor per connection, the reserve of
	 * sotls-event-echo-server (stdio, what sotls and libc open, a file
	 * being served), and more with many threads: a ring and a listener
	 * each. A file or pipe that finds no descriptor fails its request. */
	int reserve = 16 + 2 * (int)threads;
	if (limits_fit_fd(&g_opt.limits, reserve < 32 ? 32 : reserve) != 0) {
		fprintf(stderr, "RLIMIT_NOFILE: not enough descriptors for a connection\n");
		return 1;
	}
	/* Blocked before any thread exists, so every thread inherits the mask
	 * and the signals wait in the signalfd alone. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	int sigfd = -1;
	if (pthread_sigmask(SIG_BLOCK, &sigs, NULL) != 0 ||
	    (sigfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		perror("signalfd");
		return 1;
	}
	g_cfg = server_config_build(&g_cfg_opt, g_opt.http, g_opt.http && !g_opt.quiet);
	if (g_cfg == NULL)
		return 1;

	struct worker *ws = calloc((size_t)threads, sizeof(*ws));
	int bound = 0;
	if (ws == NULL || listen_all(ws, (int)threads, bind_addr, (int)port, &bound) != 0)
		return 1;
	if (port_file != NULL && write_port_file(port_file, bound) != 0) {
		fprintf(stderr, "--port-file %s: %s\n", port_file, strerror(errno));
		return 1;
	}
	if (!g_opt.http)
		printf("listening on %s:%d\n", bind_addr, bound);
	else if (!g_opt.quiet)
		printf("serving %s on https://%s:%d/\n", g_opt.root.real, bind_addr, bound);
	fflush(stdout);

	pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
	int started = 1;
	for (int i = 0; i < threads; i++) {
		ws[i].index = i;
		ws[i].sigfd = i == 0 ? sigfd : -1;
	}
	for (; tids != NULL && started < threads; started++) {
		int err = pthread_create(&tids[started], NULL, worker_main, &ws[started]);
		if (err != 0) {
			fprintf(stderr, "thread %d: %s\n", started, strerror(err));
			atomic_store(&g_stop, 1);
			ws[0].st.failed++;
			break;
		}
	}
	worker_main(&ws[0]);
	struct server_stats st = {0};
	server_stats_add(&st, &ws[0].st);
	for (int i = 1; i < started; i++) {
		pthread_join(tids[i], NULL);
		server_stats_add(&st, &ws[i].st);
	}
	server_stats_print(&st, &g_opt.limits);
	for (int i = 0; i < threads; i++)
		close(ws[i].lfd);
	close(sigfd);
	free(tids);
	free(ws);
	sotls_config_free(g_cfg);
	return server_stats_status(&st, g_opt.allow_errors);
}

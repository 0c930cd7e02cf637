/*
 * sotls_sendfile end to end: a sotls server thread sends files with
 * sotls_sendfile, the main thread receives them with a sotls client and
 * checks every byte against the file (and a running hash). Files of 0, 1,
 * 16383, 16384, 16385 bytes, 1 MiB + 3 and 64 MiB, from various offsets and
 * counts, on each userspace path (sotls_config_set_sendfile_mode), blocking and
 * non-blocking, over TCP and AF_UNIX; the kernel-path engines (io_uring
 * SPLICE and sendfile(2)) on a plain TCP socket; a connection in the kernel
 * when this kernel takes ARIA-GCM kTLS.
 *
 * io_uring refused (seccomp: ENOSYS, EPERM) falls back to pread + send.
 *
 * --mode ktls: only the whole connections, and kTLS must take both directions
 * (the VM's stock kernel with --suite AES-128-GCM / AES-256-GCM).
 *
 * --mode inflight: SEND_ZC behind a slow link must grow its buffer pool.
 *
 * --mode stalled: a non-blocking sotls_sendfile while the peer reads nothing
 * for a while returns at once every time, whatever its buffers wait for.
 *
 * --mode ktls-timeout: sotls_sendfile over kTLS TX on a blocking socket with
 * SO_SNDTIMEO while the receiver stalls: the bytes the peer finally gets are
 * the file's, none twice, none lost (issue 15).
 *
 *   test_sendfile [--mode zc|send|pread|unix|nonblock|kernel|ktls|ktls-timeout|errors|noring|inflight|stalled]
 *                 [--big]
 *                 [--suite S]   (default ECDHE-ECDSA-ARIA128-GCM-SHA256)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "io/sotls_io.h"
#include "sotls.h"

static int g_failures;
#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			g_failures++;                                                     \
		}                                                                         \
	} while (0)

static char g_cert[4096], g_key[1024];
static char g_dir[256];
/* --suite: what both sides offer (sotls_config_set_suites). */
static const char *g_suite = "ECDHE-ECDSA-ARIA128-GCM-SHA256";
/* --mode ktls: the client must have both directions in the kernel too. */
static bool g_client_kk;

/* ---- files ---------------------------------------------------------------- */

struct tfile {
	size_t size;
	int fd;
	char path[300];
};

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static void make_file(struct tfile *f, size_t size)
{
	f->size = size;
	snprintf(f->path, sizeof(f->path), "%s/f%zu", g_dir, size);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (f->fd < 0) {
		perror(f->path);
		exit(1);
	}
	static uint8_t buf[1 << 16];
	size_t done = 0;
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
		for (size_t i = 0; i < n; i += 8) {
			uint64_t v = rnd();
			memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
		}
		if (write(f->fd, buf, n) != (ssize_t)n) {
			perror("write");
			exit(1);
		}
		done += n;
	}
}

/* FNV-1a, to print and compare whole streams cheaply. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}
#define FNV0 0xcbf29ce484222325ull

/* ---- sockets and configurations --------------------------------------------- */

static void tcp_pair(int fds[2])
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0) {
		perror("listen");
		exit(1);
	}
	fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fds[1], (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		exit(1);
	}
	fds[0] = accept(l, NULL, NULL);
	if (fds[0] < 0) {
		perror("accept");
		exit(1);
	}
	close(l);
}

/* The server's sendfile mode (sotls_config_set_sendfile_mode) by its test
 * name: "zc", "send", "pread", "sendfile", or "" for the default. */
static enum sotls_sendfile_mode g_mode;

static void use_mode(const char *name)
{
	g_mode = strcmp(name, "zc") == 0	 ? SOTLS_SENDFILE_ZERO_COPY
		 : strcmp(name, "send") == 0	 ? SOTLS_SENDFILE_COPY
		 : strcmp(name, "pread") == 0	 ? SOTLS_SENDFILE_PREAD
		 : strcmp(name, "sendfile") == 0 ? SOTLS_SENDFILE_PLAIN
						 : SOTLS_SENDFILE_AUTO;
}

static struct sotls_config *cfg_new(enum sotls_role role, enum sotls_ktls_policy ktls)
{
	struct sotls_config *cfg = sotls_config_new(role);
	if (role == SOTLS_ROLE_SERVER) {
		sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key, strlen(g_key) + 1);
		sotls_config_set_sendfile_mode(cfg, g_mode);
	} else
		sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE);
	sotls_config_set_suites(cfg, g_suite);
	sotls_config_set_ktls(cfg, ktls);
	return cfg;
}

/* A client connection on fd, its handshake run: that result. */
static int client_handshake(int fd, enum sotls_ktls_policy ktls, struct sotls_config **cfg,
			    struct sotls_conn **c)
{
	*cfg = cfg_new(SOTLS_ROLE_CLIENT, ktls);
	*c = NULL;
	sotls_conn_new(*cfg, fd, c);
	return sotls_handshake(*c);
}

/* The sender's handshake on the blocking socket, which it then makes
 * non-blocking if asked. */
static int server_handshake(int fd, enum sotls_ktls_policy ktls, bool nonblock,
			    struct sotls_config **cfg, struct sotls_conn **c)
{
	*cfg = cfg_new(SOTLS_ROLE_SERVER, ktls);
	*c = NULL;
	int rc = sotls_conn_new(*cfg, fd, c);
	if (rc == 0)
		rc = sotls_handshake(*c);
	if (rc == 0 && nonblock)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return rc;
}

/* ---- one connection: a list of sends ---------------------------------------- */

struct job {
	struct tfile *f;
	off_t off;
	size_t count;
	unsigned pause_ms; /* the server waits this long before the job */
};

struct server {
	int fd;
	bool nonblock;
	enum sotls_ktls_policy ktls;
	const struct job *jobs;
	size_t njobs;
	int rc; /* 0 or the failing return value */
	char what[256];
	struct sotls_info info;
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct sotls_config *cfg;
	struct sotls_conn *c;
	s->rc = server_handshake(s->fd, s->ktls, s->nonblock, &cfg, &c);
	if (s->rc != 0) {
		snprintf(s->what, sizeof(s->what), "handshake: %s", sotls_strerror(s->rc));
		goto out;
	}
	for (size_t j = 0; j < s->njobs && s->rc == 0; j++) {
		const struct job *jb = &s->jobs[j];
		off_t off = jb->off;
		size_t left = jb->count;
		size_t expect = jb->off >= (off_t)jb->f->size ? 0 : jb->f->size - (size_t)jb->off;
		if (expect > left)
			expect = left;
		size_t sent = 0;
		if (jb->pause_ms > 0)
			usleep(jb->pause_ms * 1000u);
		for (;;) {
			ssize_t n = sotls_sendfile(c, jb->f->fd, &off, left);
			if (n == SOTLS_WANT_WRITE) {
				struct pollfd p = {.fd = s->fd, .events = POLLOUT};
				poll(&p, 1, 1000);
				continue;
			}
			if (n < 0) {
				s->rc = (int)n;
				snprintf(s->what, sizeof(s->what), "sendfile job %zu: %s (%s)", j,
					 sotls_strerror((int)n), sotls_conn_error_detail(c));
				break;
			}
			if (n == 0)
				break;
			sent += (size_t)n;
			left -= (size_t)n;
			if (off != jb->off + (off_t)sent) {
				s->rc = -1000;
				snprintf(s->what, sizeof(s->what), "job %zu: offset %lld, want %lld", j,
					 (long long)off, (long long)(jb->off + (off_t)sent));
				break;
			}
			if (left == 0)
				break;
		}
		if (s->rc == 0 && sent != expect) {
			s->rc = -1001;
			snprintf(s->what, sizeof(s->what), "job %zu: sent %zu of %zu", j, sent, expect);
		}
	}
	if (s->rc == 0) {
		int r;
		while ((r = sotls_shutdown(c)) == SOTLS_WANT_WRITE) {
			struct pollfd p = {.fd = s->fd, .events = POLLOUT};
			poll(&p, 1, 1000);
		}
		if (r != 0) {
			s->rc = r;
			snprintf(s->what, sizeof(s->what), "shutdown: %s", sotls_strerror(r));
		}
	}
	s->info = (struct sotls_info)SOTLS_INFO_INIT;
	sotls_get_info(c, &s->info);
out:
	sotls_conn_free(c);
	sotls_config_free(cfg);
	return NULL;
}

/* Receives the jobs' bytes and checks them; returns the stream hash. */
static uint64_t client_recv(struct sotls_conn *c, const struct job *jobs, size_t njobs,
			    bool slow)
{
	static uint8_t buf[1 << 17], exp[1 << 17];
	uint64_t h = FNV0;
	for (size_t j = 0; j < njobs; j++) {
		const struct job *jb = &jobs[j];
		size_t need = jb->off >= (off_t)jb->f->size ? 0 : jb->f->size - (size_t)jb->off;
		if (need > jb->count)
			need = jb->count;
		size_t got = 0;
		while (got < need) {
			size_t want = need - got < sizeof(buf) ? need - got : sizeof(buf);
			if (slow && want > 4096)
				want = 4096;
			ssize_t n = sotls_recv(c, buf, want);
			if (n <= 0) {
				CHECK(0, "job %zu (%zu bytes at %lld): recv returned %zd (%s) after %zu",
				      j, jb->f->size, (long long)jb->off, n, sotls_strerror((int)n),
				      got);
				return 0;
			}
			if (pread(jb->f->fd, exp, (size_t)n, jb->off + (off_t)got) != n ||
			    memcmp(exp, buf, (size_t)n) != 0) {
				CHECK(0, "job %zu: bytes differ in [%zu, %zu)", j, got, got + (size_t)n);
				return 0;
			}
			h = fnv(h, buf, (size_t)n);
			got += (size_t)n;
			if (slow && (got & 0xfffff) < 4096)
				usleep(2000);
		}
	}
	ssize_t n = sotls_recv(c, buf, sizeof(buf));
	CHECK(n == 0, "after the last job: recv %zd (%s), want close_notify", n,
	      sotls_strerror((int)n));
	return h;
}

/* Runs one connection: server sends jobs, client checks. */
static void run_conn(const char *name, int fds[2], bool nonblock, bool slow,
		     enum sotls_ktls_policy ktls, const struct job *jobs, size_t njobs,
		     const char *want_path, struct sotls_info *info_out)
{
	struct server s = {.fd = fds[0], .nonblock = nonblock, .ktls = ktls, .jobs = jobs,
			   .njobs = njobs};
	pthread_t t;
	pthread_create(&t, NULL, server_main, &s);
	struct sotls_config *cfg;
	struct sotls_conn *c;
	int rc = client_handshake(fds[1], ktls, &cfg, &c);
	CHECK(rc == 0, "%s: client handshake: %s", name, sotls_strerror(rc));
	if (rc == 0 && g_client_kk) {
		struct sotls_info ci = SOTLS_INFO_INIT;
		sotls_get_info(c, &ci);
		CHECK(ci.tx_path == SOTLS_PATH_KERNEL && ci.rx_path == SOTLS_PATH_KERNEL,
		      "%s: client TX %s, RX %s, want the kernel both ways", name, ci.tx_reason,
		      ci.rx_reason);
	}
	uint64_t h = rc == 0 ? client_recv(c, jobs, njobs, slow) : 0;
	if (rc != 0)
		shutdown(fds[1], SHUT_RDWR);
	pthread_join(t, NULL);
	CHECK(s.rc == 0, "%s: server: %s", name, s.what);
	if (want_path != NULL)
		CHECK(strcmp(s.info.sendfile_path, want_path) == 0, "%s: path %s (%s), want %s",
		      name, s.info.sendfile_path, s.info.sendfile_reason, want_path);
	printf("%-28s %-18s hash %016llx  (%s)\n", name, s.info.sendfile_path,
	       (unsigned long long)h, s.info.sendfile_reason);
	fflush(stdout);
	if (info_out != NULL)
		*info_out = s.info;
	sotls_conn_free(c);
	sotls_config_free(cfg);
	close(fds[0]);
	close(fds[1]);
}

/* ---- the cases -------------------------------------------------------------- */

static struct tfile g_files[7];
static size_t g_nfiles;

static size_t build_jobs(struct job *jobs, bool big)
{
	size_t n = 0;
	for (size_t i = 0; i < g_nfiles; i++) {
		struct tfile *f = &g_files[i];
		if (f->size > (8u << 20) && !big)
			continue;
		jobs[n++] = (struct job){f, 0, f->size, 0};	 /* whole file */
		jobs[n++] = (struct job){f, 0, f->size + 100, 0}; /* more than there is */
		if (f->size > 0) {
			jobs[n++] = (struct job){f, 1, (size_t)-1, 0}; /* from 1 to the end */
			jobs[n++] = (struct job){f, (off_t)f->size, 10, 0}; /* at the end: 0 */
		}
		if (f->size > 16384) {
			jobs[n++] = (struct job){f, 16383, 16386, 0};
			jobs[n++] = (struct job){f, (off_t)f->size - 16385, 16385, 0};
			jobs[n++] = (struct job){f, 4097, f->size / 2, 0};
		}
	}
	return n;
}

static void user_mode(const char *mode, bool big)
{
	static struct job jobs[64];
	size_t n = build_jobs(jobs, big);
	use_mode(mode);
	int fds[2];
	tcp_pair(fds);
	char name[64];
	snprintf(name, sizeof(name), "tcp %s%s", mode, big ? " +64MiB" : "");
	const char *want = strcmp(mode, "zc") == 0     ? "io_uring-send-zc"
			   : strcmp(mode, "send") == 0 ? "io_uring-send"
						       : "pread-send";
	struct sotls_info info = SOTLS_INFO_INIT;
	run_conn(name, fds, false, false, SOTLS_KTLS_OFF, jobs, n, NULL, &info);
	/* Without io_uring at all every mode ends on pread, and says why. */
	bool no_ring = strncmp(info.sendfile_reason, "io_uring unavailable", 20) == 0;
	CHECK(strcmp(info.sendfile_path, no_ring ? "pread-send" : want) == 0,
	      "%s: path %s (%s), want %s", name, info.sendfile_path, info.sendfile_reason, want);
	use_mode("");
}

/*
 * --mode inflight: a SEND_ZC buffer stays the kernel's until the peer has
 * acknowledged its bytes. Behind a slow link (a tbf qdisc on lo, in a network
 * namespace of the test's own) every group waits for its notification at
 * once, and the pool must grow rather than cap what is in flight at two
 * groups; and once idle, give the extra groups back. Needs CAP_SYS_ADMIN and CAP_NET_ADMIN, ip and tc; false (skip)
 * without them.
 */
static bool inflight(void)
{
	if (unshare(CLONE_NEWNET) != 0) {
		printf("SKIP: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return false;
	}
	if (system("ip link set lo up && "
		   "tc qdisc add dev lo root tbf rate 400mbit burst 256kb latency 100ms") != 0) {
		printf("SKIP: no tbf qdisc on lo (ip, tc)\n");
		return false;
	}
	struct tfile *f = NULL;
	for (size_t i = 0; i < g_nfiles; i++)
		if (g_files[i].size == (1u << 20) + 3)
			f = &g_files[i];
	use_mode("zc");
	struct job one = {f, 0, 1, 0}, jobs[9];
	for (size_t i = 0; i < 8; i++)
		jobs[i] = (struct job){f, (off_t)i, f->size, 0};
	int fds[2];
	struct sotls_info small, slow, later;
	tcp_pair(fds);
	run_conn("tcp zc, 1 byte", fds, false, false, SOTLS_KTLS_OFF, &one, 1, "io_uring-send-zc",
		 &small);
	tcp_pair(fds);
	run_conn("tcp zc behind tbf 400mbit", fds, false, false, SOTLS_KTLS_OFF, jobs, 8,
		 "io_uring-send-zc", &slow);
	/* The same, then a byte more after 1.2 s: the idle groups go back. */
	jobs[8] = (struct job){f, 0, 1, 1200};
	tcp_pair(fds);
	run_conn("tcp zc behind tbf, then idle", fds, false, false, SOTLS_KTLS_OFF, jobs, 9,
		 "io_uring-send-zc", &later);
	printf("record buffers: %zu bytes at first, %zu behind the slow link, %zu after 1.2 s "
	       "idle\n",
	       small.sendfile_buffer_bytes, slow.sendfile_buffer_bytes,
	       later.sendfile_buffer_bytes);
	CHECK(small.sendfile_buffer_bytes > 0, "no buffers reported");
	CHECK(slow.sendfile_buffer_bytes >= 4 * small.sendfile_buffer_bytes,
	      "the pool did not grow: %zu bytes", slow.sendfile_buffer_bytes);
	CHECK(later.sendfile_buffer_bytes == small.sendfile_buffer_bytes,
	      "the pool kept %zu bytes after being idle", later.sendfile_buffer_bytes);
	use_mode("");
	return true;
}

static void unix_socket(void)
{
	static struct job jobs[64];
	size_t n = build_jobs(jobs, false);
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
		perror("socketpair");
		exit(1);
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	run_conn("unix (zc refused)", fds, false, false, SOTLS_KTLS_OFF, jobs, n, NULL, &info);
	CHECK(strcmp(info.sendfile_path, "io_uring-send") == 0 ||
		      strcmp(info.sendfile_path, "pread-send") == 0,
	      "AF_UNIX: path %s", info.sendfile_path);
}

static void nonblocking(void)
{
	static struct job jobs[64];
	size_t n = 0;
	for (size_t i = 0; i < g_nfiles; i++)
		if (g_files[i].size <= (8u << 20))
			jobs[n++] = (struct job){&g_files[i], 3, (size_t)-1, 0};
	const char *modes[] = {"zc", "send", "pread"};
	for (size_t m = 0; m < 3; m++) {
		use_mode(modes[m]);
		int fds[2];
		tcp_pair(fds);
		/* Small socket buffers and a slow reader make the socket fill. */
		int sz = 16384;
		setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		char name[64];
		snprintf(name, sizeof(name), "tcp nonblocking %s", modes[m]);
		run_conn(name, fds, true, true, SOTLS_KTLS_OFF, jobs, n, NULL, NULL);
	}
	use_mode("");
}

/* The stalled peer's sender: sotls_sendfile on a non-blocking socket,
 * polling on WANT_WRITE, timing every call. */
struct stalled_sender {
	int fd;
	struct tfile *f;
	int rc;
	char what[256];
	double longest_s; /* the longest sotls_sendfile call */
	size_t sent;
	char path[32];
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *stalled_sender_main(void *arg)
{
	struct stalled_sender *s = arg;
	struct sotls_config *cfg;
	struct sotls_conn *c;
	s->rc = server_handshake(s->fd, SOTLS_KTLS_OFF, true, &cfg, &c);
	if (s->rc != 0) {
		snprintf(s->what, sizeof(s->what), "handshake: %s", sotls_strerror(s->rc));
		goto out;
	}
	off_t off = 0;
	while (s->sent < s->f->size) {
		double t0 = mono_s();
		ssize_t n = sotls_sendfile(c, s->f->fd, &off, s->f->size - s->sent);
		double took = mono_s() - t0;
		if (took > s->longest_s)
			s->longest_s = took;
		if (n == SOTLS_WANT_WRITE) {
			struct pollfd p = {.fd = s->fd, .events = POLLOUT};
			poll(&p, 1, 1000);
			continue;
		}
		if (n <= 0) {
			s->rc = n < 0 ? (int)n : -1;
			snprintf(s->what, sizeof(s->what), "sendfile after %zu bytes: %s (%s)", s->sent,
				 n < 0 ? sotls_strerror((int)n) : "0", sotls_conn_error_detail(c));
			break;
		}
		s->sent += (size_t)n;
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	snprintf(s->path, sizeof(s->path), "%s", info.sendfile_path ? info.sendfile_path : "-");
	int r;
	while (s->rc == 0 && (r = sotls_shutdown(c)) == SOTLS_WANT_WRITE) {
		struct pollfd p = {.fd = s->fd, .events = POLLOUT};
		poll(&p, 1, 1000);
	}
out:
	sotls_conn_free(c);
	sotls_config_free(cfg);
	return NULL;
}

/*
 * The receiver takes 64 KiB, then nothing for STALL_S, then the rest. A
 * SEND_ZC buffer stays the kernel's until the peer acknowledges its bytes,
 * which a stalled peer does not; on a non-blocking socket no call may wait
 * for that (a server thread would stand still with every connection on it):
 * each returns well within the stall, and the bytes all arrive in order.
 */
static void stalled(void)
{
	enum { STALL_S = 2 };
	const char *modes[] = {"", "zc"};
	struct tfile f;
	make_file(&f, 16u << 20);
	for (size_t m = 0; m < 2; m++) {
		use_mode(modes[m]);
		int fds[2];
		tcp_pair(fds);
		/* The sender's socket holds more than the zero-copy pool (4 MiB
		 * at most), the receiver's window closes at once: then every
		 * buffer waits for the peer while the socket still takes bytes. */
		int snd = 4 << 20, rcv = 65536;
		setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
		setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		struct stalled_sender s = {.fd = fds[0], .f = &f};
		pthread_t t;
		pthread_create(&t, NULL, stalled_sender_main, &s);
		struct sotls_config *cfg;
		struct sotls_conn *c;
		int rc = client_handshake(fds[1], SOTLS_KTLS_OFF, &cfg, &c);
		CHECK(rc == 0, "client handshake: %s", sotls_strerror(rc));
		static uint8_t buf[1 << 17], exp[1 << 17];
		size_t got = 0;
		bool stalled_yet = false;
		while (rc == 0 && got < f.size) {
			if (!stalled_yet && got >= 65536) {
				sleep(STALL_S);
				stalled_yet = true;
			}
			ssize_t n = sotls_recv(c, buf, got < 65536 ? 65536 - got : sizeof(buf));
			if (n <= 0) {
				CHECK(0, "mode '%s': recv %zd (%s) after %zu bytes", modes[m], n,
				      sotls_strerror((int)n), got);
				break;
			}
			if (pread(f.fd, exp, (size_t)n, (off_t)got) != n ||
			    memcmp(exp, buf, (size_t)n) != 0) {
				CHECK(0, "mode '%s': bytes differ in [%zu, %zu)", modes[m], got,
				      got + (size_t)n);
				break;
			}
			got += (size_t)n;
		}
		pthread_join(t, NULL);
		printf("stalled peer, mode '%s' (%s): %zu bytes, longest sotls_sendfile call %.3f s\n",
		       modes[m], s.path, got, s.longest_s);
		CHECK(s.rc == 0, "mode '%s': %s", modes[m], s.what);
		CHECK(got == f.size, "mode '%s': %zu of %zu bytes", modes[m], got, f.size);
		CHECK(s.longest_s < STALL_S / 2.0,
		      "mode '%s': a call on the non-blocking socket waited %.3f s for the stalled peer",
		      modes[m], s.longest_s);
		if (rc == 0) {
			sotls_conn_free(c);
			sotls_config_free(cfg);
		}
		close(fds[0]);
		close(fds[1]);
	}
	use_mode("");
	close(f.fd);
	unlink(f.path);
}

static void ktls_conns(bool require);

/* The kernel-path engines on a plain TCP socket: the bytes arrive as they are. */
static void kernel_engines(void)
{
	const char *modes[] = {"", "sendfile"};
	for (size_t m = 0; m < 2; m++) {
		use_mode(modes[m]);
		for (size_t i = 0; i < g_nfiles; i++) {
			struct tfile *f = &g_files[i];
			if (f->size > (8u << 20))
				continue;
			int fds[2];
			tcp_pair(fds);
			struct sotls_io *io = NULL;
			off_t off = f->size > 7 ? 7 : 0;
			size_t expect = f->size - (size_t)off;
			pid_t pid = fork();
			if (pid == 0) {
				close(fds[1]);
				off_t o = off;
				size_t sent = 0;
				for (;;) {
					ssize_t k = sotls_io_sendfile_kernel(&io, g_mode, fds[0], f->fd, &o,
									     f->size + 5, NULL);
					if (k <= 0)
						break;
					sent += (size_t)k;
				}
				_exit(sent == expect && o == (off_t)f->size ? 0 : 1);
			}
			close(fds[0]);
			uint8_t *got = malloc(expect + 1), *exp = malloc(expect + 1);
			size_t have = 0;
			for (;;) {
				ssize_t k = recv(fds[1], got + have, expect + 1 - have, 0);
				if (k <= 0)
					break;
				have += (size_t)k;
			}
			int st = 0;
			waitpid(pid, &st, 0);
			CHECK(pread(f->fd, exp, expect, off) == (ssize_t)expect &&
				      have == expect && memcmp(got, exp, expect) == 0,
			      "kernel engine %s: %zu bytes at %lld: got %zu",
			      modes[m][0] ? modes[m] : "auto", f->size, (long long)off, have);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kernel engine sender status");
			free(got);
			free(exp);
			close(fds[1]);
		}
		/* Which engine was it? A fresh state tells. */
		int fds[2];
		tcp_pair(fds);
		struct sotls_io *io = NULL;
		off_t o = 0;
		ssize_t k = sotls_io_sendfile_kernel(&io, g_mode, fds[0], g_files[1].fd, &o, 1, NULL);
		CHECK(k == 1, "one byte");
		printf("kernel engine %-14s %-18s (%s)\n", modes[m][0] ? modes[m] : "auto",
		       sotls_io_path(io), sotls_io_reason(io));
		if (modes[m][0])
			CHECK(strcmp(sotls_io_path(io), "sendfile") == 0, "forced sendfile");
		sotls_io_free(io);
		close(fds[0]);
		close(fds[1]);
	}
	use_mode("");
	ktls_conns(false);
}

/* Whole connections with TX in the kernel, where this kernel can (require:
 * it must, both directions on both sides): the SPLICE path, sendfile(2)
 * forced, and sendfile(2) on a non-blocking socket. */
static void ktls_conns(bool require)
{
	static struct job jobs[64];
	size_t n = build_jobs(jobs, false);
	g_client_kk = require;
	for (int k = 0; k < 3; k++) {
		if (k == 1)
			use_mode("sendfile");
		int fds[2];
		tcp_pair(fds);
		struct sotls_info info = SOTLS_INFO_INIT;
		const char *name = k == 0 ? "tcp ktls auto" : k == 1 ? "tcp ktls sendfile" : "tcp ktls nonblocking";
		run_conn(name, fds, k == 2, false, SOTLS_KTLS_AUTO, jobs, n, NULL, &info);
		use_mode("");
		if (require) {
			printf("  %s: server TX %s, RX %s\n", info.suite,
			       info.tx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace",
			       info.rx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace");
			CHECK(info.tx_path == SOTLS_PATH_KERNEL && info.rx_path == SOTLS_PATH_KERNEL,
			      "%s %s: server TX %s, RX %s, want the kernel both ways", name,
			      info.suite, info.tx_reason, info.rx_reason);
		}
		if (info.tx_path != SOTLS_PATH_KERNEL) {
			printf("  (TX stayed in userspace: %s)\n", info.tx_reason);
			break;
		}
		CHECK(strcmp(info.sendfile_path, k == 0 ? "io_uring-splice" : "sendfile") == 0,
		      "kernel TX: path %s", info.sendfile_path);
	}
}

struct stall_sender {
	int fd;
	const struct tfile *f;
	unsigned timeouts; /* short counts and SOTLS_WANT_WRITE seen */
	int rc;
	struct sotls_info info;
};

/* The server: the whole file with sotls_sendfile, resuming at the offset
 * each call reports, then close_notify. */
static void *stall_sender_main(void *arg)
{
	struct stall_sender *s = arg;
	struct sotls_config *cfg = cfg_new(SOTLS_ROLE_SERVER, SOTLS_KTLS_AUTO);
	struct sotls_conn *c = NULL;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 50000};
	setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	sotls_conn_new(cfg, s->fd, &c);
	s->rc = sotls_handshake(c);
	s->info = (struct sotls_info)SOTLS_INFO_INIT;
	sotls_get_info(c, &s->info);
	off_t off = 0;
	while (s->rc == 0 && (size_t)off < s->f->size) {
		size_t want = s->f->size - (size_t)off;
		ssize_t n = sotls_sendfile(c, s->f->fd, &off, want);
		if (n == SOTLS_WANT_WRITE || (n > 0 && (size_t)n < want))
			s->timeouts++;
		else if (n <= 0)
			s->rc = n < 0 ? (int)n : -1;
	}
	int rc;
	while (s->rc == 0 && (rc = sotls_shutdown(c)) == SOTLS_WANT_WRITE)
		;
	if (s->rc == 0)
		s->rc = rc;
	sotls_conn_free(c);
	sotls_config_free(cfg);
	return NULL;
}

static void ktls_timeout(void)
{
	const struct tfile *f = &g_files[g_nfiles - 1]; /* the largest: 1 MiB + 3, or 64 MiB */
	int fds[2];
	tcp_pair(fds);
	int small = 16384;
	setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	struct stall_sender s = {.fd = fds[0], .f = f};
	pthread_t t;
	pthread_create(&t, NULL, stall_sender_main, &s);
	struct sotls_config *cfg;
	struct sotls_conn *c;
	int hs = client_handshake(fds[1], SOTLS_KTLS_AUTO, &cfg, &c);
	uint8_t *got = malloc(f->size + 1);
	size_t n = 0;
	ssize_t k = 0;
	while (hs == 0 && got != NULL) {
		/* Stalls, long against SO_SNDTIMEO, while the sender waits. */
		if (n < f->size && (n / 65536) % 4 == 0)
			usleep(200000);
		k = sotls_recv(c, got + n, f->size + 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	pthread_join(t, NULL);
	CHECK(s.info.tx_path == SOTLS_PATH_KERNEL, "sender TX %s", s.info.tx_reason);
	CHECK(hs == 0 && s.rc == 0 && k == 0, "handshake %d, sender %s, end %s", hs,
	      sotls_strerror(s.rc), sotls_strerror((int)k));
	CHECK(s.timeouts > 0, "the socket timed out midway (%u times)", s.timeouts);
	uint8_t *want = malloc(f->size + 1);
	CHECK(want != NULL && pread(f->fd, want, f->size, 0) == (ssize_t)f->size, "read file");
	CHECK(n == f->size && want != NULL && got != NULL && memcmp(got, want, n) == 0,
	      "the peer got %zu bytes, the file has %zu: %s", n, f->size,
	      n == f->size ? "contents differ" : "length differs");
	printf("ktls-timeout: %s, %zu bytes, %u timeouts midway, sendfile path %s\n",
	       s.info.suite, n, s.timeouts, s.info.tx_path == SOTLS_PATH_KERNEL ? "kernel" : "user");
	free(want);
	free(got);
	sotls_conn_free(c);
	sotls_config_free(cfg);
	close(fds[0]);
	close(fds[1]);
}

/* io_uring refused by a seccomp filter (errno err), as in a container: the
 * zero-copy request ends on pread + send and says why. In a child process. */
static void no_ring(int err, const char *want_reason)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
			perror("seccomp");
			_exit(77);
		}
		static struct job jobs[64];
		size_t n = build_jobs(jobs, false);
		int fds[2];
		tcp_pair(fds);
		struct sotls_info info = SOTLS_INFO_INIT;
		char name[64];
		snprintf(name, sizeof(name), "tcp, io_uring %s", err == ENOSYS ? "ENOSYS" : "EPERM");
		run_conn(name, fds, false, false, SOTLS_KTLS_OFF, jobs, n, "pread-send", &info);
		CHECK(strstr(info.sendfile_reason, want_reason) != NULL, "reason %s, want %s",
		      info.sendfile_reason, want_reason);
		/* The kernel-path engine falls back to sendfile(2). */
		tcp_pair(fds);
		struct sotls_io *io = NULL;
		off_t o = 0;
		ssize_t k = sotls_io_sendfile_kernel(&io, g_mode, fds[0], g_files[1].fd, &o, 1, NULL);
		uint8_t byte = 0;
		CHECK(k == 1 && recv(fds[1], &byte, 1, 0) == 1 &&
			      strcmp(sotls_io_path(io), "sendfile") == 0,
		      "kernel engine without io_uring: %zd, path %s", k, sotls_io_path(io));
		printf("kernel engine, no io_uring  %-18s (%s)\n", sotls_io_path(io),
		       sotls_io_reason(io));
		sotls_io_free(io);
		close(fds[0]);
		close(fds[1]);
		fflush(stdout);
		_exit(g_failures == 0 ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		printf("seccomp unavailable: io_uring refusal not tested\n");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "no-ring child (errno %d)", err);
}

/* Reads want bytes on a thread, hashing them. */
struct drain {
	struct sotls_conn *c;
	size_t want, got;
	uint64_t hash;
};

static void *drain_main(void *arg)
{
	struct drain *d = arg;
	static uint8_t buf[1 << 16];
	while (d->got < d->want) {
		size_t n = d->want - d->got < sizeof(buf) ? d->want - d->got : sizeof(buf);
		ssize_t k = sotls_recv(d->c, buf, n);
		if (k <= 0)
			break;
		d->hash = fnv(d->hash, buf, (size_t)k);
		d->got += (size_t)k;
	}
	return NULL;
}

/* Argument and file errors leave the connection usable. */
static void errors(void)
{
	int fds[2];
	tcp_pair(fds);
	/* Both ends on this thread: 16383 bytes fit the socket buffers. */
	struct sotls_config *scfg = cfg_new(SOTLS_ROLE_SERVER, SOTLS_KTLS_OFF);
	struct sotls_config *ccfg = cfg_new(SOTLS_ROLE_CLIENT, SOTLS_KTLS_OFF);
	struct sotls_conn *sc = NULL, *cc = NULL;
	sotls_conn_new(scfg, fds[0], &sc);
	sotls_conn_new(ccfg, fds[1], &cc);
	CHECK(sotls_sendfile(NULL, 0, NULL, 1) == SOTLS_ERR_INVALID_ARGUMENT, "NULL conn");
	off_t neg = -1;
	CHECK(sotls_sendfile(sc, g_files[2].fd, &neg, 1) == SOTLS_ERR_INVALID_ARGUMENT,
	      "negative offset");
	/* Handshake through non-blocking steps on both ends in turn. */
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	int a = 1, b = 1;
	for (int i = 0; i < 1000 && (a != 0 || b != 0); i++) {
		if (a != 0)
			a = sotls_handshake(sc);
		if (b != 0)
			b = sotls_handshake(cc);
		usleep(100);
	}
	CHECK(a == 0 && b == 0, "handshake %d %d", a, b);
	fcntl(fds[0], F_SETFL, 0);
	fcntl(fds[1], F_SETFL, 0);
	/* A directory cannot be read: the file's error, the connection lives. */
	int dfd = open(g_dir, O_RDONLY | O_DIRECTORY);
	off_t o = 0;
	errno = 0;
	ssize_t r = sotls_sendfile(sc, dfd, &o, 100);
	CHECK(r == SOTLS_ERR_SYSCALL && errno == EISDIR && o == 0, "directory: %zd errno %d", r,
	      errno);
	close(dfd);
	/* NULL offset: the file position is used and advanced. */
	lseek(g_files[2].fd, 0, SEEK_SET);
	r = sotls_sendfile(sc, g_files[2].fd, NULL, g_files[2].size);
	CHECK(r == (ssize_t)g_files[2].size, "NULL offset: %zd", r);
	CHECK(lseek(g_files[2].fd, 0, SEEK_CUR) == (off_t)g_files[2].size, "file position");
	uint8_t *buf = malloc(g_files[2].size + 1), *exp = malloc(g_files[2].size + 1);
	size_t have = 0;
	while (have < g_files[2].size) {
		ssize_t k = sotls_recv(cc, buf + have, g_files[2].size - have);
		if (k <= 0)
			break;
		have += (size_t)k;
	}
	CHECK(have == g_files[2].size && pread(g_files[2].fd, exp, have, 0) == (ssize_t)have &&
		      memcmp(buf, exp, have) == 0,
	      "NULL-offset bytes");
	/* Plain sends and sendfile interleave. */
	CHECK(sotls_send(sc, "abc", 3) == 3, "send after sendfile");
	CHECK(sotls_recv(cc, buf, 3) == 3 && memcmp(buf, "abc", 3) == 0, "recv abc");
	free(buf);
	free(exp);

	/* An unfinished non-blocking sotls_send comes first: SOTLS_ERR_BAD_STATE,
	 * and the connection goes on. */
	static uint8_t big[1 << 22];
	memset(big, 0x5a, sizeof(big));
	int small = 16384;
	setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	ssize_t part = sotls_send(sc, big, sizeof(big));
	CHECK(part == SOTLS_WANT_WRITE || (part > 0 && (size_t)part < sizeof(big)),
	      "non-blocking send of 4 MiB: %zd", part);
	if (part == SOTLS_WANT_WRITE)
		part = 0;
	o = 0;
	r = sotls_sendfile(sc, g_files[2].fd, &o, 100);
	CHECK(r == SOTLS_ERR_BAD_STATE && o == 0, "sendfile during an unfinished send: %zd", r);
	fcntl(fds[0], F_SETFL, 0);
	struct drain d = {cc, sizeof(big) + g_files[2].size, 0, FNV0};
	pthread_t t;
	pthread_create(&t, NULL, drain_main, &d);
	r = sotls_send(sc, big + part, sizeof(big) - (size_t)part);
	CHECK(r == (ssize_t)(sizeof(big) - (size_t)part), "rest of the send: %zd", r);
	r = sotls_sendfile(sc, g_files[2].fd, &o, g_files[2].size);
	CHECK(r == (ssize_t)g_files[2].size, "sendfile after the send: %zd", r);
	pthread_join(t, NULL);
	uint8_t *fbuf = malloc(g_files[2].size);
	uint64_t h = fnv(FNV0, big, sizeof(big));
	CHECK(pread(g_files[2].fd, fbuf, g_files[2].size, 0) == (ssize_t)g_files[2].size, "pread");
	h = fnv(h, fbuf, g_files[2].size);
	free(fbuf);
	CHECK(d.got == d.want && d.hash == h, "after BAD_STATE: got %zu of %zu, hash %s", d.got,
	      d.want, d.hash == h ? "ok" : "differs");

	sotls_conn_free(sc);
	sotls_conn_free(cc);
	sotls_config_free(scfg);
	sotls_config_free(ccfg);
	close(fds[0]);
	close(fds[1]);
	printf("errors: ok so far (%d failures)\n", g_failures);
}

int main(int argc, char **argv)
{
	const char *mode = "zc";
	bool big = false, skipped = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
			mode = argv[++i];
		else if (strcmp(argv[i], "--big") == 0)
			big = true;
		else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc)
			g_suite = argv[++i];
		else {
			fprintf(stderr, "usage: test_sendfile [--mode M] [--big] [--suite S]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(g_dir, sizeof(g_dir), "%s/sotls-sendfile-XXXXXX", tmp);
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if (ephemeral_cert("localhost", g_cert, sizeof(g_cert), g_key, sizeof(g_key)) != 0)
		return 1;
	static const size_t sizes[] = {0, 1, 16383, 16384, 16385, (1u << 20) + 3, 64u << 20};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (sizes[i] > (8u << 20) && !big)
			continue;
		make_file(&g_files[g_nfiles++], sizes[i]);
	}

	if (strcmp(mode, "zc") == 0 || strcmp(mode, "send") == 0 || strcmp(mode, "pread") == 0)
		user_mode(mode, big);
	else if (strcmp(mode, "unix") == 0)
		unix_socket();
	else if (strcmp(mode, "nonblock") == 0)
		nonblocking();
	else if (strcmp(mode, "kernel") == 0)
		kernel_engines();
	else if (strcmp(mode, "ktls") == 0)
		ktls_conns(true);
	else if (strcmp(mode, "ktls-timeout") == 0)
		ktls_timeout();
	else if (strcmp(mode, "errors") == 0)
		errors();
	else if (strcmp(mode, "inflight") == 0)
		skipped = !inflight();
	else if (strcmp(mode, "stalled") == 0)
		stalled();
	else if (strcmp(mode, "noring") == 0) {
		no_ring(ENOSYS, "ENOSYS");
		no_ring(EPERM, "EPERM");
	}
	else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}

	for (size_t i = 0; i < g_nfiles; i++) {
		close(g_files[i].fd);
		unlink(g_files[i].path);
	}
	rmdir(g_dir);
	printf("%s: %d failure(s)\n", mode, g_failures);
	if (g_failures == 0 && skipped)
		return 77;
	return g_failures == 0 ? 0 : 1;
}

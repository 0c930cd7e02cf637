/*
 * sotls-bench-sendfile: sending a file over TLS 1.2 with
 * ECDHE-ECDSA-ARIA128-GCM-SHA256 on loopback TCP, in one run:
 *   sotls sendfile, zero copy   sotls_sendfile, io_uring READ_FIXED + SEND_ZC
 *   sotls sendfile, SEND        the same with IORING_OP_SEND (fallback)
 *   sotls sendfile, pread       pread + send (fallback without io_uring)
 *   sotls sendfile, default     what sotls_sendfile picks by itself (on
 *                               loopback: preadv + send, once SEND_ZC
 *                               reports that the kernel copied anyway)
 *   sotls read + sotls_send     the naive loop: read(2) 256 KiB, sotls_send
 *   sotls_send, no file read    the floor: sotls_send of one resident 256 KiB
 *                               buffer, over and over. No path that reads the
 *                               file and sends through loopback TCP can cost
 *                               less: on loopback the kernel copies even
 *                               SEND_ZC's pages when it delivers them.
 *   OpenSSL read + SSL_write    the same loop with OpenSSL's libssl
 *
 * Method. The file (--size MiB, default 256) is made once and read once, so
 * it is in the page cache. For each run the receiver is a forked process
 * (sotls or OpenSSL client, the same stack as the sender) that decrypts and
 * drops the bytes and answers one byte at the end; the sender is this
 * process. Wall time runs from the first byte sent to that answer; CPU is
 * the sender's user + system time (getrusage(RUSAGE_SELF), which counts
 * io_uring's worker threads too) over the same span, per 10^9 bytes. Each
 * method runs --runs times (default 5), interleaved; the shortest time and
 * the least CPU count, each on its own (other load only ever adds to both:
 * this machine's cores are shared).
 *
 * With --ktls (a kernel with kTLS and ARIA, e.g. the VM of tests/vm) both
 * ends put TX/RX in the kernel and the kernel path is measured instead:
 * io_uring SPLICE file -> pipe -> socket, sendfile(2), and read + sotls_send.
 *
 * --only KEY runs one method (its JSON key, e.g. sendfile_zc), for profiling.
 *
 *   sotls-bench-sendfile [--size MiB] [--runs N] [--json] [--ktls] [--only KEY]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "ephemeral_cert.h"
#include "sotls.h"

#define SUITE_OPENSSL "ECDHE-ECDSA-ARIA128-GCM-SHA256"
#define CHUNK (256 * 1024)

static char g_cert[4096], g_key[1024];
static bool g_pin;

enum method {
	M_ZC, M_SEND, M_PREAD, M_AUTO, M_NAIVE, M_FLOOR, M_OPENSSL,
	M_KSPLICE, M_KSENDFILE, M_KNAIVE, /* --ktls: TX in the kernel */
	M_COUNT
};
#define M_USER_COUNT M_KSPLICE
static const char *const NAMES[M_COUNT] = {
	"sotls sendfile, zero copy", "sotls sendfile, SEND",   "sotls sendfile, pread",
	"sotls sendfile, default",   "sotls read + sotls_send", "sotls_send, no file read",
	"OpenSSL read + SSL_write",
	"kTLS sendfile, io_uring SPLICE", "kTLS sendfile, sendfile(2)", "kTLS read + sotls_send",
};
static const char *const KEYS[M_COUNT] = {
	"sendfile_zc",	    "sendfile_send",	 "sendfile_pread",    "sendfile_default",
	"naive_sotls_send", "floor_sotls_send_no_read", "openssl_ssl_write", "ktls_splice",	      "ktls_sendfile",
	"ktls_naive_send",
};

static bool is_ktls(enum method m)
{
	return m >= M_KSPLICE;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system seconds of this process; *sys gets the system part. */
static double cpu_seconds(double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + *sys;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_sendfile: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void tcp_pair(int fds[2])
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0)
		die("listen");
	fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fds[1], (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	fds[0] = accept(l, NULL, NULL);
	if (fds[0] < 0)
		die("accept");
	close(l);
}

/* ---- OpenSSL ---------------------------------------------------------------- */

static SSL_CTX *ossl_ctx(bool server)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	if (SSL_CTX_set_cipher_list(ctx, SUITE_OPENSSL) != 1) {
		fprintf(stderr, "OpenSSL: no %s\n", SUITE_OPENSSL);
		exit(1);
	}
	if (server) {
		BIO *b = BIO_new_mem_buf(g_cert, -1);
		X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
		BIO_free(b);
		b = BIO_new_mem_buf(g_key, -1);
		EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
		BIO_free(b);
		if (x == NULL || k == NULL || SSL_CTX_use_certificate(ctx, x) != 1 ||
		    SSL_CTX_use_PrivateKey(ctx, k) != 1) {
			ERR_print_errors_fp(stderr);
			exit(1);
		}
		X509_free(x);
		EVP_PKEY_free(k);
	} else {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	}
	return ctx;
}

/* ---- the receiver (child process) ------------------------------------------ */

static void receiver(int fd, bool openssl, bool ktls, uint64_t total)
{
	static uint8_t buf[1 << 18];
	uint64_t got = 0;
	if (openssl) {
		SSL_CTX *ctx = ossl_ctx(false);
		SSL *s = SSL_new(ctx);
		SSL_set_fd(s, fd);
		if (SSL_connect(s) != 1)
			_exit(3);
		while (got < total) {
			int n = SSL_read(s, buf, sizeof(buf));
			if (n <= 0)
				_exit(4);
			got += (uint64_t)n;
		}
		SSL_write(s, "k", 1);
		SSL_shutdown(s);
		_exit(0);
	}
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE);
	sotls_config_set_suites(cfg, SUITE_OPENSSL);
	sotls_config_set_ktls(cfg, ktls ? SOTLS_KTLS_AUTO : SOTLS_KTLS_OFF);
	struct sotls_conn *c;
	if (sotls_conn_new(cfg, fd, &c) != 0 || sotls_handshake(c) != 0)
		_exit(3);
	while (got < total) {
		ssize_t n = sotls_recv(c, buf, sizeof(buf));
		if (n <= 0)
			_exit(4);
		got += (uint64_t)n;
	}
	sotls_send(c, "k", 1);
	_exit(0);
}

/* ---- one run ------------------------------------------------------------------ */

struct result {
	double seconds, cpu, sys;
	char path[64];
	bool ok;
};

/* Pins the calling process to one CPU (ignored where there is one). */
static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static struct result run(enum method m, int file_fd, uint64_t size)
{
	struct result r = {0};
	int fds[2];
	tcp_pair(fds);
	bool openssl = m == M_OPENSSL;
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(fds[0]);
		if (g_pin)
			pin(1);
		receiver(fds[1], openssl, is_ktls(m), size);
	}
	close(fds[1]);
	int fd = fds[0];
	static uint8_t *buf;
	if (buf == NULL && (buf = malloc(CHUNK)) == NULL)
		die("malloc");
	uint8_t ack;

	if (openssl) {
		SSL_CTX *ctx = ossl_ctx(true);
		SSL *s = SSL_new(ctx);
		SSL_set_fd(s, fd);
		if (SSL_accept(s) != 1) {
			ERR_print_errors_fp(stderr);
			exit(1);
		}
		double s0, t0 = now(), c0 = cpu_seconds(&s0);
		off_t off = 0;
		while ((uint64_t)off < size) {
			ssize_t n = pread(file_fd, buf, CHUNK, off);
			if (n <= 0)
				die("pread");
			if (SSL_write(s, buf, (int)n) != n)
				die("SSL_write");
			off += n;
		}
		r.ok = SSL_read(s, &ack, 1) == 1;
		r.seconds = now() - t0;
		r.cpu = cpu_seconds(&r.sys) - c0;
		r.sys -= s0;
		snprintf(r.path, sizeof(r.path), "%s", OpenSSL_version(OPENSSL_VERSION));
		SSL_free(s);
		SSL_CTX_free(ctx);
	} else {
		struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
		sotls_config_set_sendfile_mode(cfg, m == M_ZC	      ? SOTLS_SENDFILE_ZERO_COPY
						   : m == M_SEND      ? SOTLS_SENDFILE_COPY
						   : m == M_PREAD     ? SOTLS_SENDFILE_PREAD
						   : m == M_KSENDFILE ? SOTLS_SENDFILE_PLAIN
								      : SOTLS_SENDFILE_AUTO);
		sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key, strlen(g_key) + 1);
		sotls_config_set_suites(cfg, SUITE_OPENSSL);
		sotls_config_set_ktls(cfg, is_ktls(m) ? SOTLS_KTLS_AUTO : SOTLS_KTLS_OFF);
		struct sotls_conn *c;
		if (sotls_conn_new(cfg, fd, &c) != 0 || sotls_handshake(c) != 0) {
			fprintf(stderr, "sotls handshake failed\n");
			exit(1);
		}
		double s0, t0 = now(), c0 = cpu_seconds(&s0);
		off_t off = 0;
		if (m == M_NAIVE || m == M_KNAIVE) {
			while ((uint64_t)off < size) {
				ssize_t n = read(file_fd, buf, CHUNK);
				if (n <= 0)
					die("read");
				if (sotls_send(c, buf, (size_t)n) != n)
					die("sotls_send");
				off += n;
			}
			lseek(file_fd, 0, SEEK_SET);
		} else if (m == M_FLOOR) {
			if (pread(file_fd, buf, CHUNK, 0) != CHUNK)
				die("pread");
			for (; (uint64_t)off < size; off += CHUNK)
				if (sotls_send(c, buf, CHUNK) != CHUNK)
					die("sotls_send");
		} else {
			while ((uint64_t)off < size) {
				ssize_t n = sotls_sendfile(c, file_fd, &off, size - (uint64_t)off);
				if (n <= 0) {
					fprintf(stderr, "sotls_sendfile: %s\n", sotls_strerror((int)n));
					exit(1);
				}
			}
		}
		r.ok = sotls_recv(c, &ack, 1) == 1;
		r.seconds = now() - t0;
		r.cpu = cpu_seconds(&r.sys) - c0;
		r.sys -= s0;
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(c, &info);
		snprintf(r.path, sizeof(r.path), "%s",
			 m == M_NAIVE || m == M_KNAIVE || m == M_FLOOR ? info.aead_impl
								       : info.sendfile_path);
		if (is_ktls(m) && info.tx_path != SOTLS_PATH_KERNEL) {
			fprintf(stderr, "--ktls: TX stayed in userspace (%s)\n", info.tx_reason);
			exit(77);
		}
		sotls_conn_free(c);
		sotls_config_free(cfg);
	}
	close(fd);
	int st;
	waitpid(pid, &st, 0);
	r.ok = r.ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	return r;
}

int main(int argc, char **argv)
{
	unsigned size_mib = 256, runs = 5;
	bool json = false, ktls = false;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			size_mib = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--ktls") == 0)
			ktls = true; /* the kernel TX path instead (needs kTLS with ARIA) */
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: sotls-bench-sendfile [--size MiB] [--runs N] [--json] "
					"[--ktls] [--only KEY]\n");
			return 2;
		}
	}
	if (size_mib == 0 || runs == 0)
		return 2;
	if (only != NULL) {
		int m = 0;
		while (m < M_COUNT && strcmp(only, KEYS[m]) != 0)
			m++;
		if (m == M_COUNT || is_ktls((enum method)m) != ktls) {
			fprintf(stderr, "--only: no method %s%s\n", only, ktls ? " with --ktls" : "");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	/* Sender on CPU 0, receiver on CPU 1: unpinned, where the scheduler
	 * happens to put the two moved CPU per GB by up to 30% between runs. */
	g_pin = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (g_pin)
		pin(0);
	if (ephemeral_cert("localhost", g_cert, sizeof(g_cert), g_key, sizeof(g_key)) != 0)
		return 1;

	/* The file, in the page cache. */
	uint64_t size = (uint64_t)size_mib << 20;
	char path[256];
	snprintf(path, sizeof(path), "%s/sotls-bench-sendfile-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	unlink(path);
	uint8_t *blk = malloc(CHUNK);
	for (size_t i = 0; i < CHUNK; i++)
		blk[i] = (uint8_t)(i * 131 + (i >> 9));
	for (uint64_t off = 0; off < size; off += CHUNK)
		if (pwrite(fd, blk, CHUNK, (off_t)off) != CHUNK)
			die("pwrite");
	for (uint64_t off = 0; off < size; off += CHUNK)
		if (pread(fd, blk, CHUNK, (off_t)off) != CHUNK)
			die("pread");
	free(blk);

	struct result best[M_COUNT] = {0};
	int first = ktls ? M_KSPLICE : 0, last = ktls ? M_COUNT : M_USER_COUNT;
	for (unsigned k = 0; k < runs; k++) {
		for (int m = first; m < last; m++) {
			if (only != NULL && strcmp(only, KEYS[m]) != 0)
				continue;
			struct result r = run((enum method)m, fd, size);
			if (!r.ok) {
				fprintf(stderr, "%s: run failed\n", NAMES[m]);
				return 1;
			}
			/* Other load only ever adds time and CPU: the least of
			 * each counts, taken separately. */
			if (!best[m].ok) {
				best[m] = r;
				continue;
			}
			if (r.seconds < best[m].seconds)
				best[m].seconds = r.seconds;
			if (r.cpu < best[m].cpu) {
				best[m].cpu = r.cpu;
				best[m].sys = r.sys;
			}
		}
	}
	close(fd);
	if (only != NULL) {
		for (int m = first; m < last; m++)
			if (best[m].ok)
				printf("%s: %.0f MB/s, %.3f CPU s/GB (%.3f sys), %s\n", KEYS[m],
				       (double)size / 1e6 / best[m].seconds,
				       best[m].cpu / ((double)size / 1e9),
				       best[m].sys / ((double)size / 1e9), best[m].path);
		return 0;
	}

	double gb = (double)size / 1e9;
	FILE *out = json ? stderr : stdout;
	fprintf(out,
		"sotls-bench-sendfile: %u MiB file, TLS 1.2 %s, loopback TCP, best of %u runs\n"
		"%-28s %8s %9s %9s %8s  %s\n",
		size_mib, SUITE_OPENSSL, runs, "method", "MB/s", "CPU s/GB", "(sys)", "vs naive",
		"path");
	int base = ktls ? M_KNAIVE : M_NAIVE;
	for (int m = first; m < last; m++) {
		double mbs = (double)size / 1e6 / best[m].seconds;
		double cpg = best[m].cpu / gb;
		double naive = best[base].cpu / gb;
		fprintf(out, "%-28s %8.0f %9.3f %9.3f %7.2fx  %s\n", NAMES[m], mbs, cpg,
			best[m].sys / gb, cpg / naive, best[m].path);
	}
	if (ktls) {
		fprintf(out, "kTLS: SPLICE CPU/GB %.2fx sendfile(2)'s, throughput %.2fx\n",
			best[M_KSPLICE].cpu / best[M_KSENDFILE].cpu,
			best[M_KSENDFILE].seconds / best[M_KSPLICE].seconds);
		if (json) {
			printf("{\n  \"size_bytes\": %llu,\n  \"methods\": {\n",
			       (unsigned long long)size);
			for (int m = first; m < last; m++)
				printf("    \"%s\": {\"mb_per_s\": %.1f, \"cpu_s_per_gb\": %.4f}%s\n",
				       KEYS[m], (double)size / 1e6 / best[m].seconds,
				       best[m].cpu / gb, m + 1 < last ? "," : "");
			printf("  }\n}\n");
		}
		return 0;
	}
	double zc_cpu = best[M_ZC].cpu / best[M_NAIVE].cpu;
	double auto_cpu = best[M_AUTO].cpu / best[M_NAIVE].cpu;
	double floor_cpu = best[M_FLOOR].cpu / best[M_NAIVE].cpu;
	double zc_vs_ossl = best[M_OPENSSL].seconds / best[M_ZC].seconds;
	fprintf(out,
		"targets: zero-copy CPU/GB %.2fx the naive loop, default path %.2fx (target <= "
		"0.80x): %s; throughput %.1fx OpenSSL's (target >= 5x): %s\n",
		zc_cpu, auto_cpu, zc_cpu <= 0.8 || auto_cpu <= 0.8 ? "met" : "NOT met", zc_vs_ossl,
		zc_vs_ossl >= 5 ? "met" : "NOT met");
	if (floor_cpu > 0.8)
		fprintf(out,
			"         on loopback no file path can reach 0.80x: sending a resident buffer "
			"with no file read at all costs %.2fx, and the kernel copies SEND_ZC pages "
			"when it delivers them locally\n",
			floor_cpu);
	if (json) {
		printf("{\n  \"size_bytes\": %llu,\n  \"suite\": \"%s\",\n  \"runs\": %u,\n  \"methods\": {\n",
		       (unsigned long long)size, SUITE_OPENSSL, runs);
		for (int m = first; m < last; m++)
			printf("    \"%s\": {\"mb_per_s\": %.1f, \"cpu_s_per_gb\": %.4f, \"sys_s_per_gb\": %.4f, \"path\": \"%s\"}%s\n",
			       KEYS[m], (double)size / 1e6 / best[m].seconds, best[m].cpu / gb,
			       best[m].sys / gb,
			       best[m].path, m + 1 < last ? "," : "");
		printf("  },\n  \"zc_cpu_vs_naive\": %.3f,\n  \"default_cpu_vs_naive\": %.3f,\n"
		       "  \"floor_cpu_vs_naive\": %.3f,\n  \"zc_throughput_vs_openssl\": %.2f\n}\n",
		       zc_cpu, auto_cpu, floor_cpu, zc_vs_ossl);
	}
	return 0;
}

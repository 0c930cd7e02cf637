/*
 * sotls-echo-client: connects to an echo server over TLS 1.2.
 *   --bytes N: streams N random bytes while reading the echo (non-blocking,
 *              poll), checks every byte, prints the suite, the paths and the
 *              throughput; exit status 0 only if all N bytes came back right.
 *   otherwise: sends stdin and prints the echo.
 * --sess-out / --sess-in keep the session in a file to resume it in a later
 * run (an abbreviated handshake, RFC 5246 §7.3), by ticket or session ID.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <fcntl.h>

#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "resumed_name.h"
#include "secret_file.h"
#include "server_setup.h"
#include "sotls.h"

/* ": detail" when the connection has one, else "". */
static const char *detail_sep(struct sotls_conn *c)
{
	return sotls_conn_error_detail(c)[0] != '\0' ? ": " : "";
}

/* The byte stream is this random pattern repeated; its odd length keeps the
 * pattern out of step with record and buffer boundaries. */
#define PATTERN_LEN ((size_t)4 * 1024 * 1024 + 4099)
#define SEND_CHUNK ((size_t)256 * 1024)
#define RECV_CHUNK ((size_t)256 * 1024)

static int g_quiet;

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-echo-client - a TLS 1.2 client for an echo server: verified "
		     "throughput, or stdin to stdout");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-echo-client",
		      "[--host HOST] [--port N] (--ca FILE | --insecure) "
		      "[--servername N] [--no-name-check] [--cipher LIST] [--bytes N] "
		      "[--ktls MODE] [--max-frag-len N] [--sess-out FILE] "
		      "[--sess-in FILE] [--no-tickets] [--quiet]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Connects to an echo server (sotls-echo-server, sotls-event-echo-server, "
		     "sotls-engine-echo-server) over TLS 1.2 and prints the suite, where each "
		     "direction's records are made and why, and whether the session was resumed. "
		     "With --bytes it streams N random bytes while reading the echo, checks every "
		     "byte and reports the throughput; without it, it sends stdin and writes the "
		     "echo to stdout (its report then goes to stderr).");
	help_section(f, "OPTIONS");
	help_option(f, "--host HOST", "server host (default 127.0.0.1)");
	help_option(f, "--port N", "server port (default 4433)");
	help_option(f, "--ca FILE", "trusted CA certificates, PEM");
	help_option(f, "--insecure", "do not verify the server certificate");
	help_option(f, "--servername N",
		    "name for SNI and the certificate check (default: --host; an IPv4/IPv6 address "
		    "is checked against the certificate's IP SANs and not sent as SNI)");
	help_option(f, "--no-name-check", "verify the chain against --ca but accept any name in it");
	help_option(f, "--cipher LIST",
		    "allowed suites, ':'-separated: ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM, "
		    "AES-256-GCM or full names (default all, ARIA first)");
	help_option(f, "--bytes N",
		    "send N random bytes (K/M/G suffixes ok), verify the echo, report "
		    "throughput; without it: echo stdin to stdout");
	help_option(f, "--ktls MODE", KTLS_FLAG_HELP " (default auto)");
	help_option(f, "--max-frag-len N",
		    "ask for records of at most N bytes (RFC 6066): 512, 1024, 2048 or 4096");
	help_option(f, "--sess-out FILE",
		    "write the session to FILE (mode 0600: it holds the master secret) after the "
		    "handshake");
	help_option(f, "--sess-in FILE",
		    "offer the session in FILE (from --sess-out): resumed if the server takes it "
		    "and --servername is the one it was made for; else a full handshake");
	help_option(f, "--no-tickets", "take no session ticket (RFC 5077): resume by session ID");
	help_option(f, "--quiet", "print only the result line and errors");
	help_option(f, "--help", "this text");
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: the handshake completed and, with --bytes, every byte came back right, "
		     "closed with close_notify; 1: a failure (connection, handshake, a wrong echo, "
		     "--sess-out with no session to keep); 2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-echo-client --insecure --bytes 1G --cipher ARIA-256-GCM\n"
		      "echo hello | sotls-echo-client --ca ca.pem --servername a.test\n"
		      "sotls-echo-client --ca ca.pem --servername a.test --sess-out s.bin\n"
		      "sotls-echo-client --ca ca.pem --servername a.test --sess-in s.bin");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		fprintf(stderr, "connect %s:%s: %s\n", host, port, strerror(errno));
	freeaddrinfo(res);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int wait_fd(int fd, int rc)
{
	struct pollfd p = {.fd = fd, .events = rc == SOTLS_WANT_READ ? POLLIN : POLLOUT};
	return poll(&p, 1, 30000) == 1 ? 0 : -1;
}

static const char *path_name(enum sotls_path p)
{
	return p == SOTLS_PATH_KERNEL ? "kernel" : p == SOTLS_PATH_USERSPACE ? "userspace" : "none";
}

/* Sends close_notify and waits for the server's. 0 if both happened. */
static int close_cleanly(struct sotls_conn *c, int fd)
{
	int rc;
	while ((rc = sotls_shutdown(c)) == SOTLS_WANT_WRITE || rc == SOTLS_WANT_READ)
		if (wait_fd(fd, rc) != 0)
			return -1;
	if (rc != 0) {
		fprintf(stderr, "close_notify: %s\n", sotls_strerror(rc));
		return -1;
	}
	uint8_t buf[4096];
	for (;;) {
		ssize_t n = sotls_recv(c, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n == SOTLS_WANT_READ || n == SOTLS_WANT_WRITE) {
			if (wait_fd(fd, (int)n) != 0) {
				fprintf(stderr, "no close_notify from the server within 30 s\n");
				return -1;
			}
			continue;
		}
		if (n > 0) {
			fprintf(stderr, "unexpected data after the echo\n");
			return -1;
		}
		fprintf(stderr, "waiting for close_notify: %s: %s\n", sotls_strerror((int)n),
			sotls_conn_error_detail(c));
		return -1;
	}
}

static int run_bytes(struct sotls_conn *c, int fd, unsigned long long total)
{
	uint8_t *pattern = malloc(PATTERN_LEN);
	uint8_t *rbuf = malloc(RECV_CHUNK);
	if (pattern == NULL || rbuf == NULL)
		return 1;
	for (size_t off = 0; off < PATTERN_LEN;) {
		ssize_t n = getrandom(pattern + off, PATTERN_LEN - off, 0);
		if (n > 0)
			off += (size_t)n;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

	unsigned long long sent = 0, got = 0;
	double t0 = now();
	int want_out = 0; /* waiting for POLLOUT before sending again */
	int want_in = 0;
	while (got < total) {
		/* Send while the socket takes it. */
		while (sent < total && !want_out) {
			size_t off = (size_t)(sent % PATTERN_LEN);
			size_t len = PATTERN_LEN - off;
			if (len > SEND_CHUNK)
				len = SEND_CHUNK;
			if (len > total - sent)
				len = (size_t)(total - sent);
			ssize_t n = sotls_send(c, pattern + off, len);
			if (n == SOTLS_WANT_WRITE) {
				want_out = 1;
			} else if (n < 0) {
				fprintf(stderr, "send: %s: %s\n", sotls_strerror((int)n),
					sotls_conn_error_detail(c));
				return 1;
			} else {
				sent += (unsigned long long)n;
				if ((size_t)n < len)
					want_out = 1;
				break; /* give the receive side a turn */
			}
		}
		/* Receive what is there and check it. */
		for (;;) {
			ssize_t n = sotls_recv(c, rbuf, RECV_CHUNK);
			if (n == SOTLS_WANT_READ) {
				want_in = 1;
				break;
			}
			if (n == 0) {
				fprintf(stderr, "server closed after %llu of %llu bytes\n", got, total);
				return 1;
			}
			if (n < 0) {
				fprintf(stderr, "recv: %s: %s\n", sotls_strerror((int)n),
					sotls_conn_error_detail(c));
				return 1;
			}
			want_in = 0;
			for (size_t i = 0; i < (size_t)n;) {
				size_t off = (size_t)((got + i) % PATTERN_LEN);
				size_t len = PATTERN_LEN - off;
				if (len > (size_t)n - i)
					len = (size_t)n - i;
				if (memcmp(rbuf + i, pattern + off, len) != 0) {
					fprintf(stderr, "echo mismatch near byte %llu\n", got + i);
					return 1;
				}
				i += len;
			}
			/* got may run ahead of sent: sotls_send counts bytes only
			 * once all of their records are written, and the socket
			 * may already have taken part of them. */
			got += (unsigned long long)n;
			if (got > total) {
				fprintf(stderr, "received more than was sent\n");
				return 1;
			}
			break;
		}
		if (got >= total)
			break;
		if ((want_out || sent >= total) && want_in) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			if (want_out && sent < total)
				p.events |= POLLOUT;
			if (poll(&p, 1, 30000) <= 0) {
				fprintf(stderr, "stalled for 30 s after %llu bytes\n", got);
				return 1;
			}
			if (p.revents & (POLLOUT | POLLERR | POLLHUP))
				want_out = 0;
			if (p.revents & (POLLIN | POLLERR | POLLHUP))
				want_in = 0;
		}
	}
	double secs = now() - t0;
	int closed = close_cleanly(c, fd);

	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	double gbps = secs > 0 ? (double)total * 8 / secs / 1e9 : 0;
	if (!g_quiet)
		printf("suite: %s (%s)\nTX path: %s (%s)\nRX path: %s (%s)\nAEAD: %s\n"
		       "max_fragment_length: %u\nresumed: %s\n",
		       info.suite, info.version, path_name(info.tx_path), info.tx_reason,
		       path_name(info.rx_path), info.rx_reason, info.aead_impl,
		       (unsigned)info.max_fragment_len, resumed_name(info.resumed));
	printf("%llu bytes echoed and verified in %.3f s: %.2f Gbit/s each way%s\n", total, secs,
	       gbps, closed == 0 ? ", closed with close_notify both ways" : "");
	free(pattern);
	free(rbuf);
	return closed == 0 ? 0 : 1;
}

static int run_stdin(struct sotls_conn *c, int fd)
{
	uint8_t buf[16384];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
		ssize_t s = sotls_send(c, buf, n);
		if (s != (ssize_t)n) {
			fprintf(stderr, "send: %s\n", sotls_strerror((int)s));
			return 1;
		}
		for (size_t got = 0; got < n;) {
			ssize_t r = sotls_recv(c, buf, n - got);
			if (r <= 0) {
				fprintf(stderr, "recv: %s\n", r == 0 ? "server closed" : sotls_strerror((int)r));
				return 1;
			}
			fwrite(buf, 1, (size_t)r, stdout);
			got += (size_t)r;
		}
	}
	fflush(stdout);
	return close_cleanly(c, fd) == 0 ? 0 : 1;
}

/* --sess-in: offers the session in path. A file that is missing or not a
 * session sotls can offer only costs a full handshake (said on stderr). */
static void offer_session(struct sotls_conn *c, const char *path)
{
	size_t len;
	void *data = secret_file_read(AT_FDCWD, path, &len);
	if (data == NULL) {
		fprintf(stderr, "--sess-in %s: %s: full handshake\n", path, strerror(errno));
		return;
	}
	int rc = sotls_conn_set_session(c, data, len);
	secret_file_free(data, len);
	if (rc != 0)
		fprintf(stderr, "--sess-in %s: %s: full handshake\n", path, sotls_strerror(rc));
}

/* --sess-out: the handshake's session into path. Returns 0, or -1 (said on
 * stderr). */
static int save_session(struct sotls_conn *c, const char *path)
{
	size_t len = 0;
	uint8_t *buf = NULL;
	int rc = sotls_conn_get_session(c, NULL, 0, &len);
	if (rc == SOTLS_ERR_BUFFER_TOO_SMALL) {
		buf = malloc(len);
		rc = buf != NULL ? sotls_conn_get_session(c, buf, len, &len) : SOTLS_ERR_OUT_OF_MEMORY;
	}
	if (rc == 0 && buf != NULL) {
		struct iovec iov = {.iov_base = buf, .iov_len = len};
		if (secret_file_write(AT_FDCWD, path, &iov, 1) != 0) {
			fprintf(stderr, "--sess-out %s: %s\n", path, strerror(errno));
			rc = -1;
		}
	} else {
		fprintf(stderr, "--sess-out %s: %s\n", path, sotls_strerror(rc));
		rc = -1;
	}
	secret_file_free(buf, len);
	return rc;
}

/* --bytes: a whole number, 1 to 2^50, with an optional K, M or G. */
static int parse_size(const char *s, unsigned long long *out)
{
	char digits[24];
	size_t n = strlen(s);
	unsigned shift = 0;
	switch (n > 0 ? s[n - 1] : '\0') {
	case 'k': case 'K': shift = 10; n--; break;
	case 'm': case 'M': shift = 20; n--; break;
	case 'g': case 'G': shift = 30; n--; break;
	}
	long long v;
	if (n == 0 || n >= sizeof(digits))
		return -1;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (!parse_number(digits, 1, (1LL << 50) >> shift, &v))
		return -1;
	*out = (unsigned long long)v << shift;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'H'},	  {"port", required_argument, NULL, 'p'},
		{"ca", required_argument, NULL, 'a'},	  {"insecure", no_argument, NULL, 'i'},
		{"no-name-check", no_argument, NULL, 'N'},
		{"servername", required_argument, NULL, 'n'},
		{"cipher", required_argument, NULL, 's'}, {"bytes", required_argument, NULL, 'b'},
		{"ktls", required_argument, NULL, 't'},	  {"quiet", no_argument, NULL, 'q'},
		{"max-frag-len", required_argument, NULL, 'm'},
		{"sess-out", required_argument, NULL, 'O'}, {"sess-in", required_argument, NULL, 'I'},
		{"no-tickets", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	const char *host = "127.0.0.1", *port = "4433", *ca = NULL, *sni = NULL, *cipher = NULL;
	const char *sess_out = NULL, *sess_in = NULL;
	int insecure = 0, no_name_check = 0, opt, have_bytes = 0, no_tickets = 0;
	unsigned max_frag = 0;
	unsigned long long bytes = 0;
	long long num;
	enum sotls_ktls_policy ktls = SOTLS_KTLS_AUTO;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'H': host = optarg; break;
		case 'p':
			/* A number, not a service name getaddrinfo would look up. */
			if (!parse_number_flag("port", optarg, 1, 65535, &num))
				return 2;
			port = optarg;
			break;
		case 'a': ca = optarg; break;
		case 'i': insecure = 1; break;
		case 'N': no_name_check = 1; break;
		case 'n': sni = optarg; break;
		case 's': cipher = optarg; break;
		case 'b':
			if (parse_size(optarg, &bytes) != 0) {
				fprintf(stderr, "--bytes %s: a whole number from 1, K, M or G after it\n",
					optarg);
				return 2;
			}
			have_bytes = 1;
			break;
		case 't':
			if (parse_ktls_policy(optarg, &ktls) != 0) {
				fputs(KTLS_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'm':
			/* sotls says which lengths RFC 6066 has. */
			if (!parse_number_flag("max-frag-len", optarg, 0, 65535, &num))
				return 2;
			max_frag = (unsigned)num;
			break;
		case 'O': sess_out = optarg; break;
		case 'I': sess_in = optarg; break;
		case 'T': no_tickets = 1; break;
		case 'q': g_quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (ca == NULL && !insecure) {
		fprintf(stderr, "give --ca FILE to verify the server, or --insecure\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	int rc = 0;
	if (cfg == NULL || keylog_from_env(cfg) != 0)
		return 1;
	if (insecure || no_name_check)
		rc = sotls_config_set_verify(cfg, insecure ? SOTLS_VERIFY_NONE : SOTLS_VERIFY_CHAIN_ONLY);
	if (rc == 0 && ca != NULL && (rc = sotls_config_set_ca_file(cfg, ca)) != 0)
		fprintf(stderr, "--ca %s: %s\n", ca, sotls_strerror(rc));
	if (sni == NULL)
		sni = host;
	if (rc == 0)
		rc = sotls_config_set_server_name(cfg, sni);
	if (rc == 0 && cipher != NULL && (rc = sotls_config_set_suites(cfg, cipher)) != 0)
		fprintf(stderr, "--cipher %s: %s\n", cipher, sotls_strerror(rc));
	if (rc == 0)
		rc = sotls_config_set_ktls(cfg, ktls);
	if (rc == 0 && (rc = sotls_config_set_max_fragment_length(cfg, max_frag)) != 0)
		fprintf(stderr, "--max-frag-len: 512, 1024, 2048 or 4096\n");
	if (rc == 0 && no_tickets && (rc = sotls_config_set_session_tickets(cfg, 0, 0)) != 0)
		fprintf(stderr, "--no-tickets: %s\n", sotls_strerror(rc));
	if (rc != 0)
		return 2;

	int fd = connect_to(host, port);
	if (fd < 0)
		return 1;
	struct sotls_conn *c;
	if (sotls_conn_new(cfg, fd, &c) != 0)
		return 1;
	sotls_config_free(cfg); /* the connection keeps its reference */
	if (sess_in != NULL)
		offer_session(c, sess_in);
	rc = sotls_handshake(c);
	if (rc != 0) {
		fprintf(stderr, "handshake failed: %s%s%s\n", sotls_strerror(rc), detail_sep(c),
			sotls_conn_error_detail(c));
		sotls_conn_free(c);
		close(fd);
		return 1;
	}
	int saved = sess_out != NULL ? save_session(c, sess_out) : 0;
	if (!have_bytes && !g_quiet) { /* stdout is the echo's */
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(c, &info);
		fprintf(stderr, "resumed: %s\n", resumed_name(info.resumed));
	}
	int status = have_bytes ? run_bytes(c, fd, bytes) : run_stdin(c, fd);
	if (status == 0 && saved != 0)
		status = 1;
	sotls_conn_free(c);
	close(fd);
	return status;
}

/*
 * Resumed connections go to the kernel (kTLS) like full ones. For each of
 * ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM and AES-256-GCM, and for session-ID
 * and ticket resumption: a sotls server process and a sotls client make a
 * full handshake over loopback TCP, the client exports its session, then
 * resumes it in three more connections. In the abbreviated handshake (RFC
 * 5246 §7.3, RFC 5077 §3.1) the server's ChangeCipherSpec and Finished come
 * first and the client's Finished ends it: the server sends right behind
 * reading it, the client right behind sending it, at once (1 byte, 16 KiB +
 * 1, 1 MiB each way), so the records are in flight, or queued in the
 * socket, while each side hands its keys and sequence numbers to the kernel;
 * once the client's Finished and its first record share one TCP segment
 * (TCP_CORK), so the server's handshake reader finds data right behind the
 * Finished it reads.
 * Each side checks sotls_info.resumed, the paths, the data byte for byte,
 * and close_notify both ways. In the ticket cases the first resumption
 * renews the ticket (the server's NewSessionTicket in the abbreviated
 * handshake) and the later ones must offer the renewed one.
 *
 *   resume_ktls_test --expect kernel  aria_generic.ko loaded: all four suites
 *                                     in the kernel both ways on both sides
 *   resume_ktls_test --expect stock   kTLS without ARIA: resumed ARIA stays in
 *                                     userspace with the reason, AES goes to
 *                                     the kernel
 *   resume_ktls_test --expect host    no kTLS (the build host): userspace
 *   --openssl PATH                    also openssl s_client -sess_out, then
 *                                     -sess_in, against the sotls server
 *                                     (tickets and session IDs)
 *
 * Prints one line per check and "N passed, M failed"; exits 0 only if all
 * passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kconn.h"
#include "resume_conn.h"
#include "sotls.h"
#include "test_certs.h"
#include "vm_check.h"

#define SERVER_NAME "server.test"
/* Long enough for the records of the peer's first send to be queued in the
 * socket before this side installs TLS_RX. */
#define RX_DELAY_US 100000

/* A server whose client gave up early gets this long to print its lines. */
#define GRACE_S 2

static struct test_cert g_ca, g_server;

static const struct test_san SERVER_SANS[] = {{SOTLS_SAN_DNS, SERVER_NAME, 11}};

/* What the VM's kernel takes. */
static enum { EXPECT_KERNEL, EXPECT_STOCK, EXPECT_HOST } g_expect;

/* One connection of a case: what each side sends right behind its
 * handshake, and how the records meet the peer. */
struct conn_plan {
	size_t s_bytes, c_bytes;
	enum {
		TIMING_FREE,	 /* whatever the scheduler gives */
		TIMING_RX_DELAY, /* both sides delay TLS_RX: the peer's records are queued */
		TIMING_CORK,	 /* the client's Finished and first records in one segment */
	} timing;
};

/* The full handshake, then the resumptions. */
static const struct conn_plan PLAN[] = {
	{1, 1, TIMING_FREE},
	{1, 1, TIMING_RX_DELAY},
	{16385, 16385, TIMING_CORK},
	{1 << 20, 1 << 20, TIMING_RX_DELAY},
	{1, 1, TIMING_FREE},
};
#define NCONN (sizeof(PLAN) / sizeof(PLAN[0]))

/* The openssl peer: its stdin goes to the server, the server's data to
 * its stdout. */
static const struct conn_plan OPENSSL_PLAN[] = {{16385, 4097, TIMING_FREE},
						{16385, 4097, TIMING_RX_DELAY}};
#define NOPENSSL (sizeof(OPENSSL_PLAN) / sizeof(OPENSSL_PLAN[0]))

/* The TLS_RX install delay of both sides of a connection. */
static unsigned rx_delay_of(const struct conn_plan *p)
{
	return p->timing == TIMING_RX_DELAY ? RX_DELAY_US : 0;
}

/* Whether suite goes to the kernel here; if not, the reason sotls gives. */
static int suite_in_kernel(const char *suite, const char **reason)
{
	*reason = g_expect == EXPECT_HOST ? "kernel has no TLS ULP (CONFIG_TLS)"
					  : "kernel cannot do gcm(aria)";
	return g_expect == EXPECT_KERNEL ||
	       (g_expect == EXPECT_STOCK && strncmp(suite, "AES", 3) == 0);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		perror("O_NONBLOCK");
		exit(2);
	}
}

/* A listening loopback socket; its address in *addr. Exits 2 if the
 * machine cannot make one. */
static int listen_loopback(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)addr, sizeof(*addr)) != 0 || listen(l, 4) != 0 ||
	    getsockname(l, (struct sockaddr *)addr, &len) != 0) {
		perror("listen on loopback");
		exit(2);
	}
	return l;
}

/* Waits up to seconds for pid; kills it after that. Returns 1 if it exited 0. */
static int child_passed(pid_t pid, int seconds)
{
	int st = 0;
	for (int i = 0; i < seconds * 10; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (w < 0)
			return 0;
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	printf("  process %d still running after %d s: killed\n", (int)pid, seconds);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 0;
}

/* The seed of the data of connection i of a case (seed0) in one direction:
 * each connection and direction its own, so bytes of another one never pass. */
static unsigned data_seed(unsigned seed0, size_t i, int from_server)
{
	return seed0 + 2 * (unsigned)i + (from_server ? 1 : 0);
}

/* "LABEL: full handshake", "LABEL: resumed #i (...)" for connection i of plan. */
static void conn_name(char *buf, size_t size, const char *label, size_t i,
		      const struct conn_plan *plan)
{
	if (i == 0)
		snprintf(buf, size, "%s: full handshake", label);
	else if (plan->s_bytes == plan->c_bytes)
		snprintf(buf, size, "%s: resumed #%zu (%zu B each way)", label, i, plan->s_bytes);
	else
		snprintf(buf, size, "%s: resumed #%zu (%zu B from the server, %zu B to it)", label,
			 i, plan->s_bytes, plan->c_bytes);
}

/*
 * The server's ticket keys (sotls_config_set_ticket_key_callback), named
 * "AAAA..." and "BBBB...": A issues in the full handshake, B from the first
 * resumption on. So the first resumption opens a ticket whose key no longer
 * issues and renews it (RFC 5077 §3.3: a NewSessionTicket in the
 * abbreviated handshake, before ChangeCipherSpec), and every later one must
 * offer that renewed ticket, which only the client's storing of it gives.
 */
struct ticket_keys {
	uint8_t secret[2][32];
	char issuing; /* 'A' or 'B' */
	char opened;  /* the key asked to open a ticket in this handshake, or 0 */
};

static int ticket_key_cb(void *arg, const uint8_t *name, struct sotls_ticket_key *key)
{
	struct ticket_keys *t = arg;
	char which = name == NULL ? t->issuing : (char)name[0];
	if (which != 'A' && which != 'B')
		return 0;
	for (size_t i = 0; name != NULL && i < sizeof(key->name); i++)
		if (name[i] != which)
			return 0;
	/* The core also asks for the issuing key (name NULL) to see whether
	 * an opened ticket needs renewal: only named requests are openings. */
	if (name != NULL)
		t->opened = which;
	memset(key->name, which, sizeof(key->name));
	memcpy(key->secret, t->secret[which - 'A'], sizeof(key->secret));
	key->intro = (int64_t)time(NULL) - 60;
	key->expiry = 0;
	return 1;
}

/* Ticket cases: the key connection i must have opened. */
static char ticket_key_opened(size_t i)
{
	return i == 0 ? 0 : i == 1 ? 'A' : 'B';
}

/*
 * The server process of a case: one configuration (its session cache and
 * ticket keys) for n connections accepted in turn on lfd; connection i
 * expects plans[i] and, after the first, resumption of kind `kind`. Exits
 * 0 if every check passed.
 */
static void serve(int lfd, const char *label, const char *suite, enum sotls_resumption kind,
		  const struct conn_plan *plans, size_t n, unsigned seed0)
{
	alarm(300);
	check_passed = check_failed = 0;
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	const struct test_cert *own = &g_server;
	int rc = cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY
			     : sotls_config_set_cert_mem(cfg, own->pem, strlen(own->pem) + 1,
							 own->key_pem, strlen(own->key_pem) + 1);
	if (rc == 0)
		rc = sotls_config_set_suites(cfg, suite);
	struct ticket_keys keys = {.issuing = 'A'};
	if (rc == 0 && kind == SOTLS_RESUMED_TICKET) {
		rc = getrandom(keys.secret, sizeof(keys.secret), 0) == sizeof(keys.secret)
			     ? sotls_config_set_ticket_key_callback(cfg, ticket_key_cb, &keys)
			     : SOTLS_ERR_SYSCALL;
	}
	check(rc == 0, "%s server: configuration: %s", label, sotls_strerror(rc));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		/* A client that gave up early ends this process soon. */
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		int ready = poll(&p, 1, 30000);
		int fd = ready == 1 ? accept(lfd, NULL, NULL) : -1;
		if (fd < 0) {
			check(0, "%s server: connection %zu within 30 s: %s", label, i,
			      ready == 0 ? "none came" : strerror(errno));
			break;
		}
		set_nonblock(fd);
		sotls_kconn_set_test_rx_delay_us(rx_delay_of(&plans[i]));
		char name[160];
		conn_name(name, sizeof(name), label, i, &plans[i]);
		struct resume_side s = {.name = name, .server = 1, .suite = suite};
		s.resumed = i == 0 ? SOTLS_RESUMED_NONE : kind;
		s.kernel = suite_in_kernel(suite, &s.reason);
		s.tx = plans[i].s_bytes, s.rx = plans[i].c_bytes;
		s.tx_seed = data_seed(seed0, i, 1), s.rx_seed = data_seed(seed0, i, 0);
		struct sotls_conn *c = NULL;
		rc = sotls_conn_new(cfg, fd, &c);
		keys.issuing = i == 0 ? 'A' : 'B';
		keys.opened = 0;
		if (rc == 0)
			resume_converse(c, fd, &s, NULL, NULL);
		else
			check(0, "%s: sotls_conn_new: %s", name, sotls_strerror(rc));
		if (kind == SOTLS_RESUMED_TICKET)
			check(keys.opened == ticket_key_opened(i),
			      "%s server: ticket key opened: %c (want %c%s)", name,
			      keys.opened ? keys.opened : '-',
			      ticket_key_opened(i) ? ticket_key_opened(i) : '-',
			      i == 1   ? ", then renewed under B"
			      : i > 1 ? ": the ticket renewed in resumed #1"
				      : "");
		sotls_conn_free(c);
		close(fd);
	}
	sotls_config_free(cfg);
	fflush(stdout);
	_exit(check_failed == 0 ? 0 : 1);
}

/* Starts the server process of a case on a fresh listening socket. */
static pid_t start_server(struct sockaddr_in *addr, const char *label, const char *suite,
			  enum sotls_resumption kind, const struct conn_plan *plans, size_t n,
			  unsigned seed0)
{
	int lfd = listen_loopback(addr);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0)
		serve(lfd, label, suite, kind, plans, n, seed0);
	close(lfd);
	return pid;
}

static struct sotls_config *client_config(const char *suite, enum sotls_resumption kind)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	int rc = cfg == NULL ? SOTLS_ERR_OUT_OF_MEMORY
			     : sotls_config_set_ca_mem(cfg, g_ca.pem, strlen(g_ca.pem) + 1);
	if (rc == 0)
		rc = sotls_config_set_server_name(cfg, SERVER_NAME);
	if (rc == 0)
		rc = sotls_config_set_suites(cfg, suite);
	/* A client that takes no tickets is resumed from the server's cache. */
	if (rc == 0 && kind == SOTLS_RESUMED_SESSION_ID)
		rc = sotls_config_set_session_tickets(cfg, 0, 0);
	check(rc == 0, "%s client configuration: %s", suite, sotls_strerror(rc));
	if (rc != 0) {
		sotls_config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* One case against a sotls client: the full handshake, then NCONN - 1
 * resumptions, each of the session the connection before left (a ticket
 * renewed in an abbreviated handshake replaces the old one). */
static void run_sotls_case(const char *suite, enum sotls_resumption kind)
{
	char label[64];
	snprintf(label, sizeof(label), "%s %s", suite,
		 kind == SOTLS_RESUMED_TICKET ? "ticket" : "session ID");
	struct sockaddr_in addr;
	pid_t server = start_server(&addr, label, suite, kind, PLAN, NCONN, 10);
	struct sotls_config *cfg = client_config(suite, kind);
	uint8_t *session = NULL;
	size_t session_len = 0, i;
	for (i = 0; cfg != NULL && i < NCONN; i++) {
		char name[160];
		conn_name(name, sizeof(name), label, i, &PLAN[i]);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
			check(0, "%s: connect: %s", name, strerror(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
		set_nonblock(fd);
		sotls_kconn_set_test_rx_delay_us(rx_delay_of(&PLAN[i]));
		struct resume_side s = {.name = name, .suite = suite, .peer_verified = 1};
		s.resumed = i == 0 ? SOTLS_RESUMED_NONE : kind;
		s.kernel = suite_in_kernel(suite, &s.reason);
		s.tx = PLAN[i].c_bytes, s.rx = PLAN[i].s_bytes;
		s.cork = PLAN[i].timing == TIMING_CORK;
		s.tx_seed = data_seed(10, i, 0), s.rx_seed = data_seed(10, i, 1);
		struct sotls_conn *c = NULL;
		int rc = sotls_conn_new(cfg, fd, &c);
		if (rc == 0 && i > 0)
			rc = sotls_conn_set_session(c, session, session_len);
		check(rc == 0, "%s client: connection%s: %s", name, i > 0 ? " and session" : "",
		      sotls_strerror(rc));
		uint8_t *next = NULL;
		if (rc == 0)
			resume_converse(c, fd, &s, &next, &session_len);
		sotls_conn_free(c);
		close(fd);
		free(session);
		if ((session = next) == NULL)
			break;
	}
	free(session);
	sotls_config_free(cfg);
	check(child_passed(server, i == NCONN ? 120 : GRACE_S), "%s: server process passed", label);
}

/* The openssl cipher name of a sotls suite name, with the ECDSA key. */
static const char *openssl_cipher(const char *suite)
{
	static const char *const map[][2] = {
	    {"ARIA-128-GCM", "ECDHE-ECDSA-ARIA128-GCM-SHA256"},
	    {"ARIA-256-GCM", "ECDHE-ECDSA-ARIA256-GCM-SHA384"},
	    {"AES-128-GCM", "ECDHE-ECDSA-AES128-GCM-SHA256"},
	    {"AES-256-GCM", "ECDHE-ECDSA-AES256-GCM-SHA384"},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], suite) == 0)
			return map[i][1];
	return NULL;
}

/* Writes the text s (if not NULL), then n bytes of the pattern with seed,
 * to path. */
static int write_file(const char *path, const char *s, size_t n, unsigned seed)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	if (s != NULL)
		fputs(s, f);
	for (size_t i = 0; i < n; i++)
		fputc(resume_pattern(i, seed), f);
	return fclose(f) == 0 ? 0 : -1;
}

/* The whole file, NUL-terminated and malloc()ed; *len its length. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	*len = 0;
	if (f == NULL)
		return NULL;
	size_t cap = 0;
	int ch;
	while ((ch = fgetc(f)) != EOF) {
		if (*len + 1 >= cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (nb == NULL)
				break;
			buf = nb;
		}
		buf[(*len)++] = (char)ch;
	}
	fclose(f);
	if (buf != NULL)
		buf[*len] = 0;
	return buf;
}

/* Removes the files run_openssl_case leaves in dir, and dir. */
static void remove_dir(const char *dir)
{
	static const char *const names[] = {"ca.pem", "session.pem", "in", "out"};
	char path[300];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		printf("  could not remove %s: %s\n", dir, strerror(errno));
}

/* Runs openssl s_client once (argv), stdin from in, stdout and stderr to
 * out. Returns 1 if it exited 0. */
static int run_s_client(char *const argv[], const char *in, const char *out)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid > 0 && child_passed(pid, 60);
}

/*
 * openssl s_client against the sotls server: a full handshake that saves
 * its session (-sess_out), then a resumption of it (-sess_in). The server
 * sends right behind its handshake; s_client sends its stdin. Both
 * connections end with close_notify both ways (-ign_eof: s_client waits
 * for the server's).
 */
static void run_openssl_case(const char *openssl, const char *dir, const char *suite,
			     enum sotls_resumption kind)
{
	char label[64], port[16], ca[300], sess[300], in[300], out[300];
	snprintf(label, sizeof(label), "openssl s_client, %s %s", suite,
		 kind == SOTLS_RESUMED_TICKET ? "ticket" : "session ID");
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(sess, sizeof(sess), "%s/session.pem", dir);
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	unlink(sess);
	if (write_file(ca, g_ca.pem, 0, 0) != 0) {
		check(0, "%s: %s: %s", label, ca, strerror(errno));
		return;
	}
	struct sockaddr_in addr;
	pid_t server = start_server(&addr, label, suite, kind, OPENSSL_PLAN, NOPENSSL, 20);
	snprintf(port, sizeof(port), "127.0.0.1:%d", ntohs(addr.sin_port));
	size_t i;
	for (i = 0; i < NOPENSSL; i++) {
		char name[160];
		conn_name(name, sizeof(name), label, i, &OPENSSL_PLAN[i]);
		/* What the server expects from this connection. */
		if (write_file(in, NULL, OPENSSL_PLAN[i].c_bytes, data_seed(20, i, 0)) != 0) {
			check(0, "%s: %s: %s", name, in, strerror(errno));
			break;
		}
		char *argv[24];
		int n = 0;
		argv[n++] = (char *)openssl;
		argv[n++] = "s_client";
		argv[n++] = "-connect", argv[n++] = port;
		argv[n++] = "-servername", argv[n++] = SERVER_NAME;
		argv[n++] = "-verify_hostname", argv[n++] = SERVER_NAME;
		argv[n++] = "-CAfile", argv[n++] = ca;
		argv[n++] = "-verify_return_error";
		argv[n++] = "-tls1_2";
		argv[n++] = "-cipher", argv[n++] = (char *)openssl_cipher(suite);
		argv[n++] = "-ign_eof";
		argv[n++] = "-nocommands";
		/* s_client writes -sess_out after full handshakes only. */
		argv[n++] = i == 0 ? "-sess_out" : "-sess_in", argv[n++] = sess;
		if (kind == SOTLS_RESUMED_SESSION_ID)
			argv[n++] = "-no_ticket";
		argv[n] = NULL;
		int ok = run_s_client(argv, in, out);
		size_t len;
		char *text = read_file(out, &len);
		check(ok, "%s: s_client exited 0", name);
		const char *want = i == 0 ? "New, TLSv1.2, Cipher is "
					  : "Reused, TLSv1.2, Cipher is ";
		check(text != NULL && strstr(text, want) != NULL, "%s: s_client says \"%s\"", name,
		      want);
		/* The ticket s_client holds (its session dump): the key name
		 * leads it, A's from the full handshake, B's from the renewal
		 * in the abbreviated one. */
		if (kind == SOTLS_RESUMED_TICKET) {
			char key = i == 0 ? 'A' : 'B', dump[64] = "0000 -";
			/* "0000 - 41 41 41 41 41 41 41 41-41 41 ..." */
			for (size_t at = 6, b = 0; b < 16; b++, at += 3)
				snprintf(dump + at, sizeof(dump) - at, "%c%x", b == 8 ? '-' : ' ',
					 (unsigned)key);
			check(text != NULL && strstr(text, dump) != NULL,
			      "%s: s_client holds a ticket under key %c", name, key);
		}
		/* The server's data, in order, between s_client's own lines. */
		char *data = malloc(OPENSSL_PLAN[i].s_bytes);
		for (size_t j = 0; data != NULL && j < OPENSSL_PLAN[i].s_bytes; j++)
			data[j] = (char)resume_pattern(j, data_seed(20, i, 1));
		check(text != NULL && data != NULL &&
			      memmem(text, len, data, OPENSSL_PLAN[i].s_bytes) != NULL,
		      "%s: s_client printed the server's %zu bytes", name, OPENSSL_PLAN[i].s_bytes);
		if (!ok || text == NULL || strstr(text, want) == NULL)
			printf("  s_client output:\n%.4000s\n", text ? text : "(none)");
		free(data);
		free(text);
		if (!ok)
			break;
	}
	check(child_passed(server, i == NOPENSSL ? 60 : GRACE_S), "%s: server process passed",
	      label);
}

int main(int argc, char **argv)
{
	const char *expect = NULL, *openssl = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--expect") == 0)
			expect = argv[i + 1];
		else if (strcmp(argv[i], "--openssl") == 0)
			openssl = argv[i + 1];
	}
	if (expect != NULL && strcmp(expect, "kernel") == 0)
		g_expect = EXPECT_KERNEL;
	else if (expect != NULL && strcmp(expect, "stock") == 0)
		g_expect = EXPECT_STOCK;
	else if (expect != NULL && strcmp(expect, "host") == 0)
		g_expect = EXPECT_HOST;
	else {
		fprintf(stderr, "usage: %s --expect kernel|stock|host [--openssl PATH]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (test_cert_make(&g_ca, "CN=sotls test CA,O=sotls test", NULL, true, NULL, 0) != 0 ||
	    test_cert_make(&g_server, "CN=" SERVER_NAME ",O=sotls test", &g_ca, false, SERVER_SANS,
			   1) != 0)
		return 1;
	static const char *const suites[] = {"ARIA-128-GCM", "ARIA-256-GCM", "AES-128-GCM",
					     "AES-256-GCM"};
	static const enum sotls_resumption kinds[] = {SOTLS_RESUMED_SESSION_ID,
						      SOTLS_RESUMED_TICKET};
	printf("resume_ktls_test: expect %s\n", expect);
	for (size_t i = 0; i < 4; i++)
		for (size_t k = 0; k < 2; k++)
			run_sotls_case(suites[i], kinds[k]);
	if (openssl != NULL) {
		const char *tmp = getenv("TMPDIR");
		char dir[200];
		snprintf(dir, sizeof(dir), "%s/resume_ktls.XXXXXX", tmp ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL) {
			check(0, "mkdtemp %s: %s", dir, strerror(errno));
		} else {
			for (size_t i = 0; i < 4; i++)
				for (size_t k = 0; k < 2; k++)
					run_openssl_case(openssl, dir, suites[i], kinds[k]);
			remove_dir(dir);
		}
	}
	printf("resume_ktls_test: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

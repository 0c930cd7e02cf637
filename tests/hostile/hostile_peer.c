/*
 * An authenticated hostile peer: it completes a real handshake with the
 * server under test, keeps the traffic keys (the internal handshake API hands
 * them over, as it does to lib/conn.c), and then sends records sotls's own
 * record layer never would (record_forge.h): floods of empty records and of
 * warning alerts, alerts of odd levels, handshake messages after the
 * handshake, records of 2^14 and 2^14 + 1 bytes, a forged sequence number.
 *
 * Every case checks, decrypting with the held keys, exactly what the server
 * sent back (its alerts in order, the echo, its close_notify, EOF), and that
 * the server goes on serving others: an honest client (the public API) does
 * a handshake and an echo while the attack is in progress and after it.
 * The expected answers are the ones in notes/shared-interface.md (caps of 32
 * empty records, 4 warning alerts and 8 refused renegotiations; strict
 * alert levels; RFC 5246 §6.2.1, §7.2, §7.4.1).
 *
 *   hostile_peer (SERVER | --openssl) [--ktls MODE] [--cipher SUITE] [CASE...]
 *     SERVER     the sotls-echo-server binary; it is started here with --port 0
 *                and the given --ktls (default off) and --cipher (default
 *                ARIA-128-GCM), and stopped at the end
 *     --openssl  `openssl s_server -rev` instead, as a reference: the same
 *                attacks, OpenSSL's answers (where they differ from sotls's,
 *                the case says so); it serves one client at a time, so the
 *                honest client comes only after each attack
 *   Prints one line per case and "N of M hostile peer cases passed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ephemeral_cert.h"
#include "handshake.h"
#include "record_forge.h"
#include "sotls.h"
#include "util.h"

#define IO_TIMEOUT_MS 5000
#define MAX_ALERTS 16

enum {
	CT_CCS = 20,
	CT_ALERT = 21,
	CT_HANDSHAKE = 22,
	CT_DATA = 23,
};

static struct sotls_config *g_cfg;
static uint16_t g_port;
/* The server under test: the sotls echo server on either path, or OpenSSL's
 * s_server -rev, which sends each line back reversed. */
static enum { SRV_SOTLS, SRV_SOTLS_KERNEL, SRV_OPENSSL } g_server;

/* What the server echoes for n bytes ending in a newline. */
static void echo_of(const uint8_t *in, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = g_server == SRV_OPENSSL && i + 1 < n ? in[n - 2 - i] : in[i];
}

static void set_timeouts(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int connect_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(g_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	set_timeouts(fd, IO_TIMEOUT_MS);
	return fd;
}

/* ---- the honest client ------------------------------------------------------ */

/* A handshake and an echo through the public API; true if both worked. */
static bool honest_client(char *why, size_t why_len)
{
	static const uint8_t msg[] = "an honest client's message\n";
	uint8_t back[sizeof(msg) - 1], want[sizeof(msg) - 1];
	struct sotls_conn *c = NULL;
	int fd = connect_server();
	bool ok = false;
	if (fd < 0 || sotls_conn_new(g_cfg, fd, &c) != 0) {
		snprintf(why, why_len, "no connection");
		goto out;
	}
	int rc = sotls_handshake(c);
	if (rc == 0 && sotls_send(c, msg, sizeof(back)) != (ssize_t)sizeof(back))
		rc = SOTLS_ERR_INTERNAL;
	size_t got = 0;
	while (rc == 0 && got < sizeof(back)) {
		ssize_t n = sotls_recv(c, back + got, sizeof(back) - got);
		if (n <= 0)
			rc = n == 0 ? SOTLS_ERR_CLOSED : (int)n;
		else
			got += (size_t)n;
	}
	echo_of(msg, sizeof(back), want);
	if (rc == 0 && memcmp(back, want, sizeof(back)) != 0)
		rc = SOTLS_ERR_INTERNAL;
	if (rc == 0)
		rc = sotls_shutdown(c);
	ok = rc == 0;
	if (!ok)
		snprintf(why, why_len, "%s (%s)", sotls_strerror(rc), sotls_conn_error_detail(c));
out:
	sotls_conn_free(c);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* ---- the hostile peer's connection ----------------------------------------- */

struct peer {
	int fd;
	struct forge_keys tx, rx;
	uint64_t tx_seq, rx_seq;
	char detail[256];
};

/* Connects and runs the handshake with the internal API, keeping the keys. */
static int peer_open(struct peer *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = connect_server();
	if (p->fd < 0)
		return SOTLS_ERR_SYSCALL;
	struct sotls_hs *hs = NULL;
	struct sotls_hs_result res;
	int sys_errno = 0;
	struct sotls_wire w = {.fd = p->fd};
	int rc = sotls_hs_new(&hs, g_cfg, NULL, &w, "localhost", p->detail, sizeof(p->detail));
	if (rc == 0)
		rc = sotls_hs_step(hs, &res, p->detail, sizeof(p->detail), &sys_errno);
	sotls_hs_free(hs);
	if (rc != 0) {
		close(p->fd);
		return rc;
	}
	enum sotls_aead_alg alg = res.suite->alg;
	if (forge_init(&p->tx, alg, res.kb.client_key, res.kb.client_salt) != 0 ||
	    forge_init(&p->rx, alg, res.kb.server_key, res.kb.server_salt) != 0)
		rc = SOTLS_ERR_INTERNAL;
	p->tx_seq = res.client_seq;
	p->rx_seq = res.server_seq;
	sotls_hs_result_release(&res);
	return rc;
}

static void peer_close(struct peer *p)
{
	forge_clear(&p->tx);
	forge_clear(&p->rx);
	close(p->fd);
}

static bool send_all(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

/* Seals one record with sequence number seq (the next one if seq is
 * UINT64_MAX) and sends it. */
static bool send_record_seq(struct peer *p, uint64_t seq, uint8_t type, const void *pt,
			    size_t len)
{
	static uint8_t rec[FORGE_OVERHEAD + FORGE_MAX_PLAINTEXT];
	if (seq == UINT64_MAX)
		seq = p->tx_seq++;
	size_t n = forge_seal(&p->tx, seq, type, pt, len, rec);
	return send_all(p->fd, rec, n);
}

static bool send_record(struct peer *p, uint8_t type, const void *pt, size_t len)
{
	return send_record_seq(p, UINT64_MAX, type, pt, len);
}

/* What the server sent back, decrypted with its held key. */
struct answer {
	uint8_t alerts[MAX_ALERTS][2];
	unsigned nalerts;
	uint8_t data[1 << 16];
	size_t data_len;
	bool eof;	 /* TCP closed (or reset) after the records */
	bool bad;	 /* a record that is not well formed or does not authenticate */
	bool timeout;
};

static bool read_full(int fd, uint8_t *b, size_t n, struct answer *a)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = recv(fd, b + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			a->timeout = true;
			return false;
		}
		if (r <= 0) {
			a->eof = true;
			if (got > 0)
				a->bad = true; /* a record cut short */
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

/* Reads the server's records until EOF, a timeout, a record that is not
 * right, or (want_data > 0) that many echoed bytes. */
static void read_answer(struct peer *p, size_t want_data, struct answer *a)
{
	static uint8_t rec[FORGE_OVERHEAD + FORGE_MAX_PLAINTEXT];
	memset(a, 0, sizeof(*a));
	for (;;) {
		if (want_data > 0 && a->data_len >= want_data)
			return;
		if (!read_full(p->fd, rec, FORGE_HEADER, a))
			return;
		size_t len = (size_t)rec[3] << 8 | rec[4];
		if (!read_full(p->fd, rec + FORGE_HEADER, len, a))
			return;
		uint8_t pt[FORGE_MAX_PLAINTEXT];
		ssize_t n = forge_open(&p->rx, p->rx_seq++, rec, FORGE_HEADER + len, pt);
		if (n < 0) {
			a->bad = true;
			return;
		}
		if (rec[0] == CT_ALERT && n == 2 && a->nalerts < MAX_ALERTS) {
			memcpy(a->alerts[a->nalerts++], pt, 2);
		} else if (rec[0] == CT_DATA && a->data_len + (size_t)n <= sizeof(a->data)) {
			memcpy(a->data + a->data_len, pt, (size_t)n);
			a->data_len += (size_t)n;
		} else {
			a->bad = true;
			return;
		}
	}
}

/* ---- the cases ----------------------------------------------------------------- */

/* A ClientHello body that parses (RFC 5246 §7.4.1.2): what a client
 * asking to renegotiate would send. The server needs only the header. */
static size_t client_hello(uint8_t *m)
{
	static const uint8_t body[] = {
		3, 3,				/* client_version */
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, /* random */
		17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
		0,				/* session_id */
		0, 2, 0xc0, 0x2b,		/* cipher_suites */
		1, 0,				/* compression_methods */
	};
	m[0] = 1;
	m[1] = 0;
	m[2] = 0;
	m[3] = sizeof(body);
	memcpy(m + 4, body, sizeof(body));
	return 4 + sizeof(body);
}

enum attack {
	EMPTY_RECORDS,	 /* n empty application-data records */
	WARNINGS,	 /* n warning alerts, description 255 (unassigned) */
	ALERT,		 /* one alert {level, desc} */
	CLIENT_HELLOS,	 /* n ClientHello messages, one per record */
	FINISHED,	 /* a Finished message */
	EMPTY_HANDSHAKE, /* a handshake record of length 0 */
	DATA_OF_LEN,	 /* one application-data record of n bytes */
	FORGED_SEQ,	 /* a record sealed with sequence number n */
};

/* What must come back: these alerts in order, then the echo (if the case
 * sends data after the attack, or is DATA_OF_LEN), or EOF (closed). */
struct expect {
	uint8_t alerts[MAX_ALERTS][2];
	unsigned nalerts;
	bool closed;
};

struct hcase {
	const char *name;
	enum attack attack;
	unsigned n;
	uint8_t level, desc; /* ALERT */
	bool then_data;	     /* then a data record, whose echo must come back */
	struct expect want;
	/* Where the kernel path or OpenSSL answer otherwise (NULL: the same). */
	const struct expect *kernel, *openssl;
};

#define ALERTS(...) {{__VA_ARGS__}, sizeof((uint8_t[][2]){__VA_ARGS__}) / 2
#define NO_ALERTS {{{0}}, 0
#define NO_RENEG {1, 100}
#define FATAL(d) {2, d}
/* The kernel path and OpenSSL answer as sotls's userspace path. */
#define SAME NULL, NULL
#define NO_RENEG_8 NO_RENEG, NO_RENEG, NO_RENEG, NO_RENEG, NO_RENEG, NO_RENEG, NO_RENEG, NO_RENEG

/* kTLS RX: a record that fails authentication aborts the socket in the
 * kernel (tls_err_abort), so the bad_record_mac alert cannot go out. */
static const struct expect KERNEL_ABORTS = NO_ALERTS, true};
/* kTLS RX: the kernel skips empty application-data records inside recvmsg
 * (they never reach sotls, which cannot count them), so the connection
 * stays open and echoes what comes next. */
static const struct expect KERNEL_SKIPS_EMPTY = NO_ALERTS, false};
/* OpenSSL does not count refused renegotiations: a ninth is refused too. */
static const struct expect OPENSSL_NINE_REFUSALS = ALERTS(NO_RENEG_8, NO_RENEG), false};
/* OpenSSL skips an empty handshake record (RFC 5246 §6.2.1 forbids sending
 * one, and says nothing of receiving it). */
static const struct expect OPENSSL_SKIPS = NO_ALERTS, false};

static const struct hcase cases[] = {
	/* The caps: the last count accepted, then one more (shared-interface.md). */
	{"empty-records-32-then-data", EMPTY_RECORDS, 32, 0, 0, true, NO_ALERTS, false}, SAME},
	{"empty-records-33", EMPTY_RECORDS, 33, 0, 0, false, ALERTS(FATAL(10)), true},
	 &KERNEL_SKIPS_EMPTY, NULL},
	{"warning-alerts-4-then-data", WARNINGS, 4, 0, 0, true, NO_ALERTS, false}, SAME},
	{"warning-alerts-5", WARNINGS, 5, 0, 0, false, ALERTS(FATAL(10)), true}, SAME},
	/* RFC 5246 §7.2: close_notify is a warning; a fatal one is a fatal
	 * alert (no answer); any level but 1 and 2 is illegal_parameter. */
	{"alert-fatal-close-notify", ALERT, 1, 2, 0, false, NO_ALERTS, true}, SAME},
	{"alert-level-7", ALERT, 1, 7, 0, false, ALERTS(FATAL(47)), true}, SAME},
	{"alert-level-0-desc-255", ALERT, 1, 0, 255, false, ALERTS(FATAL(47)), true}, SAME},
	/* RFC 5246 §7.4.1.2 / RFC 5746 §4.4: a server refuses renegotiation
	 * with a no_renegotiation warning and goes on; 8 in a row, then no. */
	{"clienthello-then-data", CLIENT_HELLOS, 1, 0, 0, true, ALERTS(NO_RENEG), false}, SAME},
	{"clienthello-8-then-data", CLIENT_HELLOS, 8, 0, 0, true, ALERTS(NO_RENEG_8), false}, SAME},
	{"clienthello-9", CLIENT_HELLOS, 9, 0, 0, false, ALERTS(NO_RENEG_8, FATAL(10)), true},
	 NULL, &OPENSSL_NINE_REFUSALS},
	/* RFC 5246 §7.4: any other handshake message is unexpected; an empty
	 * handshake record cannot hold a message header. */
	{"finished-after-handshake", FINISHED, 1, 0, 0, false, ALERTS(FATAL(10)), true}, SAME},
	{"empty-handshake-record", EMPTY_HANDSHAKE, 1, 0, 0, false, ALERTS(FATAL(50)), true},
	 NULL, &OPENSSL_SKIPS},
	/* RFC 5246 §6.2.1: at most 2^14 bytes of plaintext per record. */
	{"record-16384", DATA_OF_LEN, 16384, 0, 0, false, NO_ALERTS, false}, SAME},
	{"record-16385", DATA_OF_LEN, 16385, 0, 0, false, ALERTS(FATAL(22)), true}, SAME},
	/* A sequence number near the AEAD usage limit (2^24): the server
	 * counts its own, so the record does not authenticate. */
	{"forged-seq-near-limit", FORGED_SEQ, (1u << 24) - 1, 0, 0, false, ALERTS(FATAL(20)), true},
	 &KERNEL_ABORTS, NULL},
};

/* Lines, so that s_server -rev echoes them whole. */
static const uint8_t PING[] = "ping after the attack\n";
#define PING_LEN (sizeof(PING) - 1)

static void data_of_len(uint8_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		m[i] = i + 1 == n ? '\n' : (uint8_t)('a' + i % 26);
}

static bool attack(struct peer *p, const struct hcase *hc)
{
	uint8_t m[FORGE_MAX_PLAINTEXT];
	bool ok = true;
	switch (hc->attack) {
	case EMPTY_RECORDS:
		for (unsigned i = 0; i < hc->n && ok; i++)
			ok = send_record(p, CT_DATA, NULL, 0);
		break;
	case WARNINGS:
		for (unsigned i = 0; i < hc->n && ok; i++)
			ok = send_record(p, CT_ALERT, (uint8_t[]){1, 255}, 2);
		break;
	case ALERT:
		ok = send_record(p, CT_ALERT, (uint8_t[]){hc->level, hc->desc}, 2);
		break;
	case CLIENT_HELLOS: {
		size_t n = client_hello(m);
		for (unsigned i = 0; i < hc->n && ok; i++)
			ok = send_record(p, CT_HANDSHAKE, m, n);
		break;
	}
	case FINISHED:
		memset(m, 0x5a, 16);
		m[0] = 20; /* finished, 12 bytes of verify_data */
		m[1] = 0;
		m[2] = 0;
		m[3] = 12;
		ok = send_record(p, CT_HANDSHAKE, m, 16);
		break;
	case EMPTY_HANDSHAKE:
		ok = send_record(p, CT_HANDSHAKE, NULL, 0);
		break;
	case DATA_OF_LEN:
		data_of_len(m, hc->n);
		ok = send_record(p, CT_DATA, m, hc->n);
		break;
	case FORGED_SEQ:
		ok = send_record_seq(p, hc->n, CT_DATA, PING, PING_LEN);
		break;
	}
	if (ok && hc->then_data)
		ok = send_record(p, CT_DATA, PING, PING_LEN);
	return ok;
}

static void print_alerts(const char *label, const uint8_t (*al)[2], unsigned n)
{
	printf(" %s", label);
	for (unsigned i = 0; i < n; i++)
		printf(" {%u,%u}", al[i][0], al[i][1]);
	if (n == 0)
		printf(" none");
}

static const struct expect *expected(const struct hcase *hc)
{
	if (g_server == SRV_SOTLS_KERNEL && hc->kernel != NULL)
		return hc->kernel;
	if (g_server == SRV_OPENSSL && hc->openssl != NULL)
		return hc->openssl;
	return &hc->want;
}

static bool run_case(const struct hcase *hc)
{
	const struct expect *ex = expected(hc);
	struct peer p;
	char why[256] = "";
	int rc = peer_open(&p);
	if (rc != 0) {
		printf("FAIL %-28s handshake: %s (%s)\n", hc->name, sotls_strerror(rc), p.detail);
		return false;
	}
	bool sent = attack(&p, hc);
	/* A connection that must stay open shows it by echoing. */
	bool ping = !expected(hc)->closed && !hc->then_data && hc->attack != DATA_OF_LEN;
	if (sent && ping)
		sent = send_record(&p, CT_DATA, PING, PING_LEN);
	/* The server serves others while this connection misbehaves (s_server
	 * serves one at a time: not asked). */
	bool during = g_server == SRV_OPENSSL || honest_client(why, sizeof(why));

	size_t want = 0;
	uint8_t m[FORGE_MAX_PLAINTEXT], echo[FORGE_MAX_PLAINTEXT];
	if (!ex->closed && hc->attack == DATA_OF_LEN) {
		want = hc->n;
		data_of_len(m, want);
	} else if (!ex->closed && (hc->then_data || ping)) {
		want = PING_LEN;
		memcpy(m, PING, want);
	}
	echo_of(m, want, echo);
	struct answer a;
	read_answer(&p, want, &a);
	bool echo_ok = a.data_len == want && memcmp(a.data, echo, want) == 0;
	bool alerts_ok = a.nalerts == ex->nalerts &&
			 memcmp(a.alerts, ex->alerts, 2 * (size_t)ex->nalerts) == 0;
	bool end_ok;
	if (ex->closed) {
		end_ok = a.eof && !a.timeout;
	} else {
		/* Still open: it answers our close_notify with its own. */
		struct answer bye;
		end_ok = send_record(&p, CT_ALERT, (uint8_t[]){1, 0}, 2);
		read_answer(&p, 0, &bye);
		end_ok = end_ok && bye.eof && bye.nalerts == 1 && bye.alerts[0][0] == 1 &&
			 bye.alerts[0][1] == 0 && !bye.bad && bye.data_len == 0;
	}
	peer_close(&p);
	bool after = honest_client(why, sizeof(why));
	bool ok = sent && !a.bad && echo_ok && alerts_ok && end_ok && during && after;

	printf("%-4s %-28s", ok ? "ok" : "FAIL", hc->name);
	print_alerts("alerts:", a.alerts, a.nalerts);
	printf(", echo %zu, %s", a.data_len, a.eof ? "closed" : a.timeout ? "timeout" : "open");
	if (!ok) {
		print_alerts("| want:", ex->alerts, ex->nalerts);
		printf(", echo %zu, %s%s%s%s%s%s", want, ex->closed ? "closed" : "open",
		       sent ? "" : " | send failed", a.bad ? " | bad record" : "",
		       end_ok ? "" : " | wrong ending", during ? "" : " | honest client failed during",
		       after ? "" : " | honest client failed after");
		if (!during || !after)
			printf(": %s", why);
	}
	printf("\n");
	fflush(stdout);
	return ok;
}

/* ---- the server under test ------------------------------------------------------- */

/* The files of one run, in a private directory. */
struct files {
	char dir[64], port[96], log[96], cert[96], key[96];
};

static void files_init(struct files *f)
{
	snprintf(f->port, sizeof(f->port), "%s/port", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/server.log", f->dir);
	snprintf(f->cert, sizeof(f->cert), "%s/cert.pem", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/key.pem", f->dir);
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f != NULL && fputs(text, f) >= 0;
	return f != NULL && fclose(f) == 0 && ok;
}

/* For s_server: an ephemeral certificate in files, and OpenSSL's name of
 * the suite. */
static bool openssl_setup(const struct files *f, const char *cipher, char *name, size_t len)
{
	static char cert[4096], key[4096];
	int ids[SOTLS_MAX_SUITES + 1];
	const struct sotls_suite *suite;
	if (ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)) != 0 ||
	    !write_file(f->cert, cert) || !write_file(f->key, key) ||
	    sotls_suites_parse(cipher, ids) != 0 || (suite = sotls_suite_by_id((uint16_t)ids[0])) == NULL)
		return false;
	snprintf(name, len, "%s", suite->openssl);
	return true;
}

/* The port the server listens on, once it says: sotls's --port-file, or
 * s_server's "ACCEPT 127.0.0.1:PORT" line. 0 until then. */
static int server_port(const struct files *f)
{
	FILE *in = fopen(g_server == SRV_OPENSSL ? f->log : f->port, "r");
	char line[256];
	int port = 0;
	while (in != NULL && port == 0 && fgets(line, sizeof(line), in) != NULL) {
		if (g_server != SRV_OPENSSL)
			port = atoi(line);
		else if (strncmp(line, "ACCEPT 127.0.0.1:", 17) == 0)
			port = atoi(line + 17);
	}
	if (in != NULL)
		fclose(in);
	return port;
}

static pid_t start_server(const char *bin, const char *ktls, const char *cipher,
			  const struct files *f)
{
	char ossl_cipher[128];
	if (g_server == SRV_OPENSSL && !openssl_setup(f, cipher, ossl_cipher, sizeof(ossl_cipher)))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		FILE *out = freopen(f->log, "w", stdout);
		if (out == NULL || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		if (g_server == SRV_OPENSSL)
			execlp("openssl", "openssl", "s_server", "-accept", "127.0.0.1:0", "-tls1_2",
			       "-cert", f->cert, "-key", f->key, "-cipher", ossl_cipher, "-rev",
			       (char *)NULL);
		else
			execl(bin, bin, "--port", "0", "--port-file", f->port, "--ktls", ktls,
			      "--cipher", cipher, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 200; i++) {
		int port = server_port(f);
		if (port > 0 && port < 65536) {
			g_port = (uint16_t)port;
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(50 * 1000);
	}
	return -1;
}

/* The end of the server's log: what it said about the failing cases. */
static void dump_tail(const char *path, int lines)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int total = 0, i = 0;
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		total++;
	if (f != NULL)
		rewind(f);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (i++ >= total - lines)
			printf("  [server] %s", line);
	if (f != NULL)
		fclose(f);
}

int main(int argc, char **argv)
{
	const char *ktls = "off", *cipher = "ARIA-128-GCM";
	const char *names[64];
	int nnames = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: hostile_peer (SERVER | --openssl) [--ktls MODE] "
				"[--cipher SUITE] [CASE...]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--ktls") == 0 && i + 1 < argc)
			ktls = argv[++i];
		else if (strcmp(argv[i], "--cipher") == 0 && i + 1 < argc)
			cipher = argv[++i];
		else if (nnames < 64)
			names[nnames++] = argv[i];
	}
	g_server = strcmp(argv[1], "--openssl") == 0 ? SRV_OPENSSL
		   : strcmp(ktls, "require") == 0     ? SRV_SOTLS_KERNEL
						      : SRV_SOTLS;
	signal(SIGPIPE, SIG_IGN);

	struct files f;
	snprintf(f.dir, sizeof(f.dir), "/tmp/hostile_peer.XXXXXX");
	if (mkdtemp(f.dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	files_init(&f);
	pid_t srv = start_server(argv[1], ktls, cipher, &f);
	if (srv < 0) {
		printf("FAIL: the server %s did not start\n", argv[1]);
		dump_tail(f.log, 40);
		return 1;
	}
	/* The server's certificate is ephemeral: the attacker does not check
	 * it (what is tested is what comes after the handshake). */
	g_cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	if (g_cfg == NULL || sotls_config_set_verify(g_cfg, SOTLS_VERIFY_NONE) != 0 ||
	    sotls_config_set_suites(g_cfg, cipher) != 0 ||
	    sotls_config_set_ktls(g_cfg, SOTLS_KTLS_OFF) != 0) {
		printf("FAIL: client configuration\n");
		return 1;
	}
	/* Read-only from here, with its mbedTLS configuration built, as
	 * sotls_conn_new makes it. */
	if (sotls_config_use(g_cfg) != 0) {
		printf("FAIL: client configuration\n");
		return 1;
	}
	printf("hostile peer against %s (--ktls %s, %s)\n", argv[1], ktls, cipher);

	int run = 0, failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool selected = nnames == 0;
		for (int j = 0; j < nnames; j++)
			selected |= strcmp(names[j], cases[i].name) == 0;
		if (!selected)
			continue;
		run++;
		if (!run_case(&cases[i]))
			failed++;
	}

	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	if (failed > 0)
		dump_tail(f.log, 40);
	unlink(f.log);
	unlink(f.port);
	unlink(f.cert);
	unlink(f.key);
	rmdir(f.dir);
	sotls_config_free(g_cfg);
	sotls_config_free(g_cfg);
	printf("%d of %d hostile peer cases passed\n", run - failed, run);
	return failed == 0 && run > 0 ? 0 : 1;
}

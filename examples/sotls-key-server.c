/*
 * sotls-key-server: holds a private key and signs digests for
 * sotls-keyless-server (keyless_wire.h), which holds only the certificate.
 * Listens on a UNIX socket until killed. A stand-in for an HSM or a remote
 * "keyless" key server: the key never leaves this process. Signs with
 * mbedTLS: PKCS#1 v1.5 over the DigestInfo of the hash for RSA, DER ECDSA
 * for EC keys, what sotls's private-key method is documented to return.
 *
 * Whoever may connect may have anything signed, so the socket is guarded
 * twice: its file is created 0600 whatever the umask, and each client's
 * uid (SO_PEERCRED, given by the kernel, not claimed by the client) must
 * be --allow-uid's, by default the server's own. Root gets no exception:
 * it is let in only as --allow-uid 0 (or when the server runs as root).
 * Each client is served on its own thread, at most --max-conns at once,
 * and none holds its thread longer than --idle-timeout waiting for a
 * request or --send-timeout for an answer it does not take
 * (server_limits.h): one stuck client never delays another.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <mbedtls/pk.h>

#include "ephemeral_cert.h"
#include "keyless_wire.h"
#include "help_text.h"
#include "parse_number.h"
#include "server_limits.h"

#define KEY_LIMITS (LIMIT_MAX_CONNS | LIMIT_IDLE | LIMIT_SEND)

static mbedtls_pk_context g_pk;
/* mbedTLS guards an RSA key's blinding state itself (THREADING_C), but
 * not every path of every key type is documented as safe on one context
 * from several threads; signing takes a millisecond, waiting for a client
 * is what must not be serialized, so the signing alone is. */
static pthread_mutex_t g_sign_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long g_signed; /* under g_sign_lock */
static uid_t g_allow_uid;
static struct server_limits g_limits = SERVER_LIMITS_DEFAULT;
static struct conn_slots g_slots;

/* RFC 5246 §7.4.1.4.1: the hash is the high byte of SignatureAndHashAlgorithm. */
static mbedtls_md_type_t hash_of(unsigned sigalg)
{
	switch (sigalg >> 8) {
	case 4: return MBEDTLS_MD_SHA256;
	case 5: return MBEDTLS_MD_SHA384;
	case 6: return MBEDTLS_MD_SHA512;
	}
	return MBEDTLS_MD_NONE;
}

static int load_key(mbedtls_pk_context *pk, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	static unsigned char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	int rc = mbedtls_pk_parse_key(pk, buf, n + 1, NULL, 0, ephemeral_cert_random, NULL);
	memset(buf, 0, sizeof(buf));
	if (rc != 0)
		fprintf(stderr, "sotls-key-server: %s: not a private key mbedTLS reads (-0x%04x)\n",
			path, (unsigned)-rc);
	return rc == 0 ? 0 : -1;
}

/* A refusal: KEYLESS_STATUS_REFUSED and why, in text (keyless_wire.h),
 * which the TLS server logs. Returns the answer's length. */
__attribute__((format(printf, 2, 3))) static size_t refuse(unsigned char *resp, const char *fmt,
							    ...)
{
	char *why = (char *)resp + KEYLESS_RESP_HEAD;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(why, KEYLESS_MAX_SIG, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : n >= KEYLESS_MAX_SIG ? KEYLESS_MAX_SIG - 1 : n;
	resp[4] = KEYLESS_STATUS_REFUSED;
	fprintf(stderr, "sotls-key-server: refused: %s\n", why);
	return KEYLESS_RESP_HEAD + (size_t)n;
}

/* Answers one request of len bytes; the answer's length (0: none, the
 * request is too short to carry an id to answer to). */
static size_t answer(const unsigned char *req, size_t len, unsigned char *resp)
{
	if (len < 4)
		return 0;
	memcpy(resp, req, 4);
	if (len < KEYLESS_REQ_HEAD || len != KEYLESS_REQ_HEAD + (size_t)req[6])
		return refuse(resp, "malformed request (%zu bytes)", len);
	const unsigned sigalg = (unsigned)req[4] << 8 | req[5];
	const unsigned digest_len = req[6];
	const mbedtls_md_type_t md = hash_of(sigalg);
	const mbedtls_md_info_t *info = mbedtls_md_info_from_type(md);
	if (info == NULL || ((sigalg & 0xff) != 1 && (sigalg & 0xff) != 3))
		return refuse(resp, "unknown signature algorithm 0x%04x", sigalg);
	/* The digest must be exactly the hash's: mbedTLS takes a length of 0
	 * to mean "the hash's length" and would sign whatever the buffer held
	 * past the request (an earlier client's digest); a shorter or longer
	 * one is not a hash of that algorithm at all. */
	if (digest_len != mbedtls_md_get_size(info))
		return refuse(resp, "a %u-byte digest for a %u-byte hash", digest_len,
			      mbedtls_md_get_size(info));
	const int want_ec = (sigalg & 0xff) == 3;
	if (want_ec != mbedtls_pk_can_do(&g_pk, MBEDTLS_PK_ECDSA))
		return refuse(resp, "signature algorithm 0x%04x is not this key's type", sigalg);
	size_t sig_len = 0;
	pthread_mutex_lock(&g_sign_lock);
	int rc = mbedtls_pk_sign(&g_pk, md, req + KEYLESS_REQ_HEAD, digest_len,
				 resp + KEYLESS_RESP_HEAD, KEYLESS_MAX_SIG, &sig_len,
				 ephemeral_cert_random, NULL);
	unsigned long nth = rc == 0 ? ++g_signed : 0;
	pthread_mutex_unlock(&g_sign_lock);
	if (rc != 0)
		return refuse(resp, "signing failed (-0x%04x)", (unsigned)-rc);
	resp[4] = KEYLESS_STATUS_OK;
	printf("sotls-key-server: signed #%lu (sigalg 0x%04x, %u-byte digest)\n", nth, sigalg,
	       digest_len);
	return KEYLESS_RESP_HEAD + sig_len;
}

/* One datagram out on the non-blocking fd, waiting --send-timeout at most
 * for room. 0, or a negative code (limits_strerror). */
static int send_answer(int fd, const unsigned char *resp, size_t len)
{
	int64_t deadline = limits_now_ms() + g_limits.send_ms;
	for (;;) {
		if (send(fd, resp, len, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return SOTLS_ERR_SYSCALL;
		int rc = limits_wait(fd, SOTLS_WANT_WRITE, deadline);
		if (rc != 0)
			return rc;
	}
}

/* Only --allow-uid's processes are served: whoever gets through may have
 * anything signed with the key. */
static int peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		perror("sotls-key-server: SO_PEERCRED");
		return 0;
	}
	if (cred.uid == g_allow_uid)
		return 1;
	fprintf(stderr,
		"sotls-key-server: refused a client of uid %u (pid %d): only uid %u is served "
		"(--allow-uid)\n",
		(unsigned)cred.uid, (int)cred.pid, (unsigned)g_allow_uid);
	return 0;
}

/* One client (a TLS server) on its own thread, until it goes away or
 * runs out of a limit. */
static void serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	/* One byte more than the longest request: a longer one shows. */
	unsigned char req[KEYLESS_REQ_HEAD + KEYLESS_MAX_DIGEST + 1];
	unsigned char resp[KEYLESS_RESP_HEAD + KEYLESS_MAX_SIG];

	/* Non-blocking: each wait is limits_wait's, bounded by a limit. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || !peer_allowed(fd)) {
		close(fd);
		return;
	}
	for (;;) {
		int rc = limits_wait(fd, SOTLS_WANT_READ, limits_now_ms() + g_limits.idle_ms);
		if (rc != 0) {
			fprintf(stderr, "sotls-key-server: a client: %s%s\n", limits_strerror(rc),
				rc == LIMIT_EXPIRED ? " (--idle-timeout): closed" : "");
			break;
		}
		ssize_t n = recv(fd, req, sizeof(req), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			continue;
		if (n <= 0)
			break; /* the TLS server went away */
		size_t r = answer(req, (size_t)n, resp);
		rc = r > 0 ? send_answer(fd, resp, r) : 0;
		memset(req, 0, sizeof(req));
		if (rc != 0) {
			fprintf(stderr, "sotls-key-server: a client did not take its answer: %s%s\n",
				limits_strerror(rc), rc == LIMIT_EXPIRED ? " (--send-timeout)" : "");
			break;
		}
	}
	close(fd);
}

/* The listening socket at path, its file mode 0600 from the start. */
static int listen_unix(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* A socket left by an earlier run is replaced; any other file is not
	 * ours to delete. */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "sotls-key-server: %s exists and is not a socket\n", path);
		return -1;
	}
	unlink(path);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ls < 0) {
		perror("sotls-key-server: socket");
		return -1;
	}
	/* bind creates the file with 0777 less the umask, and Linux ignores a
	 * chmod of the socket descriptor: the umask is the only way to have
	 * 0600 with no moment when others may connect. Still one thread here. */
	mode_t old = umask(0177);
	int rc = bind(ls, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || listen(ls, 64) != 0) {
		fprintf(stderr, "sotls-key-server: %s: %s\n", path, strerror(errno));
		close(ls);
		return -1;
	}
	return ls;
}

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-key-server - holds a private key and signs for sotls-keyless-server");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-key-server",
		      "--key KEY.pem --socket PATH [--allow-uid UID] [limits]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Listens on the UNIX socket PATH (made mode 0600 whatever the umask) and "
		     "signs for sotls-keyless-server --key-socket PATH, each client on a thread of "
		     "its own, until killed. It signs only a digest exactly as long as the hash the "
		     "signature algorithm names, refusing anything else with the reason, and serves "
		     "only processes of uid UID (SO_PEERCRED).");
	help_section(f, "OPTIONS");
	help_option(f, "--key KEY.pem",
		    "the private key, PEM, of the chain sotls-keyless-server sends (required)");
	help_option(f, "--socket PATH", "the UNIX socket to listen on (required)");
	help_option(f, "--allow-uid UID",
		    "the uid whose processes are served (default: this process's effective uid; "
		    "root only if UID is 0)");
	help_option(f, "--help", "this text");
	server_limits_usage(f, KEY_LIMITS);
	help_section(f, "EXIT STATUS");
	help_text(f, "It runs until killed. 1: it could not start (the key, the socket); 2: a "
		     "bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-key-server --key leaf.key --socket /run/sotls/key.sock\n"
		      "sotls-key-server --key leaf.key --socket /tmp/key.sock --allow-uid 33");
}

int main(int argc, char **argv)
{
	const char *key = NULL, *sock_path = NULL;
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},
		{"socket", required_argument, NULL, 's'},
		{"allow-uid", required_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		SERVER_LIMITS_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	long long uid = (long long)geteuid();
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_limits, KEY_LIMITS, opt, optarg);
		if (lim < 0)
			return 2;
		if (lim > 0)
			continue;
		switch (opt) {
		case 'k': key = optarg; break;
		case 's': sock_path = optarg; break;
		case 'u':
			/* (uid_t)-1 is "no uid" to the kernel: never a peer's. */
			if (!parse_number_flag("allow-uid", optarg, 0, (uid_t)-1 - 1, &uid))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	struct sockaddr_un sa;
	if (optind != argc || key == NULL || sock_path == NULL ||
	    strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sotls-key-server: --key and --socket (a short path) are required\n");
		return 2;
	}
	g_allow_uid = (uid_t)uid;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	mbedtls_pk_init(&g_pk);
	if (load_key(&g_pk, key) != 0)
		return 1;
	int ls = listen_unix(sock_path);
	if (ls < 0)
		return 1;
	printf("sotls-key-server: ready on %s (mode 0600, uid %u served)\n", sock_path,
	       (unsigned)g_allow_uid);
	conn_slots_init(&g_slots, g_limits.max_conns);
	conn_slots_serve_fds(&g_slots, ls, serve, "sotls-key-server");
	return 1;
}

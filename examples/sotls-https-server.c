/*
 * sotls-https-server: serves the regular files under --root over HTTPS
 * (TLS 1.2, ARIA-GCM), HTTP/1.1 GET and HEAD with Content-Length and
 * keep-alive, one thread per client. Bodies go out with sotls_sendfile.
 *
 * Every client is bounded (server_limits.h, each a flag): at most
 * --max-conns at once (accept waits at the cap), a deadline for the
 * handshake, for silence between requests and for a whole request head,
 * however slowly its bytes trickle in; and a response the client stops
 * reading fails after --send-timeout. Only regular files are served, and
 * they are opened non-blocking: a FIFO or a device under the root is a
 * 404, never a thread waiting on it.
 *
 * TLS: it offers ALPN "http/1.1" (a client that offers only protocols the
 * server lacks, "h2" alone, gets no_application_protocol, RFC 7301 §3.2;
 * --require-alpn also refuses clients that offer none), serves several
 * certificates chosen by SNI and key type (--cert/--key pairs, the first
 * the default; --sni-strict refuses unknown names), and on SIGHUP re-reads
 * them into a new configuration: connections already open finish on the
 * old one.
 *
 * Nothing outside the root is ever opened: the request path is decoded,
 * ".." segments are refused (400), and the file is opened relative to the
 * root with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so absolute
 * paths and symlinks that lead out fail too (404). Kernels without openat2
 * get the same check from realpath(3).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_files.h"
#include "http_request.h"
#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "resumed_name.h"
#include "server_limits.h"
#include "server_resume.h"
#include "server_config.h"
#include "server_setup.h"
#include "sotls.h"

#define HTTPS_LIMITS (LIMIT_MAX_CONNS | LIMIT_HANDSHAKE | LIMIT_IDLE | LIMIT_HEADER | LIMIT_SEND)

/* The configuration new connections use; SIGHUP replaces it (reload). */
static struct sotls_config *g_cfg;
static pthread_mutex_t g_cfg_lock = PTHREAD_MUTEX_INITIALIZER;


/* What the configuration is built from, at start and on each SIGHUP. */
static struct server_config_opts g_opt = SERVER_CONFIG_OPTS_DEFAULT;
static struct http_root g_root;
static int g_verbose = 1;
static struct server_limits g_limits = SERVER_LIMITS_DEFAULT;
static struct conn_slots g_slots;

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-https-server - an HTTPS server of static files over TLS 1.2");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-https-server",
		      "--root DIR [--port N] [--bind ADDR] "
		      "[--cert FILE --key FILE]... [--sni-strict] [--require-alpn] "
		      "[--cipher LIST] [--ktls MODE] [--sendfile MODE] "
		      "[--port-file FILE] [--quiet] [limits] [session resumption]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Serves GET and HEAD for the regular files under DIR (nothing outside it; "
		     "anything else is a 404) over HTTP/1.1 with keep-alive, bodies through "
		     "sotls_sendfile, one thread per client. It offers ALPN http/1.1. Each "
		     "connection gets a line on stdout with the suite, the record paths, ALPN, the "
		     "client's server name and the certificate sent.\n\n"
		     "SIGHUP builds a new configuration from the same files: new connections get "
		     "it, open ones finish on the old one. It has a new built-in session cache and, "
		     "without --ticket-key-file, new ticket keys: sessions from before resume only "
		     "from a --session-store or under the key file's keys.\n\n" SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--root DIR", "serve the files under DIR (required)");
	help_option(f, "--port N", "TCP port (default 4443; 0 picks one)");
	help_option(f, "--bind ADDR", "IPv4 address (default 127.0.0.1)");
	help_option(f, "--cert FILE", "certificate chain, PEM (with --key)");
	help_option(f, "--key FILE",
		    "private key, PEM. Repeat the pair for more (up to 16), chosen by SNI (the "
		    "names of each leaf's subjectAltName) and by key type; the first pair is the "
		    "default. Without --cert/--key an ephemeral self-signed ECDSA P-256 "
		    "certificate for CN=localhost is made in memory");
	help_option(f, "--sni-strict",
		    "refuse a server name no certificate has (unrecognized_name) instead of "
		    "sending the default");
	help_option(f, "--require-alpn",
		    "refuse clients that offer no ALPN (http/1.1 is offered either way)");
	help_option(f, "--cipher LIST", "allowed suites (default: all sotls supports, ARIA first)");
	help_option(f, "--ktls MODE", KTLS_FLAG_HELP " (default auto)");
	help_option(f, "--sendfile MODE", SENDFILE_FLAG_HELP);
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--quiet", "print only errors");
	help_option(f, "--help", "this text");
	server_limits_usage(f, HTTPS_LIMITS);
	server_resume_usage(f);
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "It runs until killed. 1: it could not start (the root, a certificate, the "
		     "socket); 2: a bad flag or value.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-https-server --root /srv/www --port 8443 \\\n"
		      "    --cert ecdsa.pem --key ecdsa.key --cert rsa.pem --key rsa.key\n"
		      "curl -k --tlsv1.2 --ciphers ECDHE-ECDSA-ARIA128-GCM-SHA256 \\\n"
		      "    https://127.0.0.1:8443/FILE\n"
		      "kill -HUP $(pidof sotls-https-server)   # re-read the certificates");
}

/* ---- responses -------------------------------------------------------------- */

struct client {
	int fd;
	int id;
	struct sotls_conn *c;
};

static int send_all(struct client *cl, const char *p, size_t n)
{
	return limits_send_all(cl->c, cl->fd, p, n, g_limits.send_ms);
}

/* A short response with a text body (none for HEAD). */
static int send_status(struct client *cl, int code, const char *reason, bool head,
		       bool keep_alive, const char *extra)
{
	char msg[512];
	int n = http_status_response(msg, sizeof(msg), code, reason, head, keep_alive, extra);
	return send_all(cl, msg, (size_t)n);
}

/* Answers one parsed request. Returns 0 to go on, -1 to close. */
static int respond(struct client *cl, const struct http_request *req)
{
	bool head = req->method == HTTP_HEAD;
	int id = cl->id;
	if (req->method == HTTP_OTHER)
		return send_status(cl, 405, "Method Not Allowed", false, req->keep_alive,
				   "Allow: GET, HEAD\r\n") == 0 && req->keep_alive ? 0 : -1;
	char rel[HTTP_MAX_PATH + 1];
	if (http_relative_path(req->path, rel, sizeof(rel)) != 0) {
		if (g_verbose)
			printf("client %d: %s refused (outside the root)\n", id, req->path);
		send_status(cl, 400, "Bad Request", head, false, NULL);
		return -1;
	}
	char name[HTTP_MAX_PATH + 16]; /* what is served, for its content type */
	struct stat st;
	bool not_regular;
	int fd = http_open_file(&g_root, rel, &st, name, sizeof(name), &not_regular);
	if (fd < 0) {
		if (g_verbose)
			printf("client %d: %s %s -> 404%s\n", id, head ? "HEAD" : "GET", req->path,
			       not_regular ? " (not a regular file)" : "");
		return send_status(cl, 404, "Not Found", head, req->keep_alive, NULL) == 0 &&
				       req->keep_alive
			       ? 0
			       : -1;
	}
	char hdr[512];
	int n = http_ok_head(hdr, sizeof(hdr), http_content_type(name), (long long)st.st_size,
			     req->keep_alive);
	if (send_all(cl, hdr, (size_t)n) != 0) {
		close(fd);
		return -1;
	}
	off_t off = 0;
	ssize_t k = head ? 0 : limits_sendfile(cl->c, cl->fd, fd, &off, (size_t)st.st_size,
					       g_limits.send_ms);
	close(fd);
	if (k < 0 || (!head && off < st.st_size)) {
		/* The file shrank, the client stopped reading, or the connection
		 * failed: the promised length cannot be kept, so it ends. */
		fprintf(stderr, "client %d: %s: sendfile after %lld bytes: %s%s%s\n", id,
			req->path, (long long)off, k >= 0 ? "file shrank" : limits_strerror((int)k),
			k < 0 && k != LIMIT_EXPIRED ? " " : "",
			k < 0 && k != LIMIT_EXPIRED ? sotls_conn_error_detail(cl->c) : "");
		return -1;
	}
	if (g_verbose) {
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(cl->c, &info);
		printf("client %d: %s %s -> 200, %lld bytes (%s)\n", id, head ? "HEAD" : "GET",
		       req->path, (long long)st.st_size,
		       head ? "no body" : info.sendfile_path);
	}
	return req->keep_alive ? 0 : -1;
}

/* ---- clients ------------------------------------------------------------------ */

/* Why a client's wait for bytes ended without them, for the log. */
static void log_recv_end(const struct client *cl, ssize_t n, bool in_head)
{
	if (n == LIMIT_EXPIRED)
		printf("client %d: %s: dropped\n", cl->id,
		       in_head ? "request head not complete within --header-timeout"
			       : "idle past --idle-timeout");
	else if (n < 0)
		printf("client %d: %s %s\n", cl->id, sotls_strerror((int)n),
		       sotls_conn_error_detail(cl->c));
}

/* Requests until the client closes, fails or runs out of a limit. */
static void serve_requests(struct client *cl)
{
	static __thread char buf[HTTP_MAX_HEAD];
	size_t have = 0;
	int64_t deadline = limits_now_ms() + g_limits.idle_ms;

	for (;;) {
		struct http_request req;
		enum http_parse_result pr = http_parse_request(buf, have, &req);
		if (pr == HTTP_PARSE_INCOMPLETE) {
			ssize_t n = limits_recv(cl->c, cl->fd, buf + have, sizeof(buf) - have,
						deadline);
			if (n <= 0) {
				if (g_verbose)
					log_recv_end(cl, n, have > 0);
				return;
			}
			/* The head's deadline runs from its first byte, however
			 * slowly the rest trickles in. */
			if (have == 0)
				deadline = limits_now_ms() + g_limits.header_ms;
			have += (size_t)n;
			continue;
		}
		if (pr != HTTP_PARSE_OK) {
			if (g_verbose)
				printf("client %d: malformed request -> 400\n", cl->id);
			send_status(cl, 400, "Bad Request", false, false, NULL);
			return;
		}
		if (respond(cl, &req) != 0)
			return;
		/* Pipelined bytes of the next request move to the front. */
		memmove(buf, buf + req.head_len, have - req.head_len);
		have -= req.head_len;
		deadline = limits_now_ms() + (have > 0 ? g_limits.header_ms : g_limits.idle_ms);
	}
}

/* The connection takes its own reference on the configuration of the
 * moment, so a reload never pulls it away. */
static int new_conn(struct client *cl)
{
	pthread_mutex_lock(&g_cfg_lock);
	int rc = sotls_conn_new(g_cfg, cl->fd, &cl->c);
	pthread_mutex_unlock(&g_cfg_lock);
	return rc;
}

static void serve(void *arg)
{
	struct client *cl = arg;
	int64_t deadline = limits_now_ms() + g_limits.handshake_ms;

	if (limits_prepare_socket(cl->fd, g_limits.send_ms) != 0 || new_conn(cl) != 0)
		goto out;
	int rc = limits_handshake(cl->c, cl->fd, deadline);
	if (rc != 0) {
		fprintf(stderr, "client %d: handshake failed: %s %s\n", cl->id, limits_strerror(rc),
			rc == LIMIT_EXPIRED ? "(--handshake-timeout)" : sotls_conn_error_detail(cl->c));
		goto out;
	}
	if (g_verbose) {
		struct sotls_info info = SOTLS_INFO_INIT;
		sotls_get_info(cl->c, &info);
		printf("client %d: %s alpn=%s server_name=%s cert=%d resumed: %s\n", cl->id,
		       info.suite, info.alpn[0] ? info.alpn : "-",
		       info.server_name[0] ? info.server_name : "-", info.cert_index,
		       resumed_name(info.resumed));
	}
	serve_requests(cl);
	limits_shutdown(cl->c, cl->fd, g_limits.send_ms);
out:
	sotls_conn_free(cl->c);
	close(cl->fd);
	free(cl);
}

/* SIGHUP: a new configuration from the same files. New connections get it;
 * open ones hold a reference to the old one and finish on it, and the old
 * one goes with the last of them. A failed reload keeps the old one. */
static void *reload_main(void *arg)
{
	sigset_t *hup = arg;
	for (;;) {
		int sig;
		if (sigwait(hup, &sig) != 0)
			continue;
		server_config_reload(&g_opt, true, g_verbose, &g_cfg_lock, &g_cfg);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"root", required_argument, NULL, 'r'},	   {"port", required_argument, NULL, 'p'},
		{"bind", required_argument, NULL, 'b'},	   {"cert", required_argument, NULL, 'c'},
		{"key", required_argument, NULL, 'k'},	   {"cipher", required_argument, NULL, 's'},
		{"ktls", required_argument, NULL, 't'},	   {"port-file", required_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},	   {"help", no_argument, NULL, 'h'},
		{"sni-strict", no_argument, NULL, 'S'},	   {"require-alpn", no_argument, NULL, 'A'},
		{"sendfile", required_argument, NULL, 'F'},
		SERVER_LIMITS_OPTIONS,			   SERVER_RESUME_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *root = NULL, *bind_addr = "127.0.0.1";
	const char *port_file = NULL;
	long long port = 4443;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_limits, HTTPS_LIMITS, opt, optarg);
		if (lim == 0)
			lim = server_resume_option(&g_opt.resume, opt, optarg);
		if (lim != 0) {
			if (lim < 0)
				return 2;
			continue;
		}
		switch (opt) {
		case 'r': root = optarg; break;
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, &port))
				return 2;
			break;
		case 'b': bind_addr = optarg; break;
		case 'c':
			if (g_opt.n_cert == SERVER_MAX_CERTS) {
				fprintf(stderr, "--cert: at most %d\n", SERVER_MAX_CERTS);
				return 2;
			}
			g_opt.cert[g_opt.n_cert++] = optarg;
			break;
		case 'k':
			if (g_opt.n_key == SERVER_MAX_CERTS) {
				fprintf(stderr, "--key: at most %d\n", SERVER_MAX_CERTS);
				return 2;
			}
			g_opt.key[g_opt.n_key++] = optarg;
			break;
		case 's': g_opt.cipher = optarg; break;
		case 'S': g_opt.sni_strict = true; break;
		case 'F':
			if (parse_sendfile_mode(optarg, &g_opt.sendfile) != 0) {
				fputs(SENDFILE_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'A': g_opt.require_alpn = true; break;
		case 't':
			if (parse_ktls_policy(optarg, &g_opt.ktls) != 0) {
				fputs(KTLS_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'f': port_file = optarg; break;
		case 'q': g_verbose = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || root == NULL || g_opt.n_cert != g_opt.n_key) {
		usage(stderr);
		return 2;
	}
	if (server_resume_setup(&g_opt.resume) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0); /* one line per request, as it happens */

	if (http_root_open(&g_root, root) != 0) {
		fprintf(stderr, "--root %s: %s\n", root, strerror(errno));
		return 1;
	}

	g_cfg = server_config_build(&g_opt, true, g_verbose);
	if (g_cfg == NULL)
		return 1;
	/* SIGHUP goes to the reload thread alone: blocked here, before any
	 * other thread exists, so every thread inherits the mask. */
	static sigset_t hup;
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_t reloader;
	if (pthread_sigmask(SIG_BLOCK, &hup, NULL) != 0 ||
	    pthread_create(&reloader, NULL, reload_main, &hup) != 0) {
		fprintf(stderr, "no reload thread\n");
		return 1;
	}

	int bound;
	int ls = listen_tcp4(bind_addr, (int)port, 0, 64, &bound);
	if (ls == LISTEN_BAD_ADDRESS) {
		fprintf(stderr, "--bind %s: not an IPv4 address\n", bind_addr);
		return 1;
	}
	if (ls < 0) {
		fprintf(stderr, "listen on %s:%lld: %s\n", bind_addr, port, strerror(errno));
		return 1;
	}
	if (port_file != NULL && write_port_file(port_file, bound) != 0) {
		fprintf(stderr, "--port-file %s: %s\n", port_file, strerror(errno));
		return 1;
	}
	if (g_verbose)
		printf("serving %s on https://%s:%d/\n", g_root.real, bind_addr, bound);
	fflush(stdout);

	conn_slots_init(&g_slots, g_limits.max_conns);
	for (int id = 1;; id++) {
		conn_slots_take(&g_slots);
		int fd = accept_client(ls, NULL, NULL);
		if (fd < 0) {
			fprintf(stderr, "accept: %s\n", strerror(errno));
			return 1;
		}
		struct client *cl = malloc(sizeof(*cl));
		if (cl == NULL) {
			close(fd);
			conn_slots_give(&g_slots);
			continue;
		}
		*cl = (struct client){.fd = fd, .id = id};
		if (conn_slots_spawn(&g_slots, serve, cl) != 0) {
			fprintf(stderr, "client %d: no thread\n", id);
			close(fd);
			free(cl);
		}
	}
}

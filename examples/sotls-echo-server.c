/*
 * sotls-echo-server: accepts TLS 1.2 clients and echoes every byte back,
 * one thread per client, until killed. One failing client never stops it,
 * and none holds its thread past a limit (server_limits.h): at most
 * --max-conns at once, a deadline for the handshake, for silence and for a
 * client that stops reading its echo.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "help_text.h"
#include "keylog_env.h"
#include "parse_number.h"
#include "resumed_name.h"
#include "server_limits.h"
#include "server_resume.h"
#include "server_setup.h"
#include "sotls.h"

/* ": detail" when the connection has one, else "". */
static const char *detail_sep(struct sotls_conn *c)
{
	return sotls_conn_error_detail(c)[0] != '\0' ? ": " : "";
}

#define BUF_SIZE (256 * 1024)
#define ECHO_LIMITS (LIMIT_MAX_CONNS | LIMIT_HANDSHAKE | LIMIT_IDLE | LIMIT_SEND)

static struct sotls_config *g_cfg;
static int g_verbose = 1;
static atomic_int g_clients;
static struct server_limits g_limits = SERVER_LIMITS_DEFAULT;
static struct conn_slots g_slots;
static struct server_resume g_resume = SERVER_RESUME_DEFAULT;

static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, "sotls-echo-server - a TLS 1.2 echo server, one thread per client");
	help_section(f, "SYNOPSIS");
	help_synopsis(f, "sotls-echo-server",
		      "[--port N] [--bind ADDR] [--cert FILE --key FILE] "
		      "[--cipher LIST] [--ktls MODE] [--once] [--port-file FILE] "
		      "[--quiet] [limits] [session resumption]");
	help_section(f, "DESCRIPTION");
	help_text(f, "Accepts TLS 1.2 clients (sotls-echo-client, openssl s_client) and echoes "
		     "every byte back until the client sends close_notify, one thread per client, "
		     "until killed. Each connection gets a line on stdout: the suite, where each "
		     "direction's records are made (kernel TLS or userspace) and why, the AEAD, "
		     "whether the session was resumed. One failing client never stops the server, "
		     "and none holds its thread past a limit (the limits below).\n\n" SERVER_LOG_HELP);
	help_section(f, "OPTIONS");
	help_option(f, "--port N", "TCP port to listen on (default 4433; 0 picks one)");
	help_option(f, "--bind ADDR", "IPv4 address to listen on (default 127.0.0.1)");
	help_option(f, "--cert FILE", "certificate chain, PEM (with --key)");
	help_option(f, "--key FILE",
		    "private key, PEM; without --cert/--key an ephemeral self-signed ECDSA P-256 "
		    "certificate for CN=localhost is made in memory");
	help_option(f, "--cipher LIST",
		    "allowed suites, ':'-separated: ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM, "
		    "AES-256-GCM or full names (TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256); default "
		    "all, ARIA first");
	help_option(f, "--ktls MODE", KTLS_FLAG_HELP " (default auto)");
	help_option(f, "--once", "serve one client, then exit");
	help_option(f, "--port-file FILE", "write the listening port to FILE once listening");
	help_option(f, "--quiet", "print only errors");
	help_option(f, "--help", "this text");
	server_limits_usage(f, ECHO_LIMITS);
	server_resume_usage(f);
	keylog_env_usage(f);
	help_section(f, "EXIT STATUS");
	help_text(f, "0: with --once, its client ended cleanly; 1: a failure (the certificate, "
		     "the socket, or the --once client's connection); 2: a bad flag or value. "
		     "Without --once it runs until killed.");
	help_section(f, "EXAMPLES");
	help_lines(f, "sotls-echo-server --port 4433 --cipher ARIA-128-GCM\n"
		      "sotls-echo-client --port 4433 --insecure --bytes 1G\n"
		      "openssl s_client -connect 127.0.0.1:4433 -tls1_2");
}

struct client {
	int fd;
	int id;
	char peer[64];
};

/* Echoes until the peer's close_notify or an error. Returns 0 on a clean end. */
static int serve(struct client *cl)
{
	struct sotls_conn *c = NULL;
	uint8_t *buf = malloc(BUF_SIZE);
	unsigned long long total = 0;
	int status = 1;

	int64_t deadline = limits_now_ms() + g_limits.handshake_ms;

	if (buf == NULL || limits_prepare_socket(cl->fd, g_limits.send_ms) != 0 ||
	    sotls_conn_new(g_cfg, cl->fd, &c) != 0) {
		fprintf(stderr, "client %d: out of memory\n", cl->id);
		goto out;
	}
	int rc = limits_handshake(c, cl->fd, deadline);
	if (rc != 0) {
		bool expired = rc == LIMIT_EXPIRED;
		fprintf(stderr, "client %d (%s): handshake failed: %s%s%s\n", cl->id, cl->peer,
			limits_strerror(rc), expired ? " (--handshake-timeout)" : detail_sep(c),
			expired ? "" : sotls_conn_error_detail(c));
		goto out;
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	if (g_verbose)
		printf("client %d (%s): %s %s, TX %s (%s), RX %s (%s), AEAD %s, "
		       "max_fragment_length %u, resumed: %s\n",
		       cl->id, cl->peer, info.version, info.suite,
		       info.tx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace", info.tx_reason,
		       info.rx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace", info.rx_reason,
		       info.aead_impl, (unsigned)info.max_fragment_len, resumed_name(info.resumed));
	fflush(stdout);

	for (;;) {
		ssize_t n = limits_recv(c, cl->fd, buf, BUF_SIZE, limits_now_ms() + g_limits.idle_ms);
		if (n == 0) {
			rc = limits_shutdown(c, cl->fd, g_limits.send_ms);
			if (g_verbose)
				printf("client %d: %llu bytes echoed, closed with close_notify%s\n",
				       cl->id, total, rc == 0 ? "" : " (our close_notify failed)");
			status = rc == 0 ? 0 : 1;
			break;
		}
		if (n == LIMIT_EXPIRED) {
			fprintf(stderr, "client %d: %llu bytes echoed, then idle past --idle-timeout\n",
				cl->id, total);
			break;
		}
		if (n < 0) {
			fprintf(stderr, "client %d: %llu bytes echoed, then: %s%s%s\n", cl->id, total,
				sotls_strerror((int)n), detail_sep(c), sotls_conn_error_detail(c));
			break;
		}
		int s = limits_send_all(c, cl->fd, buf, (size_t)n, g_limits.send_ms);
		if (s != 0) {
			bool expired = s == LIMIT_EXPIRED;
			fprintf(stderr, "client %d: send failed: %s%s%s\n", cl->id, limits_strerror(s),
				expired ? " (--send-timeout)" : detail_sep(c),
				expired ? "" : sotls_conn_error_detail(c));
			break;
		}
		total += (unsigned long long)n;
	}
	sotls_get_info(c, &info);
	if (info.peer_alert == 100 || info.peer_alert > 0)
		if (g_verbose)
			printf("client %d: last alert from peer: %d\n", cl->id, info.peer_alert);
out:
	fflush(stdout);
	sotls_conn_free(c);
	free(buf);
	close(cl->fd);
	return status;
}

static void client_thread(void *arg)
{
	struct client *cl = arg;
	serve(cl);
	free(cl);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},	   {"bind", required_argument, NULL, 'b'},
		{"cert", required_argument, NULL, 'c'},	   {"key", required_argument, NULL, 'k'},
		{"cipher", required_argument, NULL, 's'},  {"ktls", required_argument, NULL, 't'},
		{"once", no_argument, NULL, 'o'},	   {"port-file", required_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},	   {"help", no_argument, NULL, 'h'},
		SERVER_LIMITS_OPTIONS,			   SERVER_RESUME_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	const char *bind_addr = "127.0.0.1", *cert = NULL, *key = NULL, *cipher = NULL;
	const char *port_file = NULL;
	long long port = 4433;
	int once = 0, opt;
	enum sotls_ktls_policy ktls = SOTLS_KTLS_AUTO;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int lim = server_limits_option(&g_limits, ECHO_LIMITS, opt, optarg);
		if (lim == 0)
			lim = server_resume_option(&g_resume, opt, optarg);
		if (lim != 0) {
			if (lim < 0)
				return 2;
			continue;
		}
		switch (opt) {
		case 'p':
			if (!parse_number_flag("port", optarg, 0, 65535, &port))
				return 2;
			break;
		case 'b': bind_addr = optarg; break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 's': cipher = optarg; break;
		case 't':
			if (parse_ktls_policy(optarg, &ktls) != 0) {
				fputs(KTLS_FLAG_ERROR, stderr);
				return 2;
			}
			break;
		case 'o': once = 1; break;
		case 'f': port_file = optarg; break;
		case 'q': g_verbose = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (cert == NULL) != (key == NULL)) {
		usage(stderr);
		return 2;
	}
	if (server_resume_setup(&g_resume) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);

	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (g_cfg == NULL || keylog_from_env(g_cfg) != 0 || server_log_setup(g_cfg) != 0)
		return 1;
	int rc = server_cert_setup(g_cfg, cert, key, g_verbose, "--insecure");
	if (rc == SERVER_CERT_EPHEMERAL_FAILED)
		return 1;
	if (rc != 0) {
		print_config_error("certificate", g_cfg, rc);
		return 1;
	}
	if (cipher != NULL && (rc = sotls_config_set_suites(g_cfg, cipher)) != 0) {
		fprintf(stderr, "--cipher %s: %s\n", cipher, sotls_strerror(rc));
		return 2;
	}
	sotls_config_set_ktls(g_cfg, ktls);
	if (server_resume_apply(g_cfg, &g_resume) != 0)
		return 1;

	int bound;
	int ls = listen_tcp4(bind_addr, (int)port, 0, 64, &bound);
	if (ls == LISTEN_BAD_ADDRESS) {
		fprintf(stderr, "bad --bind address %s\n", bind_addr);
		return 2;
	}
	if (ls < 0) {
		fprintf(stderr, "listen on %s:%lld: %s\n", bind_addr, port, strerror(errno));
		return 1;
	}
	if (g_verbose)
		printf("listening on %s:%d\n", bind_addr, bound);
	fflush(stdout);
	if (port_file != NULL && write_port_file(port_file, bound) != 0) {
		fprintf(stderr, "--port-file %s: %s\n", port_file, strerror(errno));
		return 1;
	}

	conn_slots_init(&g_slots, g_limits.max_conns);
	for (;;) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		conn_slots_take(&g_slots);
		int fd = accept_client(ls, (struct sockaddr *)&peer, &plen);
		if (fd < 0) {
			fprintf(stderr, "accept: %s\n", strerror(errno));
			return 1;
		}
		struct client *cl = calloc(1, sizeof(*cl));
		if (cl == NULL) {
			close(fd);
			conn_slots_give(&g_slots);
			continue;
		}
		cl->fd = fd;
		cl->id = atomic_fetch_add(&g_clients, 1) + 1;
		snprintf(cl->peer, sizeof(cl->peer), "%s:%d",
			 inet_ntop(AF_INET, &peer.sin_addr, (char[INET_ADDRSTRLEN]){0},
				   INET_ADDRSTRLEN),
			 ntohs(peer.sin_port));
		if (once) {
			int status = serve(cl);
			free(cl);
			close(ls);
			sotls_config_free(g_cfg);
			return status;
		}
		if (conn_slots_spawn(&g_slots, client_thread, cl) != 0) {
			fprintf(stderr, "client %d: no thread\n", cl->id);
			close(fd);
			free(cl);
		}
	}
}

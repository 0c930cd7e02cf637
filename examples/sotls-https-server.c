/*
 * sotls-https-server: serves the regular files under --root over HTTPS
 * (TLS 1.2, ARIA-GCM), HTTP/1.1 GET and HEAD with Content-Length and
 * keep-alive, one thread per client. Bodies go out with sotls_sendfile.
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
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "http_request.h"
#include "server_setup.h"
#include "sotls.h"

#define IDLE_SECONDS 30

static struct sotls_config *g_cfg;
static int g_root = -1;
static char g_root_real[PATH_MAX];
static int g_verbose = 1;
static atomic_int g_clients;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sotls-https-server --root DIR [options]\n"
		"  --root DIR        serve the files under DIR (nothing outside it)\n"
		"  --port N          TCP port (default 4443; 0 picks one)\n"
		"  --bind ADDR       IPv4 address (default 127.0.0.1)\n"
		"  --cert FILE       certificate chain, PEM (with --key)\n"
		"  --key FILE        private key, PEM\n"
		"                    without --cert/--key an ephemeral self-signed ECDSA\n"
		"                    P-256 certificate for CN=localhost is made in memory\n"
		"  --cipher LIST     allowed suites (default: all sotls supports)\n"
		"  --ktls MODE       auto | off | require (default auto)\n"
		"  --port-file FILE  write the listening port to FILE once listening\n"
		"  --quiet           print only errors\n"
		"  --help            this text\n"
		"then: curl -k --tlsv1.2 --ciphers ECDHE-ECDSA-ARIA128-GCM-SHA256 "
		"https://127.0.0.1:PORT/FILE\n");
}

/* ---- files -------------------------------------------------------------------- */

/* Opens rel (relative, already free of "..") beneath the root. */
static int open_beneath(const char *rel)
{
	const char *name = rel[0] != '\0' ? rel : ".";
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, g_root, name, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
	/* No openat2 (or a seccomp filter refuses it): resolve and compare. */
	char full[PATH_MAX * 2], real[PATH_MAX];
	snprintf(full, sizeof(full), "%s/%s", g_root_real, rel);
	if (realpath(full, real) == NULL)
		return -1;
	size_t n = strlen(g_root_real);
	if (strncmp(real, g_root_real, n) != 0 || (real[n] != '/' && real[n] != '\0')) {
		errno = EXDEV;
		return -1;
	}
	return open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

static const char *content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".html", "text/html; charset=utf-8"}, {".htm", "text/html; charset=utf-8"},
		{".txt", "text/plain; charset=utf-8"}, {".css", "text/css"},
		{".js", "text/javascript"},	       {".json", "application/json"},
		{".png", "image/png"},		       {".jpg", "image/jpeg"},
		{".svg", "image/svg+xml"},
	};
	const char *dot = strrchr(path, '.');
	if (dot != NULL && strchr(dot, '/') == NULL)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

/* ---- responses -------------------------------------------------------------- */

static int send_all(struct sotls_conn *c, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = sotls_send(c, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A short response with a text body (none for HEAD). */
static int send_status(struct sotls_conn *c, int code, const char *reason, bool head,
		       bool keep_alive, const char *extra)
{
	char body[128], msg[512];
	int blen = snprintf(body, sizeof(body), "%d %s\n", code, reason);
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %d\r\n%sConnection: %s\r\n\r\n%s",
			 code, reason, blen, extra ? extra : "", keep_alive ? "keep-alive" : "close",
			 head ? "" : body);
	return send_all(c, msg, (size_t)n);
}

/* Answers one parsed request. Returns 0 to go on, -1 to close. */
static int respond(struct sotls_conn *c, const struct http_request *req, int id)
{
	bool head = req->method == HTTP_HEAD;
	if (req->method == HTTP_OTHER)
		return send_status(c, 405, "Method Not Allowed", false, req->keep_alive,
				   "Allow: GET, HEAD\r\n") == 0 && req->keep_alive ? 0 : -1;
	char rel[HTTP_MAX_PATH + 1];
	if (http_relative_path(req->path, rel, sizeof(rel)) != 0) {
		if (g_verbose)
			printf("client %d: %s refused (outside the root)\n", id, req->path);
		send_status(c, 400, "Bad Request", head, false, NULL);
		return -1;
	}
	int fd = open_beneath(rel);
	const char *name = rel; /* what is served, for its content type */
	char idx[HTTP_MAX_PATH + 16];
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* A directory: its index.html, if any. */
		snprintf(idx, sizeof(idx), "%s%sindex.html", rel, rel[0] ? "/" : "");
		close(fd);
		fd = open_beneath(idx);
		name = idx;
	}
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (g_verbose)
			printf("client %d: %s %s -> 404\n", id, head ? "HEAD" : "GET", req->path);
		if (fd >= 0)
			close(fd);
		return send_status(c, 404, "Not Found", head, req->keep_alive, NULL) == 0 &&
				       req->keep_alive
			       ? 0
			       : -1;
	}
	char hdr[512];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
			 "Connection: %s\r\n\r\n",
			 content_type(name), (long long)st.st_size,
			 req->keep_alive ? "keep-alive" : "close");
	if (send_all(c, hdr, (size_t)n) != 0) {
		close(fd);
		return -1;
	}
	off_t off = 0;
	int rc = 0;
	while (!head && off < st.st_size) {
		ssize_t k = sotls_sendfile(c, fd, &off, (size_t)(st.st_size - off));
		if (k <= 0) {
			/* The file shrank, or the connection failed: the promised
			 * length cannot be kept, so the connection ends. */
			fprintf(stderr, "client %d: %s: sendfile: %s%s%s\n", id, req->path,
				k == 0 ? "file shrank" : sotls_strerror((int)k),
				k < 0 ? " " : "", k < 0 ? sotls_conn_error_detail(c) : "");
			rc = -1;
			break;
		}
	}
	close(fd);
	if (g_verbose && rc == 0) {
		struct sotls_info info;
		sotls_get_info(c, &info);
		printf("client %d: %s %s -> 200, %lld bytes (%s)\n", id, head ? "HEAD" : "GET",
		       req->path, (long long)st.st_size,
		       head ? "no body" : info.sendfile_path);
	}
	return rc == 0 && req->keep_alive ? 0 : -1;
}

/* ---- clients ------------------------------------------------------------------ */

struct client {
	int fd;
	int id;
};

static void serve(struct client *cl)
{
	struct sotls_conn *c = NULL;
	static __thread char buf[HTTP_MAX_HEAD];
	size_t have = 0;

	if (sotls_conn_new(g_cfg, cl->fd, &c) != 0)
		return;
	int rc = sotls_handshake(c);
	if (rc != 0) {
		fprintf(stderr, "client %d: handshake failed: %s %s\n", cl->id, sotls_strerror(rc),
			sotls_conn_error_detail(c));
		sotls_conn_free(c);
		return;
	}
	for (;;) {
		struct http_request req;
		enum http_parse_result pr = http_parse_request(buf, have, &req);
		if (pr == HTTP_PARSE_INCOMPLETE) {
			ssize_t n = sotls_recv(c, buf + have, sizeof(buf) - have);
			if (n <= 0)
				break; /* close_notify, idle timeout or an error */
			have += (size_t)n;
			continue;
		}
		if (pr != HTTP_PARSE_OK) {
			if (g_verbose)
				printf("client %d: malformed request -> 400\n", cl->id);
			send_status(c, 400, "Bad Request", false, false, NULL);
			break;
		}
		if (respond(c, &req, cl->id) != 0)
			break;
		/* Pipelined bytes of the next request move to the front. */
		memmove(buf, buf + req.head_len, have - req.head_len);
		have -= req.head_len;
	}
	sotls_shutdown(c);
	sotls_conn_free(c);
}

static void *client_thread(void *arg)
{
	struct client *cl = arg;
	serve(cl);
	close(cl->fd);
	free(cl);
	atomic_fetch_sub(&g_clients, 1);
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
		{NULL, 0, NULL, 0},
	};
	const char *root = NULL, *bind_addr = "127.0.0.1", *cert = NULL, *key = NULL;
	const char *cipher = NULL, *port_file = NULL;
	int port = 4443, opt;
	enum sotls_ktls_policy ktls = SOTLS_KTLS_AUTO;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'b': bind_addr = optarg; break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 's': cipher = optarg; break;
		case 't':
			if (parse_ktls_policy(optarg, &ktls) != 0) {
				fprintf(stderr, "--ktls: auto, off or require\n");
				return 2;
			}
			break;
		case 'f': port_file = optarg; break;
		case 'q': g_verbose = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || root == NULL || (cert == NULL) != (key == NULL) || port < 0 ||
	    port > 65535) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0); /* one line per request, as it happens */

	g_root = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g_root < 0 || realpath(root, g_root_real) == NULL) {
		fprintf(stderr, "--root %s: %s\n", root, strerror(errno));
		return 1;
	}

	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (g_cfg == NULL)
		return 1;
	int rc = server_cert_setup(g_cfg, cert, key, g_verbose, "-k / --insecure");
	if (rc == SERVER_CERT_EPHEMERAL_FAILED)
		return 1;
	if (rc == 0 && cipher != NULL)
		rc = sotls_config_set_suites(g_cfg, cipher);
	if (rc == 0)
		rc = sotls_config_set_ktls(g_cfg, ktls);
	if (rc != 0) {
		fprintf(stderr, "configuration: %s\n", sotls_strerror(rc));
		return 1;
	}

	int ls = listen_tcp4(bind_addr, port, 0, 64, &port);
	if (ls == LISTEN_BAD_ADDRESS) {
		fprintf(stderr, "--bind %s: not an IPv4 address\n", bind_addr);
		return 1;
	}
	if (ls < 0) {
		fprintf(stderr, "listen on %s:%d: %s\n", bind_addr, port, strerror(errno));
		return 1;
	}
	if (port_file != NULL && write_port_file(port_file, port) != 0) {
		fprintf(stderr, "--port-file %s: %s\n", port_file, strerror(errno));
		return 1;
	}
	if (g_verbose)
		printf("serving %s on https://%s:%d/\n", g_root_real, bind_addr, port);
	fflush(stdout);

	for (int id = 1;; id++) {
		int fd = accept_client(ls, NULL, NULL);
		if (fd < 0) {
			fprintf(stderr, "accept: %s\n", strerror(errno));
			return 1;
		}
		/* An idle keep-alive client is dropped after a while. */
		struct timeval tv = {.tv_sec = IDLE_SECONDS};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		struct client *cl = malloc(sizeof(*cl));
		pthread_t t;
		pthread_attr_t attr;
		if (cl == NULL) {
			close(fd);
			continue;
		}
		cl->fd = fd;
		cl->id = id;
		atomic_fetch_add(&g_clients, 1);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, client_thread, cl) != 0) {
			atomic_fetch_sub(&g_clients, 1);
			close(fd);
			free(cl);
		}
		pthread_attr_destroy(&attr);
	}
}

/*
 * sotls-peer: the sotls end of the interop tests. Client or server (one
 * connection), it sends a file and receives into a file at the same time
 * (non-blocking, poll), then closes with close_notify and reports on stdout:
 *   HANDSHAKE <suite> <tx path> <rx path>
 *   NEGOTIATED alpn=<protocol|-> server_name=<name|-> cert=<index>
 *   MAX_FRAGMENT_LENGTH <negotiated bytes, 0 if none>
 *   ALPN-CALLBACK user=<P> server_name=<name|-> offered=<P1,P2,...>
 *     (server, --alpn-select-conn P: the connection callback's call)
 *   END close_notify|truncated|error <code> <detail>   (how the peer's side ended)
 * Exit status 0 only if everything was sent, --expect bytes arrived and both
 * close_notify alerts were exchanged.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sotls.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: sotls-peer client|server --port N [--cert F --key F] [--ca F]\n"
		"       [--servername N] [--verify] [--cipher LIST] [--send FILE]\n"
		"       [--recv FILE] [--expect N] [--port-file F] [--wait-close]\n"
		"       [--alpn P1,P2,...] [--alpn-select-conn P] [--max-frag-len N]\n");
}

/* --alpn-select-conn: the protocol to pick comes from the connection's user
 * pointer, so a pick proves the callback was handed that connection. */
static int alpn_by_conn(struct sotls_conn *c, void *arg, const char *server_name,
			const char *const *offered, size_t n)
{
	(void)arg;
	const char *want = sotls_conn_user(c);
	int pick = SOTLS_ALPN_NONE;
	printf("ALPN-CALLBACK user=%s server_name=%s offered=", want ? want : "-",
	       server_name[0] ? server_name : "-");
	for (size_t i = 0; i < n; i++) {
		printf("%s%s", i ? "," : "", offered[i]);
		if (want != NULL && strcmp(offered[i], want) == 0 && pick == SOTLS_ALPN_NONE)
			pick = (int)i;
	}
	printf("\n");
	return pick;
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
	if (d == NULL || fread(d, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(d);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return d;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},	     {"cert", required_argument, NULL, 'c'},
		{"key", required_argument, NULL, 'k'},	     {"ca", required_argument, NULL, 'a'},
		{"servername", required_argument, NULL, 'n'}, {"verify", no_argument, NULL, 'v'},
		{"cipher", required_argument, NULL, 's'},    {"send", required_argument, NULL, 'S'},
		{"recv", required_argument, NULL, 'R'},	     {"expect", required_argument, NULL, 'e'},
		{"port-file", required_argument, NULL, 'f'}, {"alpn", required_argument, NULL, 'A'},
		{"max-frag-len", required_argument, NULL, 'm'},
		{"alpn-select-conn", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	const char *cert = NULL, *key = NULL, *ca = NULL, *sni = NULL, *cipher = NULL;
	const char *send_path = NULL, *recv_path = NULL, *port_file = NULL;
	char *alpn = NULL, *alpn_conn = NULL;
	int port = 0, verify = 0, opt;
	unsigned max_frag = 0;
	size_t expect = 0;

	if (argc < 2 || (strcmp(argv[1], "client") != 0 && strcmp(argv[1], "server") != 0)) {
		usage();
		return 2;
	}
	int server = strcmp(argv[1], "server") == 0;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 'a': ca = optarg; break;
		case 'n': sni = optarg; break;
		case 'v': verify = 1; break;
		case 's': cipher = optarg; break;
		case 'S': send_path = optarg; break;
		case 'R': recv_path = optarg; break;
		case 'e': expect = strtoull(optarg, NULL, 10); break;
		case 'f': port_file = optarg; break;
		case 'A': alpn = optarg; break;
		case 'C': alpn_conn = optarg; break;
		case 'm': max_frag = (unsigned)strtoul(optarg, NULL, 10); break;
		default: usage(); return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct sotls_config *cfg = sotls_config_new(server ? SOTLS_ROLE_SERVER : SOTLS_ROLE_CLIENT);
	int rc = 0;
	if (cert && (rc = sotls_config_set_cert_file(cfg, cert, key)) != 0)
		fprintf(stderr, "cert: %s\n", sotls_strerror(rc));
	if (rc == 0 && ca && (rc = sotls_config_set_ca_file(cfg, ca)) != 0)
		fprintf(stderr, "ca: %s\n", sotls_strerror(rc));
	if (rc == 0)
		rc = sotls_config_set_verify(cfg, verify ? SOTLS_VERIFY_REQUIRED : SOTLS_VERIFY_NONE);
	if (rc == 0 && sni)
		rc = sotls_config_set_server_name(cfg, sni);
	if (rc == 0 && cipher && (rc = sotls_config_set_suites(cfg, cipher)) != 0)
		fprintf(stderr, "cipher: %s\n", sotls_strerror(rc));
	if (rc == 0 && alpn) {
		const char *protos[SOTLS_ALPN_MAX];
		size_t n = 0;
		for (char *p = strtok(alpn, ","); p != NULL && n < SOTLS_ALPN_MAX; p = strtok(NULL, ","))
			protos[n++] = p;
		if ((rc = sotls_config_set_alpn(cfg, protos, n)) != 0)
			fprintf(stderr, "alpn: %s\n", sotls_strerror(rc));
	}
	if (rc == 0 && alpn_conn &&
	    (rc = sotls_config_set_alpn_select_conn(cfg, alpn_by_conn, NULL)) != 0)
		fprintf(stderr, "alpn-select-conn: %s\n", sotls_strerror(rc));
	if (rc == 0 && max_frag && (rc = sotls_config_set_max_fragment_length(cfg, max_frag)) != 0)
		fprintf(stderr, "max-frag-len: %s\n", sotls_strerror(rc));
	if (rc != 0)
		return 2;

	size_t send_len = 0;
	uint8_t *send_buf = send_path ? load(send_path, &send_len) : NULL;
	if (send_path && send_buf == NULL) {
		fprintf(stderr, "%s: %s\n", send_path, strerror(errno));
		return 2;
	}
	FILE *out = recv_path ? fopen(recv_path, "wb") : NULL;

	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (server) {
		int one = 1, ls = fd;
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0) {
			perror("listen");
			return 2;
		}
		socklen_t sl = sizeof(sa);
		getsockname(ls, (struct sockaddr *)&sa, &sl);
		if (port_file) {
			char tmp[4096];
			snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
			FILE *f = fopen(tmp, "w");
			fprintf(f, "%d\n", ntohs(sa.sin_port));
			fclose(f);
			rename(tmp, port_file);
		}
		fd = accept(ls, NULL, NULL);
		close(ls);
	} else if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("connect");
		return 2;
	}
	if (fd < 0)
		return 2;

	struct sotls_conn *c;
	int nrc = sotls_conn_new(cfg, fd, &c);
	sotls_config_free(cfg);
	if (nrc != 0)
		return 2;
	sotls_conn_set_user(c, alpn_conn);
	rc = sotls_handshake(c);
	if (rc != 0) {
		printf("HANDSHAKE-FAILED %s: %s\n", sotls_strerror(rc), sotls_conn_error_detail(c));
		sotls_conn_free(c);
		return 1;
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	printf("HANDSHAKE %s %s %s\n", info.suite,
	       info.tx_path == SOTLS_PATH_USERSPACE ? "userspace" : "kernel",
	       info.rx_path == SOTLS_PATH_USERSPACE ? "userspace" : "kernel");
	printf("NEGOTIATED alpn=%s server_name=%s cert=%d\n", info.alpn[0] ? info.alpn : "-",
	       info.server_name[0] ? info.server_name : "-", info.cert_index);
	printf("MAX_FRAGMENT_LENGTH %u\n", (unsigned)info.max_fragment_len);

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	size_t sent = 0, got = 0;
	int closed_tx = 0, status = 1;
	static uint8_t buf[1 << 17];
	for (;;) {
		int want_out = 0;
		/* send */
		while (sent < send_len) {
			ssize_t n = sotls_send(c, send_buf + sent, send_len - sent);
			if (n == SOTLS_WANT_WRITE) {
				want_out = 1;
				break;
			}
			if (n < 0) {
				printf("END error %d send: %s: %s\n", (int)n, sotls_strerror((int)n),
				       sotls_conn_error_detail(c));
				sotls_conn_free(c);
				return 1;
			}
			sent += (size_t)n;
		}
		/* close once everything is out and in */
		if (!closed_tx && sent == send_len && got >= expect) {
			rc = sotls_shutdown(c);
			if (rc == SOTLS_WANT_WRITE)
				want_out = 1;
			else if (rc != 0) {
				printf("END error %d shutdown: %s\n", rc, sotls_strerror(rc));
				sotls_conn_free(c);
				return 1;
			} else
				closed_tx = 1;
		}
		/* receive */
		ssize_t n = sotls_recv(c, buf, sizeof(buf));
		if (n > 0) {
			if (out)
				fwrite(buf, 1, (size_t)n, out);
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			printf("END close_notify received=%zu sent=%zu\n", got, sent);
			/* answer with our own close_notify if not sent yet */
			while (!closed_tx && sent == send_len) {
				rc = sotls_shutdown(c);
				if (rc == 0)
					closed_tx = 1;
				else if (rc != SOTLS_WANT_WRITE)
					break;
				else
					poll(&(struct pollfd){.fd = fd, .events = POLLOUT}, 1, 1000);
			}
			status = (sent == send_len && got >= expect && closed_tx) ? 0 : 1;
			break;
		}
		if (n != SOTLS_WANT_READ) {
			printf("END %s %d %s: %s\n", n == SOTLS_ERR_TRUNCATED ? "truncated" : "error",
			       (int)n, sotls_strerror((int)n), sotls_conn_error_detail(c));
			sotls_get_info(c, &info);
			printf("PEER-ALERT %d\n", info.peer_alert);
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN | (want_out ? POLLOUT : 0)};
		if (poll(&p, 1, 60000) <= 0) {
			printf("END error timeout\n");
			break;
		}
	}
	if (out)
		fclose(out);
	sotls_conn_free(c);
	close(fd);
	free(send_buf);
	return status;
}

#include "server_setup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ephemeral_cert.h"

int server_cert_setup(struct sotls_config *cfg, const char *cert, const char *key, bool verbose,
		      const char *client_hint)
{
	static char cert_pem[4096], key_pem[1024];
	int rc;

	if (cert != NULL)
		return sotls_config_set_cert_file(cfg, cert, key);
	if (ephemeral_cert("localhost", cert_pem, sizeof(cert_pem), key_pem, sizeof(key_pem)) != 0)
		return SERVER_CERT_EPHEMERAL_FAILED;
	rc = sotls_config_set_cert_mem(cfg, cert_pem, strlen(cert_pem) + 1, key_pem,
				       strlen(key_pem) + 1);
	if (verbose)
		printf("no --cert/--key: using an ephemeral self-signed ECDSA P-256 "
		       "certificate for CN=localhost (clients need %s)\n",
		       client_hint);
	return rc;
}

/* Short names for the log's events, as an operator would grep for them. */
static const char *const LOG_EVENT_NAMES[] = {
	[SOTLS_LOG_KTLS_FALLBACK] = "ktls-fallback",
	[SOTLS_LOG_RECORD_FLOOD] = "record-flood",
	[SOTLS_LOG_KEY_USAGE_LIMIT] = "key-usage-limit",
	[SOTLS_LOG_BAD_RECORD_MAC] = "bad-record-mac",
	[SOTLS_LOG_PEER_FAULT] = "peer-fault",
	[SOTLS_LOG_TICKET_KEY_FILE] = "ticket-key-file",
	[SOTLS_LOG_SESSION_CONTEXT] = "session-context",
};

/* Whether line repeats the last kTLS fallback said: on a host without kTLS
 * (or without the cipher) every connection falls back for the same reason,
 * which an operator needs to read once, not once per connection. */
static bool repeated_fallback(const char *line)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char last[256];
	pthread_mutex_lock(&lock);
	bool same = strncmp(last, line, sizeof(last) - 1) == 0;
	if (!same)
		snprintf(last, sizeof(last), "%s", line);
	pthread_mutex_unlock(&lock);
	return same;
}

static void log_to_stderr(const struct sotls_conn *c, enum sotls_log_event event,
			  const char *line, void *arg)
{
	(void)c;
	(void)arg;
	if (event == SOTLS_LOG_KTLS_FALLBACK && repeated_fallback(line))
		return;
	size_t n = sizeof(LOG_EVENT_NAMES) / sizeof(LOG_EVENT_NAMES[0]);
	const char *name = (size_t)event < n && LOG_EVENT_NAMES[event] != NULL
				   ? LOG_EVENT_NAMES[event]
				   : "event";
	fprintf(stderr, "sotls %s: %s\n", name, line);
}

int server_log_setup(struct sotls_config *cfg)
{
	int rc = sotls_config_set_log(cfg, log_to_stderr, NULL);
	if (rc != 0)
		fprintf(stderr, "log callback: %s\n", sotls_strerror(rc));
	return rc;
}

void print_config_error(const char *what, const struct sotls_config *cfg, int rc)
{
	const char *detail = sotls_config_error_detail(cfg);
	fprintf(stderr, "%s: %s%s%s\n", what, sotls_strerror(rc), detail[0] != '\0' ? ": " : "",
		detail);
}

int parse_ktls_policy(const char *s, enum sotls_ktls_policy *p)
{
	if (strcmp(s, "auto") == 0)
		*p = SOTLS_KTLS_AUTO;
	else if (strcmp(s, "off") == 0)
		*p = SOTLS_KTLS_OFF;
	else if (strcmp(s, "require") == 0)
		*p = SOTLS_KTLS_REQUIRE;
	else if (strcmp(s, "tx") == 0)
		*p = SOTLS_KTLS_TX_ONLY;
	else if (strcmp(s, "rx") == 0)
		*p = SOTLS_KTLS_RX_ONLY;
	else
		return -1;
	return 0;
}

int parse_sendfile_mode(const char *s, enum sotls_sendfile_mode *m)
{
	if (strcmp(s, "auto") == 0)
		*m = SOTLS_SENDFILE_AUTO;
	else if (strcmp(s, "zc") == 0)
		*m = SOTLS_SENDFILE_ZERO_COPY;
	else if (strcmp(s, "send") == 0)
		*m = SOTLS_SENDFILE_COPY;
	else if (strcmp(s, "pread") == 0)
		*m = SOTLS_SENDFILE_PREAD;
	else if (strcmp(s, "sendfile") == 0)
		*m = SOTLS_SENDFILE_PLAIN;
	else
		return -1;
	return 0;
}

static int listen_on(const char *bind_addr, int port, int sock_flags, int backlog, bool reuseport,
		     int *bound_port)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | sock_flags, 0);
	int one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	socklen_t slen = sizeof(sa);

	if (ls < 0 || inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1) {
		if (ls >= 0)
			close(ls);
		return LISTEN_BAD_ADDRESS;
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if ((reuseport && setsockopt(ls, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, backlog) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &slen) != 0) {
		int err = errno;
		close(ls);
		errno = err;
		return -1;
	}
	*bound_port = ntohs(sa.sin_port);
	return ls;
}

int listen_tcp4(const char *bind_addr, int port, int sock_flags, int backlog, int *bound_port)
{
	return listen_on(bind_addr, port, sock_flags, backlog, false, bound_port);
}

int listen_tcp4_reuseport(const char *bind_addr, int port, int sock_flags, int backlog,
			  int *bound_port)
{
	return listen_on(bind_addr, port, sock_flags, backlog, true, bound_port);
}

int write_port_file(const char *path, int port)
{
	char tmp[PATH_MAX];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		return -1;
	return 0;
}

int accept_client(int ls, struct sockaddr *peer, socklen_t *peer_len)
{
	int one = 1;

	for (;;) {
		int fd = accept4(ls, peer, peer_len, SOCK_CLOEXEC);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		if (errno != EINTR && errno != ECONNABORTED && errno != EMFILE && errno != ENFILE)
			return -1;
	}
}

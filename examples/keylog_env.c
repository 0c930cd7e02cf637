#include "keylog_env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "help_text.h"

/* The key log file: opened once, for the life of the process. */
static int g_fd = -1;

/* One write(2) of line + newline on an O_APPEND descriptor: lines from
 * connections on several threads (and processes) never interleave. */
static void write_line(const struct sotls_conn *c, const char *line, void *arg)
{
	(void)c;
	(void)arg;
	char buf[256];
	size_t n = strlen(line);
	if (n + 1 > sizeof(buf))
		return;
	memcpy(buf, line, n);
	buf[n] = '\n';
	while (write(g_fd, buf, n + 1) < 0 && errno == EINTR)
		;
	memset(buf, 0, sizeof(buf));
}

int keylog_from_env(struct sotls_config *cfg)
{
	const char *path = getenv("SSLKEYLOGFILE");
	if (path == NULL || path[0] == '\0')
		return 0;
	/* A server that builds a new configuration (the HTTPS server on
	 * SIGHUP) calls this again: same file, one notice. */
	bool first = g_fd < 0;
	if (first)
		g_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (g_fd < 0) {
		fprintf(stderr, "SSLKEYLOGFILE %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = sotls_config_set_keylog(cfg, write_line, NULL);
	if (rc != 0) {
		fprintf(stderr, "SSLKEYLOGFILE: %s\n", sotls_strerror(rc));
		return -1;
	}
	if (first)
		fprintf(stderr, "SSLKEYLOGFILE: logging TLS secrets to %s (debugging only)\n", path);
	return 0;
}

void keylog_env_usage(FILE *f)
{
	help_section(f, "ENVIRONMENT");
	help_option(f, "SSLKEYLOGFILE",
		    "if set, every connection's secrets are appended to this file (created mode "
		    "0600) in the NSS key log format, for Wireshark: whoever reads it can decrypt "
		    "the traffic, so never in production");
}

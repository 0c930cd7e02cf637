/* What the example servers share to get going: the server certificate
 * (--cert/--key, or an ephemeral one), the library's log on stderr, --ktls,
 * the listening socket, --port-file, and accepting a client. */
#ifndef SOTLS_EXAMPLES_SERVER_SETUP_H
#define SOTLS_EXAMPLES_SERVER_SETUP_H

#include <stdbool.h>
#include <sys/socket.h>

#include "sotls.h"

/* server_cert_setup's result when the ephemeral certificate could not be
 * made (the message is already on stderr). */
#define SERVER_CERT_EPHEMERAL_FAILED 1

/* Loads cert and key (PEM files) into cfg or, with cert == NULL, a fresh
 * self-signed ECDSA P-256 certificate for CN=localhost; then, if verbose,
 * says so and that clients need client_hint. Returns 0, a sotls error code,
 * or SERVER_CERT_EPHEMERAL_FAILED. */
int server_cert_setup(struct sotls_config *cfg, const char *cert, const char *key, bool verbose,
		      const char *client_hint);

/* What the library decides on its own (kTLS fallbacks, peers cut off, a
 * ticket key file that fails to re-read; sotls_config_set_log), one line
 * each on stderr: "sotls <event>: <line>". Returns 0, or the setter's
 * error (said on stderr). */
int server_log_setup(struct sotls_config *cfg);
/* The DESCRIPTION paragraph that says so, for the servers' --help. */
#define SERVER_LOG_HELP                                                                       \
	"What sotls decides on its own is printed on stderr as \"sotls EVENT: why\": a "      \
	"connection kept out of kernel TLS (ktls-fallback, said again only when the reason "    \
	"changes), a peer cut off (record-flood, "                                              \
	"key-usage-limit, bad-record-mac, peer-fault), a ticket key file that failed to "       \
	"re-read (ticket-key-file), a session not resumed for another trust (session-context).\n"

/* Prints "what: <sotls_strerror(rc)>: <sotls_config_error_detail(cfg)>" on
 * stderr, the detail only where the library left one (which file, why). */
void print_config_error(const char *what, const struct sotls_config *cfg, int rc);

/* --ktls: "auto", "off", "require", "tx" (kTLS TX only) or "rx" (RX only)
 * into *p. Returns 0, or -1 for anything else. KTLS_FLAG_HELP is its
 * meaning for help_option (the default is the program's to add). */
#define KTLS_FLAG_HELP                                                                      \
	"auto | off | require | tx | rx: kernel TLS where the kernel takes the cipher, never, " \
	"or else fail; tx and rx: that direction only"
#define KTLS_FLAG_ERROR "--ktls: auto, off, require, tx or rx\n"
int parse_ktls_policy(const char *s, enum sotls_ktls_policy *p);

/* --sendfile: "auto", "zc", "send", "pread" or "sendfile" into *m. Returns
 * 0, or -1 for anything else. */
#define SENDFILE_FLAG_HELP                                                                    \
	"auto | zc | send | pread | sendfile: pin the path bodies take (default auto: the best " \
	"the kernel offers)"
#define SENDFILE_FLAG_ERROR "--sendfile: auto, zc, send, pread or sendfile\n"
int parse_sendfile_mode(const char *s, enum sotls_sendfile_mode *m);

/* listen_tcp4's result when bind_addr is not an IPv4 address (or there was
 * no socket); -1 means bind or listen failed, with errno. */
#define LISTEN_BAD_ADDRESS (-2)

/* A listening TCP socket (SO_REUSEADDR, CLOEXEC, plus sock_flags such as
 * SOCK_NONBLOCK) on bind_addr:port (port 0: any); *bound_port is the port
 * it got. Returns the descriptor, LISTEN_BAD_ADDRESS or -1. */
int listen_tcp4(const char *bind_addr, int port, int sock_flags, int backlog, int *bound_port);

/* The same with SO_REUSEPORT: several sockets on one port, each with its
 * own accept queue the kernel spreads clients over (one per thread). The
 * first may ask for port 0; the others then take the port it got. */
int listen_tcp4_reuseport(const char *bind_addr, int port, int sock_flags, int backlog,
			  int *bound_port);

/* Writes "port\n" to path through path.tmp and a rename, so a reader never
 * sees a partial file. Returns 0, or -1 with errno. */
int write_port_file(const char *path, int port);

/* Accepts the next client of the blocking listening socket ls (CLOEXEC,
 * TCP_NODELAY), retrying past the errors a busy server can meet (EINTR,
 * ECONNABORTED, EMFILE, ENFILE). peer and peer_len as for accept(2), may be
 * NULL. Returns the descriptor, or -1 with errno for any other error. */
int accept_client(int ls, struct sockaddr *peer, socklen_t *peer_len);

#endif

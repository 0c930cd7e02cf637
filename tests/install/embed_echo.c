/*
 * A minimal server and client on the installed sotls, built out of tree.
 *   embed_echo server PORT CERT KEY   serves one client: echoes one message
 *   embed_echo client PORT             sends "hello", expects it back
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sotls.h>

static int fail(const char *what, int rc, struct sotls_conn *c)
{
	fprintf(stderr, "%s: %s %s\n", what, sotls_strerror(rc), c ? sotls_conn_error_detail(c) : "");
	return 1;
}

static int serve(int port, const char *cert, const char *key)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) != 0)
		return fail("listen", SOTLS_ERR_SYSCALL, NULL);
	puts("listening");
	fflush(stdout);

	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	int rc = sotls_config_set_cert_file(cfg, cert, key);
	if (rc != 0)
		return fail("certificate", rc, NULL);
	struct sotls_conn *c;
	int fd = accept(ls, NULL, NULL);
	if ((rc = sotls_conn_new(cfg, fd, &c)) != 0 || (rc = sotls_handshake(c)) != 0)
		return fail("handshake", rc, c);
	char buf[64];
	ssize_t n = sotls_recv(c, buf, sizeof(buf));
	if (n <= 0 || sotls_send(c, buf, (size_t)n) != n || sotls_shutdown(c) != 0)
		return fail("echo", (int)n, c);
	sotls_conn_free(c);
	sotls_config_free(cfg);
	close(fd);
	close(ls);
	return 0;
}

static int connect_to(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	return connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? fd : -1;
}

static int client(int port)
{
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	/* The test server's certificate is self-signed: no CA to check it against. */
	sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE);
	struct sotls_conn *c = NULL;
	int rc, fd = connect_to(port);
	if (fd < 0)
		return fail("connect", SOTLS_ERR_SYSCALL, NULL);
	if ((rc = sotls_conn_new(cfg, fd, &c)) != 0 || (rc = sotls_handshake(c)) != 0)
		return fail("handshake", rc, c);
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	char buf[64];
	if (sotls_send(c, "hello", 5) != 5 || sotls_recv(c, buf, sizeof(buf)) != 5 ||
	    memcmp(buf, "hello", 5) != 0 || sotls_recv(c, buf, sizeof(buf)) != 0)
		return fail("echo", SOTLS_ERR_INTERNAL, c);
	printf("echoed over %s with sotls %s (%s)\n", info.suite, sotls_version(), info.aead_impl);
	sotls_conn_free(c);
	sotls_config_free(cfg);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "server") == 0)
		return serve(atoi(argv[2]), argv[3], argv[4]);
	if (argc == 3 && strcmp(argv[1], "client") == 0)
		return client(atoi(argv[2]));
	fprintf(stderr, "usage: embed_echo server PORT CERT KEY | client PORT\n");
	return 2;
}

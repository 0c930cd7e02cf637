/*
 * libFuzzer target: the handshake entry. The input is everything the peer
 * sends; it goes through the socket (and so through sotls's BIO) into
 * mbedTLS. Built twice: FUZZ_SERVER (the input is a client's flight: a
 * ClientHello, then ClientKeyExchange, ...) and the client (the input is a
 * server's flight: ServerHello, Certificate, ServerKeyExchange, ...).
 *
 * If the handshake ever completes (it cannot without the peer's keys, but
 * the fuzzer may prove otherwise) the rest of the input goes on to
 * sotls_recv. Sanitizers, leaks and hangs are what is checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef FUZZ_SERVER
#include "ephemeral_cert.h"
#endif
#include "sotls.h"

static struct sotls_config *g_cfg;

static void setup(void)
{
#ifdef FUZZ_SERVER
	static char cert[4096], key[4096];
	if (ephemeral_cert("localhost", cert, sizeof(cert), key, sizeof(key)) != 0)
		abort();
	g_cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (g_cfg == NULL ||
	    sotls_config_set_cert_mem(g_cfg, cert, strlen(cert) + 1, key, strlen(key) + 1) != 0)
		abort();
#else
	g_cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	/* No verification: the fuzzer's certificates get parsed and used. */
	if (g_cfg == NULL || sotls_config_set_verify(g_cfg, SOTLS_VERIFY_NONE) != 0 ||
	    sotls_config_set_server_name(g_cfg, "localhost") != 0)
		abort();
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_cfg == NULL)
		setup();
	if (size > 60000)
		return 0;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	int big = 256 * 1024;
	setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (size > 0 && send(sp[1], data, size, MSG_DONTWAIT) != (ssize_t)size)
		abort();
	shutdown(sp[1], SHUT_WR); /* then EOF: nothing blocks */

	struct sotls_conn *c = NULL;
	if (sotls_conn_new(g_cfg, sp[0], &c) != 0)
		abort();
	int rc = sotls_handshake(c);
	if (rc == 0) {
		uint8_t buf[4096];
		ssize_t n;
		while ((n = sotls_recv(c, buf, sizeof(buf))) > 0)
			;
	} else if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE) {
		abort(); /* a blocking socket never says so */
	}
	(void)sotls_strerror(rc);
	(void)sotls_conn_error_detail(c);
	sotls_conn_free(c);
	close(sp[0]);
	close(sp[1]);
	return 0;
}

/*
 * libFuzzer target: the handshake entry. The input is everything the peer
 * sends; it goes through the socket (and so through sotls's BIO) into
 * mbedTLS. Built twice: FUZZ_SERVER (the input is a client's flight: a
 * ClientHello, then ClientKeyExchange, ...) and the client (the input is a
 * server's flight: ServerHello, Certificate, ServerKeyExchange, ...).
 *
 * The client offers a session when the input starts with 'R' (session ID
 * 32 x 0x42, suite 0xC02B, made at start-up), so a ServerHello that echoes
 * the ID takes the client's resumption path (lib/handshake/resume.c).
 *
 * If the handshake ever completes (it cannot without the peer's keys, but
 * the fuzzer may prove otherwise) the rest of the input goes on to
 * sotls_recv. Sanitizers, leaks and hangs are what is checked.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef FUZZ_SERVER
#include "ephemeral_cert.h"
#else
#define MBEDTLS_ALLOW_PRIVATE_ACCESS /* the session's fields, to make one */
#include <time.h>

#include <mbedtls/ssl.h>

#include "handshake.h"
#include "resume.h"
#endif
#include "sotls.h"

static struct sotls_config *g_cfg;

#ifndef FUZZ_SERVER
static uint8_t g_sess[1024];
static size_t g_sess_len;

/* A client session for "localhost" as sotls_conn_get_session would give. */
static void make_session(void)
{
	mbedtls_ssl_session s;
	mbedtls_ssl_session_init(&s);
	s.tls_version = MBEDTLS_SSL_VERSION_TLS1_2;
	s.endpoint = MBEDTLS_SSL_IS_CLIENT;
	s.ciphersuite = 0xC02B;
	s.id_len = 32;
	memset(s.id, 0x42, sizeof(s.id));
	memset(s.master, 0x11, sizeof(s.master));
	s.start = time(NULL);
	uint8_t mbed[512];
	size_t mlen;
	if (mbedtls_ssl_session_save(&s, mbed, sizeof(mbed), &mlen) != 0)
		abort();
	struct sotls_session_state st = {.role = SOTLS_SESSION_ROLE_CLIENT, .suite = 0xC02B,
					 .issued = (int64_t)time(NULL), .lifetime = 86400,
					 .mbed = mbed, .mbed_len = mlen};
	strcpy(st.sni, "localhost");
	/* Bound to the configuration's trust, as a session it made would be:
	 * any other context is never offered (session_context.c). */
	if (sotls_session_context_compute(g_cfg) != 0)
		abort();
	memcpy(st.context, g_cfg->resume.context, sizeof(st.context));
	g_sess_len = sotls_session_state_size(&st);
	if (g_sess_len > sizeof(g_sess))
		abort();
	sotls_session_state_encode(&st, g_sess);
	mbedtls_ssl_session_free(&s);
}
#endif

static void setup(void)
{
#ifdef FUZZ_SERVER
	if ((g_cfg = ephemeral_server_config("localhost")) == NULL)
		abort();
#else
	g_cfg = sotls_config_new(SOTLS_ROLE_CLIENT);
	/* No verification: the fuzzer's certificates get parsed and used. */
	if (g_cfg == NULL || sotls_config_set_verify(g_cfg, SOTLS_VERIFY_NONE) != 0 ||
	    sotls_config_set_server_name(g_cfg, "localhost") != 0)
		abort();
	make_session();
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_cfg == NULL)
		setup();
	if (size > 60000)
		return 0;
	bool offer = false;
#ifndef FUZZ_SERVER
	if (size > 0 && data[0] == 'R') {
		offer = true;
		data++;
		size--;
	}
#endif
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
#ifndef FUZZ_SERVER
	if (offer && sotls_conn_set_session(c, g_sess, g_sess_len) != 0)
		abort();
#endif
	(void)offer;
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

/*
 * libFuzzer target: a server engine (sotls_conn_new_engine) fed arbitrary
 * bytes in arbitrary pieces. The first two input bytes seed the cut sizes;
 * the rest is what a client sends. Between pieces the engine is stepped
 * (sotls_recv runs the handshake) and its output taken, as an application
 * would. Checked besides the sanitizers: the engine never takes more than
 * the room it offered, a failed engine holds only its last words and then
 * nothing, and no call returns something a caller could not act on.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ephemeral_cert.h"
#include "sotls.h"

static struct sotls_config *g_cfg;

static void setup(void)
{
	if ((g_cfg = ephemeral_server_config("localhost")) == NULL)
		abort();
}

/* Takes everything the engine has to send; how much there was. */
static size_t drain(struct sotls_conn *c)
{
	size_t total = 0, len;
	while (sotls_engine_send_buf(c, &len) != NULL) {
		if (len == 0 || sotls_engine_send_done(c, len) != 0)
			abort();
		total += len;
	}
	return total;
}

/* One step as an application takes it; false once the connection is over. */
static bool step(struct sotls_conn *c)
{
	uint8_t app[4096];
	ssize_t n = sotls_recv(c, app, sizeof(app)); /* the handshake first */
	drain(c);
	if (n == SOTLS_WANT_READ || n == SOTLS_WANT_WRITE || n > 0)
		return true;
	if (n < 0 && !(sotls_engine_state(c) & SOTLS_ENGINE_FAILED))
		abort(); /* a final error must leave the engine failed */
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_cfg == NULL)
		setup();
	if (size < 2 || size > 60000)
		return 0;
	uint32_t rng = (uint32_t)data[0] << 8 | data[1] | 1u;
	data += 2;
	size -= 2;
	struct sotls_conn *c;
	if (sotls_conn_new_engine(g_cfg, &c) != 0)
		abort();
	bool live = step(c);
	size_t off = 0;
	while (live && off < size) {
		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		size_t piece = 1 + rng % (rng & 0x100 ? 7 : 3000);
		if (piece > size - off)
			piece = size - off;
		size_t cap;
		void *in = sotls_engine_recv_buf(c, &cap);
		size_t took = sotls_engine_feed(c, data + off, piece);
		if (took > piece || (in == NULL && took != 0) || took > cap)
			abort();
		off += took;
		live = step(c);
		if (took == 0 && live && sotls_engine_recv_buf(c, &cap) == NULL) {
			/* Neither takes input nor failed: it must be open and
			 * waiting to be read from, which step just did. */
			if (!(sotls_engine_state(c) & SOTLS_ENGINE_OPEN))
				abort();
			break;
		}
	}
	if (live) {
		sotls_engine_recv_eof(c);
		while (step(c))
			;
	}
	drain(c);
	size_t len;
	if (sotls_engine_send_buf(c, &len) != NULL || len != 0)
		abort();
	sotls_conn_free(c);
	return 0;
}

/*
 * A connection holds its record buffers (66 KiB to send, 84 KiB to receive)
 * only while bytes are in them: record.c gives them back at the end of any
 * call that leaves them empty, so ten thousand idle keep-alive connections
 * cost a few KiB each, not 150 KiB. Each thread keeps one spare of each kind,
 * so borrowing again on the next call is a pointer swap, not malloc, free
 * and fresh zeroed pages.
 *
 * A spare may be lent to another connection, so it must hold no plaintext:
 * the send buffer only ever holds ciphertext, and the receive buffer is
 * given back only when empty, after record.c has wiped each plaintext byte
 * it handed out.
 */
#include "record_buffers.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct spares {
	void *buf[SOTLS_RECBUF_KINDS];
};

static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_key_ok;

/* At thread exit. */
static void spares_free(void *p)
{
	struct spares *s = p;
	for (int k = 0; k < SOTLS_RECBUF_KINDS; k++)
		free(s->buf[k]);
	free(s);
}

static void key_create(void)
{
	g_key_ok = pthread_key_create(&g_key, spares_free) == 0;
}

/* This thread's spares, or NULL (then buffers go straight to malloc/free). */
static struct spares *spares(void)
{
	if (pthread_once(&g_once, key_create) != 0 || !g_key_ok)
		return NULL;
	struct spares *s = pthread_getspecific(g_key);
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s != NULL && pthread_setspecific(g_key, s) != 0) {
			free(s);
			s = NULL;
		}
	}
	return s;
}

void *sotls_recbuf_get(enum sotls_recbuf_kind kind, size_t size)
{
	if ((unsigned)kind >= SOTLS_RECBUF_KINDS || size == 0 || size % 64 != 0)
		return NULL;
	struct spares *s = spares();
	if (s != NULL && s->buf[kind] != NULL) {
		void *b = s->buf[kind];
		s->buf[kind] = NULL;
		return b;
	}
	return aligned_alloc(64, size);
}

void sotls_recbuf_put(enum sotls_recbuf_kind kind, void *buf)
{
	if (buf == NULL || (unsigned)kind >= SOTLS_RECBUF_KINDS)
		return;
	struct spares *s = spares();
	if (s != NULL && s->buf[kind] == NULL) {
		s->buf[kind] = buf;
		return;
	}
	free(buf);
}

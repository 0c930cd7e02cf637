/*
 * Send and receive buffers for lib/record, lent out while a connection has
 * bytes in them. See record_buffers.c for why and how.
 */
#ifndef SOTLS_RECORD_BUFFERS_H
#define SOTLS_RECORD_BUFFERS_H

#include <stddef.h>

enum sotls_recbuf_kind { SOTLS_RECBUF_TX, SOTLS_RECBUF_RX, SOTLS_RECBUF_KINDS };

/* A 64-byte aligned buffer of size bytes (a multiple of 64, always the same
 * for a kind), or NULL when out of memory. */
void *sotls_recbuf_get(enum sotls_recbuf_kind kind, size_t size);

/* Takes back a buffer from sotls_recbuf_get (NULL is fine). It must hold no
 * plaintext: another connection may be lent it next. */
void sotls_recbuf_put(enum sotls_recbuf_kind kind, void *buf);

#endif

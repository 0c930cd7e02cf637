/*
 * Where a connection's ciphertext comes from and goes to: its socket, or,
 * for an engine connection (sotls_conn_new_engine), the application, which
 * moves the bytes itself through sotls_engine_recv_buf/_send_buf. The
 * handshake reader and the record layer read and write only through here,
 * so the same code serves both, and an engine connection makes no syscall.
 *
 * On an engine connection a read finds nothing to read (SOTLS_WANT_READ:
 * the application puts bytes straight into the reader's buffer, then calls
 * again) and a write takes nothing (SOTLS_WANT_WRITE: the application takes
 * the bytes from the writer's buffer).
 */
#ifndef SOTLS_WIRE_H
#define SOTLS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sotls_wire {
	int fd;	  /* the socket, or -1 on an engine connection */
	bool eof; /* engine: the application reported the peer's end of stream */
};

/* Bytes read (> 0), 0 at the peer's end of stream, SOTLS_WANT_READ, or
 * SOTLS_ERR_SYSCALL with errno set. len > 0. */
ssize_t sotls_wire_recv(struct sotls_wire *w, void *buf, size_t len);

/* Bytes written (> 0), SOTLS_WANT_WRITE, or SOTLS_ERR_SYSCALL with errno
 * set. flags: send(2)'s, MSG_NOSIGNAL always added. len > 0. */
ssize_t sotls_wire_send(struct sotls_wire *w, const void *buf, size_t len, int flags);

/* Writes buf[*head, tail) until all is out: 0 (then *head == tail),
 * SOTLS_WANT_WRITE, or SOTLS_ERR_SYSCALL with errno set; *head counts what
 * went. The handshake's flight and the record layer's queue both drain so. */
int sotls_wire_drain(struct sotls_wire *w, const uint8_t *buf, size_t *head, size_t tail,
		     int flags);

/* Whether the application moves the bytes (no socket). */
static inline bool sotls_wire_is_engine(const struct sotls_wire *w)
{
	return w->fd < 0;
}

#endif

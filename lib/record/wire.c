#include "wire.h"

#include <errno.h>
#include <sys/socket.h>

#include "sotls.h"

ssize_t sotls_wire_recv(struct sotls_wire *w, void *buf, size_t len)
{
	if (sotls_wire_is_engine(w))
		return w->eof ? 0 : SOTLS_WANT_READ;
	for (;;) {
		ssize_t n = recv(w->fd, buf, len, 0);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return SOTLS_WANT_READ;
		return SOTLS_ERR_SYSCALL;
	}
}

ssize_t sotls_wire_send(struct sotls_wire *w, const void *buf, size_t len, int flags)
{
	if (sotls_wire_is_engine(w))
		return SOTLS_WANT_WRITE;
	for (;;) {
		ssize_t n = send(w->fd, buf, len, MSG_NOSIGNAL | flags);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return SOTLS_WANT_WRITE;
		return SOTLS_ERR_SYSCALL;
	}
}

int sotls_wire_drain(struct sotls_wire *w, const uint8_t *buf, size_t *head, size_t tail,
		     int flags)
{
	while (*head < tail) {
		ssize_t n = sotls_wire_send(w, buf + *head, tail - *head, flags);
		if (n < 0)
			return (int)n;
		*head += (size_t)n;
	}
	return 0;
}

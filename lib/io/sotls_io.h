/*
 * File sending for sotls_sendfile (lib/conn.c), one state per connection,
 * created on the first call and sized small.
 *
 * Userspace TX path (sotls's record layer seals):
 *   zc     io_uring: IORING_OP_READ_FIXED of up to 4 records into registered
 *          buffers laid out as records [header | explicit nonce | plaintext |
 *          tag] back to back, seal in place, one IORING_OP_SEND_ZC (fixed
 *          buffer) for the whole group. Groups take turns, so the file is
 *          read into one while another is on its way; a group is reused
 *          only after its zero-copy notification (IORING_CQE_F_NOTIF), and
 *          more groups are added while all wait for theirs (sendfile.c).
 *   send   the same with IORING_OP_SEND (the kernel has no SEND_ZC, or the
 *          socket refuses it: AF_UNIX).
 *   pread  preadv(2) + send(2) into the same buffers, when io_uring is
 *          unavailable (ENOSYS, sysctl kernel.io_uring_disabled, seccomp),
 *          and once SEND_ZC reports that the kernel copied anyway (a
 *          loopback peer): then it is the cheapest copying path.
 * Kernel TX path (kTLS seals):
 *   splice io_uring IORING_OP_SPLICE file -> pipe -> socket.
 *   sendfile  sendfile(2), when io_uring cannot, or on a non-blocking socket.
 *
 * The configuration's sendfile mode (sotls_config_set_sendfile_mode) pins a
 * path; one the machine cannot do falls back as above and says so.
 */
#ifndef SOTLS_IO_H
#define SOTLS_IO_H

#include <stddef.h>
#include <sys/types.h>

#include "record.h"
#include "sotls.h"

struct sotls_io;

/*
 * Userspace TX: sends up to count bytes of file_fd from *offset as records
 * sealed by r on socket sock; sotls_sendfile's contract (sotls.h). Returns
 * the plaintext bytes sent (0 at end of file) and advances *offset, or
 * SOTLS_WANT_WRITE, or an error. SOTLS_ERR_SYSCALL with r->err still 0 means
 * the file failed (errno) and the connection is intact; any other error is
 * sticky in r. *iop is created on first use.
 */
ssize_t sotls_io_sendfile_user(struct sotls_io **iop, enum sotls_sendfile_mode mode,
			       struct sotls_record *r, int sock, int file_fd, off_t *offset,
			       size_t count);

/*
 * Kernel TX: sock has kTLS TX installed, so plain bytes go in and the
 * kernel seals. Same contract; SOTLS_ERR_SYSCALL (errno) on failure.
 * *file_failed (optional) is set when the error came from the file side.
 */
ssize_t sotls_io_sendfile_kernel(struct sotls_io **iop, enum sotls_sendfile_mode mode, int sock,
				 int file_fd, off_t *offset, size_t count, int *file_failed);

/*
 * Kernel TX: bytes sotls_io_sendfile_kernel reported as sent that still wait
 * in its pipe (the socket timed out). Everything sent on the connection
 * (sotls_send, sotls_shutdown, the next sendfile) must flush them first:
 * 0 when none are left, SOTLS_WANT_WRITE, or SOTLS_ERR_SYSCALL (errno; the
 * stream is broken). NULL io is fine.
 */
int sotls_io_kernel_flush(struct sotls_io *io, int sock);
size_t sotls_io_unsent(const struct sotls_io *io);

/* The path last used ("io_uring-send-zc", ...) and why; "" before any. */
const char *sotls_io_path(const struct sotls_io *io);
const char *sotls_io_reason(const struct sotls_io *io);

/* Bytes of record buffers held (they grow under SEND_ZC); 0 for NULL. */
size_t sotls_io_buffer_bytes(const struct sotls_io *io);

/* Frees the state. Buffers that zero-copy sends may still reference are
 * unmapped, never reused, so data already queued stays intact. NULL is ok. */
void sotls_io_free(struct sotls_io *io);

#endif

/*
 * The ring of one sotls-uring-server thread: the io_uring itself, the
 * provided-buffer ring multishot recv fills (a buffer goes back the moment
 * its bytes are handed on), the registered buffers file bodies are read
 * into (READ_FIXED), and the tags that tell a completion's operation apart.
 * Nothing TLS here: the server file drives sotls with what arrives.
 */
#ifndef SOTLS_EXAMPLES_URING_LOOP_H
#define SOTLS_EXAMPLES_URING_LOOP_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uring_loop {
	struct io_uring ring;
	/* Provided buffers for multishot recv: group URING_RECV_GROUP. */
	struct io_uring_buf_ring *br;
	size_t br_size;
	uint8_t *recv_bufs;
	unsigned n_recv;
	size_t recv_size;
	/* Registered buffers (or plain ones where registering fails, read
	 * with IORING_OP_READ instead) and the stack of free ones. */
	uint8_t *file_bufs;
	unsigned n_file;
	size_t file_size;
	bool file_registered;
	unsigned *file_free, n_free;
};

#define URING_RECV_GROUP 1

/* A completion's user_data: an object's address with the operation in its
 * low four bits (every object is malloc'd, so 16-byte aligned). */
static inline uint64_t uring_tag(const void *obj, unsigned op)
{
	return (uint64_t)(uintptr_t)obj | op;
}
static inline void *uring_tag_obj(uint64_t ud)
{
	return (void *)(uintptr_t)(ud & ~(uint64_t)15);
}
static inline unsigned uring_tag_op(uint64_t ud)
{
	return (unsigned)(ud & 15);
}

/* Sets up the ring (entries deep, single issuer, task work deferred to the
 * wait: this thread alone submits and reaps), n_recv provided buffers of
 * recv_size bytes and n_file file buffers of file_size bytes. Returns 0, or
 * -errno with the step that failed in *what. */
int uring_loop_init(struct uring_loop *l, unsigned entries, unsigned n_recv, size_t recv_size,
		    unsigned n_file, size_t file_size, const char **what);
void uring_loop_free(struct uring_loop *l);

/* An SQE, submitting what is queued to make room when the queue is full;
 * NULL only if that submit fails. */
struct io_uring_sqe *uring_sqe(struct uring_loop *l);

/* A provided buffer's bytes, and giving it back to the kernel. */
static inline uint8_t *uring_recv_buf(struct uring_loop *l, unsigned bid)
{
	return l->recv_bufs + (size_t)bid * l->recv_size;
}
void uring_recv_buf_return(struct uring_loop *l, unsigned bid);

/* A free file buffer's index, or -1 (all in use); giving it back. */
int uring_file_buf_take(struct uring_loop *l);
void uring_file_buf_give(struct uring_loop *l, int idx);
static inline uint8_t *uring_file_buf(struct uring_loop *l, int idx)
{
	return l->file_bufs + (size_t)idx * l->file_size;
}
/* Reads up to file_size bytes of fd at off into buffer idx: READ_FIXED
 * where the buffers are registered. */
void uring_prep_file_read(struct uring_loop *l, struct io_uring_sqe *sqe, int fd, int idx,
			  size_t len, uint64_t off);

#endif

/* See uring_loop.h. */
#include "uring_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

static int setup_ring(struct uring_loop *l, unsigned entries)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			 IORING_SETUP_CQSIZE,
		/* Multishot recv and accept post many completions per
		 * submission: room for them between two waits. */
		.cq_entries = entries * 4,
	};
	int rc = io_uring_queue_init_params(entries, &l->ring, &p);
	if (rc == -EINVAL) { /* a kernel before 6.1: no deferred task work */
		p = (struct io_uring_params){.flags = IORING_SETUP_CQSIZE, .cq_entries = entries * 4};
		rc = io_uring_queue_init_params(entries, &l->ring, &p);
	}
	return rc;
}

static int setup_recv_bufs(struct uring_loop *l, unsigned n, size_t size)
{
	l->br_size = n * sizeof(struct io_uring_buf);
	void *mem = mmap(NULL, l->br_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1,
			 0);
	if (mem == MAP_FAILED)
		return -errno;
	l->br = mem;
	l->recv_bufs = malloc(n * size);
	if (l->recv_bufs == NULL)
		return -ENOMEM;
	l->n_recv = n;
	l->recv_size = size;
	struct io_uring_buf_reg reg = {
		.ring_addr = (uint64_t)(uintptr_t)l->br, .ring_entries = n, .bgid = URING_RECV_GROUP};
	int rc = io_uring_register_buf_ring(&l->ring, &reg, 0);
	if (rc != 0)
		return rc;
	io_uring_buf_ring_init(l->br);
	for (unsigned i = 0; i < n; i++)
		io_uring_buf_ring_add(l->br, uring_recv_buf(l, i), (unsigned)size, (unsigned short)i,
				      io_uring_buf_ring_mask(n), (int)i);
	io_uring_buf_ring_advance(l->br, (int)n);
	return 0;
}

static int setup_file_bufs(struct uring_loop *l, unsigned n, size_t size)
{
	l->file_bufs = aligned_alloc(4096, n * size);
	l->file_free = malloc(n * sizeof(*l->file_free));
	if (l->file_bufs == NULL || l->file_free == NULL)
		return -ENOMEM;
	l->n_file = n;
	l->file_size = size;
	struct iovec *iov = malloc(n * sizeof(*iov));
	if (iov == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		iov[i] = (struct iovec){.iov_base = uring_file_buf(l, (int)i), .iov_len = size};
		l->file_free[l->n_free++] = n - 1 - i;
	}
	/* Over RLIMIT_MEMLOCK (no CAP_IPC_LOCK): the same buffers, read with
	 * plain IORING_OP_READ, one page-pinning per read instead of none. */
	l->file_registered = io_uring_register_buffers(&l->ring, iov, n) == 0;
	free(iov);
	return 0;
}

int uring_loop_init(struct uring_loop *l, unsigned entries, unsigned n_recv, size_t recv_size,
		    unsigned n_file, size_t file_size, const char **what)
{
	memset(l, 0, sizeof(*l));
	int rc = setup_ring(l, entries);
	if (rc != 0) {
		*what = "io_uring_queue_init";
		return rc;
	}
	rc = setup_recv_bufs(l, n_recv, recv_size);
	if (rc != 0) {
		*what = "io_uring_register_buf_ring";
	} else if ((rc = setup_file_bufs(l, n_file, file_size)) != 0) {
		*what = "file buffers";
	}
	if (rc != 0)
		uring_loop_free(l);
	return rc;
}

void uring_loop_free(struct uring_loop *l)
{
	/* The ring goes first: the kernel lets go of every buffer with it. */
	if (l->ring.ring_fd > 0)
		io_uring_queue_exit(&l->ring);
	if (l->br != NULL)
		munmap(l->br, l->br_size);
	free(l->recv_bufs);
	free(l->file_bufs);
	free(l->file_free);
	memset(l, 0, sizeof(*l));
}

struct io_uring_sqe *uring_sqe(struct uring_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (sqe == NULL && io_uring_submit(&l->ring) >= 0)
		sqe = io_uring_get_sqe(&l->ring);
	return sqe;
}

void uring_recv_buf_return(struct uring_loop *l, unsigned bid)
{
	io_uring_buf_ring_add(l->br, uring_recv_buf(l, bid), (unsigned)l->recv_size,
			      (unsigned short)bid, io_uring_buf_ring_mask(l->n_recv), 0);
	io_uring_buf_ring_advance(l->br, 1);
}

int uring_file_buf_take(struct uring_loop *l)
{
	return l->n_free > 0 ? (int)l->file_free[--l->n_free] : -1;
}

void uring_file_buf_give(struct uring_loop *l, int idx)
{
	l->file_free[l->n_free++] = (unsigned)idx;
}

void uring_prep_file_read(struct uring_loop *l, struct io_uring_sqe *sqe, int fd, int idx,
			  size_t len, uint64_t off)
{
	if (l->file_registered)
		io_uring_prep_read_fixed(sqe, fd, uring_file_buf(l, idx), (unsigned)len, off, idx);
	else
		io_uring_prep_read(sqe, fd, uring_file_buf(l, idx), (unsigned)len, off);
}

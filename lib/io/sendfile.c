/*
 * sotls_sendfile's engines; see sotls_io.h for the paths. Reads top to
 * bottom: state and set-up, completions, the userspace path, the kernel
 * path, teardown.
 */
#include "sotls_io.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sotls.h"

/*
 * A group is a run of records read, sealed and sent together. Two groups
 * alternate while sends complete at once. A SEND_ZC buffer, though, stays
 * the kernel's until the peer has acknowledged its bytes (the notification
 * comes after the ACK), so the groups bound what is in flight to one round
 * trip: two would cap a 50 ms path at 2.6 MB/s. The pool therefore grows,
 * one group at a time, whenever every group waits only for its notification,
 * up to GROUPS_MAX: 4 MiB in flight, the most tcp_wmem lets a socket queue
 * by default. Memory follows the path: only a long, fast one fills them,
 * and trim_pool gives back what has not been used for a while.
 */
#define GROUPS_MIN 2
#define GROUPS_MAX 64
/* Groups above GROUPS_MIN unused this long go back (trim_pool): a steady
 * stream reuses its groups well within it, so it never churns. */
#define GROUP_IDLE_MS 1000
#define GROUP_RECORDS 4
#define REC_STRIDE (SOTLS_REC_OVERHEAD + SOTLS_REC_MAX_PLAINTEXT)
#define GROUP_BYTES (GROUP_RECORDS * REC_STRIDE)
#define PAGE 4096
/* Each group's records may start anywhere in its first page (see
 * group_place), so a group spans one page more than its records. */
#define GROUP_SPAN (GROUP_BYTES + PAGE)
/*
 * The kernel copies file pages with rep movsb, which on some CPUs (AMD Zen
 * measured here) runs 3-4x slower when the destination is less than ~32
 * bytes ahead of the source modulo 4 KiB. A record's plaintext sits 13
 * bytes into it, so a buffer laid out from a page boundary hits exactly that
 * for page-aligned file offsets. Each group is placed so that its first
 * plaintext lands this far past the file offset modulo the page instead.
 */
#define COPY_SKEW 64
#define RING_ENTRIES 16
#define PIPE_CHUNK (256 * 1024)

/* Newer than liburing 2.3's header; kernel ABI values (Linux 6.2+). */
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

#define PATH_ZC "io_uring-send-zc"
#define PATH_SEND "io_uring-send"
#define PATH_PREAD "pread-send"
#define PATH_SPLICE "io_uring-splice"
#define PATH_SENDFILE "sendfile"

/* user_data: kind << 16 | group << 8 | record index */
enum { UD_READ = 1, UD_SEND = 2, UD_SPLICE_IN = 3, UD_SPLICE_OUT = 4 };
#define UD(kind, g, i) ((uint64_t)(kind) << 16 | (uint64_t)(g) << 8 | (uint64_t)(i))

enum mode { MODE_NONE, MODE_ZC, MODE_SEND, MODE_PREAD };

struct group {
	uint8_t *mem;  /* its own mapping, GROUP_SPAN bytes: registered buffer gi */
	uint8_t *base; /* its first record, see group_place */
	unsigned reads_pending;
	int read_res[GROUP_RECORDS];
	bool send_pending;  /* the send's own CQE has not come */
	/* From start_send until settle() has pushed what the send left; it
	 * spans send_pending, so a group that is not unsettled has no send. */
	bool unsettled;
	uint64_t stamp;	    /* when its last send started (io->sends) */
	uint64_t used_ms;   /* when it was last filled (now_ms) */
	bool notif_pending; /* SEND_ZC: the buffer is still the kernel's */
	int send_res;
	size_t send_len; /* wire bytes of the send */
	size_t plain;	 /* plaintext bytes in it */
	/* Plaintext per record, 2^14 or the max_fragment_length: its records
	 * lie back to back, SOTLS_REC_OVERHEAD + rec_max apart. */
	size_t rec_max;
};

struct sotls_io {
	enum mode mode;
	const char *path, *reason;
	bool have_ring, bufs_registered, can_splice;
	bool sparse;   /* the registered table has GROUPS_MAX slots */
	bool can_grow; /* sparse, and growing has not failed since the last trim */
	enum sotls_sendfile_mode want; /* the configuration's (sotls.h) */
	bool zc_forced;	     /* SOTLS_SENDFILE_ZERO_COPY: never leave SEND_ZC */
	bool zc_report;	     /* ask the kernel whether zero copy happened */
	bool zc_copied;	     /* it said it copied anyway (loopback, no SG) */
	struct io_uring ring;
	unsigned ngroups;
	uint64_t sends; /* sends started: each group's stamp */
	struct group g[GROUPS_MAX];
	/* Non-blocking sockets, while every group is the kernel's: records read
	 * with preadv and sent by send(2) (spare_group). Mapped on first use,
	 * never registered. */
	struct group spare;
	int pipefd[2];
	/* Bytes already reported as sent that wait in the pipe for the socket
	 * (a splice out that timed out): they go before anything else. */
	size_t pipe_left;
	/* kernel path counters for the splice chunks */
	int splice_in_res, splice_out_res;
	unsigned splice_pending;
};

static struct sotls_io *io_get(struct sotls_io **iop, enum sotls_sendfile_mode mode)
{
	if (*iop == NULL) {
		struct sotls_io *io = calloc(1, sizeof(*io));
		if (io == NULL)
			return NULL;
		io->pipefd[0] = io->pipefd[1] = -1;
		io->path = io->reason = "";
		io->want = mode;
		*iop = io;
	}
	return *iop;
}

/* Why io_uring_queue_init failed, in words (static strings: sotls_info
 * hands them out beyond the connection's life). */
static const char *ring_failure(int err)
{
	if (err == ENOSYS)
		return "io_uring unavailable: the kernel has no io_uring (ENOSYS); pread + send";
	if (err == EPERM) {
		int v = -1;
		FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
		if (f != NULL) {
			if (fscanf(f, "%d", &v) != 1)
				v = -1;
			fclose(f);
		}
		if (v == 1)
			return "io_uring unavailable: sysctl kernel.io_uring_disabled=1 and not in "
			       "kernel.io_uring_group (EPERM); pread + send";
		if (v == 2)
			return "io_uring unavailable: sysctl kernel.io_uring_disabled=2 (EPERM); "
			       "pread + send";
		return "io_uring unavailable: refused with EPERM (seccomp or sysctl); pread + send";
	}
	if (err == ENOMEM)
		return "io_uring unavailable: io_uring_setup failed (ENOMEM); pread + send";
	if (err == EMFILE || err == ENFILE)
		return "io_uring unavailable: io_uring_setup failed (no file descriptors); "
		       "pread + send";
	return "io_uring unavailable: io_uring_setup failed; pread + send";
}

/* Creates the ring once; false (reason set) if io_uring cannot be used. */
static bool ring_up(struct sotls_io *io)
{
	if (io->have_ring)
		return true;
	int rc = io_uring_queue_init(RING_ENTRIES, &io->ring, IORING_SETUP_COOP_TASKRUN);
	if (rc == -EINVAL)
		rc = io_uring_queue_init(RING_ENTRIES, &io->ring, 0);
	if (rc < 0) {
		io->reason = ring_failure(-rc);
		return false;
	}
	io->have_ring = true;
	return true;
}

/* Maps one more group; registers it too once the table is up. */
static int group_add(struct sotls_io *io)
{
	if (io->ngroups >= GROUPS_MAX)
		return -ENOSPC;
	/* mmap, not malloc: on free the pages are unmapped, never handed out
	 * again while a zero-copy send may still hold them. */
	void *m = mmap(NULL, GROUP_SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	unsigned gi = io->ngroups;
	if (io->bufs_registered) {
		struct iovec iov = {m, GROUP_SPAN};
		int rc = io_uring_register_buffers_update_tag(&io->ring, gi, &iov, NULL, 1);
		if (rc < 0) {
			munmap(m, GROUP_SPAN);
			return rc;
		}
	}
	memset(&io->g[gi], 0, sizeof(io->g[gi]));
	io->g[gi].mem = m;
	io->ngroups++;
	return 0;
}

/* Registers the groups as fixed buffers, group gi at index gi, in a table
 * with room to grow; kernels before 5.13 get a fixed table of what is. */
static int register_groups(struct sotls_io *io)
{
	struct iovec iov[GROUPS_MAX];
	for (unsigned i = 0; i < io->ngroups; i++)
		iov[i] = (struct iovec){io->g[i].mem, GROUP_SPAN};
	if (io_uring_register_buffers_sparse(&io->ring, GROUPS_MAX) == 0) {
		int rc = io_uring_register_buffers_update_tag(&io->ring, 0, iov, NULL, io->ngroups);
		if (rc < 0) {
			(void)io_uring_unregister_buffers(&io->ring);
			return rc;
		}
		io->sparse = io->can_grow = true;
		return 0;
	}
	return io_uring_register_buffers(&io->ring, iov, io->ngroups);
}

static void set_mode(struct sotls_io *io, enum mode m, const char *reason)
{
	io->mode = m;
	io->path = m == MODE_ZC ? PATH_ZC : m == MODE_SEND ? PATH_SEND : PATH_PREAD;
	io->reason = reason;
}

/* Userspace path set-up: buffers, ring, probe, registration. */
static int user_setup(struct sotls_io *io)
{
	while (io->ngroups < GROUPS_MIN)
		if (group_add(io) != 0)
			return SOTLS_ERR_OUT_OF_MEMORY;
	if (io->want == SOTLS_SENDFILE_PREAD) {
		set_mode(io, MODE_PREAD, "pread + send: chosen by configuration (SOTLS_SENDFILE_PREAD)");
		return 0;
	}
	if (!ring_up(io)) {
		set_mode(io, MODE_PREAD, io->reason);
		return 0;
	}
	struct io_uring_probe *p = io_uring_get_probe_ring(&io->ring);
	bool read_fixed = p != NULL && io_uring_opcode_supported(p, IORING_OP_READ_FIXED);
	bool send = p != NULL && io_uring_opcode_supported(p, IORING_OP_SEND);
	bool zc = p != NULL && io_uring_opcode_supported(p, IORING_OP_SEND_ZC);
	if (p != NULL)
		io_uring_free_probe(p);
	if (!read_fixed || !send) {
		set_mode(io, MODE_PREAD,
			 "io_uring lacks READ_FIXED or SEND (probe); pread + send");
		return 0;
	}
	if (!io->bufs_registered) {
		int rc = register_groups(io);
		if (rc < 0) {
			set_mode(io, MODE_PREAD,
				 rc == -ENOMEM ? "io_uring buffer registration failed (ENOMEM: "
						 "RLIMIT_MEMLOCK?); pread + send"
					       : "io_uring buffer registration failed; pread + send");
			return 0;
		}
		io->bufs_registered = true;
	}
	if (io->want == SOTLS_SENDFILE_COPY)
		set_mode(io, MODE_SEND,
			 "io_uring READ_FIXED + SEND: chosen by configuration (SOTLS_SENDFILE_COPY)");
	else if (!zc)
		set_mode(io, MODE_SEND,
			 "io_uring READ_FIXED + SEND: the kernel has no IORING_OP_SEND_ZC (probe)");
	else if (io->want == SOTLS_SENDFILE_ZERO_COPY)
		set_mode(io, MODE_ZC,
			 "io_uring READ_FIXED + SEND_ZC: chosen by configuration "
			 "(SOTLS_SENDFILE_ZERO_COPY)");
	else
		set_mode(io, MODE_ZC, "io_uring READ_FIXED + SEND_ZC (fixed buffers, zero copy)");
	io->zc_forced = io->want == SOTLS_SENDFILE_ZERO_COPY;
	io->zc_report = io->mode == MODE_ZC;
	return 0;
}

/* ---- completions -------------------------------------------------------- */

static void handle_cqe(struct sotls_io *io, const struct io_uring_cqe *cqe)
{
	unsigned kind = (unsigned)(cqe->user_data >> 16);
	unsigned gi = (unsigned)(cqe->user_data >> 8) & 255;
	unsigned idx = (unsigned)cqe->user_data & 255;

	if (kind == UD_SPLICE_IN) {
		io->splice_in_res = cqe->res;
		io->splice_pending--;
		return;
	}
	if (kind == UD_SPLICE_OUT) {
		io->splice_out_res = cqe->res;
		io->splice_pending--;
		return;
	}
	if (gi >= io->ngroups)
		return;
	struct group *g = &io->g[gi];
	if (kind == UD_READ && idx < GROUP_RECORDS) {
		g->read_res[idx] = cqe->res;
		g->reads_pending--;
	} else if (kind == UD_SEND) {
		if (cqe->flags & IORING_CQE_F_NOTIF) {
			g->notif_pending = false;
			if (io->zc_report && (cqe->res & (int)IORING_NOTIF_USAGE_ZC_COPIED))
				io->zc_copied = true;
		} else {
			g->send_res = cqe->res;
			g->send_pending = false;
			g->notif_pending = (cqe->flags & IORING_CQE_F_MORE) != 0;
		}
	}
}

/* Handles every completion there is; with wait, first waits for one. */
static int reap(struct sotls_io *io, bool wait)
{
	struct io_uring_cqe *cqe;
	if (wait) {
		int rc;
		do
			rc = io_uring_wait_cqe(&io->ring, &cqe);
		while (rc == -EINTR || rc == -EAGAIN);
		if (rc < 0)
			return rc;
		handle_cqe(io, cqe);
		io_uring_cqe_seen(&io->ring, cqe);
	}
	while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
		handle_cqe(io, cqe);
		io_uring_cqe_seen(&io->ring, cqe);
	}
	return 0;
}

static int submit(struct sotls_io *io)
{
	int rc;
	do
		rc = io_uring_submit(&io->ring);
	while (rc == -EINTR || rc == -EAGAIN);
	return rc < 0 ? rc : 0;
}

/* ---- the userspace path ----------------------------------------------- */

/* Places group gi's records for a read from file offset at (COPY_SKEW). */
static void group_place(struct group *g, off_t at)
{
	size_t lead = SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
	size_t skew = ((size_t)at + COPY_SKEW + PAGE - lead) % PAGE;
	g->base = g->mem + skew;
}

static uint8_t *rec_at(struct group *g, unsigned i)
{
	return g->base + (size_t)i * (SOTLS_REC_OVERHEAD + g->rec_max);
}

/* Where record i's plaintext goes, and how much of want it takes. */
static uint8_t *rec_plain(struct group *g, unsigned i)
{
	return rec_at(g, i) + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
}

static size_t rec_len(const struct group *g, size_t want, unsigned i)
{
	size_t rest = want - (size_t)i * g->rec_max;
	return rest < g->rec_max ? rest : g->rec_max;
}

/* Still in use: being sent, or (SEND_ZC) held by the kernel. */
static bool group_busy(const struct group *g)
{
	return g->unsettled || g->notif_pending;
}

/* pread path: one preadv(2) for the whole group, retried on EINTR. A short
 * read (end of file) leaves the records past it short or empty. */
static void preadv_group(struct group *g, int file_fd, off_t off, size_t want, unsigned nrec)
{
	struct iovec iov[GROUP_RECORDS];
	size_t len[GROUP_RECORDS];
	for (unsigned i = 0; i < nrec; i++) {
		len[i] = rec_len(g, want, i);
		iov[i] = (struct iovec){rec_plain(g, i), len[i]};
	}
	ssize_t n;
	do
		n = preadv(file_fd, iov, (int)nrec, off);
	while (n < 0 && errno == EINTR);
	size_t got = n > 0 ? (size_t)n : 0;
	for (unsigned i = 0; i < nrec; i++) {
		size_t take = got < len[i] ? got : len[i];
		g->read_res[i] = n < 0 && i == 0 ? -errno : (int)take;
		got -= take;
	}
}

/* Reads nrec records' plaintext from off into group gi with READ_FIXED;
 * read_res[] gets each result. */
static int read_group(struct sotls_io *io, unsigned gi, int file_fd, off_t off, size_t want,
		      unsigned nrec)
{
	struct group *g = &io->g[gi];
	for (unsigned i = 0; i < nrec; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
		if (sqe == NULL)
			return -EBUSY;
		io_uring_prep_read_fixed(sqe, file_fd, rec_plain(g, i), (unsigned)rec_len(g, want, i),
					 (uint64_t)(off + (off_t)i * g->rec_max), (int)gi);
		io_uring_sqe_set_data64(sqe, UD(UD_READ, gi, i));
		g->reads_pending++;
	}
	int rc = submit(io);
	while (rc == 0 && g->reads_pending > 0)
		rc = reap(io, true);
	return rc;
}

/* Sends [from, send_len) of g's records synchronously (send(2)): a fallback
 * for what a queued send left. Blocking sockets loop until all is sent;
 * non-blocking ones hand what the socket refuses to the record layer's send
 * buffer (it fits: groups are sized so), to go first on the next call. */
static int push_rest(struct sotls_record *r, int sock, bool nonblock, struct group *g, size_t from,
		     bool *blocked)
{
	while (from < g->send_len) {
		ssize_t n = send(sock, g->base + from, g->send_len - from,
				 MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && nonblock && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*blocked = true; /* the record layer sends the rest first */
			return sotls_record_queue_sealed(r, g->base + from, g->send_len - from);
		}
		if (n < 0)
			return sotls_record_fail_syscall(r, errno);
		from += (size_t)n;
	}
	return 0;
}

/* Starts sending group gi's sealed records through the ring: 0, or a
 * negative errno of the ring. */
static int start_send(struct sotls_io *io, unsigned gi, int sock, bool nonblock)
{
	struct group *g = &io->g[gi];
	int flags = MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : MSG_WAITALL);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
	if (sqe == NULL)
		return -EBUSY;
	if (io->mode == MODE_ZC)
		io_uring_prep_send_zc_fixed(sqe, sock, g->base, g->send_len, flags,
					    io->zc_report ? IORING_SEND_ZC_REPORT_USAGE : 0, gi);
	else
		io_uring_prep_send(sqe, sock, g->base, g->send_len, flags);
	io_uring_sqe_set_data64(sqe, UD(UD_SEND, gi, 0));
	g->send_pending = true;
	g->unsettled = true;
	g->stamp = ++io->sends;
	g->notif_pending = false;
	return submit(io);
}

/* Settles a finished send: 0 if every byte is out or handed to the record
 * layer (*blocked then tells that the socket is full), or a sticky error. */
static int settle(struct sotls_io *io, struct sotls_record *r, int sock, bool nonblock,
		  struct group *g, bool *blocked)
{
	int res = g->send_res;
	size_t from = 0;

	if (res == -EOPNOTSUPP && io->mode == MODE_ZC) {
		/* AF_UNIX and other sockets without zero copy: plain sends from
		 * now on; this group goes out by send(2). */
		set_mode(io, MODE_SEND,
			 "io_uring READ_FIXED + SEND: the socket refuses SEND_ZC (EOPNOTSUPP)");
	} else if (res == -EINVAL && io->mode == MODE_ZC && io->zc_report) {
		/* Before Linux 6.2 SEND_ZC has no usage report: send this
		 * group by send(2), zero copy without the report from now on. */
		io->zc_report = false;
	} else if (res == -EAGAIN || res == -EWOULDBLOCK) {
		from = 0;
	} else if (res < 0) {
		return sotls_record_fail_syscall(r, -res);
	} else {
		from = (size_t)res;
	}
	if (from < g->send_len) {
		int rc = push_rest(r, sock, nonblock, g, from, blocked);
		if (rc != 0)
			return rc;
	}
	g->unsettled = false; /* all sent, or copied into the record layer */
	return 0;
}

/*
 * The group for a non-blocking caller when pick_group found none free. A
 * SEND_ZC buffer stays the kernel's until the peer has acknowledged its
 * bytes, and a peer that reads nothing acknowledges nothing: waiting for
 * the group would hold the caller's thread as long (sotls-uring-server's
 * worker, with every other connection on it, stood still for the whole
 * --send-timeout behind one such peer, its pool at 64 groups or unable to
 * grow after the switch to pread + send). The records go through this
 * spare group instead, read with preadv and sent by send(2), whose refusal
 * the caller can poll for. NULL if it cannot be mapped.
 */
static struct group *spare_group(struct sotls_io *io)
{
	if (io->spare.mem == NULL) {
		void *m = mmap(NULL, GROUP_SPAN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		io->spare.mem = m;
	}
	return &io->spare;
}

/* The group to fill next: the free one with the lowest index, so that a
 * few groups cycle while they suffice and stay in cache (a pool that grew
 * under SEND_ZC may outnumber what SEND needs); else, on SEND_ZC, a new one
 * when the oldest send waits only for its notification; else the oldest, to
 * wait for. */
static unsigned pick_group(struct sotls_io *io)
{
	if (io->have_ring)
		(void)reap(io, false);
	unsigned oldest = 0;
	for (unsigned gi = 0; gi < io->ngroups; gi++) {
		const struct group *g = &io->g[gi];
		if (!group_busy(g))
			return gi;
		if (g->stamp < io->g[oldest].stamp)
			oldest = gi;
	}
	const struct group *o = &io->g[oldest];
	if (io->mode == MODE_ZC && io->can_grow && !o->unsettled) {
		if (group_add(io) == 0)
			return io->ngroups - 1;
		io->can_grow = false; /* out of memory or of RLIMIT_MEMLOCK */
	}
	return oldest;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Gives back, from the top, the groups a grown pool no longer needs: idle
 * and unused for GROUP_IDLE_MS. A pool that grew for one long transfer does
 * not keep its locked memory for the rest of the connection. */
static void trim_pool(struct sotls_io *io)
{
	if (io->ngroups <= GROUPS_MIN || !io->have_ring)
		return;
	(void)reap(io, false);
	uint64_t now = now_ms();
	while (io->ngroups > GROUPS_MIN) {
		unsigned gi = io->ngroups - 1;
		struct group *g = &io->g[gi];
		if (group_busy(g) || now - g->used_ms < GROUP_IDLE_MS)
			break;
		/* An empty iovec clears the slot; the kernel unpins the pages. */
		struct iovec none = {NULL, 0};
		(void)io_uring_register_buffers_update_tag(&io->ring, gi, &none, NULL, 1);
		munmap(g->mem, GROUP_SPAN);
		memset(g, 0, sizeof(*g));
		io->ngroups--;
		io->can_grow = io->sparse;
	}
}

ssize_t sotls_io_sendfile_user(struct sotls_io **iop, enum sotls_sendfile_mode mode,
			       struct sotls_record *r, int sock, int file_fd, off_t *offset,
			       size_t count)
{
	int usable = sotls_record_tx_usable(r);
	if (usable != 0)
		return usable;
	if (sotls_record_send_unfinished(r))
		return SOTLS_ERR_BAD_STATE; /* an unfinished sotls_send comes first */
	struct sotls_io *io = io_get(iop, mode);
	if (io == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	if (io->mode == MODE_NONE) {
		int rc = user_setup(io);
		if (rc != 0)
			return rc;
	}
	/* Records already sealed (an alert, the rest of a blocked send) first. */
	ssize_t fl = sotls_record_send(r, NULL, 0);
	if (fl < 0)
		return fl;
	if (count == 0)
		return 0;
	trim_pool(io);

	int fl_flags = fcntl(sock, F_GETFL);
	bool nonblock = fl_flags >= 0 && (fl_flags & O_NONBLOCK);
	off_t off = *offset;
	size_t submitted = 0, done = 0;
	struct group *prev = NULL;
	bool blocked = false, eof = false, limited = false, no_memory = false;
	int file_errno = 0, rc = 0;

	while (!blocked && !eof && !limited && submitted < count && rc == 0) {
		if (io->mode == MODE_ZC && io->zc_copied && !io->zc_forced)
			/* Zero copy costs more than a copy when the kernel copies
			 * anyway (loopback peers, devices without scatter-gather).
			 * Of the copying paths preadv + send costs least: 5-8%
			 * less CPU than READ_FIXED + SEND on loopback here. */
			set_mode(io, MODE_PREAD,
				 "preadv + send: SEND_ZC reported that the kernel copied anyway "
				 "(loopback or no scatter-gather), and then a plain copy costs less");
		unsigned gi = pick_group(io);
		struct group *g = &io->g[gi];
		/* Read with preadv and sent by send(2) now, not through the ring. */
		bool copy = io->mode == MODE_PREAD;
		if (nonblock && group_busy(g)) {
			if ((g = spare_group(io)) == NULL) {
				no_memory = true;
				break;
			}
			copy = true;
		}
		g->used_ms = now_ms();
		/* The group's buffers are free once its send and its zero-copy
		 * notification are back. */
		while (rc == 0 && (g->send_pending || g->notif_pending))
			rc = reap(io, true);
		if (rc != 0) {
			rc = sotls_record_fail_syscall(r, -rc);
			break;
		}

		size_t want = count - submitted;
		size_t nrec = (want + sotls_record_max_plain(r) - 1) / sotls_record_max_plain(r);
		if (nrec > GROUP_RECORDS)
			nrec = GROUP_RECORDS;
		if (nonblock) {
			/* What the socket refuses must fit the record layer's buffer. */
			size_t fit = sotls_record_tx_room(r) / (SOTLS_REC_OVERHEAD + sotls_record_max_plain(r));
			if (nrec > fit)
				nrec = fit > 0 ? fit : 1;
		}
		group_place(g, off + (off_t)submitted);
		g->rec_max = sotls_record_max_plain(r);
		if (copy)
			preadv_group(g, file_fd, off + (off_t)submitted, want, (unsigned)nrec);
		else
			rc = read_group(io, gi, file_fd, off + (off_t)submitted, want, (unsigned)nrec);
		if (rc != 0) {
			rc = sotls_record_fail_syscall(r, -rc);
			break;
		}

		/* The previous group must be out before this one goes. */
		if (prev != NULL) {
			while (rc == 0 && prev->send_pending)
				rc = reap(io, true);
			if (rc != 0) {
				rc = sotls_record_fail_syscall(r, -rc);
				break;
			}
			rc = settle(io, r, sock, nonblock, prev, &blocked);
			if (rc != 0)
				break;
			done += prev->plain;
			prev = NULL;
			if (blocked)
				break; /* what was read here is dropped, unsealed */
		}

		/* Seal what was read, up to the first short or failed read. */
		size_t plain = 0, wire = 0;
		for (unsigned i = 0; i < nrec; i++) {
			int n = g->read_res[i];
			if (n < 0) {
				if (i == 0)
					file_errno = -n;
				eof = true;
				break;
			}
			if (n == 0) {
				eof = true;
				break;
			}
			if (!sotls_record_may_seal_data(r)) {
				limited = true; /* what was read past here is dropped */
				break;
			}
			rc = sotls_record_seal_in_place(r, rec_at(g, i), (size_t)n);
			if (rc != 0)
				break;
			plain += (size_t)n;
			wire += SOTLS_REC_OVERHEAD + (size_t)n;
			if ((size_t)n < sotls_record_max_plain(r) &&
			    submitted + plain < count)
				break; /* short read: the next batch reads on */
		}
		if (rc != 0 || plain == 0)
			break;
		g->send_len = wire;
		g->plain = plain;
		submitted += plain;
		if (copy) {
			rc = push_rest(r, sock, nonblock, g, 0, &blocked);
			if (rc != 0)
				break;
			done += plain;
			continue;
		}
		int s = start_send(io, gi, sock, nonblock);
		if (s < 0) {
			rc = sotls_record_fail_syscall(r, -s);
			break;
		}
		prev = g;
	}
	if (prev != NULL && sotls_record_error(r) == 0) {
		int w = 0;
		while (w == 0 && prev->send_pending)
			w = reap(io, true);
		if (w != 0) {
			rc = sotls_record_fail_syscall(r, -w);
		} else {
			bool b = false;
			int s = settle(io, r, sock, nonblock, prev, &b);
			if (s != 0)
				rc = s;
			else
				done += prev->plain;
		}
	}
	/* Completions already there free their groups now. */
	if (io->have_ring)
		(void)reap(io, false);
	*offset = off + (off_t)done;
	if (sotls_record_error(r) != 0)
		return sotls_record_error(r);
	if (rc != 0)
		return rc;
	if (limited) {
		/* close_notify after the records sent and queued above. */
		rc = sotls_record_limit_close(r);
		return done > 0 && rc == SOTLS_ERR_KEY_USAGE_LIMIT ? (ssize_t)done : rc;
	}
	if (done == 0 && file_errno != 0) {
		errno = file_errno;
		return SOTLS_ERR_SYSCALL;
	}
	if (done == 0 && no_memory)
		return SOTLS_ERR_OUT_OF_MEMORY;
	return (ssize_t)done;
}

/* ---- the kernel path ---------------------------------------------------- */

/* sendfile(2) with sotls's return conventions. */
static ssize_t plain_sendfile(int sock, int file_fd, off_t *offset, size_t count, bool nonblock,
			      int *file_failed)
{
	size_t done = 0;
	while (done < count) {
		ssize_t n = sendfile(sock, file_fd, offset, count - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return done > 0 ? (ssize_t)done : SOTLS_WANT_WRITE;
		if (n < 0) {
			if (done > 0)
				return (ssize_t)done;
			/* sendfile cannot tell; the file errors are these */
			if (file_failed != NULL)
				*file_failed = errno == EIO || errno == EBADF || errno == EOVERFLOW ||
					       errno == ESPIPE;
			return SOTLS_ERR_SYSCALL;
		}
		if (n == 0)
			break;
		done += (size_t)n;
		if (nonblock)
			break; /* a short count means the socket is full */
	}
	return (ssize_t)done;
}

int sotls_io_kernel_flush(struct sotls_io *io, int sock)
{
	while (io != NULL && io->pipe_left > 0) {
		ssize_t k = splice(io->pipefd[0], NULL, sock, NULL, io->pipe_left, SPLICE_F_MOVE);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return SOTLS_WANT_WRITE;
		if (k <= 0) {
			if (k == 0)
				errno = EPIPE;
			return SOTLS_ERR_SYSCALL;
		}
		io->pipe_left -= (size_t)k;
	}
	return 0;
}

size_t sotls_io_unsent(const struct sotls_io *io)
{
	return io == NULL ? 0 : io->pipe_left;
}

static bool splice_setup(struct sotls_io *io)
{
	if (io->can_splice)
		return true;
	if (io->want == SOTLS_SENDFILE_PLAIN) {
		io->reason = "sendfile(2): chosen by configuration (SOTLS_SENDFILE_PLAIN)";
		return false;
	}
	if (!ring_up(io)) {
		io->reason = "sendfile(2): io_uring unavailable";
		return false;
	}
	struct io_uring_probe *p = io_uring_get_probe_ring(&io->ring);
	bool ok = p != NULL && io_uring_opcode_supported(p, IORING_OP_SPLICE);
	if (p != NULL)
		io_uring_free_probe(p);
	if (!ok) {
		io->reason = "sendfile(2): io_uring has no IORING_OP_SPLICE (probe)";
		return false;
	}
	if (io->pipefd[0] < 0) {
		if (pipe2(io->pipefd, O_CLOEXEC) != 0) {
			io->pipefd[0] = io->pipefd[1] = -1;
			io->reason = "sendfile(2): no pipe for splice";
			return false;
		}
		(void)fcntl(io->pipefd[1], F_SETPIPE_SZ, PIPE_CHUNK);
	}
	io->can_splice = true;
	return true;
}

ssize_t sotls_io_sendfile_kernel(struct sotls_io **iop, enum sotls_sendfile_mode mode, int sock,
				 int file_fd, off_t *offset, size_t count, int *file_failed)
{
	if (file_failed != NULL)
		*file_failed = 0;
	struct sotls_io *io = io_get(iop, mode);
	if (io == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	int fl_flags = fcntl(sock, F_GETFL);
	bool nonblock = fl_flags >= 0 && (fl_flags & O_NONBLOCK);
	/* The rest of an earlier call goes before new file bytes. */
	int fl = sotls_io_kernel_flush(io, sock);
	if (fl != 0)
		return fl;
	if (count == 0)
		return 0;
	if (nonblock || !splice_setup(io)) {
		/* sendfile(2) reports short counts exactly; a pipe would keep
		 * bytes when a non-blocking socket fills up. */
		io->path = PATH_SENDFILE;
		if (nonblock)
			io->reason = "sendfile(2): non-blocking socket";
		return plain_sendfile(sock, file_fd, offset, count, nonblock, file_failed);
	}
	io->path = PATH_SPLICE;
	io->reason = "io_uring SPLICE file -> pipe -> socket (kernel TLS seals)";
	int pipe_sz = fcntl(io->pipefd[1], F_GETPIPE_SZ);
	size_t chunk_max = pipe_sz > 0 ? (size_t)pipe_sz : 65536;
	off_t off = *offset;
	size_t done = 0;
	int err = 0;

	while (done < count) {
		size_t chunk = count - done < chunk_max ? count - done : chunk_max;
		struct io_uring_sqe *in = io_uring_get_sqe(&io->ring);
		struct io_uring_sqe *out = in ? io_uring_get_sqe(&io->ring) : NULL;
		if (out == NULL) {
			err = EBUSY;
			break;
		}
		io_uring_prep_splice(in, file_fd, (int64_t)(off + (off_t)done), io->pipefd[1], -1,
				     (unsigned)chunk, SPLICE_F_MOVE);
		io_uring_sqe_set_data64(in, UD(UD_SPLICE_IN, 0, 0));
		in->flags |= IOSQE_IO_LINK;
		io_uring_prep_splice(out, io->pipefd[0], -1, sock, -1, (unsigned)chunk,
				     SPLICE_F_MOVE);
		io_uring_sqe_set_data64(out, UD(UD_SPLICE_OUT, 0, 0));
		io->splice_pending = 2;
		int rc = submit(io);
		while (rc == 0 && io->splice_pending > 0)
			rc = reap(io, true);
		if (rc != 0) {
			err = -rc;
			break;
		}
		int nin = io->splice_in_res, nout = io->splice_out_res;
		if (nin < 0) {
			if (done == 0 && file_failed != NULL)
				*file_failed = 1;
			err = -nin;
			break;
		}
		if (nin == 0)
			break; /* end of file */
		/* What is in the pipe belongs to the stream now: it is reported
		 * as sent, and what the socket has not taken (a short read broke
		 * the link, or SO_SNDTIMEO expired) goes out first, now or on the
		 * next call, so that no byte is read from the file twice. */
		size_t moved = nout > 0 ? (size_t)nout : 0;
		done += (size_t)nin;
		io->pipe_left = (size_t)nin - moved;
		if (nout < 0 && nout != -ECANCELED && nout != -EAGAIN && nout != -EWOULDBLOCK) {
			err = -nout;
			break;
		}
		int d = sotls_io_kernel_flush(io, sock);
		if (d == SOTLS_WANT_WRITE)
			break;
		if (d != 0) {
			err = errno;
			break;
		}
	}
	*offset = off + (off_t)done;
	if (err != 0 && done == 0) {
		errno = err;
		return SOTLS_ERR_SYSCALL;
	}
	return (ssize_t)done;
}

/* ---- info and teardown ------------------------------------------------ */

const char *sotls_io_path(const struct sotls_io *io)
{
	return io == NULL ? "" : io->path;
}

const char *sotls_io_reason(const struct sotls_io *io)
{
	return io == NULL ? "" : io->reason;
}

size_t sotls_io_buffer_bytes(const struct sotls_io *io)
{
	return io == NULL ? 0
			  : ((size_t)io->ngroups + (io->spare.mem != NULL)) * GROUP_SPAN;
}

void sotls_io_free(struct sotls_io *io)
{
	if (io == NULL)
		return;
	if (io->have_ring) {
		(void)reap(io, false);
		io_uring_queue_exit(&io->ring);
	}
	for (unsigned i = 0; i < io->ngroups; i++)
		munmap(io->g[i].mem, GROUP_SPAN);
	if (io->spare.mem != NULL)
		munmap(io->spare.mem, GROUP_SPAN);
	if (io->pipefd[0] >= 0) {
		close(io->pipefd[0]);
		close(io->pipefd[1]);
	}
	free(io);
}

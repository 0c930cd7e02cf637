/*
 * The kernel path of a connection; see kconn.h. The behaviour mirrors
 * the userspace record layer (lib/record) so that a caller cannot tell the
 * paths apart except through sotls_get_info: the same return codes, the same
 * alerts sent, the same refusal of renegotiation.
 */
#include "kconn.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktls.h"
#include "util.h"

#ifdef SOTLS_TEST_SEAMS
static atomic_uint g_rx_delay_us;

void sotls_kconn_set_test_rx_delay_us(unsigned us)
{
	atomic_store(&g_rx_delay_us, us);
}
#endif

/* ---- installing -------------------------------------------------------- */

/* Once a TCP_ULP attempt said "no TLS ULP in this kernel", later connections
 * do not ask again (each attempt makes the kernel run modprobe). */
static atomic_bool g_no_ulp;

static const char *try_dir(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
			   const struct sotls_dir_keys *keys, bool *in_kernel)
{
	*in_kernel = false;
	if (atomic_load(&g_no_ulp))
		return sotls_ktls_reason_name(SOTLS_KTLS_NO_ULP);
	struct sotls_ktls_result res;
	int rc = sotls_ktls_install(fd, dir, alg, keys, &res);
	if (rc == SOTLS_OK) {
		*in_kernel = true;
		return SOTLS_KREASON_KERNEL;
	}
	if (res.reason == SOTLS_KTLS_NO_ULP)
		atomic_store(&g_no_ulp, true);
	return res.text;
}

void sotls_kconn_install(int fd, enum sotls_ktls_policy policy, enum sotls_aead_alg alg,
			 const struct sotls_dir_keys *tx, const struct sotls_dir_keys *rx,
			 uint16_t max_frag, struct sotls_kchoice *out)
{
	memset(out, 0, sizeof(*out));
	if (policy == SOTLS_KTLS_OFF) {
		out->tx_reason = out->rx_reason = SOTLS_KREASON_OFF;
		return;
	}
	bool want_tx = policy != SOTLS_KTLS_RX_ONLY, want_rx = policy != SOTLS_KTLS_TX_ONLY;
	if (max_frag != 0) {
		/* RFC 6066 §4 holds both directions to max_frag. */
		out->tx_reason = SOTLS_KREASON_MFL_TX;
		out->rx_reason = SOTLS_KREASON_MFL_RX;
		out->tx_fallback = want_tx;
		out->rx_fallback = want_rx;
		return;
	}
	if (!want_tx)
		out->tx_reason = SOTLS_KREASON_RX_ONLY;
	else
		out->tx_reason = try_dir(fd, SOTLS_KTLS_TX, alg, tx, &out->tx);
	if (!want_rx) {
		out->rx_reason = SOTLS_KREASON_TX_ONLY;
	} else {
#ifdef SOTLS_TEST_SEAMS
		unsigned delay = atomic_load(&g_rx_delay_us);
		if (delay > 0)
			usleep(delay);
#endif
		out->rx_reason = try_dir(fd, SOTLS_KTLS_RX, alg, rx, &out->rx);
	}
	out->tx_fallback = want_tx && !out->tx;
	out->rx_fallback = want_rx && !out->rx;
}

/* ---- the kernel path ----------------------------------------------------- */

void sotls_kconn_init(struct sotls_kconn *k, int fd, const struct sotls_kconn_setup *s,
		      struct sotls_record *rec)
{
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->tx = s->tx;
	k->rx = s->rx;
	k->alg = s->alg;
	sotls_policy_init(&k->pol, s->server, s->key_limit);
	k->tx_seq_known = s->tx_seq;
	k->rx_seq = s->rx_seq;
	k->rec = rec;
}

/* An upper bound on the sequence number of the kernel's next record. */
static uint64_t tx_upper(const struct sotls_kconn *k)
{
	uint64_t upper = k->tx_seq_known + k->tx_since;
	return upper < k->tx_seq_known ? UINT64_MAX : upper;
}

/* The bound is loose (a byte per record): read the kernel's own number. A
 * record the kernel holds open (a send cut short) still takes one. */
static void tx_refresh(struct sotls_kconn *k, size_t unsent)
{
	uint64_t seq;
	if (sotls_ktls_get_seq(k->fd, SOTLS_KTLS_TX, k->alg, &seq) == SOTLS_OK) {
		k->tx_seq_known = seq;
		k->tx_since = 1 + (uint64_t)unsent;
	}
}

/* Data records the kernel may still make. The limit's last two numbers are
 * kept: one for a record the kernel may hold open, one for close_notify. */
static uint64_t tx_records_left(const struct sotls_kconn *k)
{
	uint64_t upper = tx_upper(k);
	if (upper == UINT64_MAX || !sotls_key_may_seal_data(upper + 1, k->pol.key_limit))
		return 0;
	return k->pol.key_limit - 2 - upper;
}

size_t sotls_kconn_tx_budget(struct sotls_kconn *k, size_t want, size_t unsent)
{
	if (tx_records_left(k) < want)
		tx_refresh(k, unsent);
	uint64_t left = tx_records_left(k);
	return left < want ? (size_t)left : want;
}

void sotls_kconn_tx_account(struct sotls_kconn *k, size_t n)
{
	k->tx_since += n;
}

/* One alert record through kernel TX, within the usage limit: fatal alerts
 * and close_notify may take the limit's last numbers, others may not. */
static int kernel_alert(struct sotls_kconn *k, uint8_t level, uint8_t desc, int flags)
{
	bool last = level == SOTLS_ALERT_FATAL || desc == SOTLS_ALERT_CLOSE_NOTIFY;
	if (last && !sotls_key_may_seal_close(tx_upper(k), k->pol.key_limit))
		tx_refresh(k, 0);
	if (last ? !sotls_key_may_seal_close(tx_upper(k), k->pol.key_limit)
		 : sotls_kconn_tx_budget(k, 1, 0) == 0)
		return SOTLS_ERR_KEY_USAGE_LIMIT;
	int rc = sotls_ktls_send_alert_flags(k->fd, level, desc, flags);
	if (rc == SOTLS_OK)
		k->tx_since++;
	return rc;
}

int sotls_kconn_alert_out(void *ctx, uint8_t level, uint8_t desc)
{
	struct sotls_kconn *k = ctx;
	/* RFC 5246 7.2.1: nothing goes out after our close_notify. */
	if (k->pol.tx_closed)
		return SOTLS_ERR_CLOSED;
	return kernel_alert(k, level, desc, MSG_DONTWAIT);
}

/* An alert through whichever path sends. */
static int send_alert(struct sotls_kconn *k, uint8_t level, uint8_t desc, int err)
{
	if (k->tx) {
		if (k->pol.err == 0 && sotls_kconn_alert_out(k, level, desc) == 0)
			k->pol.sent_alert = desc;
		if (level == SOTLS_ALERT_FATAL)
			sotls_policy_fail(&k->pol, err);
		return k->pol.err;
	}
	/* TX in userspace (kernel RX only): the record layer seals it. */
	int rc = level == SOTLS_ALERT_FATAL ? sotls_record_fatal(k->rec, desc, err)
					    : sotls_record_warning(k->rec, desc);
	if (k->rec->pol.sent_alert == desc)
		k->pol.sent_alert = desc;
	if (level == SOTLS_ALERT_FATAL)
		sotls_policy_fail(&k->pol, err);
	return level == SOTLS_ALERT_FATAL ? k->pol.err : (rc != 0 ? rc : 0);
}

int sotls_kconn_fatal(struct sotls_kconn *k, uint8_t desc, int err)
{
	return send_alert(k, SOTLS_ALERT_FATAL, desc, err);
}

static int fail_syscall(struct sotls_kconn *k, int err)
{
	if (k->pol.err == 0)
		k->pol.sys_errno = err;
	return sotls_policy_fail(&k->pol, SOTLS_ERR_SYSCALL);
}

int sotls_kconn_limit_close(struct sotls_kconn *k)
{
	if (k->pol.err != 0)
		return k->pol.err;
	k->pol.tx_limited = true;
	/* Blocking sockets send it now; otherwise sotls_shutdown retries. */
	int rc = sotls_kconn_shutdown(k);
	return rc == 0 || rc == SOTLS_WANT_WRITE ? SOTLS_ERR_KEY_USAGE_LIMIT : rc;
}

ssize_t sotls_kconn_send(struct sotls_kconn *k, const uint8_t *buf, size_t len)
{
	if (k->pol.err != 0)
		return k->pol.err;
	if (k->pol.tx_limited) {
		(void)sotls_kconn_shutdown(k); /* close_notify, if it is still due */
		return k->pol.err != 0 ? k->pol.err : SOTLS_ERR_KEY_USAGE_LIMIT;
	}
	if (k->pol.tx_closed)
		return SOTLS_ERR_CLOSED;
	size_t done = 0;
	while (done < len) {
		size_t allow = sotls_kconn_tx_budget(k, len - done, 0);
		if (allow == 0) {
			int rc = sotls_kconn_limit_close(k);
			return done > 0 && rc == SOTLS_ERR_KEY_USAGE_LIMIT ? (ssize_t)done : rc;
		}
		/* The kernel cuts the stream into records of at most 2^14 bytes. */
		ssize_t n = send(k->fd, buf + done, allow, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return done > 0 ? (ssize_t)done : SOTLS_WANT_WRITE;
			return fail_syscall(k, errno);
		}
		k->tx_since += (uint64_t)n;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* A decision of the policy (policy.h), carried out on this path. */
static int decide(struct sotls_kconn *k, int rc, int alert, unsigned refusals)
{
	if (rc == 0) {
		for (unsigned i = 0; i < refusals && rc == 0; i++) {
			rc = send_alert(k, SOTLS_ALERT_WARNING, SOTLS_ALERT_NO_RENEGOTIATION, 0);
			if (rc == SOTLS_WANT_WRITE)
				rc = 0;
		}
		return rc;
	}
	if (alert != SOTLS_POLICY_NO_ALERT)
		return sotls_kconn_fatal(k, (uint8_t)alert, rc);
	return sotls_policy_fail(&k->pol, rc); /* the peer is gone */
}

/* A fault in the peer's records (policy.h names its alert). */
static int fault(struct sotls_kconn *k, int err)
{
	int alert;
	int rc = sotls_policy_fault(&k->pol, err, &alert);
	return decide(k, rc, alert, 0);
}

/* Empty records the kernel consumed. */
static int empties(struct sotls_kconn *k, uint64_t n)
{
	int alert;
	int rc = sotls_policy_empty(&k->pol, n, &alert);
	return decide(k, rc, alert, 0);
}

/* An error of recvmsg on the kTLS RX socket: the same code and alert as the
 * userspace record layer gives for the same fault on the wire. */
static int rx_error(struct sotls_kconn *k, ssize_t mapped, int err)
{
	switch (mapped) {
	case SOTLS_ERR_BAD_RECORD_MAC:
	case SOTLS_ERR_RECORD_OVERFLOW:
	case SOTLS_ERR_PROTOCOL_VERSION:
	case SOTLS_ERR_DECODE:
		return fault(k, (int)mapped);
	default:
		/* ECONNRESET, EPIPE, EIO, ...: a system error, errno kept, as
		 * the userspace path reports a failed recv. */
		return fail_syscall(k, err);
	}
}

/*
 * How many records the last recvmsg opened (the kernel's RX sequence number
 * moved by that much: the empty records it skipped, and a record of another
 * type it opened and keeps for the next call), and whether the peer passed
 * the usage limit.
 * 0, or the error (the caller wipes what the call returned).
 */
static int rx_consumed(struct sotls_kconn *k, uint64_t *consumed)
{
	uint64_t seq;
	*consumed = 0;
	if (sotls_ktls_get_seq(k->fd, SOTLS_KTLS_RX, k->alg, &seq) != SOTLS_OK)
		return fail_syscall(k, errno);
	if (seq < k->rx_seq)
		return sotls_kconn_fatal(k, SOTLS_ALERT_INTERNAL_ERROR, SOTLS_ERR_INTERNAL);
	*consumed = seq - k->rx_seq;
	k->rx_seq = seq;
	if (seq > k->pol.key_limit)
		/* A record at seq >= limit was opened: the peer went past the
		 * limit. Which of the bytes came from it the kernel does not
		 * say, so all of this call's go. */
		return fault(k, SOTLS_ERR_KEY_USAGE_LIMIT);
	return 0;
}

/* A record that is not application data: an alert, handshake bytes
 * (record_start: they begin a record; else the kernel hands over the rest
 * of one that did not fit the buffer), or a type that cannot come. */
static int handle_control(struct sotls_kconn *k, uint8_t type, const uint8_t *pt, size_t n,
			  bool record_start)
{
	int alert;
	unsigned refusals;
	int rc = sotls_policy_control(&k->pol, type, pt, n, record_start, &alert, &refusals);
	return decide(k, rc, alert, refusals);
}

/*
 * Application data: n bytes (n > 0) from the consumed records. The kernel
 * skips empty records inside one recvmsg, so where they were is unknown; with
 * at most n data records among them, more than cap * (n + 1) empty ones
 * cannot all have been in runs within the cap.
 */
static int handle_data(struct sotls_kconn *k, size_t n, uint64_t consumed)
{
	if (consumed > n && consumed - n > (uint64_t)SOTLS_REC_MAX_EMPTY_RECORDS * (n + 1))
		return empties(k, SOTLS_REC_MAX_EMPTY_RECORDS + 1);
	sotls_policy_data(&k->pol);
	return 0;
}

/* One recvmsg, and what it means; > 0 data bytes in dst, 0 to read on, or an
 * error or SOTLS_WANT_READ. */
static ssize_t rx_one(struct sotls_kconn *k, uint8_t *dst, size_t cap)
{
	uint8_t type = 0;
	ssize_t n = sotls_ktls_recv(k->fd, dst, cap, 0, &type);
	int err = errno;
	uint64_t consumed;
	int rc = rx_consumed(k, &consumed);
	if (rc == 0 && n < 0 && n != SOTLS_WANT_READ)
		return rx_error(k, n, err);
	if (rc == 0 && n == SOTLS_WANT_READ)
		/* Empty records the kernel consumed without returning. */
		rc = consumed > 0 ? empties(k, consumed) : 0;
	if (rc == 0 && n == SOTLS_WANT_READ)
		return SOTLS_WANT_READ;
	if (type != SOTLS_CT_HANDSHAKE)
		k->hs_mid = false;
	if (rc == 0 && type == SOTLS_CT_APPLICATION_DATA) {
		if (n > 0 && (rc = handle_data(k, (size_t)n, consumed)) == 0)
			return n;
		if (rc == 0 && consumed == 0)
			/* TCP ended without close_notify. */
			return sotls_policy_fail(&k->pol, SOTLS_ERR_TRUNCATED);
		if (rc == 0)
			/* Empty records, and a record of another type behind,
			 * which the kernel has opened already (it comes next). */
			rc = empties(k, consumed - 1);
	} else if (rc == 0 && type == SOTLS_CT_ALERT) {
		/* cap >= 3: a count under cap is the whole record, and an
		 * alert read whole (n == cap) is never valid, so every alert
		 * read starts a record. */
		rc = handle_control(k, type, dst, (size_t)n, true);
	} else if (rc == 0 && type == SOTLS_CT_HANDSHAKE) {
		/* The kernel may have opened the record in the call before
		 * (then consumed is 0), so a record's start is told from the
		 * end of the one before: a read that did not fill the buffer,
		 * or one of another type. It never returns 0 bytes of a record
		 * it has begun. */
		rc = handle_control(k, type, dst, (size_t)n, n == 0 || !k->hs_mid);
		k->hs_mid = (size_t)n == cap;
	} else if (rc == 0) {
		/* change_cipher_spec or an unknown type. */
		rc = handle_control(k, type, dst, n > 0 ? (size_t)n : 0, true);
	}
	if (n > 0)
		sotls_wipe(dst, (size_t)n);
	return rc;
}

ssize_t sotls_kconn_recv(struct sotls_kconn *k, uint8_t *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (k->small_len > 0) {
		size_t n = k->small_len < len ? k->small_len : len;
		memcpy(buf, k->small, n);
		memmove(k->small, k->small + n, k->small_len - n);
		k->small_len = (uint8_t)(k->small_len - n);
		return (ssize_t)n;
	}
	/* An alert must be seen whole to be judged (exactly 2 bytes): a
	 * buffer of 1 or 2 bytes reads into 3, and keeps what is left. */
	uint8_t tiny[3];
	bool use_tiny = len < sizeof(tiny);
	uint8_t *dst = use_tiny ? tiny : buf;
	size_t cap = use_tiny ? sizeof(tiny) : len;
	/* Each round consumes at least one record, and the caps bound the
	 * rounds that deliver nothing. */
	for (;;) {
		if (k->pol.rx_closed)
			return 0;
		if (k->pol.err != 0)
			return k->pol.err;
		ssize_t n = rx_one(k, dst, cap);
		if (n == 0)
			continue;
		if (n > 0 && use_tiny) {
			size_t give = (size_t)n < len ? (size_t)n : len;
			memcpy(buf, tiny, give);
			k->small_len = (uint8_t)((size_t)n - give);
			memcpy(k->small, tiny + give, k->small_len);
			sotls_wipe(tiny, sizeof(tiny));
			return (ssize_t)give;
		}
		return n;
	}
}

int sotls_kconn_shutdown(struct sotls_kconn *k)
{
	if (k->pol.err != 0)
		return k->pol.err;
	if (k->pol.tx_closed)
		return 0;
	int rc = kernel_alert(k, SOTLS_ALERT_WARNING, SOTLS_ALERT_CLOSE_NOTIFY, 0);
	if (rc == SOTLS_OK) {
		k->pol.tx_closed = true;
		k->pol.sent_alert = SOTLS_ALERT_CLOSE_NOTIFY;
		return 0;
	}
	if (rc == SOTLS_WANT_WRITE)
		return rc;
	if (rc == SOTLS_ERR_KEY_USAGE_LIMIT)
		return sotls_kconn_fatal(k, SOTLS_ALERT_INTERNAL_ERROR, SOTLS_ERR_INTERNAL);
	return fail_syscall(k, errno);
}

/*
 * The kernel path of a connection; see conn_ktls.h. The behaviour mirrors
 * the userspace record layer (lib/record) so that a caller cannot tell the
 * paths apart except through sotls_get_info: the same return codes, the same
 * alerts sent, the same refusal of renegotiation.
 */
#include "conn_ktls.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktls.h"
#include "util.h"

/* ---- the test-only override ---------------------------------------------- */

static atomic_int g_env_forced = -1;  /* -1: not read yet */
static atomic_int g_override = -1;    /* -1: none */

static int parse_forced(const char *s)
{
	int mask = 0;
	if (s == NULL)
		return 0;
	if (strstr(s, "both") != NULL)
		return SOTLS_KFORCE_TX | SOTLS_KFORCE_RX;
	if (strstr(s, "tx") != NULL)
		mask |= SOTLS_KFORCE_TX;
	if (strstr(s, "rx") != NULL)
		mask |= SOTLS_KFORCE_RX;
	return mask;
}

int sotls_kconn_forced(void)
{
	int o = atomic_load(&g_override);
	if (o >= 0)
		return o;
	int v = atomic_load(&g_env_forced);
	if (v < 0) {
		v = parse_forced(getenv("SOTLS_KTLS_FORCE_USERSPACE"));
		atomic_store(&g_env_forced, v);
	}
	return v;
}

void sotls_kconn_set_forced(int mask)
{
	atomic_store(&g_override, mask < 0 ? -1 : mask);
}

static atomic_uint g_rx_delay_us;

void sotls_kconn_set_test_rx_delay_us(unsigned us)
{
	atomic_store(&g_rx_delay_us, us);
}

/* ---- installing -------------------------------------------------------- */

/* Once a TCP_ULP attempt said "no TLS ULP in this kernel", later connections
 * do not ask again (each attempt makes the kernel run modprobe). */
static atomic_bool g_no_ulp;

static const char *try_dir(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
			   const struct sotls_kdir_keys *keys, bool *in_kernel)
{
	*in_kernel = false;
	if (atomic_load(&g_no_ulp))
		return sotls_ktls_reason_name(SOTLS_KTLS_NO_ULP);
	struct sotls_ktls_keys k;
	memset(&k, 0, sizeof(k));
	k.alg = alg;
	k.key = keys->key;
	k.key_len = sotls_aead_key_len(alg);
	memcpy(k.salt, keys->salt, SOTLS_KTLS_SALT_LEN);
	k.seq = keys->seq;
	struct sotls_ktls_result res;
	int rc = sotls_ktls_install(fd, dir, &k, &res);
	sotls_wipe(&k, sizeof(k));
	if (rc == SOTLS_OK) {
		*in_kernel = true;
		return SOTLS_KREASON_KERNEL;
	}
	if (res.reason == SOTLS_KTLS_NO_ULP)
		atomic_store(&g_no_ulp, true);
	return res.text;
}

void sotls_kconn_install(int fd, enum sotls_ktls_policy policy, enum sotls_aead_alg alg,
			 const struct sotls_kdir_keys *tx, const struct sotls_kdir_keys *rx,
			 uint16_t max_frag, struct sotls_kchoice *out)
{
	memset(out, 0, sizeof(*out));
	if (policy == SOTLS_KTLS_OFF) {
		out->tx_reason = out->rx_reason = SOTLS_KREASON_OFF;
		return;
	}
	if (max_frag != 0) {
		/* RFC 6066 §4 holds both directions to max_frag. */
		out->tx_reason = SOTLS_KREASON_MFL_TX;
		out->rx_reason = SOTLS_KREASON_MFL_RX;
		return;
	}
	int forced = sotls_kconn_forced();
	if (forced & SOTLS_KFORCE_TX)
		out->tx_reason = SOTLS_KREASON_FORCED;
	else
		out->tx_reason = try_dir(fd, SOTLS_KTLS_TX, alg, tx, &out->tx);
	if (forced & SOTLS_KFORCE_RX) {
		out->rx_reason = SOTLS_KREASON_FORCED;
	} else {
		unsigned delay = atomic_load(&g_rx_delay_us);
		if (delay > 0)
			usleep(delay);
		out->rx_reason = try_dir(fd, SOTLS_KTLS_RX, alg, rx, &out->rx);
	}
}

/* ---- the kernel path ----------------------------------------------------- */

void sotls_kconn_init(struct sotls_kconn *k, int fd, bool tx, bool rx, struct sotls_record *rec)
{
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->tx = tx;
	k->rx = rx;
	k->rec = rec;
	k->peer_alert = -1;
	k->sent_alert = -1;
}

int sotls_kconn_alert_out(int fd, uint8_t level, uint8_t desc)
{
	return sotls_ktls_send_alert_flags(fd, level, desc, MSG_DONTWAIT);
}

/* An alert through whichever path sends. */
static int send_alert(struct sotls_kconn *k, uint8_t level, uint8_t desc, int err)
{
	if (k->tx) {
		if (k->err == 0 && !k->tx_closed && sotls_kconn_alert_out(k->fd, level, desc) == 0)
			k->sent_alert = desc;
		if (level == SOTLS_ALERT_FATAL && k->err == 0)
			k->err = err;
		return k->err;
	}
	/* TX in userspace (kernel RX only): the record layer seals it. */
	int rc = level == SOTLS_ALERT_FATAL ? sotls_record_fatal(k->rec, desc, err)
					    : sotls_record_warning(k->rec, desc);
	if (k->rec->sent_alert == desc)
		k->sent_alert = desc;
	if (level == SOTLS_ALERT_FATAL && k->err == 0)
		k->err = err;
	return level == SOTLS_ALERT_FATAL ? k->err : (rc != 0 ? rc : 0);
}

int sotls_kconn_fatal(struct sotls_kconn *k, uint8_t desc, int err)
{
	return send_alert(k, SOTLS_ALERT_FATAL, desc, err);
}

static int fail_syscall(struct sotls_kconn *k, int err)
{
	if (k->err == 0) {
		k->err = SOTLS_ERR_SYSCALL;
		k->sys_errno = err;
	}
	return k->err;
}

ssize_t sotls_kconn_send(struct sotls_kconn *k, const uint8_t *buf, size_t len)
{
	if (k->err != 0)
		return k->err;
	if (k->tx_closed)
		return SOTLS_ERR_CLOSED;
	size_t done = 0;
	while (done < len) {
		/* The kernel cuts the stream into records of at most 2^14 bytes. */
		ssize_t n = send(k->fd, buf + done, len - done, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return done > 0 ? (ssize_t)done : SOTLS_WANT_WRITE;
			return fail_syscall(k, errno);
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* An error of recvmsg on the kTLS RX socket: the same code and alert as the
 * userspace record layer gives for the same fault on the wire. */
static int rx_error(struct sotls_kconn *k, ssize_t mapped, int err)
{
	switch (mapped) {
	case SOTLS_ERR_BAD_RECORD_MAC:
		return sotls_kconn_fatal(k, SOTLS_ALERT_BAD_RECORD_MAC, SOTLS_ERR_BAD_RECORD_MAC);
	case SOTLS_ERR_RECORD_OVERFLOW:
		return sotls_kconn_fatal(k, SOTLS_ALERT_RECORD_OVERFLOW, SOTLS_ERR_RECORD_OVERFLOW);
	case SOTLS_ERR_PROTOCOL_VERSION:
		return sotls_kconn_fatal(k, SOTLS_ALERT_PROTOCOL_VERSION, SOTLS_ERR_PROTOCOL_VERSION);
	case SOTLS_ERR_DECODE:
		return sotls_kconn_fatal(k, SOTLS_ALERT_DECODE_ERROR, SOTLS_ERR_DECODE);
	default:
		/* ECONNRESET, EPIPE, EIO, ...: a system error, errno kept, as
		 * the userspace path reports a failed recv. */
		return fail_syscall(k, err);
	}
}

/* A whole alert {level, desc} from the peer. 0 to go on reading. */
static int handle_alert(struct sotls_kconn *k, const uint8_t a[2])
{
	k->peer_alert = a[1];
	if (a[1] == SOTLS_ALERT_CLOSE_NOTIFY) {
		k->rx_closed = true;
		return 0;
	}
	if (a[0] == SOTLS_ALERT_FATAL) {
		/* The peer is gone; answering would be pointless. */
		if (k->err == 0)
			k->err = SOTLS_ERR_PEER_ALERT;
		return k->err;
	}
	if (a[0] != SOTLS_ALERT_WARNING)
		return sotls_kconn_fatal(k, SOTLS_ALERT_DECODE_ERROR, SOTLS_ERR_DECODE);
	return 0;
}

ssize_t sotls_kconn_recv(struct sotls_kconn *k, uint8_t *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	for (;;) {
		if (k->rx_closed)
			return 0;
		if (k->err != 0)
			return k->err;
		uint8_t type = 0;
		ssize_t n = sotls_ktls_recv(k->fd, buf, len, 0, &type);
		if (n < 0) {
			int err = errno;
			if (n == SOTLS_WANT_READ)
				return n;
			return rx_error(k, n, err);
		}
		if (type == SOTLS_CT_APPLICATION_DATA) {
			k->hs_partial = false;
			if (n == 0) {
				/* TCP ended without close_notify. */
				if (k->err == 0)
					k->err = SOTLS_ERR_TRUNCATED;
				return k->err;
			}
			return n;
		}
		if (n == 0)
			return sotls_kconn_fatal(k, SOTLS_ALERT_DECODE_ERROR, SOTLS_ERR_DECODE);
		if (type == SOTLS_CT_ALERT) {
			k->hs_partial = false;
			if (k->alert_len + (size_t)n > sizeof(k->alert))
				return sotls_kconn_fatal(k, SOTLS_ALERT_DECODE_ERROR, SOTLS_ERR_DECODE);
			memcpy(k->alert + k->alert_len, buf, (size_t)n);
			k->alert_len += (size_t)n;
			sotls_wipe(buf, (size_t)n);
			if (k->alert_len < sizeof(k->alert))
				continue; /* a one-byte buffer: the rest comes next */
			k->alert_len = 0;
			int rc = handle_alert(k, k->alert);
			if (rc != 0)
				return rc;
			continue;
		}
		if (type == SOTLS_CT_HANDSHAKE) {
			/* A HelloRequest or a renegotiating ClientHello. A record
			 * longer than buf arrives in pieces: refuse it once. */
			bool continued = k->hs_partial;
			k->hs_partial = (size_t)n == len;
			sotls_wipe(buf, (size_t)n);
			if (continued)
				continue;
			if (++k->reneg_refusals > SOTLS_REC_MAX_RENEG_REFUSALS)
				return sotls_kconn_fatal(k, SOTLS_ALERT_UNEXPECTED_MESSAGE,
							 SOTLS_ERR_RENEGOTIATION_REFUSED);
			int rc = send_alert(k, SOTLS_ALERT_WARNING, SOTLS_ALERT_NO_RENEGOTIATION, 0);
			if (rc != 0 && rc != SOTLS_WANT_WRITE)
				return rc;
			continue;
		}
		/* change_cipher_spec or an unknown type. */
		sotls_wipe(buf, (size_t)n);
		return sotls_kconn_fatal(k, SOTLS_ALERT_UNEXPECTED_MESSAGE, SOTLS_ERR_UNEXPECTED_MESSAGE);
	}
}

int sotls_kconn_shutdown(struct sotls_kconn *k)
{
	if (k->err != 0)
		return k->err;
	if (k->tx_closed)
		return 0;
	int rc = sotls_ktls_send_alert(k->fd, SOTLS_ALERT_WARNING, SOTLS_ALERT_CLOSE_NOTIFY);
	if (rc == SOTLS_OK) {
		k->tx_closed = true;
		k->sent_alert = SOTLS_ALERT_CLOSE_NOTIFY;
		return 0;
	}
	if (rc == SOTLS_WANT_WRITE)
		return rc;
	return fail_syscall(k, errno);
}

/*
 * libFuzzer target: the kernel RX path of a connection (sotls_kconn_recv in
 * lib/ktls/kconn.c, and sotls_ktls_recv's parsing of the TLS_GET_RECORD_TYPE
 * control message in lib/ktls/ktls.c), fed by a fake recvmsg
 * (sotls_ktls_set_test_recvmsg) that plays what the input describes: whole
 * or partial records of any content type with or without their cmsg, errno
 * results, EOF, and raw control buffers no kernel would write (any cmsg
 * headers, lengths and flags).
 *
 * byte 0: bit 0 the TX direction (1: in userspace, the alerts sotls sends are
 * sealed by the record layer; 0: "in the kernel", they go to sendmsg with
 * their record-type cmsg; either way the peer end of a socketpair gets them),
 * byte 0 >> 1: the caller's buffer size. Then events, one byte op and its
 * operands:
 *   op % 4 == 0  a record: type from bits 2..4, bit 5 without the cmsg,
 *                bit 6 the kernel may join it to the data record before it,
 *                bit 7 a two-byte length (else one), then the payload
 *   op % 4 == 1  recvmsg fails with an errno from op >> 2
 *   op % 4 == 2  EOF (recvmsg returns 0 from then on)
 *   op % 4 == 3  raw: a control length byte, a msg_flags byte, that many
 *                control bytes, a payload length byte and the payload
 * When the events are used up recvmsg says EAGAIN.
 *
 * Oracle (beyond the sanitizers): every byte sotls_kconn_recv returns was
 * returned by the last recvmsg of that call, which was not a record of
 * another type with its cmsg; nothing else the fake wrote into the caller's
 * buffer is left there (non-data payload is wiped); an error or the close is
 * sticky without another recvmsg; everything sotls sent is a 2-byte alert
 * (authenticated when the record layer sealed it): no_renegotiation warnings, at
 * most SOTLS_REC_MAX_RENEG_REFUSALS of them between two data returns, and a
 * fatal alert only as the last one, for an error that names it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/tls.h>

#include "kconn.h"
#include "ktls.h"
#include "record.h"
#include "record_forge.h"
#include "sotls.h"

#define MAX_EVENTS 4096
#define MAX_CALLS 20000
#define CANARY 0xA5

enum ev_kind { EV_RECORD, EV_ERRNO, EV_EOF, EV_RAW };

struct event {
	enum ev_kind kind;
	uint8_t type;	  /* EV_RECORD */
	bool cmsg, join;  /* EV_RECORD */
	int err;	  /* EV_ERRNO */
	const uint8_t *control; /* EV_RAW */
	size_t control_len;
	int msg_flags;
	const uint8_t *payload;
	size_t len, off;
};

/* The fake kernel's state, and a copy of what its last call handed out. */
static struct {
	struct event ev[MAX_EVENTS];
	size_t n, head;
	unsigned calls;
	uint8_t last[1 << 16];
	size_t last_len;
	bool last_foreign; /* they were a record of another type, with its cmsg */
	uint64_t rx_seq;   /* the records opened so far, as the kernel counts */
} F;

static const uint8_t TYPES[] = {23, 21, 22, 20, 24, 0, 255, 23};
static const int ERRNOS[] = {EAGAIN, EINTR, EBADMSG, EMSGSIZE, EINVAL, ECONNRESET,
			     EPIPE, EIO, ENOMEM, ETIMEDOUT};

static void put_type_cmsg(struct msghdr *msg, uint8_t type)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(msg);
	if (c == NULL || msg->msg_controllen < CMSG_SPACE(1))
		abort(); /* sotls_ktls_recv gives room for one */
	c->cmsg_level = SOL_TLS;
	c->cmsg_type = TLS_GET_RECORD_TYPE;
	c->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(c) = type;
	msg->msg_controllen = CMSG_SPACE(1);
}

/* Copies what the event has left (at most room bytes) to the caller's
 * buffer at F.last_len, and to F.last. */
static void take(struct event *e, uint8_t *buf, size_t room)
{
	size_t n = e->len - e->off;
	if (n > room - F.last_len)
		n = room - F.last_len;
	memcpy(buf + F.last_len, e->payload + e->off, n);
	memcpy(F.last + F.last_len, e->payload + e->off, n);
	e->off += n;
	F.last_len += n;
}

static bool is_data(const struct event *e)
{
	return e->kind == EV_RECORD && (!e->cmsg || e->type == 23);
}

static ssize_t fake_recvmsg(int fd, struct msghdr *msg, int flags)
{
	(void)fd;
	(void)flags;
	F.calls++;
	F.last_len = 0;
	F.last_foreign = false;
	if (msg->msg_iovlen != 1 || msg->msg_iov[0].iov_len > sizeof(F.last))
		abort();
	uint8_t *buf = msg->msg_iov[0].iov_base;
	size_t room = msg->msg_iov[0].iov_len;
	/* The kernel opens empty data records and skips them inside the call
	 * (tls_sw_recvmsg); only its rec_seq shows them. */
	while (F.head < F.n && is_data(&F.ev[F.head]) && F.ev[F.head].len == 0) {
		F.head++;
		F.rx_seq++;
	}
	if (F.head == F.n) {
		errno = EAGAIN;
		return -1;
	}
	struct event *e = &F.ev[F.head];
	switch (e->kind) {
	case EV_ERRNO:
		F.head++;
		errno = e->err;
		return -1;
	case EV_EOF:
		msg->msg_controllen = 0;
		return 0;
	case EV_RAW: {
		F.head++;
		F.rx_seq++;
		size_t cl = e->control_len < msg->msg_controllen ? e->control_len
								   : msg->msg_controllen;
		memcpy(msg->msg_control, e->control, cl);
		msg->msg_controllen = cl;
		msg->msg_flags = e->msg_flags;
		take(e, buf, room);
		return (ssize_t)F.last_len;
	}
	case EV_RECORD:
		break;
	}
	/* A record of a type other than data comes alone (and in pieces if the
	 * buffer is short); data records in a row may be joined, as
	 * tls_sw_recvmsg does. */
	F.last_foreign = !is_data(e);
	if (e->cmsg)
		put_type_cmsg(msg, e->type);
	else
		msg->msg_controllen = 0;
	take(e, buf, room);
	while (e->off == e->len) {
		F.head++;
		F.rx_seq++;
		struct event *next = F.head < F.n ? &F.ev[F.head] : NULL;
		if (next == NULL || !is_data(e) || F.last_len == room || !is_data(next) ||
		    !next->join || next->cmsg != e->cmsg)
			break;
		take(next, buf, room);
		e = next;
	}
	return (ssize_t)F.last_len;
}

/* The kernel's answer to getsockopt(SOL_TLS): the crypto_info of the
 * installed cipher (AES-128-GCM here), with rec_seq; no key. */
static int fake_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	(void)fd;
	struct tls12_crypto_info_aes_gcm_128 ci;
	if (level != SOL_TLS || *len != sizeof(ci))
		abort();
	memset(&ci, 0, sizeof(ci));
	ci.info.version = TLS_1_2_VERSION;
	ci.info.cipher_type = TLS_CIPHER_AES_GCM_128;
	uint64_t seq = name == TLS_RX ? F.rx_seq : 1;
	for (int i = 0; i < 8; i++)
		ci.rec_seq[i] = (uint8_t)(seq >> (56 - 8 * i));
	memcpy(val, &ci, sizeof(ci));
	return 0;
}

static size_t parse(const uint8_t *data, size_t size)
{
	size_t i = 1;
	F.n = 0;
	while (i < size && F.n < MAX_EVENTS) {
		uint8_t op = data[i++];
		struct event *e = &F.ev[F.n++];
		memset(e, 0, sizeof(*e));
		switch (op % 4) {
		case 0:
			e->kind = EV_RECORD;
			e->type = TYPES[(op >> 2) & 7];
			e->cmsg = !(op & 0x20);
			e->join = op & 0x40;
			if (op & 0x80) {
				e->len = i + 2 <= size ? ((size_t)data[i] << 8 | data[i + 1]) : 0;
				i += 2;
			} else {
				e->len = i < size ? data[i] : 0;
				i++;
			}
			break;
		case 1:
			e->kind = EV_ERRNO;
			e->err = ERRNOS[(op >> 2) % (sizeof(ERRNOS) / sizeof(ERRNOS[0]))];
			continue;
		case 2:
			e->kind = EV_EOF;
			continue;
		default:
			e->kind = EV_RAW;
			e->control_len = i < size ? data[i] : 0;
			e->msg_flags = i + 1 < size && (data[i + 1] & 1) ? MSG_CTRUNC : 0;
			i += 2;
			if (i > size)
				i = size;
			if (e->control_len > size - i)
				e->control_len = size - i;
			e->control = data + i;
			i += e->control_len;
			e->len = i < size ? data[i] : 0;
			i++;
			break;
		}
		if (i > size)
			i = size;
		if (e->len > size - i)
			e->len = size - i;
		e->payload = data + i;
		i += e->len;
	}
	return F.n;
}

/* ---- what sotls sent (TX in userspace) -------------------------------------- */

static const uint8_t KEY[32] = {7, 6, 5, 4, 3, 2, 1};
static const uint8_t SALT[4] = {1, 2, 3, 4};

struct sent {
	int peer_fd;
	struct forge_keys keys;
	uint64_t seq;
	uint8_t buf[1 << 16];
	size_t len;
	unsigned warnings; /* no_renegotiation warnings since the last data return */
	int fatal;	   /* the fatal alert sent, or -1 */
};

/* The alert a fatal error of sotls_kconn_recv sends; -1: none is sent. */
static int alert_for(int err)
{
	switch (err) {
	case SOTLS_ERR_BAD_RECORD_MAC: return 20;
	case SOTLS_ERR_RECORD_OVERFLOW: return 22;
	case SOTLS_ERR_PROTOCOL_VERSION: return 70;
	case SOTLS_ERR_PEER_ALERT:
	case SOTLS_ERR_TRUNCATED:
	case SOTLS_ERR_SYSCALL:
	case SOTLS_ERR_CLOSED:
		return -1;
	default:
		/* UNEXPECTED_MESSAGE, RENEGOTIATION_REFUSED and the flood caps:
		 * unexpected_message; DECODE: decode_error or, for an odd alert
		 * level, illegal_parameter (checked by the caller). */
		return 10;
	}
}

static void check_alert(struct sent *s, const uint8_t a[2])
{
	if (s->fatal >= 0)
		abort(); /* nothing goes out after a fatal alert */
	if (a[0] == 2)
		s->fatal = a[1];
	else if (a[0] != 1 || a[1] != 100 || ++s->warnings > SOTLS_REC_MAX_RENEG_REFUSALS)
		abort();
}

/*
 * Checks every alert sotls sent since the last look: records sealed by the
 * record layer (TX in userspace), or with TX "in the kernel" the 2-byte
 * plaintexts sotls_ktls_send_alert passed to sendmsg (AF_UNIX ignores the
 * SOL_TLS record-type cmsg and sends the bytes as they are).
 */
static void check_sent(struct sent *s, bool user_tx)
{
	for (;;) {
		ssize_t n = recv(s->peer_fd, s->buf + s->len, sizeof(s->buf) - s->len, MSG_DONTWAIT);
		if (n <= 0)
			break;
		s->len += (size_t)n;
	}
	size_t off = 0;
	while (!user_tx && s->len - off >= 2) {
		check_alert(s, s->buf + off);
		off += 2;
	}
	while (user_tx && s->len - off >= FORGE_HEADER) {
		uint8_t *r = s->buf + off;
		size_t n = FORGE_HEADER + ((size_t)r[3] << 8 | r[4]);
		if (s->len - off < n)
			break;
		uint8_t pt[2];
		if (r[0] != 21 || n != FORGE_OVERHEAD + 2 || forge_open(&s->keys, s->seq++, r, n, pt) != 2)
			abort(); /* only alerts go out, sealed with the TX key */
		check_alert(s, pt);
		off += n;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
}

static void check_fatal(const struct sent *s, ssize_t rc)
{
	int want = alert_for((int)rc);
	if (rc >= 0 || rc == SOTLS_WANT_READ)
		want = -1;
	if (rc == SOTLS_ERR_DECODE && (s->fatal == 50 || s->fatal == 47))
		return;
	/* Best effort: a fatal alert that did not fit is not sent, but none
	 * other than the right one may be. */
	if (s->fatal != -1 && s->fatal != want)
		abort();
}

/* ---- the target ------------------------------------------------------------- */

static const size_t BUF_SIZES[] = {1, 2, 3, 7, 100, 4096, 16384, 65536};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool user_tx = data[0] & 1;
	size_t len = BUF_SIZES[(data[0] >> 1) % (sizeof(BUF_SIZES) / sizeof(BUF_SIZES[0]))];
	memset(&F, 0, sizeof(F));
	parse(data, size);
	F.rx_seq = 1;
	sotls_ktls_set_test_recvmsg(fake_recvmsg);
	sotls_ktls_set_test_getsockopt(fake_getsockopt);

	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	int big = 1 << 20;
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	static struct sent s;
	memset(&s, 0, sizeof(s));
	s.peer_fd = sp[1];
	s.fatal = -1;
	struct sotls_record rec;
	static struct sotls_wire w;
	w.fd = sp[0];
	struct sotls_dir_keys keys = {KEY, SALT, 1};
	if (user_tx) {
		if (sotls_record_init(&rec, &w, SOTLS_AEAD_AES_128_GCM, &keys, &keys, NULL, 0) ||
		    forge_init(&s.keys, SOTLS_AEAD_AES_128_GCM, KEY, SALT))
			abort();
		sotls_aead_clear(&rec.rx.aead); /* the kernel's half */
		s.seq = 1;
	}
	struct sotls_kconn k;
	struct sotls_kconn_setup setup = {.tx = !user_tx, .rx = true, .server = true,
					  .alg = SOTLS_AEAD_AES_128_GCM, .tx_seq = 1, .rx_seq = 1};
	sotls_kconn_init(&k, sp[0], &setup, user_tx ? &rec : NULL);

	uint8_t *buf = malloc(len);
	if (buf == NULL)
		abort();
	ssize_t rc = SOTLS_WANT_READ;
	/* A caller buffer under 3 bytes is served from a 3-byte read: what
	 * that read got beyond it comes out in later calls. */
	static uint8_t rest[3];
	size_t rest_len = 0, rest_off = 0;
	for (unsigned call = 0; call < MAX_CALLS; call++) {
		memset(buf, CANARY, len);
		unsigned calls_before = F.calls;
		rc = sotls_kconn_recv(&k, buf, len);
		if (rc > 0 && F.calls == calls_before) {
			/* The rest of an earlier read, in order. */
			if ((size_t)rc > rest_len || memcmp(buf, rest + rest_off, (size_t)rc) != 0)
				abort();
			rest_off += (size_t)rc;
			rest_len -= (size_t)rc;
		} else if (rc > 0) {
			/* The bytes of the last recvmsg, and only of a data record;
			 * all of them unless the buffer was too short to read into. */
			if ((size_t)rc > len || F.last_foreign || F.last_len < (size_t)rc ||
			    memcmp(buf, F.last, (size_t)rc) != 0 ||
			    (F.last_len != (size_t)rc && (len >= 3 || F.last_len > sizeof(rest))))
				abort();
			rest_len = F.last_len - (size_t)rc;
			rest_off = 0;
			memcpy(rest, F.last + rc, rest_len);
		}
		if (rc > 0) {
			/* Refusals sent in this call came before the data that
			 * ended it: they count against the window it closes. */
			check_sent(&s, user_tx);
			s.warnings = 0;
		}
		for (size_t j = rc > 0 ? (size_t)rc : 0; j < len; j++)
			if (buf[j] != CANARY && buf[j] != 0)
				abort(); /* a non-data byte left in the caller's buffer */
		check_sent(&s, user_tx);
		if (rc == SOTLS_WANT_READ && F.head < F.n)
			continue; /* an EAGAIN event: the caller would poll */
		if (rc > 0)
			continue;
		if (rc == SOTLS_WANT_READ)
			break;
		/* Closed or failed: the same again, without asking the kernel. */
		unsigned before = F.calls;
		if (sotls_kconn_recv(&k, buf, len) != rc || F.calls != before)
			abort();
		break;
	}
	check_fatal(&s, rc);

	free(buf);
	if (user_tx) {
		sotls_record_free(&rec);
		forge_clear(&s.keys);
	}
	close(sp[0]);
	close(sp[1]);
	return 0;
}

/*
 * TLS 1.2 AEAD records in userspace. See record.h for the shape; this file
 * reads top to bottom: set-up, sealing, the send path, opening, the receive
 * path, alerts and shutdown.
 */
#include "record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "crypto_result.h"
#include "record_buffers.h"
#include "sotls.h"
#include "util.h"

#define TLS12_MAJOR 3
#define TLS12_MINOR 3
/* Room kept free at the end of the send buffer for alerts. */
#define ALERT_RECORD (SOTLS_REC_OVERHEAD + 2)
#define ALERT_ROOM (2 * ALERT_RECORD)
#define MAX_RECORD (SOTLS_REC_HEADER + SOTLS_REC_MAX_CIPHERTEXT)
#define FULL_RECORD (SOTLS_REC_OVERHEAD + SOTLS_REC_MAX_PLAINTEXT)
/* Buffer sizes, rounded to cache lines. */
#define TX_CAP (SOTLS_REC_TX_BATCH * FULL_RECORD + ALERT_ROOM)
#define RX_CAP (SOTLS_REC_RX_RECORDS * FULL_RECORD + MAX_RECORD)
#define TX_ALLOC ((TX_CAP + 63) & ~(size_t)63)
#define RX_ALLOC ((RX_CAP + 63) & ~(size_t)63)

/* ---- set-up ---------------------------------------------------------- */

static int half_init(struct sotls_half *h, enum sotls_aead_alg alg, const struct sotls_dir_keys *k)
{
	if (k == NULL || k->key == NULL || k->salt == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	int rc = sotls_aead_init(&h->aead, alg, k->key, sotls_aead_key_len(alg));
	if (rc != 0)
		return sotls_err_from_crypto(rc);
	memcpy(h->salt, k->salt, SOTLS_REC_SALT);
	h->seq = k->seq;
	return 0;
}

int sotls_record_init(struct sotls_record *r, struct sotls_wire *wire, enum sotls_aead_alg alg,
		      const struct sotls_dir_keys *tx, const struct sotls_dir_keys *rx,
		      const uint8_t *initial, size_t initial_len)
{
	if (r == NULL || wire == NULL || sotls_aead_key_len(alg) == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	memset(r, 0, sizeof(*r));
	r->wire = wire;
	sotls_policy_init(&r->pol, false, 0);

	r->max_plain = SOTLS_REC_MAX_PLAINTEXT;
	r->tx_cap = TX_CAP;
	r->rx_cap = RX_CAP;
	if (initial_len > r->rx_cap)
		return SOTLS_ERR_INVALID_ARGUMENT;

	int rc = half_init(&r->tx, alg, tx);
	if (rc == 0)
		rc = half_init(&r->rx, alg, rx);
	if (rc != 0) {
		sotls_record_free(r);
		return rc;
	}
	if (initial_len > 0) {
		r->rxbuf = sotls_recbuf_get(SOTLS_RECBUF_RX, RX_ALLOC);
		if (r->rxbuf == NULL) {
			sotls_record_free(r);
			return SOTLS_ERR_OUT_OF_MEMORY;
		}
		memcpy(r->rxbuf, initial, initial_len);
		r->rx_tail = initial_len;
	}
	return 0;
}

void sotls_record_set_policy(struct sotls_record *r, bool server, uint64_t key_limit)
{
	r->pol.server = server;
	r->pol.key_limit = key_limit > 0 ? key_limit : SOTLS_REC_DEFAULT_KEY_LIMIT;
}

void sotls_record_free(struct sotls_record *r)
{
	if (r == NULL)
		return;
	sotls_aead_clear(&r->tx.aead);
	sotls_aead_clear(&r->rx.aead);
	/* Unread plaintext may linger in the receive buffer. */
	if (r->rxbuf != NULL && r->plain_len > 0)
		sotls_wipe(r->plain, r->plain_len);
	sotls_recbuf_put(SOTLS_RECBUF_TX, r->txbuf);
	sotls_recbuf_put(SOTLS_RECBUF_RX, r->rxbuf);
	sotls_wipe(r, sizeof(*r));
	r->pol.err = SOTLS_ERR_CLOSED;
}

/* ---- sealing ---------------------------------------------------------- */


static void make_nonce(uint8_t nonce[SOTLS_AEAD_NONCE_LEN], const uint8_t salt[SOTLS_REC_SALT],
		       const uint8_t explicit_nonce[SOTLS_REC_EXPLICIT_NONCE])
{
	memcpy(nonce, salt, SOTLS_REC_SALT);
	memcpy(nonce + SOTLS_REC_SALT, explicit_nonce, SOTLS_REC_EXPLICIT_NONCE);
}

static void make_aad(uint8_t aad[13], uint64_t seq, uint8_t type, size_t plain_len)
{
	sotls_store_be64(aad, seq);
	aad[8] = type;
	aad[9] = TLS12_MAJOR;
	aad[10] = TLS12_MINOR;
	aad[11] = (uint8_t)(plain_len >> 8);
	aad[12] = (uint8_t)plain_len;
}

int sotls_half_seal(const struct sotls_half *h, uint8_t *p, uint8_t type, const uint8_t *in,
		    size_t len)
{
	size_t frag_len = SOTLS_REC_EXPLICIT_NONCE + len + SOTLS_REC_TAG;
	p[0] = type;
	p[1] = TLS12_MAJOR;
	p[2] = TLS12_MINOR;
	p[3] = (uint8_t)(frag_len >> 8);
	p[4] = (uint8_t)frag_len;
	sotls_store_be64(p + SOTLS_REC_HEADER, h->seq);

	uint8_t nonce[SOTLS_AEAD_NONCE_LEN], aad[13];
	make_nonce(nonce, h->salt, p + SOTLS_REC_HEADER);
	make_aad(aad, h->seq, type, len);
	uint8_t *ct = p + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
	return sotls_aead_seal(&h->aead, nonce, aad, sizeof(aad), in, len, ct, ct + len);
}

/*
 * Seals one record of len <= 2^14 bytes at tx_tail. The caller has checked
 * that it fits. The sequence number never wraps: the last value is refused.
 * Nothing is ever sealed at or past the key usage limit; records other than
 * close_notify leave its last sequence number to close_notify.
 */
static int seal_at(struct sotls_record *r, uint8_t *p, uint8_t type, const uint8_t *in, size_t len)
{
	if (r->tx.seq == UINT64_MAX)
		return SOTLS_ERR_SEQUENCE_OVERFLOW;
	/* Records that end the stream: close_notify or a fatal alert. */
	bool last = type == SOTLS_CT_ALERT && len == 2 &&
		    (in[0] == SOTLS_ALERT_FATAL || in[1] == SOTLS_ALERT_CLOSE_NOTIFY);
	if (!(last ? sotls_key_may_seal_close(r->tx.seq, r->pol.key_limit)
		    : sotls_key_may_seal_data(r->tx.seq, r->pol.key_limit)))
		return SOTLS_ERR_KEY_USAGE_LIMIT;

	if (sotls_half_seal(&r->tx, p, type, in, len) != 0)
		return SOTLS_ERR_INTERNAL;

	r->tx.seq++;
	r->tx_records++;
	return 0;
}

/* The send buffer, borrowed on first need (see release_idle). */
static int tx_get(struct sotls_record *r)
{
	if (r->txbuf == NULL && (r->txbuf = sotls_recbuf_get(SOTLS_RECBUF_TX, TX_ALLOC)) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	return 0;
}

static int seal_record(struct sotls_record *r, uint8_t type, const uint8_t *in, size_t len)
{
	int rc = tx_get(r);
	if (rc != 0)
		return rc;
	rc = seal_at(r, r->txbuf + r->tx_tail, type, in, len);
	if (rc == 0)
		r->tx_tail += SOTLS_REC_OVERHEAD + len;
	return rc;
}

int sotls_record_seal_in_place(struct sotls_record *r, uint8_t *rec, size_t len)
{
	if (r->pol.err != 0)
		return r->pol.err;
	if (r->pol.tx_closed)
		return SOTLS_ERR_CLOSED;
	if (rec == NULL || len > r->max_plain)
		return SOTLS_ERR_INVALID_ARGUMENT;
	uint8_t *pt = rec + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
	int rc = seal_at(r, rec, SOTLS_CT_APPLICATION_DATA, pt, len);
	return rc == 0 ? 0 : sotls_policy_fail(&r->pol, rc);
}

size_t sotls_record_max_plain(const struct sotls_record *r)
{
	return r->max_plain;
}

bool sotls_record_send_unfinished(const struct sotls_record *r)
{
	return r->tx_pending > 0;
}

int sotls_record_error(const struct sotls_record *r)
{
	return r->pol.err;
}

size_t sotls_record_tx_room(const struct sotls_record *r)
{
	if (r->tx_tail + ALERT_ROOM >= r->tx_cap)
		return 0;
	return r->tx_cap - r->tx_tail - ALERT_ROOM;
}

int sotls_record_queue_sealed(struct sotls_record *r, const uint8_t *data, size_t len)
{
	if (r->pol.err != 0)
		return r->pol.err;
	if (len > sotls_record_tx_room(r))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (tx_get(r) != 0)
		return sotls_policy_fail(&r->pol, SOTLS_ERR_OUT_OF_MEMORY);
	memcpy(r->txbuf + r->tx_tail, data, len);
	r->tx_tail += len;
	return 0;
}

int sotls_record_fail_syscall(struct sotls_record *r, int err)
{
	if (r->pol.err == 0) {
		r->pol.sys_errno = err;
		r->pol.err = SOTLS_ERR_SYSCALL;
		r->tx_head = r->tx_tail = r->tx_pending = 0;
	}
	return r->pol.err;
}

/* ---- the send path ---------------------------------------------------- */

/*
 * At the end of every call, buffers with nothing in them go back
 * (record_buffers.c): an idle connection holds none, and the thread's spares
 * make the next borrow a pointer swap. A blocking recv keeps its buffer while
 * it waits in the kernel.
 */
static void release_idle(struct sotls_record *r)
{
	if (r->rxbuf != NULL && r->rx_head == r->rx_tail && r->plain_len == 0) {
		sotls_recbuf_put(SOTLS_RECBUF_RX, r->rxbuf);
		r->rxbuf = NULL;
		r->rx_head = r->rx_tail = 0;
	}
	if (r->txbuf != NULL && r->tx_head == r->tx_tail && r->tx_pending == 0) {
		sotls_recbuf_put(SOTLS_RECBUF_TX, r->txbuf);
		r->txbuf = NULL;
		r->tx_head = r->tx_tail = 0;
	}
}


/*
 * Writes [tx_head, tx_tail) to the wire. 0 when all is written,
 * SOTLS_WANT_WRITE if the socket would block (or, on an engine connection,
 * until the application takes them), or a (sticky) error.
 */
static int flush(struct sotls_record *r, int flags)
{
	int rc = sotls_wire_drain(r->wire, r->txbuf, &r->tx_head, r->tx_tail, flags);
	if (rc == SOTLS_WANT_WRITE)
		return rc;
	if (rc < 0) {
		r->pol.sys_errno = errno;
		return sotls_policy_fail(&r->pol, SOTLS_ERR_SYSCALL);
	}
	r->tx_head = r->tx_tail = 0;
	return 0;
}

const uint8_t *sotls_record_out(const struct sotls_record *r, size_t *len)
{
	*len = r->txbuf != NULL ? r->tx_tail - r->tx_head : 0;
	return *len > 0 ? r->txbuf + r->tx_head : NULL;
}

int sotls_record_out_taken(struct sotls_record *r, size_t n)
{
	if (r->txbuf == NULL || n > r->tx_tail - r->tx_head)
		return SOTLS_ERR_INVALID_ARGUMENT;
	r->tx_head += n;
	if (r->tx_head == r->tx_tail) {
		r->tx_head = r->tx_tail = 0;
		release_idle(r);
	}
	return 0;
}

/* Space for one more record of len plaintext bytes, leaving room for alerts. */
static bool tx_fits(const struct sotls_record *r, size_t len)
{
	return r->tx_tail + SOTLS_REC_OVERHEAD + len + ALERT_ROOM <= r->tx_cap;
}

bool sotls_record_may_seal_data(const struct sotls_record *r)
{
	return sotls_key_may_seal_data(r->tx.seq, r->pol.key_limit);
}

int sotls_record_tx_usable(struct sotls_record *r)
{
	if (r->pol.err != 0)
		return r->pol.err;
	if (r->pol.tx_limited) {
		/* close_notify may still wait in the buffer. */
		int rc = flush(r, 0);
		return rc == 0 || rc == SOTLS_WANT_WRITE ? SOTLS_ERR_KEY_USAGE_LIMIT : rc;
	}
	return r->pol.tx_closed ? SOTLS_ERR_CLOSED : 0;
}

static const uint8_t close_notify[2] = {SOTLS_ALERT_WARNING, SOTLS_ALERT_CLOSE_NOTIFY};

/* Seals close_notify (once) after whatever is sealed. */
static int seal_close_notify(struct sotls_record *r)
{
	if (r->pol.tx_closed)
		return 0;
	/* Records sealed for an unfinished send go first: they are whole
	 * records, so the stream stays well-formed. */
	if (r->tx_tail + ALERT_RECORD > r->tx_cap)
		return sotls_policy_fail(&r->pol, SOTLS_ERR_INTERNAL);
	int rc = seal_record(r, SOTLS_CT_ALERT, close_notify, sizeof(close_notify));
	if (rc != 0)
		return sotls_policy_fail(&r->pol, rc);
	r->pol.sent_alert = SOTLS_ALERT_CLOSE_NOTIFY;
	r->pol.tx_closed = true;
	r->tx_pending = 0;
	return 0;
}

int sotls_record_limit_close(struct sotls_record *r)
{
	if (r->pol.err != 0)
		return r->pol.err;
	/* The sealed records go out before close_notify; a socket that takes
	 * them later gets them from the next send or shutdown. */
	int rc = seal_close_notify(r);
	if (rc != 0)
		return rc;
	r->pol.tx_limited = true;
	return sotls_record_tx_usable(r);
}

static ssize_t send_records(struct sotls_record *r, const uint8_t *buf, size_t len)
{
	int rc = sotls_record_tx_usable(r);
	if (rc != 0)
		return rc;
	if (buf == NULL && len > 0)
		return SOTLS_ERR_INVALID_ARGUMENT;

	size_t done = 0;
	/* Finish what an earlier call sealed: the caller passes those bytes
	 * again at the start of buf; they are not sealed a second time. */
	if (r->tx_pending > 0 && len < r->tx_pending)
		return SOTLS_ERR_INVALID_ARGUMENT;
	rc = flush(r, 0);
	if (rc != 0)
		return rc;
	done = r->tx_pending;
	r->tx_pending = 0;

	while (done < len) {
		/* The buffer is empty here: seal a batch of records. */
		bool limited = false;
		while (done + r->tx_pending < len) {
			size_t chunk = len - done - r->tx_pending;
			if (chunk > r->max_plain)
				chunk = r->max_plain;
			if (!tx_fits(r, chunk))
				break;
			if (!sotls_record_may_seal_data(r)) {
				limited = true;
				break;
			}
			rc = seal_record(r, SOTLS_CT_APPLICATION_DATA, buf + done + r->tx_pending,
					 chunk);
			if (rc != 0) {
				/* What is sealed is not reported: the connection is over. */
				return sotls_policy_fail(&r->pol, rc);
			}
			r->tx_pending += chunk;
		}
		if (limited) {
			/* What is sealed is reported: it goes out ahead of
			 * close_notify, now or with the next call. */
			done += r->tx_pending;
			r->tx_pending = 0;
			rc = sotls_record_limit_close(r);
			return done > 0 && rc == SOTLS_ERR_KEY_USAGE_LIMIT ? (ssize_t)done : rc;
		}
		rc = flush(r, 0);
		if (rc == SOTLS_WANT_WRITE)
			return done > 0 ? (ssize_t)done : SOTLS_WANT_WRITE;
		if (rc != 0)
			return rc;
		done += r->tx_pending;
		r->tx_pending = 0;
	}
	return (ssize_t)done;
}

ssize_t sotls_record_send(struct sotls_record *r, const uint8_t *buf, size_t len)
{
	ssize_t n = send_records(r, buf, len);
	release_idle(r);
	return n;
}

/*
 * Sends an alert after whatever is already sealed. A fatal alert ends the
 * connection with err; it is sent best effort, without blocking. A warning
 * is flushed if the socket takes it now, otherwise it goes with the next send.
 */
static int send_alert(struct sotls_record *r, uint8_t level, uint8_t desc, int err)
{
	uint8_t alert[2] = {level, desc};

	/* RFC 5246 7.2.1: nothing goes out after our close_notify. */
	if (r->alert_out != NULL) {
		if (r->pol.err == 0 && r->alert_out(r->alert_ctx, level, desc) == 0)
			r->pol.sent_alert = desc;
	} else if (r->pol.err == 0 && !r->pol.tx_closed && r->tx_tail + ALERT_RECORD <= r->tx_cap) {
		if (seal_record(r, SOTLS_CT_ALERT, alert, sizeof(alert)) == 0) {
			r->pol.sent_alert = desc;
			(void)flush(r, MSG_DONTWAIT);
		}
	}
	if (level == SOTLS_ALERT_FATAL) {
		sotls_policy_fail(&r->pol, err);
		/* Nothing more goes out after a fatal alert: on a socket what
		 * did not go now is dropped; an engine's application takes the
		 * records sealed so far, the alert last, then closes. */
		if (!sotls_wire_is_engine(r->wire))
			r->tx_head = r->tx_tail = 0;
		r->tx_pending = 0;
		return r->pol.err;
	}
	return r->pol.err;
}

static int send_fatal(struct sotls_record *r, uint8_t desc, int err)
{
	return send_alert(r, SOTLS_ALERT_FATAL, desc, err);
}

int sotls_record_fatal(struct sotls_record *r, uint8_t desc, int err)
{
	return send_fatal(r, desc, err);
}

int sotls_record_warning(struct sotls_record *r, uint8_t desc)
{
	return send_alert(r, SOTLS_ALERT_WARNING, desc, 0);
}

/* ---- opening ------------------------------------------------------------ */

int sotls_half_open(const struct sotls_half *h, const uint8_t *p, size_t frag_len, uint8_t *out)
{
	size_t len = frag_len - SOTLS_REC_EXPLICIT_NONCE - SOTLS_REC_TAG;
	const uint8_t *ct = p + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
	uint8_t nonce[SOTLS_AEAD_NONCE_LEN], aad[13];

	make_nonce(nonce, h->salt, p + SOTLS_REC_HEADER);
	make_aad(aad, h->seq, p[0], len);
	if (sotls_aead_open(&h->aead, nonce, aad, sizeof(aad), ct, len, ct + len, out) != 0)
		return SOTLS_ERR_BAD_RECORD_MAC;
	return 0;
}

/* ---- the receive path --------------------------------------------------- */

/* Checks a record header as soon as its 5 bytes are in. */
/* A decision of the policy (policy.h), carried out on this path. */
static int decide(struct sotls_record *r, int rc, int alert, unsigned refusals)
{
	if (rc == 0) {
		for (unsigned i = 0; i < refusals && rc == 0; i++)
			rc = send_alert(r, SOTLS_ALERT_WARNING, SOTLS_ALERT_NO_RENEGOTIATION, 0);
		return rc;
	}
	if (alert != SOTLS_POLICY_NO_ALERT)
		return send_fatal(r, (uint8_t)alert, rc);
	/* The peer is gone: nothing more goes out. */
	sotls_policy_fail(&r->pol, rc);
	r->tx_head = r->tx_tail = r->tx_pending = 0;
	return r->pol.err;
}

/* A record that is not application data, already opened at pt. */
static int handle_control(struct sotls_record *r, uint8_t type, const uint8_t *pt, size_t len)
{
	int alert;
	unsigned refusals;
	int rc = sotls_policy_control(&r->pol, type, pt, len, true, &alert, &refusals);
	return decide(r, rc, alert, refusals);
}

/* A fault in the peer's records (policy.h names its alert). */
static int fault(struct sotls_record *r, int err)
{
	int alert;
	int rc = sotls_policy_fault(&r->pol, err, &alert);
	return decide(r, rc, alert, 0);
}

static int check_header(struct sotls_record *r, const uint8_t *p, size_t *frag_len)
{
	size_t n = ((size_t)p[3] << 8) | p[4];

	switch (p[0]) {
	case SOTLS_CT_ALERT:
	case SOTLS_CT_HANDSHAKE:
	case SOTLS_CT_APPLICATION_DATA:
		break;
	default:
		return fault(r, SOTLS_ERR_UNEXPECTED_MESSAGE);
	}
	if (p[1] != TLS12_MAJOR || p[2] != TLS12_MINOR)
		return fault(r, SOTLS_ERR_PROTOCOL_VERSION);
	if (n > SOTLS_REC_MAX_CIPHERTEXT)
		return fault(r, SOTLS_ERR_RECORD_OVERFLOW);
	if (n < SOTLS_REC_EXPLICIT_NONCE + SOTLS_REC_TAG)
		return fault(r, SOTLS_ERR_DECODE);
	/* RFC 5246 §6.2.1: at most 2^14 plaintext bytes; RFC 6066 §4: at most
	 * the negotiated max_fragment_length. */
	if (n - SOTLS_REC_EXPLICIT_NONCE - SOTLS_REC_TAG > r->max_plain)
		return fault(r, SOTLS_ERR_RECORD_OVERFLOW);
	*frag_len = n;
	return 0;
}

/* Hands out opened plaintext that did not fit the caller's buffer before. */
static size_t take_plain(struct sotls_record *r, uint8_t *buf, size_t len)
{
	size_t n = r->plain_len < len ? r->plain_len : len;
	memcpy(buf, r->plain, n);
	/* Consumed plaintext does not stay in the buffer. */
	sotls_wipe(r->plain, n);
	r->plain += n;
	r->plain_len -= n;
	return n;
}

/*
 * Processes whole records already in the buffer, putting application data
 * into buf. Returns the number of bytes delivered (possibly 0, with *more set
 * if another read is needed), or an error.
 */
static ssize_t process_records(struct sotls_record *r, uint8_t *buf, size_t len, bool *need_read)
{
	size_t got = 0;

	*need_read = false;
	while (got < len && !r->pol.rx_closed && r->pol.err == 0) {
		size_t avail = r->rx_tail - r->rx_head;
		size_t frag_len = 0;

		if (avail < SOTLS_REC_HEADER) {
			*need_read = true;
			break;
		}
		uint8_t *p = r->rxbuf + r->rx_head;
		int rc = check_header(r, p, &frag_len);
		if (rc != 0)
			break;
		if (avail < SOTLS_REC_HEADER + frag_len) {
			*need_read = true;
			break;
		}
		if (r->rx.seq == UINT64_MAX) {
			fault(r, SOTLS_ERR_SEQUENCE_OVERFLOW);
			break;
		}
		if (r->rx.seq >= r->pol.key_limit) {
			/* Refused before the record is opened. */
			fault(r, SOTLS_ERR_KEY_USAGE_LIMIT);
			break;
		}

		uint8_t type = p[0];
		size_t pt_len = frag_len - SOTLS_REC_EXPLICIT_NONCE - SOTLS_REC_TAG;
		uint8_t *in_place = p + SOTLS_REC_HEADER + SOTLS_REC_EXPLICIT_NONCE;
		/* Application data that fits goes straight to the caller. */
		bool direct = type == SOTLS_CT_APPLICATION_DATA && pt_len <= len - got;
		uint8_t *out = direct ? buf + got : in_place;

		if (sotls_half_open(&r->rx, p, frag_len, out) != 0) {
			fault(r, SOTLS_ERR_BAD_RECORD_MAC);
			break;
		}
		r->rx.seq++;
		r->rx_records++;
		r->rx_head += SOTLS_REC_HEADER + frag_len;

		if (type == SOTLS_CT_APPLICATION_DATA && pt_len == 0) {
			int alert;
			rc = sotls_policy_empty(&r->pol, 1, &alert);
			if (decide(r, rc, alert, 0) != 0)
				break;
		} else if (type == SOTLS_CT_APPLICATION_DATA) {
			sotls_policy_data(&r->pol);
			if (direct) {
				got += pt_len;
			} else {
				r->plain = in_place;
				r->plain_len = pt_len;
				got += take_plain(r, buf + got, len - got);
				break; /* the rest waits in plain */
			}
		} else {
			rc = handle_control(r, type, in_place, pt_len);
			sotls_wipe(in_place, pt_len);
			if (rc != 0)
				break;
		}
	}
	if (r->rx_head == r->rx_tail && r->plain_len == 0)
		r->rx_head = r->rx_tail = 0;
	return (ssize_t)got;
}

uint8_t *sotls_record_in_space(struct sotls_record *r, size_t *cap)
{
	*cap = 0;
	if (r->pol.err != 0 || r->pol.rx_closed)
		return NULL;
	if (r->rxbuf == NULL && (r->rxbuf = sotls_recbuf_get(SOTLS_RECBUF_RX, RX_ALLOC)) == NULL) {
		sotls_policy_fail(&r->pol, SOTLS_ERR_OUT_OF_MEMORY);
		return NULL;
	}
	/* A partial record moves to the front when the end is too short for
	 * the longest record; opened plaintext waiting there stays put. */
	if (r->rx_cap - r->rx_tail < MAX_RECORD && r->rx_head > 0 && r->plain_len == 0) {
		size_t keep = r->rx_tail - r->rx_head;
		memmove(r->rxbuf, r->rxbuf + r->rx_head, keep);
		r->rx_head = 0;
		r->rx_tail = keep;
	}
	*cap = r->rx_cap - r->rx_tail;
	return *cap > 0 ? r->rxbuf + r->rx_tail : NULL;
}

int sotls_record_in_added(struct sotls_record *r, size_t n)
{
	if (n == 0) { /* nothing came: an empty buffer goes back, as after any call */
		release_idle(r);
		return 0;
	}
	if (r->rxbuf == NULL || n > r->rx_cap - r->rx_tail)
		return SOTLS_ERR_INVALID_ARGUMENT;
	r->rx_tail += n;
	return 0;
}

/* One read into the free end of the buffer. */
static int fill(struct sotls_record *r)
{
	size_t cap;
	uint8_t *p = sotls_record_in_space(r, &cap);
	if (p == NULL)
		return r->pol.err != 0 ? r->pol.err : SOTLS_ERR_INTERNAL;
	ssize_t n = sotls_wire_recv(r->wire, p, cap);
	if (n > 0) {
		r->rx_tail += (size_t)n;
		return 0;
	}
	if (n == 0)
		return sotls_policy_fail(&r->pol, SOTLS_ERR_TRUNCATED);
	if (n == SOTLS_WANT_READ)
		return SOTLS_WANT_READ;
	r->pol.sys_errno = errno;
	return sotls_policy_fail(&r->pol, SOTLS_ERR_SYSCALL);
}

static ssize_t recv_records(struct sotls_record *r, uint8_t *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (r->plain_len > 0)
		return (ssize_t)take_plain(r, buf, len);
	if (r->pol.err != 0)
		return r->pol.err;

	for (;;) {
		if (r->pol.rx_closed)
			return 0;
		bool need_read;
		ssize_t got = process_records(r, buf, len, &need_read);
		/* Authenticated data goes out first; an error after it waits. */
		if (got > 0)
			return got;
		if (r->pol.err != 0)
			return r->pol.err;
		if (!need_read)
			continue; /* a control record only; look again */
		int rc = fill(r);
		if (rc != 0)
			return rc;
	}
}

ssize_t sotls_record_recv(struct sotls_record *r, uint8_t *buf, size_t len)
{
	ssize_t n = recv_records(r, buf, len);
	release_idle(r);
	return n;
}

/* ---- shutdown ------------------------------------------------------------ */

int sotls_record_shutdown(struct sotls_record *r)
{
	if (r->pol.err != 0)
		return r->pol.err;
	int rc = seal_close_notify(r);
	if (rc != 0)
		return rc;
	rc = flush(r, 0);
	release_idle(r);
	return rc;
}

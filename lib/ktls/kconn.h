/*
 * The kernel path of a connection (lib/conn.c): after the handshake, each
 * direction goes to the kernel (kTLS) or stays in the userspace record layer,
 * by the configuration's policy; on the kernel path send and recv go straight
 * to the socket, and non-data records (alerts, handshake messages) travel in
 * control messages (TLS_SET_RECORD_TYPE / TLS_GET_RECORD_TYPE).
 */
#ifndef SOTLS_KTLS_KCONN_H
#define SOTLS_KTLS_KCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "aead.h"
#include "record.h"
#include "sotls.h"

#ifdef SOTLS_TEST_SEAMS
/* Test seam (test builds only): sleeps this long before installing TLS_RX,
 * so that the peer's first records are surely queued in the socket when RX
 * is installed. */
void sotls_kconn_set_test_rx_delay_us(unsigned us);
#endif

/* Reasons that are not the kernel's own (lib/ktls gives the others). */
#define SOTLS_KREASON_KERNEL "installed in the kernel (kTLS)"
#define SOTLS_KREASON_OFF "kTLS disabled by configuration"
#define SOTLS_KREASON_ENGINE \
	"engine connection: no socket until sotls_engine_attach_fd"
#define SOTLS_KREASON_TX_ONLY "kTLS not tried for this direction (configuration: kTLS TX only)"
#define SOTLS_KREASON_RX_ONLY "kTLS not tried for this direction (configuration: kTLS RX only)"
/* Linux 6.1's kTLS cuts sent records at 2^14 (TLS_TX_MAX_PAYLOAD_LEN came
 * later) and takes received records up to 2^14 with no option to lower it. */
#define SOTLS_KREASON_MFL_TX \
	"kTLS not tried: max_fragment_length negotiated and the kernel cannot cap the records it sends"
#define SOTLS_KREASON_MFL_RX \
	"kTLS not tried: max_fragment_length negotiated and the kernel cannot refuse larger records"

/* What the kernel took. Reasons are static strings. A fallback: the policy
 * gave the direction to the kernel, which did not take it or could not be
 * asked (max_fragment_length), as opposed to a direction the configuration
 * kept in userspace. */
struct sotls_kchoice {
	bool tx, rx;
	const char *tx_reason, *rx_reason;
	bool tx_fallback, rx_fallback;
};

/*
 * Installs TLS_TX and TLS_RX on fd as the policy says (OFF: nothing; nor with
 * a max_fragment_length, max_frag != 0, which the kernel cannot honour) and
 * fills *out. With nothing of the record stream read ahead and nothing
 * unsent in userspace (the caller guarantees both). Never fails: a direction
 * the kernel does not take stays in userspace with the reason.
 */
void sotls_kconn_install(int fd, enum sotls_ktls_policy policy, enum sotls_aead_alg alg,
			 const struct sotls_dir_keys *tx, const struct sotls_dir_keys *rx,
			 uint16_t max_frag, struct sotls_kchoice *out);

/* The state of the kernel directions of one connection. */
struct sotls_kconn {
	int fd;
	enum sotls_aead_alg alg;
	bool tx, rx;	       /* which directions are in the kernel */
	bool hs_mid; /* the last read filled the buffer with handshake bytes */
	/* Data that did not fit a caller's buffer of 1 or 2 bytes. */
	uint8_t small_len;
	uint8_t small[2];
	struct sotls_record *rec; /* the userspace half (mixed modes), or NULL */
	struct sotls_policy pol;  /* the rules, the errors, the alerts (policy.h) */
	/* TX: the kernel's sequence number when last read back, and an upper
	 * bound on the records made since (one per byte handed over, one per
	 * alert): the kernel may cut records short, never make empty ones. */
	uint64_t tx_seq_known, tx_since;
	/* RX: the kernel's next sequence number after the last recvmsg; the
	 * difference tells how many records a call consumed, empty ones too. */
	uint64_t rx_seq;
};

/* The directions of one connection as start_records (conn.c) sets them up. */
struct sotls_kconn_setup {
	bool tx, rx;		 /* in the kernel */
	bool server;
	enum sotls_aead_alg alg;
	uint64_t key_limit;	 /* 0: SOTLS_REC_DEFAULT_KEY_LIMIT */
	uint64_t tx_seq, rx_seq; /* the sequence numbers the kernel got */
};

void sotls_kconn_init(struct sotls_kconn *k, int fd, const struct sotls_kconn_setup *s,
		      struct sotls_record *rec);

/* sotls_send / sotls_recv / sotls_shutdown for a direction in the kernel. */
ssize_t sotls_kconn_send(struct sotls_kconn *k, const uint8_t *buf, size_t len);
ssize_t sotls_kconn_recv(struct sotls_kconn *k, uint8_t *buf, size_t len);
int sotls_kconn_shutdown(struct sotls_kconn *k);

/*
 * How many bytes (<= want) may go to the kernel TX now without the records
 * the kernel makes of them passing the key usage limit; unsent: bytes
 * already reported as sent that the kernel has not been given yet (a
 * sendfile pipe). Reads the kernel's sequence number back when the bound
 * needs it. 0: the limit is reached (sotls_kconn_limit_close).
 */
size_t sotls_kconn_tx_budget(struct sotls_kconn *k, size_t want, size_t unsent);
/* n bytes went to the kernel TX outside sotls_kconn_send (sendfile). */
void sotls_kconn_tx_account(struct sotls_kconn *k, size_t n);
/* Sends close_notify because the limit is reached, closes the direction.
 * Returns SOTLS_ERR_KEY_USAGE_LIMIT (or the sticky error). */
int sotls_kconn_limit_close(struct sotls_kconn *k);

/* Sends a fatal alert through whichever path sends (best effort) and makes
 * err sticky. Returns err. */
int sotls_kconn_fatal(struct sotls_kconn *k, uint8_t desc, int err);

/* The record layer's alert_out when TX is in the kernel (ctx: the kconn). */
int sotls_kconn_alert_out(void *ctx, uint8_t level, uint8_t desc);

#endif

/*
 * SOL_TLS glue: the ULP, one crypto_info per cipher, TX/RX installation,
 * control records through cmsg, and the reasons the kernel says no.
 */
#include "ktls.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ciphers.h"
#include "sotls.h"
#include "util.h"

#if defined(__has_include)
#if __has_include(<linux/tls.h>)
#include <linux/tls.h>
#endif
#endif

/*
 * What a C library or kernel header may lack; values are the kernel ABI
 * (include/uapi/linux/tls.h, include/linux/socket.h, include/uapi/linux/tcp.h).
 */
#ifndef SOL_TLS
#define SOL_TLS 282
#endif
#ifndef TCP_ULP
#define TCP_ULP 31
#endif
#ifndef TLS_TX
#define TLS_TX 1
#define TLS_RX 2
struct tls_crypto_info {
	unsigned short version;
	unsigned short cipher_type;
};
#endif
#ifndef TLS_RX
#define TLS_RX 2
#endif
#ifndef TLS_1_2_VERSION
#define TLS_1_2_VERSION 0x0303
#endif
#ifndef TLS_SET_RECORD_TYPE
#define TLS_SET_RECORD_TYPE 1
#endif
#ifndef TLS_GET_RECORD_TYPE
#define TLS_GET_RECORD_TYPE 2
#endif
#ifndef TLS_CIPHER_ARIA_GCM_128
#define TLS_CIPHER_ARIA_GCM_128 57
#define TLS_CIPHER_ARIA_GCM_128_IV_SIZE 8
#define TLS_CIPHER_ARIA_GCM_128_KEY_SIZE 16
#define TLS_CIPHER_ARIA_GCM_128_SALT_SIZE 4
#define TLS_CIPHER_ARIA_GCM_128_TAG_SIZE 16
#define TLS_CIPHER_ARIA_GCM_128_REC_SEQ_SIZE 8
#define TLS_CIPHER_ARIA_GCM_256 58
#define TLS_CIPHER_ARIA_GCM_256_IV_SIZE 8
#define TLS_CIPHER_ARIA_GCM_256_KEY_SIZE 32
#define TLS_CIPHER_ARIA_GCM_256_SALT_SIZE 4
#define TLS_CIPHER_ARIA_GCM_256_TAG_SIZE 16
#define TLS_CIPHER_ARIA_GCM_256_REC_SEQ_SIZE 8
struct tls12_crypto_info_aria_gcm_128 {
	struct tls_crypto_info info;
	unsigned char iv[TLS_CIPHER_ARIA_GCM_128_IV_SIZE];
	unsigned char key[TLS_CIPHER_ARIA_GCM_128_KEY_SIZE];
	unsigned char salt[TLS_CIPHER_ARIA_GCM_128_SALT_SIZE];
	unsigned char rec_seq[TLS_CIPHER_ARIA_GCM_128_REC_SEQ_SIZE];
};
struct tls12_crypto_info_aria_gcm_256 {
	struct tls_crypto_info info;
	unsigned char iv[TLS_CIPHER_ARIA_GCM_256_IV_SIZE];
	unsigned char key[TLS_CIPHER_ARIA_GCM_256_KEY_SIZE];
	unsigned char salt[TLS_CIPHER_ARIA_GCM_256_SALT_SIZE];
	unsigned char rec_seq[TLS_CIPHER_ARIA_GCM_256_REC_SEQ_SIZE];
};
#endif

#ifndef TLS_CIPHER_AES_GCM_128
#define TLS_CIPHER_AES_GCM_128 51
struct tls12_crypto_info_aes_gcm_128 {
	struct tls_crypto_info info;
	unsigned char iv[8];
	unsigned char key[16];
	unsigned char salt[4];
	unsigned char rec_seq[8];
};
#endif
#ifndef TLS_CIPHER_AES_GCM_256
#define TLS_CIPHER_AES_GCM_256 52
struct tls12_crypto_info_aes_gcm_256 {
	struct tls_crypto_info info;
	unsigned char iv[8];
	unsigned char key[32];
	unsigned char salt[4];
	unsigned char rec_seq[8];
};
#endif

/* The kernel ABI, checked where it is compiled. */
_Static_assert(sizeof(struct tls_crypto_info) == 4, "tls_crypto_info is 4 bytes");
_Static_assert(TLS_CIPHER_ARIA_GCM_128 == 57 && TLS_CIPHER_ARIA_GCM_256 == 58,
	       "ARIA-GCM cipher types");
_Static_assert(sizeof(struct tls12_crypto_info_aria_gcm_128) == 4 + 8 + 16 + 4 + 8,
	       "tls12_crypto_info_aria_gcm_128 layout");
_Static_assert(sizeof(struct tls12_crypto_info_aria_gcm_256) == 4 + 8 + 32 + 4 + 8,
	       "tls12_crypto_info_aria_gcm_256 layout");
_Static_assert(TLS_CIPHER_AES_GCM_128 == 51 && TLS_CIPHER_AES_GCM_256 == 52, "AES-GCM cipher types");
_Static_assert(sizeof(struct tls12_crypto_info_aes_gcm_128) == 4 + 8 + 16 + 4 + 8,
	       "tls12_crypto_info_aes_gcm_128 layout");
_Static_assert(sizeof(struct tls12_crypto_info_aes_gcm_256) == 4 + 8 + 32 + 4 + 8,
	       "tls12_crypto_info_aes_gcm_256 layout");

/*
 * The kernel's side of each row of SOTLS_CIPHERS (proto/ciphers.h): where
 * the parts of its tls12_crypto_info_* struct sit, and what to say when the
 * kernel refuses it. Every such struct is {info, iv[8], key[N], salt[4],
 * rec_seq[8]}.
 */
struct ktls_cipher {
	enum sotls_aead_alg alg;
	unsigned short type;
	const char *kname;
	const char *no_crypto_text; /* ENOENT: the crypto API has no such AEAD */
	const char *unknown_text;   /* EINVAL & co: the kernel's TLS does not know the cipher */
	size_t size, iv_off, iv_len, key_off, key_len, salt_off, salt_len, seq_off, seq_len;
};

#define KTLS_CIPHER(alg_, type_, kname_, since_, st)                                          \
	{                                                                                     \
		.alg = alg_, .type = type_, .kname = kname_,                                  \
		.no_crypto_text = "kernel cannot do " kname_ " for TLS (no " kname_           \
				  " in its crypto API)",                                      \
		.unknown_text = "kernel cannot do " kname_ " for TLS (its TLS predates the "  \
				"cipher: Linux " since_ ")",                                  \
		.size = sizeof(struct st), .iv_off = offsetof(struct st, iv),                 \
		.iv_len = sizeof(((struct st *)0)->iv), .key_off = offsetof(struct st, key),  \
		.key_len = sizeof(((struct st *)0)->key),                                     \
		.salt_off = offsetof(struct st, salt),                                        \
		.salt_len = sizeof(((struct st *)0)->salt),                                   \
		.seq_off = offsetof(struct st, rec_seq),                                      \
		.seq_len = sizeof(((struct st *)0)->rec_seq),                                 \
	}

#define KTLS_ROW(alg, key_bytes, type, kname, since, st) KTLS_CIPHER(alg, type, kname, since, st),
static const struct ktls_cipher ktls_ciphers[] = {SOTLS_CIPHERS(KTLS_ROW)};

/* The kernel's layouts agree with the record format sotls uses (tls12.h):
 * a salt of SOTLS_REC_SALT bytes, an explicit nonce (the kernel's "iv") of
 * SOTLS_REC_EXPLICIT_NONCE, an 8-byte sequence number, 16/32-byte keys. */
#define KTLS_LAYOUT_CHECK(alg, key_bytes, type, kname, since, st)                             \
	_Static_assert(sizeof(((struct st *)0)->salt) == SOTLS_REC_SALT, #st " salt");          \
	_Static_assert(sizeof(((struct st *)0)->iv) == SOTLS_REC_EXPLICIT_NONCE, #st " iv");    \
	_Static_assert(sizeof(((struct st *)0)->rec_seq) == 8, #st " rec_seq");                 \
	_Static_assert(sizeof(((struct st *)0)->key) == (key_bytes), #st " key");
SOTLS_CIPHERS(KTLS_LAYOUT_CHECK)

/* Room for the largest crypto_info of the table. */
union ktls_crypto_info_buf {
#define KTLS_MEMBER(alg, key_bytes, type, kname, since, st) struct st st;
	struct tls_crypto_info info;
	SOTLS_CIPHERS(KTLS_MEMBER)
	unsigned char bytes[64];
};

static const struct ktls_cipher *find_cipher(enum sotls_aead_alg alg)
{
	for (size_t i = 0; i < sizeof(ktls_ciphers) / sizeof(ktls_ciphers[0]); i++)
		if (ktls_ciphers[i].alg == alg)
			return &ktls_ciphers[i];
	return NULL;
}

int sotls_ktls_alg_supported(enum sotls_aead_alg alg)
{
	return find_cipher(alg) != NULL;
}

const char *sotls_ktls_kernel_cipher_name(enum sotls_aead_alg alg)
{
	const struct ktls_cipher *c = find_cipher(alg);
	return c ? c->kname : NULL;
}

unsigned sotls_ktls_cipher_type(enum sotls_aead_alg alg)
{
	const struct ktls_cipher *c = find_cipher(alg);
	return c ? c->type : 0;
}

size_t sotls_ktls_crypto_info_size(enum sotls_aead_alg alg)
{
	const struct ktls_cipher *c = find_cipher(alg);
	return c ? c->size : 0;
}

size_t sotls_ktls_fill_crypto_info(enum sotls_aead_alg alg, const struct sotls_dir_keys *keys,
				   void *buf, size_t buf_len)
{
	const struct ktls_cipher *c;
	struct tls_crypto_info info;
	unsigned char *p = buf;
	uint8_t seq[8];

	if (keys == NULL || buf == NULL || (c = find_cipher(alg)) == NULL)
		return 0;
	if (keys->key == NULL || keys->salt == NULL || buf_len < c->size ||
	    c->salt_len != SOTLS_REC_SALT || c->iv_len != sizeof(seq) ||
	    c->seq_len != sizeof(seq))
		return 0;
	memset(p, 0, c->size);
	info.version = TLS_1_2_VERSION;
	info.cipher_type = c->type;
	memcpy(p, &info, sizeof(info));
	/* The explicit nonce of each record is its sequence number, as in our
	 * userspace record layer: the kernel starts at iv and counts up. */
	sotls_store_be64(seq, keys->seq);
	memcpy(p + c->iv_off, seq, sizeof(seq));
	memcpy(p + c->seq_off, seq, sizeof(seq));
	memcpy(p + c->key_off, keys->key, c->key_len);
	memcpy(p + c->salt_off, keys->salt, SOTLS_REC_SALT);
	return c->size;
}

const char *sotls_ktls_reason_name(enum sotls_ktls_reason reason)
{
	switch (reason) {
	case SOTLS_KTLS_OK:
		return "installed in the kernel";
	case SOTLS_KTLS_NO_ULP:
		return "kernel has no TLS ULP (CONFIG_TLS)";
	case SOTLS_KTLS_OLD_KERNEL:
		return "kernel too old for this kTLS option";
	case SOTLS_KTLS_NO_CIPHER:
		return "kernel cannot do the cipher for TLS";
	case SOTLS_KTLS_NOT_CONNECTED:
		return "socket is not an established TCP connection";
	case SOTLS_KTLS_ULP_BUSY:
		return "socket already has another ULP";
	case SOTLS_KTLS_ALREADY_SET:
		return "kTLS already installed for this direction";
	case SOTLS_KTLS_NO_MEMORY:
		return "kernel out of memory for kTLS";
	case SOTLS_KTLS_BAD_ARGUMENT:
		return "invalid kTLS arguments";
	case SOTLS_KTLS_SYSCALL:
		return "kTLS system call failed";
	case SOTLS_KTLS_REASONS:
		break;
	}
	return "unknown kTLS reason";
}

static int set_result(struct sotls_ktls_result *res, enum sotls_ktls_reason reason, int err,
		      const char *text)
{
	if (res != NULL) {
		res->reason = reason;
		res->err = err;
		res->text = text != NULL ? text : sotls_ktls_reason_name(reason);
	}
	switch (reason) {
	case SOTLS_KTLS_OK:
		return SOTLS_OK;
	case SOTLS_KTLS_NO_ULP:
	case SOTLS_KTLS_OLD_KERNEL:
	case SOTLS_KTLS_NO_CIPHER:
	case SOTLS_KTLS_ULP_BUSY:
		return SOTLS_ERR_UNSUPPORTED;
	case SOTLS_KTLS_NOT_CONNECTED:
	case SOTLS_KTLS_ALREADY_SET:
		return SOTLS_ERR_BAD_STATE;
	case SOTLS_KTLS_NO_MEMORY:
		return SOTLS_ERR_OUT_OF_MEMORY;
	case SOTLS_KTLS_BAD_ARGUMENT:
		return SOTLS_ERR_INVALID_ARGUMENT;
	case SOTLS_KTLS_SYSCALL:
	case SOTLS_KTLS_REASONS:
		break;
	}
	return SOTLS_ERR_SYSCALL;
}

/* Linux's internal ENOTSUPP, which old kernels' tls_init leaked to userspace. */
#define KERNEL_ENOTSUPP 524

int sotls_ktls_explain(int err, int ulp_step, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
		       struct sotls_ktls_result *res)
{
	const struct ktls_cipher *c = find_cipher(alg);
	int rx = dir == SOTLS_KTLS_RX;

	if (err == 0)
		return set_result(res, SOTLS_KTLS_OK, 0, NULL);
	if (err == ENOMEM || err == ENOBUFS)
		return set_result(res, SOTLS_KTLS_NO_MEMORY, err, NULL);
	if (err == EBADF || err == ENOTSOCK || err == EFAULT)
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, err,
				  "invalid kTLS arguments (not a socket)");
	if (ulp_step) {
		switch (err) {
		case ENOENT:
			return set_result(res, SOTLS_KTLS_NO_ULP, err, NULL);
		case ENOPROTOOPT:
			return set_result(res, SOTLS_KTLS_OLD_KERNEL, err,
					  "kernel too old for TCP_ULP (Linux 4.13)");
		case EEXIST:
			return set_result(res, SOTLS_KTLS_ULP_BUSY, err, NULL);
		case ENOTCONN:
		case KERNEL_ENOTSUPP:
		case EOPNOTSUPP:
		case EINVAL:
		case EISCONN:
			return set_result(res, SOTLS_KTLS_NOT_CONNECTED, err, NULL);
		default:
			return set_result(res, SOTLS_KTLS_SYSCALL, err, "setsockopt(TCP_ULP, tls) failed");
		}
	}
	switch (err) {
	case ENOENT:
		/* The crypto API found no AEAD of that name (no module either). */
		return set_result(res, SOTLS_KTLS_NO_CIPHER, err,
				  c ? c->no_crypto_text : "kernel cannot do the cipher for TLS");
	case EINVAL:
		/* Unknown cipher_type (or version for it): the kernel predates it. */
		return set_result(res, SOTLS_KTLS_NO_CIPHER, err,
				  c ? c->unknown_text : "kernel cannot do the cipher for TLS");
	case ENOPROTOOPT:
		/* SOL_TLS without TLS_RX (Linux < 4.17) refuses the option itself. */
		if (rx)
			return set_result(res, SOTLS_KTLS_OLD_KERNEL, err,
					  "kernel too old for kTLS receive (TLS_RX: Linux 4.17)");
		return set_result(res, SOTLS_KTLS_NO_CIPHER, err,
				  c ? c->unknown_text : "kernel cannot do the cipher for TLS");
	case EOPNOTSUPP:
	case KERNEL_ENOTSUPP:
		return set_result(res, SOTLS_KTLS_OLD_KERNEL, err,
				  rx ? "kernel too old for kTLS receive of this kind"
				     : "kernel too old for kTLS transmit of this kind");
	case EBUSY:
	case EEXIST:
		return set_result(res, SOTLS_KTLS_ALREADY_SET, err, NULL);
	case ENOTCONN:
		return set_result(res, SOTLS_KTLS_NOT_CONNECTED, err, NULL);
	default:
		return set_result(res, SOTLS_KTLS_SYSCALL, err,
				  rx ? "setsockopt(SOL_TLS, TLS_RX) failed"
				     : "setsockopt(SOL_TLS, TLS_TX) failed");
	}
}

/* Whether fd already runs the "tls" ULP. */
static int ulp_is_tls(int fd)
{
	char name[16] = {0};
	socklen_t len = sizeof(name) - 1;

	if (getsockopt(fd, SOL_TCP, TCP_ULP, name, &len) != 0)
		return 0;
	return strcmp(name, "tls") == 0;
}

static int is_tcp_stream(int fd)
{
	int type = 0, proto = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
		return 0;
	len = sizeof(proto);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0)
		return 1; /* kernels before 2.6.32: assume TCP */
	return proto == IPPROTO_TCP;
}

int sotls_ktls_enable(int fd, struct sotls_ktls_result *res)
{
	static const char ulp[] = "tls";

	if (fd < 0)
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EBADF, NULL);
	if (setsockopt(fd, SOL_TCP, TCP_ULP, ulp, sizeof(ulp)) == 0)
		return set_result(res, SOTLS_KTLS_OK, 0, NULL);
	int err = errno;
	if (err == EEXIST && ulp_is_tls(fd))
		return set_result(res, SOTLS_KTLS_OK, 0, NULL);
	/* A UDP or Unix socket answers ENOPROTOOPT / EOPNOTSUPP too: say what it is. */
	if (err != ENOENT && err != EBADF && err != ENOTSOCK && !is_tcp_stream(fd)) {
		errno = err;
		return set_result(res, SOTLS_KTLS_NOT_CONNECTED, err,
				  "socket is not a TCP socket");
	}
	int rc = sotls_ktls_explain(err, 1, SOTLS_KTLS_TX, 0, res);
	errno = err;
	return rc;
}

int sotls_ktls_install(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg,
		       const struct sotls_dir_keys *keys, struct sotls_ktls_result *res)
{
	union ktls_crypto_info_buf ci;
	size_t size;
	int rc, err;

	if (fd < 0 || keys == NULL || (dir != SOTLS_KTLS_TX && dir != SOTLS_KTLS_RX))
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EINVAL, NULL);
	if (find_cipher(alg) == NULL)
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EINVAL,
				  "invalid kTLS arguments (sotls has no kTLS mapping for the cipher)");
	if (keys->key == NULL || keys->salt == NULL)
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EINVAL,
				  "invalid kTLS arguments (no key or salt)");

	rc = sotls_ktls_enable(fd, res);
	if (rc != SOTLS_OK)
		return rc;

	size = sotls_ktls_fill_crypto_info(alg, keys, &ci, sizeof(ci));
	if (size == 0) {
		sotls_wipe(&ci, sizeof(ci));
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EINVAL, NULL);
	}
	rc = setsockopt(fd, SOL_TLS, dir == SOTLS_KTLS_TX ? TLS_TX : TLS_RX, &ci, (socklen_t)size);
	err = rc == 0 ? 0 : errno;
	sotls_wipe(&ci, sizeof(ci));
	rc = sotls_ktls_explain(err, 0, dir, alg, res);
	errno = err;
	return rc;
}

#ifdef SOTLS_TEST_SEAMS
/* getsockopt(2), or the same fuzzer's stand-in for the kernel's rec_seq. */
static sotls_ktls_getsockopt_fn g_getsockopt = getsockopt;

void sotls_ktls_set_test_getsockopt(sotls_ktls_getsockopt_fn fn)
{
	g_getsockopt = fn != NULL ? fn : getsockopt;
}
#else
#define g_getsockopt getsockopt
#endif

int sotls_ktls_get_seq(int fd, enum sotls_ktls_dir dir, enum sotls_aead_alg alg, uint64_t *seq)
{
	union ktls_crypto_info_buf ci;
	const struct ktls_cipher *c = find_cipher(alg);

	if (fd < 0 || seq == NULL || c == NULL || (dir != SOTLS_KTLS_TX && dir != SOTLS_KTLS_RX))
		return SOTLS_ERR_INVALID_ARGUMENT;
	/* The kernel wants the exact size of the cipher's crypto_info. */
	socklen_t len = (socklen_t)c->size;
	memset(&ci, 0, sizeof(ci));
	int rc = g_getsockopt(fd, SOL_TLS, dir == SOTLS_KTLS_TX ? TLS_TX : TLS_RX, &ci, &len);
	int err = errno;
	bool ok = rc == 0 && ci.info.cipher_type == c->type && len == c->size;
	if (ok)
		*seq = sotls_load_be64(ci.bytes + c->seq_off);
	sotls_wipe(&ci, sizeof(ci));
	if (rc != 0) {
		errno = err;
		/* Kernels whose getsockopt does not know the cipher say EINVAL. */
		return err == EINVAL || err == ENOPROTOOPT ? SOTLS_ERR_UNSUPPORTED : SOTLS_ERR_SYSCALL;
	}
	return ok ? SOTLS_OK : SOTLS_ERR_UNSUPPORTED;
}

/* A connected loopback TCP pair; 0 or -1 with errno. */
static int loopback_pair(int *a, int *b)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int lfd, cfd = -1, sfd = -1, err;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -1;
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len) != 0)
		goto fail;
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		goto fail;
	sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sfd < 0)
		goto fail;
	close(lfd);
	*a = cfd;
	*b = sfd;
	return 0;
fail:
	err = errno;
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	errno = err;
	return -1;
}

int sotls_ktls_probe(enum sotls_aead_alg alg, struct sotls_ktls_result *res)
{
	static const uint8_t zero[SOTLS_AEAD_MAX_KEY_LEN];
	const struct sotls_dir_keys keys = {zero, zero, 0};
	int a, b, rc;

	if (alg != 0 && find_cipher(alg) == NULL)
		return set_result(res, SOTLS_KTLS_BAD_ARGUMENT, EINVAL,
				  "invalid kTLS arguments (sotls has no kTLS mapping for the cipher)");
	if (loopback_pair(&a, &b) != 0)
		return set_result(res, SOTLS_KTLS_SYSCALL, errno,
				  "kTLS probe could not make a loopback TCP connection");
	if (alg == 0) {
		rc = sotls_ktls_enable(a, res);
	} else {
		rc = sotls_ktls_install(a, SOTLS_KTLS_TX, alg, &keys, res);
	}
	int err = errno;
	close(a);
	close(b);
	errno = err;
	return rc;
}

int sotls_ktls_map_rx_errno(int err)
{
	switch (err) {
	case EBADMSG:
		return SOTLS_ERR_BAD_RECORD_MAC;
	case EMSGSIZE:
		return SOTLS_ERR_RECORD_OVERFLOW;
	case EINVAL:
		/* The record header's version is not TLS 1.2's: the userspace
		 * record layer calls that SOTLS_ERR_PROTOCOL_VERSION too. */
		return SOTLS_ERR_PROTOCOL_VERSION;
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		return SOTLS_WANT_READ;
	case ECONNRESET:
	case EPIPE:
		return SOTLS_ERR_CLOSED;
	default:
		return SOTLS_ERR_SYSCALL;
	}
}

static int map_tx_errno(int err)
{
	switch (err) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		return SOTLS_WANT_WRITE;
	case EPIPE:
	case ECONNRESET:
		return SOTLS_ERR_CLOSED;
	case EINVAL:
	case EBADF:
	case ENOTSOCK:
		return SOTLS_ERR_INVALID_ARGUMENT;
	default:
		return SOTLS_ERR_SYSCALL;
	}
}

ssize_t sotls_ktls_send_record(int fd, uint8_t type, const void *data, size_t len)
{
	return sotls_ktls_send_record_flags(fd, type, data, len, 0);
}

ssize_t sotls_ktls_send_record_flags(int fd, uint8_t type, const void *data, size_t len,
				     int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(unsigned char))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *cmsg;
	ssize_t n;

	if (fd < 0 || (data == NULL && len != 0))
		return SOTLS_ERR_INVALID_ARGUMENT;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (type != SOTLS_CT_APPLICATION_DATA) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_TLS;
		cmsg->cmsg_type = TLS_SET_RECORD_TYPE;
		cmsg->cmsg_len = CMSG_LEN(sizeof(unsigned char));
		*CMSG_DATA(cmsg) = type;
	}
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return map_tx_errno(errno);
	return n;
}

int sotls_ktls_send_alert(int fd, uint8_t level, uint8_t description)
{
	return sotls_ktls_send_alert_flags(fd, level, description, 0);
}

int sotls_ktls_send_alert_flags(int fd, uint8_t level, uint8_t description, int flags)
{
	const uint8_t alert[2] = {level, description};
	ssize_t n = sotls_ktls_send_record_flags(fd, SOTLS_CT_ALERT, alert, sizeof(alert), flags);

	if (n < 0)
		return (int)n;
	/* A blocking socket takes the whole record; a non-blocking one may not. */
	return n == (ssize_t)sizeof(alert) ? SOTLS_OK : SOTLS_WANT_WRITE;
}

#ifdef SOTLS_TEST_SEAMS
/* recvmsg(2), or a fuzzer's stand-in: no kernel hands out malformed control
 * messages, so only a fake can test their parsing. */
static sotls_ktls_recvmsg_fn g_recvmsg = recvmsg;

void sotls_ktls_set_test_recvmsg(sotls_ktls_recvmsg_fn fn)
{
	g_recvmsg = fn != NULL ? fn : recvmsg;
}
#else
#define g_recvmsg recvmsg
#endif


ssize_t sotls_ktls_recv(int fd, void *buf, size_t len, int flags, uint8_t *type)
{
	union {
		char buf[CMSG_SPACE(sizeof(unsigned char))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *cmsg;
	ssize_t n;

	if (fd < 0 || (buf == NULL && len != 0))
		return SOTLS_ERR_INVALID_ARGUMENT;
	do {
		memset(&msg, 0, sizeof(msg));
		memset(&control, 0, sizeof(control));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		n = g_recvmsg(fd, &msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return sotls_ktls_map_rx_errno(errno);

	/* Without a record-type cmsg the bytes are application data. */
	uint8_t t = SOTLS_CT_APPLICATION_DATA;
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		if (cmsg->cmsg_level == SOL_TLS && cmsg->cmsg_type == TLS_GET_RECORD_TYPE &&
		    cmsg->cmsg_len >= CMSG_LEN(sizeof(unsigned char)))
			t = *CMSG_DATA(cmsg);
	}
	if (type != NULL)
		*type = t;
	return n;
}

/*
 * Runs inside the test VM (tests/vm/run.sh): the kernel's ARIA-GCM TLS records
 * against sotls's own AEAD, on loopback TCP.
 *
 *   ktls_aria_selftest --expect kernel     the VM has aria_generic.ko: kTLS ARIA works
 *   ktls_aria_selftest --expect fallback   stock modules: the ULP loads, ARIA is refused
 *
 * kernel mode, for ARIA-128-GCM and ARIA-256-GCM and every AEAD implementation
 * level this CPU runs:
 *   TX: kTLS TX on one end, raw records read on the plain end and opened with
 *       sotls_aead_open (nonce = salt || explicit nonce, AAD = seq || type ||
 *       version || length); the explicit nonce must be the sequence number;
 *       an alert and a handshake record sent with TLS_SET_RECORD_TYPE.
 *   RX: records sealed with sotls_aead_seal written raw into a kTLS RX socket,
 *       plaintext and record types (TLS_GET_RECORD_TYPE) read back; a forged
 *       tag gives SOTLS_ERR_BAD_RECORD_MAC, an oversized record
 *       SOTLS_ERR_RECORD_OVERFLOW.
 *   kernel to kernel: TX on one end, RX on the other.
 * fallback mode: the ULP attaches, TLS_TX/TLS_RX with ARIA fail with reason
 * SOTLS_KTLS_NO_CIPHER, "kernel cannot do gcm(aria) ...", and the socket still
 * carries plain TCP.
 * Prints one line per check and "N passed, M failed"; exits 0 only if all passed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "aead.h"
#include "cpu.h"
#include "ktls.h"
#include "sotls.h"
#include "vm_check.h"

#define TLS_HDR 5
#define EXPLICIT_NONCE 8
#define TAG 16
#define MAX_PLAIN 16384
#define MAX_RECORD (TLS_HDR + EXPLICIT_NONCE + MAX_PLAIN + TAG)

/* Names of the codes this test can meet (no dependency on the whole library). */
static const char *err_name(int err)
{
	switch (err) {
	case SOTLS_WANT_READ: return "SOTLS_WANT_READ";
	case SOTLS_ERR_BAD_RECORD_MAC: return "SOTLS_ERR_BAD_RECORD_MAC";
	case SOTLS_ERR_RECORD_OVERFLOW: return "SOTLS_ERR_RECORD_OVERFLOW";
	case SOTLS_ERR_DECODE: return "SOTLS_ERR_DECODE";
	case SOTLS_ERR_CLOSED: return "SOTLS_ERR_CLOSED";
	case SOTLS_ERR_SYSCALL: return "SOTLS_ERR_SYSCALL";
	case SOTLS_ERR_INVALID_ARGUMENT: return "SOTLS_ERR_INVALID_ARGUMENT";
	default: return "other";
	}
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = recv(fd, (uint8_t *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = send(fd, (const uint8_t *)buf + done, len - done, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void make_aad(uint8_t aad[13], uint64_t seq, uint8_t type, size_t plen)
{
	put_be64(aad, seq);
	aad[8] = type;
	aad[9] = 3;
	aad[10] = 3;
	aad[11] = (uint8_t)(plen >> 8);
	aad[12] = (uint8_t)plen;
}

/* One cipher + AEAD implementation under test. */
struct suite {
	enum sotls_aead_alg alg;
	uint32_t features; /* the CPU features that pick the implementation */
	const char *name;  /* "ARIA-128-GCM" */
	uint8_t key[32];
	size_t key_len;
	uint8_t salt[4];
	struct sotls_aead aead;
};

static void keys_of(const struct suite *s, uint64_t seq, struct sotls_dir_keys *k)
{
	*k = (struct sotls_dir_keys){s->key, s->salt, seq};
}

/*
 * Reads one raw record from fd and opens it with our AEAD. Returns the
 * plaintext length, or -1 (reason printed).
 */
static long open_raw_record(const struct suite *s, int fd, uint64_t seq, uint8_t *type,
			    uint8_t *plain)
{
	static uint8_t rec[MAX_RECORD];
	uint8_t nonce[12], aad[13];

	if (read_full(fd, rec, TLS_HDR) != 0) {
		printf("  short read of a record header\n");
		return -1;
	}
	size_t len = ((size_t)rec[3] << 8) | rec[4];
	if (rec[1] != 3 || rec[2] != 3 || len < EXPLICIT_NONCE + TAG ||
	    len > EXPLICIT_NONCE + MAX_PLAIN + TAG) {
		printf("  bad record header %02x %02x%02x len %zu\n", rec[0], rec[1], rec[2], len);
		return -1;
	}
	if (read_full(fd, rec + TLS_HDR, len) != 0) {
		printf("  short read of a record body\n");
		return -1;
	}
	*type = rec[0];
	const uint8_t *explicit_nonce = rec + TLS_HDR;
	if (get_be64(explicit_nonce) != seq) {
		printf("  explicit nonce %016llx, expected the sequence number %016llx\n",
		       (unsigned long long)get_be64(explicit_nonce), (unsigned long long)seq);
		return -1;
	}
	size_t plen = len - EXPLICIT_NONCE - TAG;
	memcpy(nonce, s->salt, 4);
	memcpy(nonce + 4, explicit_nonce, 8);
	make_aad(aad, seq, rec[0], plen);
	int rc = sotls_aead_open(&s->aead, nonce, aad, sizeof(aad), rec + TLS_HDR + EXPLICIT_NONCE,
				 plen, rec + TLS_HDR + EXPLICIT_NONCE + plen, plain);
	if (rc != 0) {
		printf("  sotls_aead_open: %d (type %u, %zu bytes, seq %llu)\n", rc, rec[0], plen,
		       (unsigned long long)seq);
		return -1;
	}
	return (long)plen;
}

/* Seals one record with our AEAD into out; returns its length. */
static size_t seal_record(const struct suite *s, uint64_t seq, uint8_t type, const uint8_t *plain,
			  size_t plen, uint8_t *out)
{
	uint8_t nonce[12], aad[13];
	size_t len = EXPLICIT_NONCE + plen + TAG;

	out[0] = type;
	out[1] = 3;
	out[2] = 3;
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
	put_be64(out + TLS_HDR, seq);
	memcpy(nonce, s->salt, 4);
	memcpy(nonce + 4, out + TLS_HDR, 8);
	make_aad(aad, seq, type, plen);
	if (sotls_aead_seal(&s->aead, nonce, aad, sizeof(aad), plain, plen,
			    out + TLS_HDR + EXPLICIT_NONCE, out + TLS_HDR + EXPLICIT_NONCE + plen) != 0) {
		printf("  sotls_aead_seal failed\n");
		exit(2);
	}
	return TLS_HDR + len;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned salt)
{
	uint32_t x = 0x9e3779b9u ^ salt;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* Sizes written per send(): the kernel makes records of at most 16384 bytes. */
static const size_t sizes[] = {1, 13, 100, 1000, 4096, 16383, 16384, 16385, 40000};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static void test_tx(struct suite *s, uint64_t seq0)
{
	static uint8_t sent[40000], got[MAX_PLAIN];
	struct sotls_dir_keys k;
	struct sotls_ktls_result r;
	int a, b;

	vm_tcp_pair(&a, &b);
	keys_of(s, seq0, &k);
	int rc = sotls_ktls_install(a, SOTLS_KTLS_TX, s->alg, &k, &r);
	check(rc == SOTLS_OK, "%s/%s TX install at seq %llu: %s (errno %d)", s->name, sotls_aead_impl_name(&s->aead),
	      (unsigned long long)seq0, r.text, r.err);
	if (rc != SOTLS_OK)
		goto out;

	uint64_t seq = seq0;
	for (size_t i = 0; i < N_SIZES; i++) {
		size_t n = sizes[i], off = 0;
		int ok = 1;
		fill_pattern(sent, n, (unsigned)(i + 1));
		if (write_full(a, sent, n) != 0) {
			check(0, "%s/%s TX send %zu bytes: %s", s->name, sotls_aead_impl_name(&s->aead), n,
			      strerror(errno));
			goto out;
		}
		size_t records = 0;
		while (off < n) {
			uint8_t type = 0;
			long plen = open_raw_record(s, b, seq, &type, got);
			if (plen < 0 || type != SOTLS_CT_APPLICATION_DATA ||
			    (size_t)plen > n - off || memcmp(got, sent + off, (size_t)plen) != 0) {
				if (plen >= 0)
					printf("  record %llu: type %u, %ld bytes, content %s\n",
					       (unsigned long long)seq, type, plen,
					       (size_t)plen <= n - off &&
							   memcmp(got, sent + off, (size_t)plen) == 0
						   ? "same"
						   : "differs");
				ok = 0;
				break;
			}
			off += (size_t)plen;
			seq++;
			records++;
		}
		check(ok, "%s/%s TX %zu bytes -> %zu kernel record(s) opened by sotls", s->name,
		      sotls_aead_impl_name(&s->aead), n, records);
		if (!ok)
			goto out;
	}

	/* Control records: close_notify alert, and a handshake-type record. */
	uint8_t type = 0;
	rc = sotls_ktls_send_alert(a, 1, 0);
	long plen = rc == SOTLS_OK ? open_raw_record(s, b, seq, &type, got) : -1;
	check(rc == SOTLS_OK && plen == 2 && type == SOTLS_CT_ALERT && got[0] == 1 && got[1] == 0,
	      "%s/%s TX alert record via TLS_SET_RECORD_TYPE (rc %d, type %u, len %ld)", s->name,
	      sotls_aead_impl_name(&s->aead), rc, type, plen);
	seq++;
	static const uint8_t hs[4] = {0 /* hello_request */, 0, 0, 0};
	ssize_t sn = sotls_ktls_send_record(a, SOTLS_CT_HANDSHAKE, hs, sizeof(hs));
	plen = sn == (ssize_t)sizeof(hs) ? open_raw_record(s, b, seq, &type, got) : -1;
	check(sn == 4 && plen == 4 && type == SOTLS_CT_HANDSHAKE && memcmp(got, hs, 4) == 0,
	      "%s/%s TX handshake record via TLS_SET_RECORD_TYPE (sent %zd, type %u, len %ld)",
	      s->name, sotls_aead_impl_name(&s->aead), sn, type, plen);
	seq++;
	/* And application data after them, sequence still in step. */
	fill_pattern(sent, 77, 99);
	plen = write_full(a, sent, 77) == 0 ? open_raw_record(s, b, seq, &type, got) : -1;
	check(plen == 77 && type == SOTLS_CT_APPLICATION_DATA && memcmp(got, sent, 77) == 0,
	      "%s/%s TX data after control records", s->name, sotls_aead_impl_name(&s->aead));
out:
	close(a);
	close(b);
}

static void test_rx(struct suite *s, uint64_t seq0)
{
	static uint8_t plain[40000], rec[MAX_RECORD], got[MAX_PLAIN + 64];
	struct sotls_dir_keys k;
	struct sotls_ktls_result r;
	int a, b;

	vm_tcp_pair(&a, &b);
	keys_of(s, seq0, &k);
	int rc = sotls_ktls_install(b, SOTLS_KTLS_RX, s->alg, &k, &r);
	check(rc == SOTLS_OK, "%s/%s RX install at seq %llu: %s (errno %d)", s->name, sotls_aead_impl_name(&s->aead),
	      (unsigned long long)seq0, r.text, r.err);
	if (rc != SOTLS_OK)
		goto out;

	uint64_t seq = seq0;
	static const size_t rx_sizes[] = {1, 13, 1000, 16384, 0 /* empty data record */, 5000};
	for (size_t i = 0; i < sizeof(rx_sizes) / sizeof(rx_sizes[0]); i++) {
		size_t n = rx_sizes[i];
		fill_pattern(plain, n, (unsigned)(100 + i));
		size_t rl = seal_record(s, seq++, SOTLS_CT_APPLICATION_DATA, plain, n, rec);
		if (write_full(a, rec, rl) != 0) {
			check(0, "%s/%s RX write record: %s", s->name, sotls_aead_impl_name(&s->aead), strerror(errno));
			goto out;
		}
		if (n == 0)
			continue; /* an empty record yields no bytes; the next one must still come */
		size_t off = 0;
		int ok = 1;
		uint8_t type = 0;
		while (off < n) {
			ssize_t got_n = sotls_ktls_recv(b, got, sizeof(got), 0, &type);
			if (got_n <= 0 || type != SOTLS_CT_APPLICATION_DATA ||
			    (size_t)got_n > n - off || memcmp(got, plain + off, (size_t)got_n) != 0) {
				printf("  recv: %zd (%s), type %u\n", got_n,
				       got_n < 0 ? err_name((int)got_n) : "-", type);
				ok = 0;
				break;
			}
			off += (size_t)got_n;
		}
		check(ok, "%s/%s RX sotls-sealed record of %zu bytes read as plaintext", s->name,
		      sotls_aead_impl_name(&s->aead), n);
		if (!ok)
			goto out;
	}

	/* An alert record: TLS_GET_RECORD_TYPE says 21. */
	static const uint8_t alert[2] = {2, 40 /* handshake_failure */};
	size_t rl = seal_record(s, seq++, SOTLS_CT_ALERT, alert, 2, rec);
	uint8_t type = 0;
	ssize_t n = write_full(a, rec, rl) == 0 ? sotls_ktls_recv(b, got, sizeof(got), 0, &type) : -1;
	check(n == 2 && type == SOTLS_CT_ALERT && got[0] == 2 && got[1] == 40,
	      "%s/%s RX alert record reported via TLS_GET_RECORD_TYPE (n %zd, type %u)", s->name,
	      sotls_aead_impl_name(&s->aead), n, type);

	/* Data after the alert: types never mix in one recvmsg. */
	fill_pattern(plain, 300, 7);
	rl = seal_record(s, seq++, SOTLS_CT_APPLICATION_DATA, plain, 300, rec);
	n = write_full(a, rec, rl) == 0 ? sotls_ktls_recv(b, got, sizeof(got), 0, &type) : -1;
	check(n == 300 && type == SOTLS_CT_APPLICATION_DATA && memcmp(got, plain, 300) == 0,
	      "%s/%s RX data after the alert (n %zd, type %u)", s->name, sotls_aead_impl_name(&s->aead), n, type);

	/* A forged tag: EBADMSG -> SOTLS_ERR_BAD_RECORD_MAC, and no plaintext. */
	rl = seal_record(s, seq++, SOTLS_CT_APPLICATION_DATA, plain, 300, rec);
	rec[rl - 1] ^= 0x01;
	memset(got, 0, sizeof(got));
	n = write_full(a, rec, rl) == 0 ? sotls_ktls_recv(b, got, sizeof(got), 0, &type) : -1;
	check(n == SOTLS_ERR_BAD_RECORD_MAC, "%s/%s RX forged tag -> %zd (%s)", s->name,
	      sotls_aead_impl_name(&s->aead), n, n < 0 ? err_name((int)n) : "data!");
out:
	close(a);
	close(b);
}

/* A record longer than 2^14 + overhead: EMSGSIZE -> SOTLS_ERR_RECORD_OVERFLOW. */
static void test_rx_overflow(struct suite *s)
{
	uint8_t hdr[TLS_HDR] = {SOTLS_CT_APPLICATION_DATA, 3, 3, 0, 0};
	static uint8_t junk[MAX_RECORD + 2048];
	struct sotls_dir_keys k;
	struct sotls_ktls_result r;
	uint8_t got[64], type;
	int a, b;

	vm_tcp_pair(&a, &b);
	keys_of(s, 0, &k);
	if (sotls_ktls_install(b, SOTLS_KTLS_RX, s->alg, &k, &r) != SOTLS_OK) {
		check(0, "%s RX install for the overflow test: %s", s->name, r.text);
		goto out;
	}
	size_t len = EXPLICIT_NONCE + MAX_PLAIN + TAG + 1025;
	hdr[3] = (uint8_t)(len >> 8);
	hdr[4] = (uint8_t)len;
	memcpy(junk, hdr, TLS_HDR);
	ssize_t n = write_full(a, junk, TLS_HDR + len) == 0
			? sotls_ktls_recv(b, got, sizeof(got), 0, &type)
			: -1;
	check(n == SOTLS_ERR_RECORD_OVERFLOW, "%s RX oversized record -> %zd (%s)", s->name, n,
	      n < 0 ? err_name((int)n) : "data!");
out:
	close(a);
	close(b);
}

/* Both ends in the kernel. */
static void test_kernel_to_kernel(struct suite *s)
{
	static uint8_t sent[50000], got[50000];
	struct sotls_dir_keys k;
	struct sotls_ktls_result r1, r2;
	uint8_t type = 0;
	int a, b;

	vm_tcp_pair(&a, &b);
	keys_of(s, 1000, &k);
	int rc1 = sotls_ktls_install(a, SOTLS_KTLS_TX, s->alg, &k, &r1);
	int rc2 = sotls_ktls_install(b, SOTLS_KTLS_RX, s->alg, &k, &r2);
	if (rc1 != SOTLS_OK || rc2 != SOTLS_OK) {
		check(0, "%s kernel->kernel install: %s / %s", s->name, r1.text, r2.text);
		goto out;
	}
	fill_pattern(sent, sizeof(sent), 5);
	size_t off = 0;
	int ok = write_full(a, sent, sizeof(sent)) == 0;
	while (ok && off < sizeof(sent)) {
		ssize_t n = sotls_ktls_recv(b, got + off, sizeof(got) - off, 0, &type);
		if (n <= 0 || type != SOTLS_CT_APPLICATION_DATA)
			ok = 0;
		else
			off += (size_t)n;
	}
	ok = ok && memcmp(sent, got, sizeof(sent)) == 0;
	check(ok, "%s kernel TX -> kernel RX, %zu bytes", s->name, sizeof(sent));
	/* close_notify through both kernels. */
	ssize_t n = sotls_ktls_send_alert(a, 1, 0) == SOTLS_OK
			? sotls_ktls_recv(b, got, sizeof(got), 0, &type)
			: -1;
	check(n == 2 && type == SOTLS_CT_ALERT && got[0] == 1 && got[1] == 0,
	      "%s kernel TX alert -> kernel RX type %u", s->name, type);
	/* The peer closes TCP: 0. */
	close(a);
	a = -1;
	n = sotls_ktls_recv(b, got, sizeof(got), 0, &type);
	check(n == 0, "%s kernel RX sees TCP close as 0 (got %zd)", s->name, n);
out:
	if (a >= 0)
		close(a);
	close(b);
}

/*
 * One socket with both directions in the kernel (the second install finds the
 * ULP attached already), then a second TLS_TX: EBUSY -> SOTLS_ERR_BAD_STATE.
 */
static void test_both_directions(struct suite *s)
{
	struct sotls_dir_keys k;
	struct sotls_ktls_result r;
	uint8_t got[64], type = 0;
	int a, b;

	vm_tcp_pair(&a, &b);
	keys_of(s, 7, &k);
	int ok = sotls_ktls_install(a, SOTLS_KTLS_TX, s->alg, &k, &r) == SOTLS_OK &&
		 sotls_ktls_install(a, SOTLS_KTLS_RX, s->alg, &k, &r) == SOTLS_OK &&
		 sotls_ktls_install(b, SOTLS_KTLS_RX, s->alg, &k, &r) == SOTLS_OK &&
		 sotls_ktls_install(b, SOTLS_KTLS_TX, s->alg, &k, &r) == SOTLS_OK;
	check(ok, "%s TX+RX on both ends of one connection: %s", s->name, r.text);
	if (!ok)
		goto out;
	ssize_t n1 = write_full(a, "ping", 4) == 0 ? sotls_ktls_recv(b, got, sizeof(got), 0, &type)
						     : -1;
	int ok1 = n1 == 4 && type == SOTLS_CT_APPLICATION_DATA && memcmp(got, "ping", 4) == 0;
	ssize_t n2 = write_full(b, "pong!", 5) == 0 ? sotls_ktls_recv(a, got, sizeof(got), 0, &type)
						      : -1;
	int ok2 = n2 == 5 && type == SOTLS_CT_APPLICATION_DATA && memcmp(got, "pong!", 5) == 0;
	check(ok1 && ok2, "%s both directions through the kernel (%zd, %zd)", s->name, n1, n2);
	int rc = sotls_ktls_install(a, SOTLS_KTLS_TX, s->alg, &k, &r);
	check(rc == SOTLS_ERR_BAD_STATE && r.reason == SOTLS_KTLS_ALREADY_SET,
	      "%s second TLS_TX -> %d reason %d errno %d: %s", s->name, rc, r.reason, r.err, r.text);
out:
	close(a);
	close(b);
}

static void init_suite(struct suite *s, enum sotls_aead_alg alg, uint32_t features)
{
	memset(s, 0, sizeof(*s));
	s->alg = alg;
	s->features = features;
	s->name = sotls_aead_alg_name(alg);
	s->key_len = sotls_aead_key_len(alg);
	for (size_t i = 0; i < s->key_len; i++)
		s->key[i] = (uint8_t)(0xa0 + i * 7 + (alg == SOTLS_AEAD_ARIA_256_GCM ? 3 : 0));
	s->salt[0] = 0xca;
	s->salt[1] = 0xfe;
	s->salt[2] = 0xba;
	s->salt[3] = (uint8_t)(0xbe ^ alg);
	if (sotls_aead_init_features(&s->aead, alg, s->key, s->key_len, features) != 0) {
		printf("sotls_aead_init_features(%s, 0x%x) failed\n", s->name, features);
		exit(2);
	}
}

static void run_kernel_mode(void)
{
	static const enum sotls_aead_alg algs[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_ARIA_256_GCM};
	struct sotls_ktls_result r;

	int rc = sotls_ktls_probe(0, &r);
	check(rc == SOTLS_OK, "ULP probe: %s", r.text);
	for (size_t i = 0; i < 2; i++) {
		rc = sotls_ktls_probe(algs[i], &r);
		check(rc == SOTLS_OK, "%s TX probe: %s (errno %d)", sotls_aead_alg_name(algs[i]),
		      r.text, r.err);
	}
	for (size_t i = 0; i < 2; i++) {
		/* Every implementation this CPU runs, the portable one last. */
		uint32_t sets[16];
		const size_t n = sotls_aead_variants(algs[i], sotls_cpu_detected(), sets, 16);
		for (size_t v = 0; v < n; v++) {
			struct suite s;
			init_suite(&s, algs[i], sets[v]);
			printf("== %s with %s\n", s.name, sotls_aead_impl_name(&s.aead));
			test_tx(&s, 0);
			test_tx(&s, 0x0123456789abcdefull);
			test_rx(&s, 0);
			test_rx(&s, 0xfedcba9876543210ull);
			if (v + 1 == n) {
				test_rx_overflow(&s);
				test_kernel_to_kernel(&s);
				test_both_directions(&s);
			}
			sotls_aead_clear(&s.aead);
		}
	}
}

static void run_fallback_mode(void)
{
	static const enum sotls_aead_alg algs[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_ARIA_256_GCM};
	struct sotls_ktls_result r;

	int rc = sotls_ktls_probe(0, &r);
	check(rc == SOTLS_OK && r.reason == SOTLS_KTLS_OK, "ULP loads: %s", r.text);
	for (size_t i = 0; i < 2; i++) {
		struct suite s;
		init_suite(&s, algs[i], 0);
		for (int d = SOTLS_KTLS_TX; d <= SOTLS_KTLS_RX; d++) {
			struct sotls_dir_keys k;
			int a, b;
			vm_tcp_pair(&a, &b);
			keys_of(&s, 0, &k);
			rc = sotls_ktls_install(a, (enum sotls_ktls_dir)d, s.alg, &k, &r);
			check(rc == SOTLS_ERR_UNSUPPORTED && r.reason == SOTLS_KTLS_NO_CIPHER &&
				      strstr(r.text, "kernel cannot do gcm(aria)") != NULL,
			      "%s %s refused: rc %d reason %d errno %d: %s", s.name,
			      d == SOTLS_KTLS_TX ? "TLS_TX" : "TLS_RX", rc, r.reason, r.err, r.text);
			/* The ULP is attached; the socket is still plain TCP both ways. */
			char buf[4];
			int ok = write_full(a, "abcd", 4) == 0 && read_full(b, buf, 4) == 0 &&
				 memcmp(buf, "abcd", 4) == 0 && write_full(b, "wxyz", 4) == 0 &&
				 read_full(a, buf, 4) == 0 && memcmp(buf, "wxyz", 4) == 0;
			check(ok, "%s after the refused %s the socket carries plain TCP", s.name,
			      d == SOTLS_KTLS_TX ? "TLS_TX" : "TLS_RX");
			close(a);
			close(b);
		}
		sotls_aead_clear(&s.aead);
	}
}

int main(int argc, char **argv)
{
	const char *expect = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
			expect = argv[++i];
		else if (strncmp(argv[i], "--expect=", 9) == 0)
			expect = argv[i] + 9;
	}
	if (expect == NULL || (strcmp(expect, "kernel") != 0 && strcmp(expect, "fallback") != 0)) {
		fprintf(stderr, "usage: %s --expect kernel|fallback\n", argv[0]);
		return 2;
	}
	char features[256];
	printf("ktls_aria_selftest: expect %s, CPU features %s\n", expect,
	       sotls_cpu_describe(sotls_cpu_features(), features, sizeof(features)));
	if (strcmp(expect, "kernel") == 0)
		run_kernel_mode();
	else
		run_fallback_mode();
	printf("ktls_aria_selftest: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

/*
 * sotls server <-> sotls client over loopback TCP, each in its own process,
 * through the public API: which path each direction takes (kTLS or
 * userspace), data both ways verified byte for byte, close_notify both ways,
 * data right behind the Finished, errors and alerts through the kernel path,
 * and the heap bytes one established connection holds in each mode.
 *
 *   ktls_conn_test --expect kernel   VM with aria_generic.ko: kTLS takes ARIA
 *   ktls_conn_test --expect stock    VM with kTLS but no ARIA: fallback, require
 *   ktls_conn_test --expect host     a kernel without kTLS (the build host)
 * AES-128-GCM and AES-256-GCM go to the kernel both ways on both VM kernels
 * (stock modules suffice) and stay in userspace on the host.
 *   --bytes N                        bytes each way per transfer (default 1 MiB;
 *                                    the kernel/kernel cases move 4 times that)
 *
 * Prints one line per check, "heap: ..." lines and "N passed, M failed";
 * exits 0 only if all passed. Test-only hooks of lib/ktls/kconn.h force
 * directions to userspace (mixed modes) and delay the RX install.
 */
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kconn.h"
#include "ephemeral_cert.h"
#include "ktls.h"
#include "sotls.h"
#include "vm_check.h"

static char g_cert[4096], g_key[1024];
static size_t g_bytes = (size_t)1 << 20;

enum inject {
	INJ_NONE,
	INJ_ALERT,    /* server: fatal handshake_failure alert through kTLS TX */
	INJ_BADMAC,   /* server (userspace TX): a record with a wrong tag, raw */
	INJ_VERSION,  /* server (userspace TX): a record header with version 3,1 */
	INJ_OVERSIZE, /* server (userspace TX): a record header longer than allowed */
	INJ_RENEG,    /* server (kTLS TX): a HelloRequest, then data */
};

/* Directions a side keeps out of the kernel (through its kTLS policy). */
#define FTX 1
#define FRX 2

struct tcase {
	const char *name;
	const char *suite;
	enum sotls_ktls_policy spol, cpol;
	int sforce, cforce;	     /* FTX / FRX: directions kept out of the kernel */
	unsigned s_delay, c_delay; /* RX install delay, microseconds */
	int server_first;	     /* the server sends right behind its Finished */
	enum inject inject;
	/* expected paths: 'k' kernel, 'u' userspace */
	const char *spaths, *cpaths; /* "tx rx", e.g. "kk", "ku" */
	const char *reason;	     /* expected in every userspace reason, or NULL */
	int c_hs, s_hs;		     /* expected handshake results */
	int c_err;		     /* client recv error after the injection */
	size_t bytes;		     /* each way; 0: --bytes */
	size_t small;		     /* receive with buffers of 1..small bytes */
};

/* Receive buffer limit of this side (tcase.small), 0: 64 KiB. */
static size_t g_small;

/* Bytes in use on the heap: small chunks plus mmap()ed large ones. */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static uint8_t pattern(uint64_t off, unsigned seed)
{
	uint64_t x = (off >> 3) * 0x9E3779B97F4A7C15ull + seed;
	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (off & 7)));
}

static const char *path_str(enum sotls_path p)
{
	return p == SOTLS_PATH_KERNEL ? "kernel" : p == SOTLS_PATH_USERSPACE ? "userspace" : "none";
}

static int send_all(struct sotls_conn *c, size_t n, unsigned seed)
{
	static uint8_t buf[100000];
	size_t off = 0;
	while (off < n) {
		size_t len = n - off < sizeof(buf) ? n - off : sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = pattern(off + i, seed);
		ssize_t k = sotls_send(c, buf, len);
		if (k != (ssize_t)len) {
			printf("  send at %zu: %zd %s (%s)\n", off, k, sotls_strerror((int)k),
			       sotls_conn_error_detail(c));
			return -1;
		}
		off += len;
	}
	return 0;
}

static int recv_all(struct sotls_conn *c, size_t n, unsigned seed)
{
	static uint8_t buf[65536];
	size_t off = 0;
	while (off < n) {
		size_t want = n - off < sizeof(buf) ? n - off : sizeof(buf);
		if (g_small > 0 && want > off % g_small + 1)
			want = off % g_small + 1;
		ssize_t k = sotls_recv(c, buf, want);
		if (k <= 0) {
			printf("  recv at %zu: %zd %s (%s)\n", off, k, sotls_strerror((int)k),
			       sotls_conn_error_detail(c));
			return -1;
		}
		for (ssize_t i = 0; i < k; i++)
			if (buf[i] != pattern(off + (size_t)i, seed)) {
				printf("  byte %zu differs\n", off + (size_t)i);
				return -1;
			}
		off += (size_t)k;
	}
	return 0;
}

static int path_matches(const struct sotls_info *in, const char *exp)
{
	if (exp == NULL)
		return 1;
	return (in->tx_path == (exp[0] == 'k' ? SOTLS_PATH_KERNEL : SOTLS_PATH_USERSPACE)) &&
	       (in->rx_path == (exp[1] == 'k' ? SOTLS_PATH_KERNEL : SOTLS_PATH_USERSPACE));
}

static void raw_send(int fd, const void *p, size_t n)
{
	if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n)
		printf("  raw send failed: %s\n", strerror(errno));
}

/* The server's or the client's part of one case. */
static void run_side(const struct tcase *t, int fd, int server)
{
	const char *who = server ? "server" : "client";
	struct sotls_config *cfg = sotls_config_new(server ? SOTLS_ROLE_SERVER : SOTLS_ROLE_CLIENT);
	if (server)
		sotls_config_set_cert_mem(cfg, g_cert, strlen(g_cert) + 1, g_key, strlen(g_key) + 1);
	else
		sotls_config_set_verify(cfg, SOTLS_VERIFY_NONE);
	sotls_config_set_suites(cfg, t->suite);
	/* A direction kept out of the kernel: the kTLS policy of the other only. */
	int force = server ? t->sforce : t->cforce;
	sotls_config_set_ktls(cfg, force == FTX	  ? SOTLS_KTLS_RX_ONLY
				   : force == FRX ? SOTLS_KTLS_TX_ONLY
						  : (server ? t->spol : t->cpol));
	sotls_kconn_set_test_rx_delay_us(server ? t->s_delay : t->c_delay);
	g_small = t->small;
	/* Control records (close_notify) read through a one-byte buffer too. */
	size_t blen = t->small ? 1 : 16;

	struct sotls_conn *c = NULL;
	struct sotls_info paths = SOTLS_INFO_INIT;
	size_t heap_grew = 0;
	int measure = 0;
	size_t heap0 = heap_bytes();
	sotls_conn_new(cfg, fd, &c);
	int rc = sotls_handshake(c);
	size_t heap1 = heap_bytes();
	int want_hs = server ? t->s_hs : t->c_hs;
	check(rc == want_hs, "%s %s: handshake %s (want %s)%s%s", t->name, who, sotls_strerror(rc),
	      sotls_strerror(want_hs), rc ? ": " : "", sotls_conn_error_detail(c));
	if (rc != 0) {
		if (rc == SOTLS_ERR_KTLS_REQUIRED)
			check(strstr(sotls_conn_error_detail(c), "kernel TLS required") != NULL,
			      "%s %s: require detail: %s", t->name, who, sotls_conn_error_detail(c));
		goto out;
	}
	struct sotls_info in = SOTLS_INFO_INIT;
	sotls_get_info(c, &in);
	const char *exp = server ? t->spaths : t->cpaths;
	check(path_matches(&in, exp), "%s %s: TX %s (%s), RX %s (%s), AEAD %s", t->name, who,
	      path_str(in.tx_path), in.tx_reason, path_str(in.rx_path), in.rx_reason, in.aead_impl);
	if (t->reason != NULL) {
		/* A peer that fails its own handshake (require) may already have
		 * closed when this side attaches the ULP: then the reason is, rightly,
		 * the closed socket rather than the cipher. */
		const int peer_fails = server ? t->c_hs != 0 : t->s_hs != 0;
		const char *closed = "not an established TCP connection";
		int ok = 1;
		if (in.tx_path == SOTLS_PATH_USERSPACE && strstr(in.tx_reason, t->reason) == NULL &&
		    !(peer_fails && strstr(in.tx_reason, closed) != NULL))
			ok = 0;
		if (in.rx_path == SOTLS_PATH_USERSPACE && strstr(in.rx_reason, t->reason) == NULL &&
		    !(peer_fails && strstr(in.rx_reason, closed) != NULL))
			ok = 0;
		check(ok, "%s %s: userspace reason contains \"%s\"%s", t->name, who, t->reason,
		      peer_fails ? " (or the peer already closed)" : "");
	}
	heap_grew = heap1 - heap0;
	measure = t->inject == INJ_NONE;
	paths = in;

	if (server ? t->c_hs != 0 : t->s_hs != 0) {
		/* The peer gave up (require): its internal_error alert arrives. */
		uint8_t b[64];
		ssize_t n = sotls_recv(c, b, sizeof(b));
		check(n == SOTLS_ERR_PEER_ALERT, "%s %s: recv after the peer's require failure: %s",
		      t->name, who, sotls_strerror((int)n));
		goto out;
	}

	if (t->inject != INJ_NONE) {
		if (server) {
			static const uint8_t hello_request[4] = {0, 0, 0, 0};
			uint8_t rec[5 + 8 + 16 + 16] = {23, 3, 3, 0, 40};
			switch (t->inject) {
			case INJ_ALERT:
				sotls_ktls_send_alert(fd, 2, 40);
				break;
			case INJ_BADMAC:
				memset(rec + 5, 0x5a, sizeof(rec) - 5);
				raw_send(fd, rec, sizeof(rec));
				break;
			case INJ_VERSION:
				rec[2] = 1;
				raw_send(fd, rec, sizeof(rec));
				break;
			case INJ_OVERSIZE:
				rec[3] = 0x48; /* 18432 bytes */
				rec[4] = 0;
				raw_send(fd, rec, sizeof(rec));
				break;
			case INJ_RENEG:
				sotls_ktls_send_record(fd, SOTLS_CT_HANDSHAKE, hello_request,
						       sizeof(hello_request));
				check(send_all(c, 100000, 7) == 0, "%s server: data after HelloRequest",
				      t->name);
				break;
			case INJ_NONE:
				break;
			}
			/* Wait for the client to hang up (or close_notify). */
			uint8_t b[256];
			ssize_t n;
			do
				n = sotls_recv(c, b, sizeof(b));
			while (n > 0);
			if (t->inject == INJ_RENEG) {
				check(n == 0, "%s server: close_notify after the refusal: %s", t->name,
				      sotls_strerror((int)n));
				check(sotls_shutdown(c) == 0, "%s server: shutdown", t->name);
			}
		} else {
			uint8_t b[4096];
			if (t->inject == INJ_RENEG) {
				check(recv_all(c, 100000, 7) == 0,
				      "%s client: renegotiation refused, data still arrives", t->name);
				check(sotls_shutdown(c) == 0, "%s client: shutdown", t->name);
				ssize_t n = sotls_recv(c, b, blen);
				check(n == 0, "%s client: close_notify: %zd", t->name, n);
			} else {
				ssize_t n = sotls_recv(c, b, sizeof(b));
				sotls_get_info(c, &in);
				check(n == t->c_err, "%s client: recv gives %s (want %s): %s", t->name,
				      sotls_strerror((int)n), sotls_strerror(t->c_err),
				      sotls_conn_error_detail(c));
				if (t->inject == INJ_ALERT)
					check(in.peer_alert == 40, "%s client: peer_alert %d", t->name,
					      in.peer_alert);
				shutdown(fd, SHUT_RDWR);
			}
		}
		goto out;
	}

	/* Data both ways, each direction in turn, then close_notify both ways. */
	size_t nbytes = t->bytes ? t->bytes : g_bytes;
	int ok;
	if (server == t->server_first) {
		ok = send_all(c, nbytes, server ? 2 : 1) == 0;
		check(ok, "%s %s: sent %zu bytes", t->name, who, nbytes);
		ok = recv_all(c, nbytes, server ? 1 : 2) == 0;
		check(ok, "%s %s: received %zu bytes, all verified", t->name, who, nbytes);
	} else {
		ok = recv_all(c, nbytes, server ? 1 : 2) == 0;
		check(ok, "%s %s: received %zu bytes, all verified", t->name, who, nbytes);
		ok = send_all(c, nbytes, server ? 2 : 1) == 0;
		check(ok, "%s %s: sent %zu bytes", t->name, who, nbytes);
	}
	uint8_t b[16];
	if (!server) {
		check(sotls_shutdown(c) == 0, "%s client: close_notify sent", t->name);
		ssize_t n = sotls_recv(c, b, blen);
		check(n == 0, "%s client: close_notify received (%zd)", t->name, n);
	} else {
		ssize_t n = sotls_recv(c, b, blen);
		check(n == 0, "%s server: close_notify received (%zd)", t->name, n);
		check(sotls_shutdown(c) == 0, "%s server: close_notify sent", t->name);
		check(sotls_recv(c, b, sizeof(b)) == 0, "%s server: end of stream stays", t->name);
	}
out:;
	/* What the connection holds is what sotls_conn_free gives back; the
	 * heap's growth over the handshake also counts one-time allocations
	 * of the process. */
	/* A client keeps its session (and the server's chain in it) for
	 * sotls_conn_get_session: that much more is allowed. */
	size_t session_len = 0;
	(void)sotls_conn_get_session(c, NULL, 0, &session_len);
	size_t before = heap_bytes();
	sotls_conn_free(c);
	size_t after = heap_bytes();
	if (measure)
		printf("heap: %s %s TX %s RX %s: %zu bytes per connection (heap grew %zu over the "
		       "handshake)\n",
		       t->name, who, path_str(paths.tx_path), path_str(paths.rx_path),
		       before - after, heap_grew);
	if (measure && paths.tx_path == SOTLS_PATH_KERNEL && paths.rx_path == SOTLS_PATH_KERNEL)
		check(before - after < 1024 + session_len,
		      "%s %s: kernel both ways holds no record buffers or keys",
		      t->name, who);
	sotls_config_free(cfg);
}

static void run_case(const struct tcase *t)
{
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0) {
		check(0, "%s: listen: %s", t->name, strerror(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(120);
		int fd = accept(lfd, NULL, NULL);
		close(lfd);
		check_passed = check_failed = 0;
		run_side(t, fd, 1);
		close(fd);
		fflush(stdout);
		_exit(check_failed == 0 ? 0 : 1);
	}
	close(lfd);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		check(0, "%s: connect: %s", t->name, strerror(errno));
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	/* The client in a child too, so each side's heap is its own. */
	pid_t cpid = fork();
	if (cpid == 0) {
		alarm(120);
		check_passed = check_failed = 0;
		run_side(t, fd, 0);
		close(fd);
		fflush(stdout);
		_exit(check_failed == 0 ? 0 : 1);
	}
	close(fd);
	int st1 = 0, st2 = 0;
	waitpid(cpid, &st1, 0);
	waitpid(pid, &st2, 0);
	check(WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0,
	      "%s: both sides passed", t->name);
}

#define AUTO SOTLS_KTLS_AUTO
#define OFF SOTLS_KTLS_OFF
#define REQ SOTLS_KTLS_REQUIRE

static void run_kernel(void)
{
	static const char *suites[] = {"ARIA-128-GCM", "ARIA-256-GCM"};
	for (int i = 0; i < 2; i++) {
		const char *s = suites[i];
		char n[6][64];
		snprintf(n[0], 64, "%s kernel/kernel", s);
		snprintf(n[1], 64, "%s mixed (client kTX+uRX)", s);
		snprintf(n[2], 64, "%s mixed (client uTX+kRX)", s);
		snprintf(n[3], 64, "%s data behind server Finished", s);
		snprintf(n[4], 64, "%s data behind client Finished", s);
		snprintf(n[5], 64, "%s require/require", s);
		const struct tcase cases[] = {
		    {.name = n[0], .suite = s, .spaths = "kk", .cpaths = "kk", .bytes = 4 * g_bytes},
		    {.name = n[1], .suite = s, .cforce = FRX, .sforce = FTX, .spaths = "uk",
		     .cpaths = "ku", .reason = "configuration: kTLS"},
		    {.name = n[2], .suite = s, .cforce = FTX, .sforce = FRX, .spaths = "ku",
		     .cpaths = "uk", .reason = "configuration: kTLS"},
		    {.name = n[3], .suite = s, .server_first = 1, .c_delay = 200000, .spaths = "kk",
		     .cpaths = "kk"},
		    {.name = n[4], .suite = s, .s_delay = 200000, .spaths = "kk", .cpaths = "kk"},
		    {.name = n[5], .suite = s, .spol = REQ, .cpol = REQ, .spaths = "kk",
		     .cpaths = "kk"},
		};
		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			run_case(&cases[j]);
	}
	const char *s = "ARIA-128-GCM";
	const struct tcase cases[] = {
	    {.name = "off/off", .suite = s, .spol = OFF, .cpol = OFF, .spaths = "uu", .cpaths = "uu",
	     .reason = "kTLS disabled by configuration"},
	    {.name = "alert via kTLS to kernel RX", .suite = s, .inject = INJ_ALERT,
	     .spaths = "kk", .cpaths = "kk", .c_err = SOTLS_ERR_PEER_ALERT},
	    {.name = "alert via kTLS to userspace RX", .suite = s, .inject = INJ_ALERT,
	     .cforce = FRX, .spaths = "kk", .cpaths = "ku", .c_err = SOTLS_ERR_PEER_ALERT},
	    {.name = "bad tag to kernel RX", .suite = s, .inject = INJ_BADMAC, .sforce = FTX,
	     .spaths = "uk", .cpaths = "kk", .c_err = SOTLS_ERR_BAD_RECORD_MAC},
	    {.name = "bad tag to userspace RX", .suite = s, .inject = INJ_BADMAC, .sforce = FTX,
	     .cforce = FRX, .spaths = "uk", .cpaths = "ku", .c_err = SOTLS_ERR_BAD_RECORD_MAC},
	    {.name = "bad version to kernel RX", .suite = s, .inject = INJ_VERSION, .sforce = FTX,
	     .spaths = "uk", .cpaths = "kk", .c_err = SOTLS_ERR_PROTOCOL_VERSION},
	    {.name = "bad version to userspace RX", .suite = s, .inject = INJ_VERSION,
	     .sforce = FTX, .cforce = FRX, .spaths = "uk", .cpaths = "ku",
	     .c_err = SOTLS_ERR_PROTOCOL_VERSION},
	    {.name = "oversized record to kernel RX", .suite = s, .inject = INJ_OVERSIZE,
	     .sforce = FTX, .spaths = "uk", .cpaths = "kk", .c_err = SOTLS_ERR_RECORD_OVERFLOW},
	    {.name = "oversized record to userspace RX", .suite = s, .inject = INJ_OVERSIZE,
	     .sforce = FTX, .cforce = FRX, .spaths = "uk", .cpaths = "ku",
	     .c_err = SOTLS_ERR_RECORD_OVERFLOW},
	    {.name = "renegotiation refused on kernel RX", .suite = s, .inject = INJ_RENEG,
	     .spaths = "kk", .cpaths = "kk"},
	    {.name = "renegotiation refused on userspace RX", .suite = s, .inject = INJ_RENEG,
	     .cforce = FRX, .spaths = "kk", .cpaths = "ku"},
	    {.name = "renegotiation refused on kernel RX, 1..7-byte reads", .suite = s,
	     .inject = INJ_RENEG, .spaths = "kk", .cpaths = "kk", .small = 7},
	    {.name = "kernel/kernel, 1..7-byte reads", .suite = s, .spaths = "kk",
	     .cpaths = "kk", .bytes = 16384, .small = 7},
	    {.name = "mixed (client uRX), 1..7-byte reads", .suite = s, .cforce = FRX,
	     .spaths = "kk", .cpaths = "ku", .bytes = 16384, .small = 7},
	};
	for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
		run_case(&cases[j]);
}

/* AES-GCM: a kernel with kTLS carries it with its stock modules (gcm, ctr,
 * ghash-generic and the built-in AES), so both directions go to the kernel
 * on both sides; without kTLS (host) both stay in userspace with the reason. */
static void run_aes(int kernel, const char *reason)
{
	static const char *suites[] = {"AES-128-GCM", "AES-256-GCM"};
	const char *p = kernel ? "kk" : "uu";
	for (int i = 0; i < 2; i++) {
		const char *s = suites[i];
		char n[4][64];
		snprintf(n[0], 64, "%s %s", s, kernel ? "kernel/kernel" : "auto falls back");
		snprintf(n[1], 64, "%s data behind server Finished", s);
		snprintf(n[2], 64, "%s require/require", s);
		snprintf(n[3], 64, "%s kernel/kernel, 1..7-byte reads", s);
		const struct tcase cases[] = {
		    {.name = n[0], .suite = s, .spaths = p, .cpaths = p,
		     .reason = kernel ? NULL : reason, .bytes = kernel ? 4 * g_bytes : 0},
		    {.name = n[1], .suite = s, .server_first = 1, .c_delay = kernel ? 200000 : 0,
		     .spaths = p, .cpaths = p},
		    {.name = n[2], .suite = s, .spol = REQ, .cpol = REQ, .spaths = "kk",
		     .cpaths = "kk"},
		    {.name = n[3], .suite = s, .spaths = "kk", .cpaths = "kk", .bytes = 16384,
		     .small = 7},
		};
		/* Without kTLS only the first two apply. */
		size_t ncases = kernel ? sizeof(cases) / sizeof(cases[0]) : 2;
		for (size_t j = 0; j < ncases; j++)
			run_case(&cases[j]);
	}
}

/* No ARIA in the kernel (stock) or no kTLS at all (host): the reason differs. */
static void run_fallback(const char *reason)
{
	static const char *suites[] = {"ARIA-128-GCM", "ARIA-256-GCM"};
	for (int i = 0; i < 2; i++) {
		const char *s = suites[i];
		char n[3][64];
		snprintf(n[0], 64, "%s auto falls back", s);
		snprintf(n[1], 64, "%s client require fails", s);
		snprintf(n[2], 64, "%s server require fails", s);
		const struct tcase cases[] = {
		    {.name = n[0], .suite = s, .spaths = "uu", .cpaths = "uu", .reason = reason},
		    {.name = n[1], .suite = s, .cpol = REQ, .spaths = "uu",
		     .c_hs = SOTLS_ERR_KTLS_REQUIRED, .reason = reason},
		    {.name = n[2], .suite = s, .spol = REQ, .cpaths = "uu",
		     .s_hs = SOTLS_ERR_KTLS_REQUIRED, .reason = reason},
		};
		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			run_case(&cases[j]);
	}
	const struct tcase off = {.name = "off/off", .suite = "ARIA-256-GCM", .spol = SOTLS_KTLS_OFF,
				  .cpol = SOTLS_KTLS_OFF, .spaths = "uu", .cpaths = "uu",
				  .reason = "kTLS disabled by configuration"};
	run_case(&off);
	const struct tcase bad = {.name = "bad tag to userspace RX", .suite = "ARIA-128-GCM",
				  .inject = INJ_BADMAC, .spaths = "uu", .cpaths = "uu",
				  .c_err = SOTLS_ERR_BAD_RECORD_MAC};
	run_case(&bad);
}

int main(int argc, char **argv)
{
	const char *expect = NULL;
	/* Freed small chunks must leave the in-use count for the heap figures:
	 * no tcache (a tunable: re-exec once with it set), no fastbins. */
	if (getenv("GLIBC_TUNABLES") == NULL) {
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
		execv("/proc/self/exe", argv);
	}
	mallopt(M_MXFAST, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
			expect = argv[++i];
		else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
			g_bytes = strtoull(argv[++i], NULL, 0);
	}
	if (expect == NULL || (strcmp(expect, "kernel") && strcmp(expect, "stock") &&
			       strcmp(expect, "host"))) {
		fprintf(stderr, "usage: %s --expect kernel|stock|host [--bytes N]\n", argv[0]);
		return 2;
	}
	if (ephemeral_cert("localhost", g_cert, sizeof(g_cert), g_key, sizeof(g_key)) != 0) {
		fprintf(stderr, "no certificate\n");
		return 1;
	}
	printf("ktls_conn_test: expect %s, %zu bytes each way\n", expect, g_bytes);
	if (strcmp(expect, "kernel") == 0)
		run_kernel();
	else if (strcmp(expect, "stock") == 0)
		run_fallback("kernel cannot do gcm(aria)");
	else
		run_fallback("kernel has no TLS ULP (CONFIG_TLS)");
	run_aes(strcmp(expect, "host") != 0, "kernel has no TLS ULP (CONFIG_TLS)");
	printf("ktls_conn_test: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

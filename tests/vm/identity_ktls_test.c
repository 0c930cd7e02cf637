/*
 * The peer's identity after kTLS took over: a sotls server requiring a
 * client certificate and a sotls client, each in its own process over
 * loopback TCP, AES-128-GCM (which the stock kernel takes both ways). After
 * data went both ways through the kernel, each side reads the peer's chain
 * (DER equal to the certificates the other side loaded), the leaf's subject,
 * its SANs and peer_verified, and finds them as on the userspace path.
 *
 *   identity_ktls_test --expect kernel   a kernel with kTLS (the VM): both
 *                                        directions must be in the kernel
 *   identity_ktls_test --expect host     a kernel without kTLS: userspace
 *
 * Prints one line per check and "N passed, M failed"; exits 0 only if all
 * passed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sotls.h"
#include "test_certs.h"
#include "vm_check.h"

#define BYTES (256 * 1024)

static struct test_cert g_ca, g_server, g_client;

static const uint8_t IP4[4] = {10, 1, 2, 3};
static const uint8_t IP6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};

static const struct test_san SERVER_SANS[] = {
	{SOTLS_SAN_DNS, "server.test", 11},
	{SOTLS_SAN_IP, IP4, 4},
	{SOTLS_SAN_IP, IP6, 16},
	{SOTLS_SAN_URI, "https://server.test/", 20},
};
static const struct test_san CLIENT_SANS[] = {
	{SOTLS_SAN_EMAIL, "client@test.example", 19},
	{SOTLS_SAN_URI, "spiffe://test.example/client", 28},
	{SOTLS_SAN_DNS, "client.test", 11},
};

/* What each side must see of the other. */
struct expect {
	const struct test_cert *leaf;
	const char *subject;
	const struct test_san *sans;
	size_t nsans;
	const char *const *san_text; /* the texts sotls reports, in order */
};
static const char *const SERVER_TEXTS[] = {"server.test", "10.1.2.3", "2001:db8::1",
					   "https://server.test/"};
static const char *const CLIENT_TEXTS[] = {"client@test.example", "spiffe://test.example/client",
					   "client.test"};

/* Sends or receives BYTES bytes of a position pattern; -1 on any
 * failure or a wrong byte. */
static int move_bytes(struct sotls_conn *c, int sending)
{
	static uint8_t buf[16384];
	size_t done = 0;
	while (done < BYTES) {
		size_t n = BYTES - done < sizeof(buf) ? BYTES - done : sizeof(buf);
		if (sending)
			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)((done + i) % 251);
		ssize_t k = sending ? sotls_send(c, buf, n) : sotls_recv(c, buf, n);
		if (k <= 0)
			return -1;
		for (ssize_t i = 0; !sending && i < k; i++)
			if (buf[i] != (uint8_t)((done + (size_t)i) % 251))
				return -1;
		done += (size_t)k;
	}
	return 0;
}

static void check_identity(const char *who, struct sotls_conn *c, const struct expect *e)
{
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	check(info.peer_verified == 1, "%s: peer_verified %d", who, info.peer_verified);
	check(info.peer_chain_len == 2, "%s: peer_chain_len %zu (leaf and CA)", who,
	      info.peer_chain_len);
	const uint8_t *der;
	size_t len;
	check(sotls_conn_peer_cert(c, 0, &der, &len) == 1 && len == e->leaf->der_len &&
		      memcmp(der, e->leaf->der, len) == 0,
	      "%s: chain[0] is the peer's leaf, DER byte for byte", who);
	check(sotls_conn_peer_cert(c, 1, &der, &len) == 1 && len == g_ca.der_len &&
		      memcmp(der, g_ca.der, len) == 0,
	      "%s: chain[1] is the CA, DER byte for byte", who);
	check(sotls_conn_peer_cert(c, 2, &der, &len) == 0, "%s: no chain[2]", who);
	const char *subject = sotls_conn_peer_subject(c);
	check(strcmp(subject, e->subject) == 0, "%s: subject \"%s\"", who, subject);
	size_t i = 0;
	enum sotls_san_type type;
	const char *value;
	for (; sotls_conn_peer_san(c, i, &type, &value) == 1; i++)
		check(i < e->nsans && (int)type == e->sans[i].type &&
			      strcmp(value, e->san_text[i]) == 0,
		      "%s: SAN %zu type %d \"%s\"", who, i, (int)type, value);
	check(i == e->nsans, "%s: %zu SANs, want %zu", who, i, e->nsans);
}

/* One side of one connection; returns the number of failed checks. */
static int run_side(int fd, int server, enum sotls_ktls_policy ktls, int want_kernel)
{
	const char *who = server ? "server" : "client";
	const struct test_cert *own = server ? &g_server : &g_client;
	struct sotls_config *cfg = sotls_config_new(server ? SOTLS_ROLE_SERVER : SOTLS_ROLE_CLIENT);
	int rc = sotls_config_set_cert_mem(cfg, own->pem, strlen(own->pem) + 1, own->key_pem,
					   strlen(own->key_pem) + 1);
	if (rc == 0)
		rc = sotls_config_set_ca_mem(cfg, g_ca.pem, strlen(g_ca.pem) + 1);
	if (rc == 0)
		rc = sotls_config_set_verify(cfg, SOTLS_VERIFY_REQUIRED);
	if (rc == 0 && !server)
		rc = sotls_config_set_server_name(cfg, "server.test");
	if (rc == 0)
		rc = sotls_config_set_suites(cfg, "AES-128-GCM");
	if (rc == 0)
		rc = sotls_config_set_ktls(cfg, ktls);
	struct sotls_conn *c = NULL;
	if (rc == 0)
		rc = sotls_conn_new(cfg, fd, &c);
	sotls_config_free(cfg);
	if (rc == 0)
		rc = sotls_handshake(c);
	check(rc == 0, "%s: handshake: %s %s", who, sotls_strerror(rc),
	      c ? sotls_conn_error_detail(c) : "");
	if (rc != 0) {
		sotls_conn_free(c);
		return check_failed;
	}
	struct sotls_info info = SOTLS_INFO_INIT;
	sotls_get_info(c, &info);
	int kernel = info.tx_path == SOTLS_PATH_KERNEL && info.rx_path == SOTLS_PATH_KERNEL;
	check(kernel == want_kernel, "%s: paths TX %s, RX %s (%s / %s)", who,
	      info.tx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace",
	      info.rx_path == SOTLS_PATH_KERNEL ? "kernel" : "userspace", info.tx_reason,
	      info.rx_reason);
	/* Server sends first, then the client: both directions carry data
	 * before the identity is read. */
	int ok = move_bytes(c, server) == 0 && move_bytes(c, !server) == 0;
	check(ok, "%s: %d bytes each way", who, BYTES);
	struct expect e = server ? (struct expect){&g_client, "CN=client, O=sotls test", CLIENT_SANS,
						   3, CLIENT_TEXTS}
				 : (struct expect){&g_server, "CN=server.test, O=sotls test",
						   SERVER_SANS, 4, SERVER_TEXTS};
	check_identity(who, c, &e);
	sotls_shutdown(c);
	sotls_conn_free(c);
	return check_failed;
}

static void run_case(enum sotls_ktls_policy ktls, int want_kernel)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) != 0) {
		check(0, "listen on loopback");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(ls);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			_exit(1);
		_exit(run_side(fd, 0, ktls, want_kernel) == 0 ? 0 : 1);
	}
	int fd = accept(ls, NULL, NULL);
	close(ls);
	run_side(fd, 1, ktls, want_kernel);
	close(fd);
	int st = 0;
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "client process passed");
}

int main(int argc, char **argv)
{
	const char *expect = argc == 3 && strcmp(argv[1], "--expect") == 0 ? argv[2] : "";
	if (strcmp(expect, "kernel") != 0 && strcmp(expect, "host") != 0) {
		fprintf(stderr, "usage: %s --expect kernel|host\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (test_cert_make(&g_ca, "CN=sotls test CA,O=sotls test", NULL, true, NULL, 0) != 0 ||
	    test_cert_make(&g_server, "CN=server.test,O=sotls test", &g_ca, false, SERVER_SANS,
			   4) != 0 ||
	    test_cert_make(&g_client, "CN=client,O=sotls test", &g_ca, false, CLIENT_SANS, 3) != 0)
		return 1;
	printf("identity_ktls_test: userspace both ways\n");
	run_case(SOTLS_KTLS_OFF, 0);
	if (strcmp(expect, "kernel") == 0) {
		printf("identity_ktls_test: kernel both ways (kTLS required)\n");
		run_case(SOTLS_KTLS_REQUIRE, 1);
	} else {
		run_case(SOTLS_KTLS_AUTO, 0);
	}
	printf("identity_ktls_test: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

/*
 * sotls-key-server: holds a private key and signs digests for
 * sotls-keyless-server (keyless_wire.h), which holds only the certificate.
 * Listens on a UNIX socket and serves one TLS server at a time, until
 * killed. A stand-in for an HSM or a remote "keyless" key server: the key
 * never leaves this process. Signs with mbedTLS: PKCS#1 v1.5 over the
 * DigestInfo of the hash for RSA, DER ECDSA for EC keys, what sotls's
 * private-key method is documented to return.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <mbedtls/pk.h>

#include "ephemeral_cert.h"
#include "keyless_wire.h"

/* RFC 5246 §7.4.1.4.1: the hash is the high byte of SignatureAndHashAlgorithm. */
static mbedtls_md_type_t hash_of(unsigned sigalg)
{
	switch (sigalg >> 8) {
	case 4: return MBEDTLS_MD_SHA256;
	case 5: return MBEDTLS_MD_SHA384;
	case 6: return MBEDTLS_MD_SHA512;
	}
	return MBEDTLS_MD_NONE;
}

static int load_key(mbedtls_pk_context *pk, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	static unsigned char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	int rc = mbedtls_pk_parse_key(pk, buf, n + 1, NULL, 0, ephemeral_cert_random, NULL);
	memset(buf, 0, sizeof(buf));
	if (rc != 0)
		fprintf(stderr, "sotls-key-server: %s: not a private key mbedTLS reads (-0x%04x)\n",
			path, (unsigned)-rc);
	return rc == 0 ? 0 : -1;
}

/* Answers one request; the answer's length. */
static size_t answer(mbedtls_pk_context *pk, const unsigned char *req, size_t len,
		     unsigned char *resp, unsigned long *signed_count)
{
	memcpy(resp, req, 4);
	resp[4] = KEYLESS_STATUS_REFUSED;
	if (len < KEYLESS_REQ_HEAD || len != KEYLESS_REQ_HEAD + (size_t)req[6] ||
	    req[6] > KEYLESS_MAX_DIGEST)
		return len >= 4 ? KEYLESS_RESP_HEAD : 0;
	const unsigned sigalg = (unsigned)req[4] << 8 | req[5];
	const mbedtls_md_type_t md = hash_of(sigalg);
	const int want_ec = (sigalg & 0xff) == 3;
	size_t sig_len = 0;
	if (md == MBEDTLS_MD_NONE || want_ec != mbedtls_pk_can_do(pk, MBEDTLS_PK_ECDSA) ||
	    mbedtls_pk_sign(pk, md, req + KEYLESS_REQ_HEAD, req[6], resp + KEYLESS_RESP_HEAD,
			    KEYLESS_MAX_SIG, &sig_len, ephemeral_cert_random, NULL) != 0)
		return KEYLESS_RESP_HEAD;
	resp[4] = KEYLESS_STATUS_OK;
	printf("sotls-key-server: signed #%lu (sigalg 0x%04x, %u-byte digest)\n", ++*signed_count,
	       sigalg, req[6]);
	fflush(stdout);
	return KEYLESS_RESP_HEAD + sig_len;
}

static void serve(int fd, mbedtls_pk_context *pk, unsigned long *signed_count)
{
	unsigned char req[KEYLESS_REQ_HEAD + KEYLESS_MAX_DIGEST + 1];
	unsigned char resp[KEYLESS_RESP_HEAD + KEYLESS_MAX_SIG];
	for (;;) {
		ssize_t n = recv(fd, req, sizeof(req), 0);
		if (n <= 0)
			return; /* the TLS server went away */
		size_t r = answer(pk, req, (size_t)n, resp, signed_count);
		if (r > 0 && send(fd, resp, r, MSG_NOSIGNAL) < 0)
			return;
	}
}

int main(int argc, char **argv)
{
	const char *key = NULL, *sock_path = NULL;
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'k': key = optarg; break;
		case 's': sock_path = optarg; break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: sotls-key-server --key KEY.pem --socket PATH\n"
				"  signs for sotls-keyless-server --key-socket PATH\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (key == NULL || sock_path == NULL || strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sotls-key-server: --key and --socket (a short path) are required\n");
		return 2;
	}
	mbedtls_pk_context pk;
	mbedtls_pk_init(&pk);
	if (load_key(&pk, key) != 0)
		return 1;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	unlink(sock_path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 4) != 0) {
		perror("sotls-key-server: socket");
		return 1;
	}
	printf("sotls-key-server: ready on %s\n", sock_path);
	fflush(stdout);
	unsigned long signed_count = 0;
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("sotls-key-server: accept");
			return 1;
		}
		serve(fd, &pk, &signed_count);
		close(fd);
	}
}

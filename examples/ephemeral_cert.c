#include "ephemeral_cert.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "sotls.h"

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

int ephemeral_cert_random(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	while (len > 0) {
		ssize_t n = getrandom(out, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		out += n;
		len -= (size_t)n;
	}
	return 0;
}

int ephemeral_cert(const char *cn, char *cert_pem, size_t cert_size, char *key_pem,
		   size_t key_size)
{
	mbedtls_pk_context key;
	mbedtls_x509write_cert crt;
	mbedtls_mpi serial;
	char subject[300];
	uint8_t serial_bytes[16];
	int rc;

	mbedtls_pk_init(&key);
	mbedtls_x509write_crt_init(&crt);
	mbedtls_mpi_init(&serial);
	snprintf(subject, sizeof(subject), "CN=%s,O=sotls ephemeral", cn);

	rc = mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
	if (rc == 0)
		rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key),
					 ephemeral_cert_random, NULL);
	if (rc == 0)
		rc = ephemeral_cert_random(NULL, serial_bytes, sizeof(serial_bytes));
	serial_bytes[0] &= 0x7f;
	if (rc == 0)
		rc = mbedtls_mpi_read_binary(&serial, serial_bytes, sizeof(serial_bytes));
	if (rc == 0) {
		mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
		mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
		mbedtls_x509write_crt_set_subject_key(&crt, &key);
		mbedtls_x509write_crt_set_issuer_key(&crt, &key);
		rc = mbedtls_x509write_crt_set_subject_name(&crt, subject);
	}
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_issuer_name(&crt, subject);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_serial(&crt, &serial);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_validity(&crt, "20240101000000", "20340101000000");
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_basic_constraints(&crt, 1, 0);
	if (rc == 0)
		rc = mbedtls_x509write_crt_pem(&crt, (unsigned char *)cert_pem, cert_size,
					       ephemeral_cert_random, NULL);
	if (rc == 0)
		rc = mbedtls_pk_write_key_pem(&key, (unsigned char *)key_pem, key_size);
	if (rc != 0) {
		char msg[128];
		mbedtls_strerror(rc, msg, sizeof(msg));
		fprintf(stderr, "ephemeral certificate: %s\n", msg);
	}
	mbedtls_mpi_free(&serial);
	mbedtls_x509write_crt_free(&crt);
	mbedtls_pk_free(&key);
	return rc == 0 ? 0 : -1;
}

struct sotls_config *ephemeral_server_config(const char *cn)
{
	static char cert[4096], key[4096];
	struct sotls_config *cfg = NULL;
	if (ephemeral_cert(cn, cert, sizeof(cert), key, sizeof(key)) == 0 &&
	    (cfg = sotls_config_new(SOTLS_ROLE_SERVER)) != NULL) {
		int rc = sotls_config_set_cert_mem(cfg, cert, strlen(cert) + 1, key,
						   strlen(key) + 1);
		if (rc != 0) {
			fprintf(stderr, "ephemeral certificate: %s\n", sotls_strerror(rc));
			sotls_config_free(cfg);
			cfg = NULL;
		}
	}
	return cfg;
}

#include "test_certs.h"

#include <stdio.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "ephemeral_cert.h"

/* The issuer's name as the new certificate must carry it. */
static int issuer_name(const struct test_cert *issuer, char *out, size_t len)
{
	mbedtls_x509_crt crt;
	mbedtls_x509_crt_init(&crt);
	int rc = mbedtls_x509_crt_parse_der(&crt, issuer->der, issuer->der_len);
	if (rc == 0)
		rc = mbedtls_x509_dn_gets(out, len, &crt.subject) < 0 ? -1 : 0;
	mbedtls_x509_crt_free(&crt);
	return rc;
}

int test_cert_make(struct test_cert *out, const char *subject, const struct test_cert *issuer,
		   bool ca, const struct test_san *sans, size_t nsans)
{
	mbedtls_pk_context key, ikey;
	mbedtls_x509write_cert w;
	mbedtls_x509_crt parsed;
	mbedtls_mpi serial;
	mbedtls_x509_san_list list[8];
	char iname[512];
	uint8_t serial_bytes[16];

	if (nsans > sizeof(list) / sizeof(list[0]))
		return -1;
	mbedtls_pk_init(&key);
	mbedtls_pk_init(&ikey);
	mbedtls_x509write_crt_init(&w);
	mbedtls_x509_crt_init(&parsed);
	mbedtls_mpi_init(&serial);
	int rc = mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
	if (rc == 0)
		rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key),
					 ephemeral_cert_random, NULL);
	if (rc == 0 && issuer != NULL)
		rc = mbedtls_pk_parse_key(&ikey, (const unsigned char *)issuer->key_pem,
					  strlen(issuer->key_pem) + 1, NULL, 0,
					  ephemeral_cert_random, NULL);
	if (rc == 0 && issuer != NULL)
		rc = issuer_name(issuer, iname, sizeof(iname));
	if (rc == 0)
		rc = ephemeral_cert_random(NULL, serial_bytes, sizeof(serial_bytes));
	serial_bytes[0] &= 0x7f;
	if (rc == 0)
		rc = mbedtls_mpi_read_binary(&serial, serial_bytes, sizeof(serial_bytes));
	if (rc == 0) {
		mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
		mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
		mbedtls_x509write_crt_set_subject_key(&w, &key);
		mbedtls_x509write_crt_set_issuer_key(&w, issuer != NULL ? &ikey : &key);
		rc = mbedtls_x509write_crt_set_subject_name(&w, subject);
	}
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_issuer_name(&w, issuer != NULL ? iname : subject);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_serial(&w, &serial);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_validity(&w, "20240101000000", "20340101000000");
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_basic_constraints(&w, ca, -1);
	/* mbedTLS writes DER backwards: the last of its list comes first in
	 * the certificate, so the list is built in reverse. */
	for (size_t i = 0; i < nsans; i++) {
		memset(&list[i], 0, sizeof(list[i]));
		list[i].node.type = sans[i].type;
		list[i].node.san.unstructured_name.p = (unsigned char *)sans[i].value;
		list[i].node.san.unstructured_name.len = sans[i].len;
		list[i].next = i > 0 ? &list[i - 1] : NULL;
	}
	if (rc == 0 && nsans > 0)
		rc = mbedtls_x509write_crt_set_subject_alternative_name(&w, &list[nsans - 1]);
	if (rc == 0)
		rc = mbedtls_x509write_crt_pem(&w, (unsigned char *)out->pem, sizeof(out->pem),
					       ephemeral_cert_random, NULL);
	if (rc == 0)
		rc = mbedtls_pk_write_key_pem(&key, (unsigned char *)out->key_pem,
					      sizeof(out->key_pem));
	if (rc == 0)
		rc = mbedtls_x509_crt_parse(&parsed, (const unsigned char *)out->pem,
					    strlen(out->pem) + 1);
	if (rc == 0 && parsed.raw.len > sizeof(out->der))
		rc = -1;
	if (rc == 0) {
		memcpy(out->der, parsed.raw.p, parsed.raw.len);
		out->der_len = parsed.raw.len;
	}
	if (rc != 0) {
		char msg[128];
		mbedtls_strerror(rc, msg, sizeof(msg));
		fprintf(stderr, "test certificate %s: %s\n", subject, msg);
	}
	mbedtls_mpi_free(&serial);
	mbedtls_x509_crt_free(&parsed);
	mbedtls_x509write_crt_free(&w);
	mbedtls_pk_free(&ikey);
	mbedtls_pk_free(&key);
	return rc == 0 ? 0 : -1;
}

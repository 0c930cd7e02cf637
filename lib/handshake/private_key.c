/*
 * Certificates whose private key sotls does not hold (sotls.h,
 * sotls_cert_new_external): an HSM or a key server signs through the
 * application's struct sotls_private_key_method. Wired into mbedTLS 3.6
 * through its documented asynchronous private-key hooks
 * (MBEDTLS_SSL_ASYNC_PRIVATE, mbedtls_ssl_conf_async_private_cb): mbedTLS's
 * ServerKeyExchange calls sign_start with the params hash; for a certificate
 * with a method it goes to the method, for any other it falls through to the
 * certificate's own key (MBEDTLS_ERR_SSL_HW_ACCEL_FALLTHROUGH), so those sign
 * exactly as without the hook. A pending signature makes mbedTLS return
 * MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS, which hs.c turns into
 * SOTLS_WANT_PRIVATE_KEY; the next step calls resume, which asks the method's
 * complete.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>

#include "hs_internal.h"
#include "util.h"

/* RSA-8192's signature; every DER ECDSA-Sig-Value sotls's curves make is
 * far shorter. */
#define SIG_MAX 1024

struct sotls_pk_op {
	const struct sotls_cert *cert;
	mbedtls_md_type_t md;
	uint8_t hash[MBEDTLS_MD_MAX_SIZE];
	size_t hash_len;
	bool signed_now; /* sign gave the signature: complete is not asked */
	uint8_t sig[SIG_MAX];
	size_t sig_len;
};

void sotls_pk_op_free(struct sotls_pk_op *op)
{
	if (op == NULL)
		return;
	sotls_wipe(op, sizeof(*op));
	free(op);
}

static void drop_op(struct sotls_hs *hs)
{
	sotls_pk_op_free(hs->pk_op);
	hs->pk_op = NULL;
}

/* RFC 5246 §7.4.1.4.1: SignatureAndHashAlgorithm is hash << 8 | signature,
 * sha256(4), sha384(5), sha512(6); rsa(1), ecdsa(3). 0 for anything else. */
static uint16_t sigalg_of(mbedtls_md_type_t md, mbedtls_pk_type_t pk)
{
	uint16_t hash = md == MBEDTLS_MD_SHA256 ? 4 : md == MBEDTLS_MD_SHA384 ? 5
						 : md == MBEDTLS_MD_SHA512 ? 6
									   : 0;
	uint16_t sig = pk == MBEDTLS_PK_RSA ? 1 : pk == MBEDTLS_PK_ECKEY ? 3 : 0;
	return hash != 0 && sig != 0 ? (uint16_t)(hash << 8 | sig) : 0;
}

/* The method's answer: 0 (signature in op), MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS,
 * or the failure recorded for hs.c. */
static int method_result(struct sotls_hs *hs, int r, const char *which)
{
	if (r == SOTLS_PRIVATE_KEY_PENDING && hs->pk_op->cert->method->complete != NULL)
		return MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS;
	if (r == SOTLS_PRIVATE_KEY_SUCCESS && hs->pk_op->sig_len > 0 &&
	    hs->pk_op->sig_len <= sizeof(hs->pk_op->sig))
		return 0;
	const char *why = r == SOTLS_PRIVATE_KEY_SUCCESS ? "gave an empty or oversized signature"
			  : r == SOTLS_PRIVATE_KEY_PENDING ? "is pending, and the method has no complete"
							   : "failed";
	int rc = sotls_hs_fail(hs, SOTLS_ERR_PRIVATE_KEY_OPERATION, SOTLS_ALERT_INTERNAL_ERROR,
			       "the private-key method's %s %s", which, why);
	drop_op(hs);
	return rc;
}

static int sign_start(mbedtls_ssl_context *ssl, mbedtls_x509_crt *chain, mbedtls_md_type_t md,
		      const unsigned char *hash, size_t hash_len)
{
	struct sotls_hs *hs = mbedtls_ssl_get_user_data_p(ssl);
	const struct sotls_cert *cert = sotls_hs_cert_of(hs, chain);
	if (cert == NULL || cert->method == NULL)
		return MBEDTLS_ERR_SSL_HW_ACCEL_FALLTHROUGH;
	uint16_t sigalg = sigalg_of(md, mbedtls_pk_get_type(&cert->key));
	if (sigalg == 0 || hash_len != mbedtls_md_get_size(mbedtls_md_info_from_type(md)))
		/* msg_check.c and the configuration allow SHA-256/384/512
		 * only; anything else here is sotls's mistake. */
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "mbedTLS asked for a signature with hash %d, %zu bytes, that "
				     "sotls cannot name to a private-key method",
				     (int)md, hash_len);
	drop_op(hs);
	struct sotls_pk_op *op = calloc(1, sizeof(*op));
	if (op == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the private-key operation");
	op->cert = cert;
	op->md = md;
	memcpy(op->hash, hash, hash_len);
	op->hash_len = hash_len;
	hs->pk_op = op;
	int r = cert->method->sign(hs->conn, cert->method_arg, sigalg, hash, hash_len, op->sig,
				   &op->sig_len, sizeof(op->sig));
	int rc = method_result(hs, r, "sign");
	if (rc == 0)
		op->signed_now = true; /* mbedTLS calls resume right away */
	return rc;
}

static int resume(mbedtls_ssl_context *ssl, unsigned char *out, size_t *out_len, size_t out_size)
{
	struct sotls_hs *hs = mbedtls_ssl_get_user_data_p(ssl);
	struct sotls_pk_op *op = hs->pk_op;
	if (op == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "mbedTLS resumed a private-key operation sotls did not start");
	if (!op->signed_now) {
		op->sig_len = 0;
		int rc = method_result(hs,
				       op->cert->method->complete(hs->conn, op->cert->method_arg,
								  op->sig, &op->sig_len,
								  sizeof(op->sig)),
				       "complete");
		if (rc != 0)
			return rc;
	}
	/* What the key holder signed goes out under the certificate's name:
	 * a signature the leaf's key does not verify (a wrong key, a fault)
	 * is not sent, as for sotls's own RSA. */
	int rc = 0;
	if (mbedtls_pk_verify((mbedtls_pk_context *)&op->cert->key, op->md, op->hash, op->hash_len,
			      op->sig, op->sig_len) != 0)
		rc = sotls_hs_fail(hs, SOTLS_ERR_PRIVATE_KEY_CHECK, SOTLS_ALERT_INTERNAL_ERROR,
				   "the private-key method's signature does not verify with the "
				   "certificate's public key");
	else if (op->sig_len > out_size)
		rc = sotls_hs_fail(hs, SOTLS_ERR_PRIVATE_KEY_OPERATION, SOTLS_ALERT_INTERNAL_ERROR,
				   "the private-key method's signature (%zu bytes) does not fit "
				   "the ServerKeyExchange (%zu)",
				   op->sig_len, out_size);
	else {
		memcpy(out, op->sig, op->sig_len);
		*out_len = op->sig_len;
	}
	drop_op(hs);
	return rc;
}

/* mbedTLS calls it when a context with a pending operation is freed. */
static void cancel(mbedtls_ssl_context *ssl)
{
	struct sotls_hs *hs = mbedtls_ssl_get_user_data_p(ssl);
	if (hs == NULL || hs->pk_op == NULL)
		return;
	const struct sotls_cert *cert = hs->pk_op->cert;
	if (cert->method->cancel != NULL)
		cert->method->cancel(hs->conn, cert->method_arg);
	drop_op(hs);
}

void sotls_private_key_configure(mbedtls_ssl_config *conf)
{
	/* No decryption: no sotls suite uses RSA key transport. */
	mbedtls_ssl_conf_async_private_cb(conf, sign_start, NULL, resume, cancel, NULL);
}

/* The leaf's public key as a context of its own, the "own key" mbedTLS is
 * given: it picks the certificate by it and never signs with it. */
static int public_key_of(mbedtls_pk_context *leaf, mbedtls_pk_context *key)
{
	mbedtls_pk_type_t type = mbedtls_pk_get_type(leaf);
	if (type != MBEDTLS_PK_RSA && type != MBEDTLS_PK_ECKEY)
		return SOTLS_ERR_CERT_LOAD;
	/* RSA-16384's SubjectPublicKeyInfo is about 2.1 KiB. */
	unsigned char der[4096];
	int n = mbedtls_pk_write_pubkey_der(leaf, der, sizeof(der));
	if (n <= 0)
		return SOTLS_ERR_CERT_LOAD;
	int mrc = mbedtls_pk_parse_public_key(key, der + sizeof(der) - n, (size_t)n);
	if (mrc == MBEDTLS_ERR_PK_ALLOC_FAILED)
		return SOTLS_ERR_OUT_OF_MEMORY;
	return mrc == 0 ? 0 : SOTLS_ERR_CERT_LOAD;
}

SOTLS_API int sotls_cert_new_external(const void *chain, size_t chain_len,
				      const struct sotls_private_key_method *method, void *arg,
				      struct sotls_cert **out)
{
	if (out == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (chain == NULL || chain_len == 0 || method == NULL || method->sign == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	struct sotls_cert *cert = calloc(1, sizeof(*cert));
	if (cert == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	atomic_init(&cert->refs, 1);
	mbedtls_x509_crt_init(&cert->chain);
	mbedtls_pk_init(&cert->key);
	cert->method = method;
	cert->method_arg = arg;
	int rc = sotls_parse_certs(&cert->chain, chain, chain_len) != 0
			 ? SOTLS_ERR_CERT_LOAD
			 : public_key_of(&cert->chain.pk, &cert->key);
	if (rc != 0) {
		sotls_cert_free(cert);
		return rc;
	}
	*out = cert;
	return 0;
}

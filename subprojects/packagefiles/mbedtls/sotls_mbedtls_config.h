/*
 * mbedTLS 3.6 configuration for sotls, used instead of upstream's
 * mbedtls_config.h (MBEDTLS_CONFIG_FILE). It compiles what sotls's TLS 1.2
 * handshake uses and nothing else; README.md ("mbedTLS configuration") says
 * why each group is in or out. Anything that does not serve a suite sotls
 * offers (ECDHE-ECDSA / ECDHE-RSA with AES-GCM and ARIA-GCM) stays out.
 */
#ifndef SOTLS_MBEDTLS_CONFIG_H
#define SOTLS_MBEDTLS_CONFIG_H

/* ---- platform ---- */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE /* certificate validity */
#define MBEDTLS_ERROR_C	       /* mbedtls_strerror() for error details */
/* One mbedTLS configuration, one private key and one CA set serve every
 * connection of a sotls_config, on any thread: RSA keeps blinding values and
 * a cached Montgomery constant inside the key, which THREADING_C guards with
 * the key's mutex. */
#define MBEDTLS_THREADING_C
#define MBEDTLS_THREADING_PTHREAD

/* ---- TLS: 1.2 only, client and server, no DTLS ---- */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET	 /* RFC 7627 */
#define MBEDTLS_SSL_SERVER_NAME_INDICATION	 /* RFC 6066 §3, and the hostname check */
#define MBEDTLS_SSL_ALPN			 /* RFC 7301: offered by clients, written by servers */
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES		 /* send the alert RFC 5246 §7.2 names */
/* RFC 6066 §4: mbedTLS negotiates it (and cuts only application data,
 * which sotls sends itself); sotls's handshake writer cuts mbedTLS's
 * handshake records, the record layer everything after. */
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
/* Resumption (#14): RFC 5077 tickets through sotls's own seal/open
 * callbacks and session IDs through sotls's own cache (lib/handshake). The
 * cache and ticket modules of mbedTLS itself are built only for the
 * benchmark's plain-mbedTLS rows; libsotls does not link them. */
#define MBEDTLS_SSL_SESSION_TICKETS
#define MBEDTLS_SSL_CACHE_C
#define MBEDTLS_SSL_TICKET_C
#define MBEDTLS_SSL_CIPHERSUITES                                                              \
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256,                                     \
		MBEDTLS_TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256,                               \
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384,                             \
		MBEDTLS_TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384,                               \
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,                              \
		MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,                                \
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,                              \
		MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384

/* ---- symmetric crypto: the suites' AEADs (the handshake seals only the
 * Finished messages; records after it are sotls's) and their hashes ---- */
#define MBEDTLS_CIPHER_C
#define MBEDTLS_AES_C
#define MBEDTLS_AESNI_C
#define MBEDTLS_ARIA_C
#define MBEDTLS_GCM_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
/* mbedTLS's SHA-256 compression is portable C on x86: sotls's takes its place
 * (lib/crypto/sha256_mbedtls_alt.c), with SHA-NI where the CPU has it, for
 * the handshake's transcript, PRF and RFC 6979 HMAC-DRBG. */
#define MBEDTLS_SHA256_PROCESS_ALT
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C /* sha512.c carries SHA-384; and SHA-512 signatures */

/* ---- public key: ECDHE on P-256, X25519, P-384, P-521; ECDSA and RSA
 * PKCS#1 v1.5 signatures (TLS 1.2 ServerKeyExchange and certificates) ---- */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_SECP521R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDSA_DETERMINISTIC /* RFC 6979 nonces: no RNG failure leaks a key */
/* sotls's P-256 and libsodium's X25519 (lib/crypto/ec_mbedtls_alt.c), every
 * other curve passed back to the generic ECP. */
#define MBEDTLS_ECDH_GEN_PUBLIC_ALT
#define MBEDTLS_ECDH_COMPUTE_SHARED_ALT
#define MBEDTLS_ECDSA_SIGN_ALT
#define MBEDTLS_ECDSA_VERIFY_ALT
#define MBEDTLS_HMAC_DRBG_C	    /* ... which they are drawn with */
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PK_C
#define MBEDTLS_PK_RSA_ALT_SUPPORT /* the server's RSA key signs with sotls's RSA */
/* sotls_cert_new_external: the ServerKeyExchange signed by the application's
 * private-key method, possibly later (lib/handshake/private_key.c). */
#define MBEDTLS_SSL_ASYNC_PRIVATE
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C /* ECDSA signatures are DER */
#define MBEDTLS_OID_C

/* ---- X.509 and PEM: chains, keys and CA files ---- */
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C
/* Revocation: sotls_config_set_crl_file/_mem. */
#define MBEDTLS_X509_CRL_PARSE_C
/* Encrypted PKCS#8 private keys (PBES2: PBKDF2 + AES-CBC, what OpenSSL 3
 * writes). CBC is compiled for this key decryption only: no CBC suite is in
 * MBEDTLS_SSL_CIPHERSUITES, so none can be negotiated. */
#define MBEDTLS_PKCS5_C
#define MBEDTLS_CIPHER_MODE_CBC
#define MBEDTLS_CIPHER_PADDING_PKCS7

/* The examples' and tests' ephemeral self-signed certificates. */
#define MBEDTLS_PK_WRITE_C
#define MBEDTLS_PEM_WRITE_C
#define MBEDTLS_X509_CREATE_C
#define MBEDTLS_X509_CRT_WRITE_C

#endif

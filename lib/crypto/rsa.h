/*
 * The RSA private key operation for 2048-, 3072- and 4096-bit keys: CRT,
 * fixed-size Montgomery arithmetic (portable, MULX/ADX, AVX-512 IFMA), a
 * constant-time fixed-window exponentiation, base blinding, and the result
 * checked with the public exponent before it leaves (a fault in either CRT
 * half would otherwise hand out a factor of n). PKCS #1 v1.5 signatures
 * (RFC 8017 §8.2) on top.
 */
#ifndef SOTLS_CRYPTO_RSA_H
#define SOTLS_CRYPTO_RSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto_err.h"

/* The implementation levels, best last. */
enum sotls_rsa_impl {
	SOTLS_RSA_GENERIC = 0, /* unsigned __int128 */
	SOTLS_RSA_MULX = 1,    /* MULX + ADCX/ADOX */
	SOTLS_RSA_IFMA = 2,    /* AVX-512 IFMA, both CRT halves at once */
	SOTLS_RSA_IMPLS = 3,
};

/* The best level the process's CPU features (cpu.h, after SOTLS_CPU) run. */
enum sotls_rsa_impl sotls_rsa_impl_best(void);
/* Whether those features run impl. */
bool sotls_rsa_impl_supported(enum sotls_rsa_impl impl);
/* "generic", "mulx", "ifma"; NULL if out of range. */
const char *sotls_rsa_impl_name(enum sotls_rsa_impl impl);

/* A big-endian unsigned integer; leading zero bytes are allowed. */
struct sotls_rsa_be {
	const uint8_t *p;
	size_t len;
};

/* The key as RFC 8017 §3.2 gives it (second representation, u = qInv). */
struct sotls_rsa_params {
	struct sotls_rsa_be n, e, p, q, dp, dq, qinv;
};

struct sotls_rsa_key;

/*
 * Takes a copy of the key for level impl and checks it with one blinded
 * private operation. Returns 0, SOTLS_CRYPTO_UNSUPPORTED (a modulus other than
 * 256, 384 or 512 bytes, a prime wider than half of it, e above 2^64 or
 * even, qInv not below p: the caller keeps another implementation for such
 * keys), SOTLS_CRYPTO_BAD_ARG (impl not supported here),
 * SOTLS_CRYPTO_BAD_KEY (the parts do not make a key), SOTLS_CRYPTO_NO_MEMORY
 * or SOTLS_CRYPTO_NO_RANDOM (getrandom failed).
 */
int sotls_rsa_key_new(struct sotls_rsa_key **out, const struct sotls_rsa_params *params,
		      enum sotls_rsa_impl impl);

/* Wipes and frees. NULL is ignored. */
void sotls_rsa_key_free(struct sotls_rsa_key *key);

/* Bytes of the modulus: the length of every input and output. */
size_t sotls_rsa_key_bytes(const struct sotls_rsa_key *key);

/*
 * out = in^d mod n (RFC 8017 §5.2.1 RSASP1), in and out of
 * sotls_rsa_key_bytes bytes, big endian; out may be in. Thread safe: the
 * blinding state is the only thing written, under the key's lock. Returns 0,
 * SOTLS_CRYPTO_BAD_ARG (a length other than the modulus', or in >= n:
 * RFC 8017 §5.2.1 "If the message representative m is not between 0 and
 * n - 1, output 'message representative out of range'"), SOTLS_CRYPTO_NO_RANDOM
 * (getrandom failed) or SOTLS_CRYPTO_FAULT (the result failed the
 * check with e; out is zeroed).
 */
int sotls_rsa_private(struct sotls_rsa_key *key, const uint8_t *in, size_t len, uint8_t *out);

/* The hashes of a PKCS #1 v1.5 DigestInfo (RFC 8017 §9.2 note 1). */
enum sotls_rsa_hash {
	SOTLS_RSA_SHA1,
	SOTLS_RSA_SHA224,
	SOTLS_RSA_SHA256,
	SOTLS_RSA_SHA384,
	SOTLS_RSA_SHA512,
};

/*
 * RSASSA-PKCS1-v1_5 signature (RFC 8017 §8.2.1) of a hash already computed.
 * sig_len must be sotls_rsa_key_bytes. Returns 0, SOTLS_CRYPTO_BAD_ARG
 * (unknown hash, hash_len not its size, sig_len wrong) or what
 * sotls_rsa_private returns.
 */
int sotls_rsa_pkcs1_sign(struct sotls_rsa_key *key, enum sotls_rsa_hash hash,
			 const uint8_t *digest, size_t digest_len, uint8_t *sig, size_t sig_len);

/*
 * Test only: from now on flip one bit of the CRT half mod p (half 1) or mod
 * q (half 2) in every operation; 0 stops. The check with e must catch it.
 */
void sotls_rsa_key_test_fault(struct sotls_rsa_key *key, int half);

#endif

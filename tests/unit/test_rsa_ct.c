/*
 * Constant-time check of the RSA private key operation, run under valgrind
 * (meson suite ct): the key's secret parts (p, q, dp, dq, qInv; sotls never
 * takes d) are marked undefined before the key is loaded, and the blinding
 * values are marked undefined where they are drawn (SOTLS_CT_VALGRIND, see
 * lib/crypto/ct_valgrind.h), so memcheck reports any branch or memory index
 * that depends on them in key set-up, exponentiation, CRT recombination,
 * blinding (its refresh included: more than 32 operations) or the check with
 * e. What is public by design (the outcome of the key's checks and of the
 * check with e, the signature) is marked defined by the library itself.
 *
 *   test_rsa_ct KEY.pem...   every level valgrind runs, every key: generic,
 *                            and mulx where /proc/cpuinfo has bmi2 and adx
 *                            (valgrind runs them but hides ADX from CPUID);
 *                            valgrind has no AVX-512, so not ifma
 *   test_rsa_ct --canary     branches on a secret byte: valgrind must fail
 *
 * It is a plain program, not cmocka: its exit status and valgrind's error
 * count are the result.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <valgrind/memcheck.h>

#include "rsa.h"
#include "sotls.h"

/* n, e, p, q, dp, dq, qInv of a PEM key, copied into buf. */
static int read_key(const char *path, unsigned char buf[7][1024], struct sotls_rsa_params *pp)
{
	static const char *const NAMES[7] = {
		OSSL_PKEY_PARAM_RSA_N,		 OSSL_PKEY_PARAM_RSA_E,
		OSSL_PKEY_PARAM_RSA_FACTOR1,	 OSSL_PKEY_PARAM_RSA_FACTOR2,
		OSSL_PKEY_PARAM_RSA_EXPONENT1,	 OSSL_PKEY_PARAM_RSA_EXPONENT2,
		OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
	};
	struct sotls_rsa_be *be[7] = {&pp->n, &pp->e, &pp->p, &pp->q, &pp->dp, &pp->dq, &pp->qinv};
	FILE *f = fopen(path, "r");
	EVP_PKEY *pkey = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f != NULL)
		fclose(f);
	if (pkey == NULL) {
		fprintf(stderr, "test_rsa_ct: cannot read %s\n", path);
		return -1;
	}
	for (int i = 0; i < 7; i++) {
		BIGNUM *bn = NULL;
		if (!EVP_PKEY_get_bn_param(pkey, NAMES[i], &bn) || BN_num_bytes(bn) > 1024) {
			fprintf(stderr, "test_rsa_ct: %s: no %s\n", path, NAMES[i]);
			EVP_PKEY_free(pkey);
			return -1;
		}
		be[i]->len = (size_t)BN_bn2bin(bn, buf[i]);
		be[i]->p = buf[i];
		BN_clear_free(bn);
	}
	EVP_PKEY_free(pkey);
	return 0;
}

/* ops private operations and one signature with the key at this level. */
static int run(const char *path, enum sotls_rsa_impl impl, int ops)
{
	static unsigned char buf[7][1024];
	struct sotls_rsa_params pp;
	if (read_key(path, buf, &pp) != 0)
		return -1;
	for (int i = 2; i < 7; i++)
		VALGRIND_MAKE_MEM_UNDEFINED(buf[i], sizeof(buf[i]));

	struct sotls_rsa_key *k;
	int rc = sotls_rsa_key_new(&k, &pp, impl);
	if (rc != 0) {
		fprintf(stderr, "test_rsa_ct: %s, %s: key_new returned %d\n", path,
			sotls_rsa_impl_name(impl), rc);
		return -1;
	}
	const size_t len = sotls_rsa_key_bytes(k);
	unsigned char in[512], out[512], digest[32];
	for (int i = 0; i < ops && rc == 0; i++) {
		/* A public input below n: the top byte cleared. */
		for (size_t j = 0; j < len; j++)
			in[j] = (unsigned char)(j * 131 + (size_t)i * 17 + 1);
		in[0] = 0;
		rc = sotls_rsa_private(k, in, len, out);
	}
	memset(digest, 0x5a, sizeof(digest));
	if (rc == 0)
		rc = sotls_rsa_pkcs1_sign(k, SOTLS_RSA_SHA256, digest, sizeof(digest), out, len);
	sotls_rsa_key_free(k);
	if (rc != 0) {
		fprintf(stderr, "test_rsa_ct: %s, %s: operation returned %d\n", path,
			sotls_rsa_impl_name(impl), rc);
		return -1;
	}
	printf("%s, level %s: %d operations and a signature\n", path, sotls_rsa_impl_name(impl),
	       ops);
	return 0;
}

extern bool sotls_rsa_ct_mulx_forced; /* rsa.c, SOTLS_CT_VALGRIND builds only */

/* Whether the host CPU (not valgrind's CPUID) has BMI2 and ADX. */
static bool host_has_mulx_adx(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool bmi2 = false, adx = false;
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			bmi2 = strstr(line, " bmi2") != NULL;
			adx = strstr(line, " adx") != NULL;
			break;
		}
	if (f != NULL)
		fclose(f);
	return bmi2 && adx;
}

/* A secret-dependent branch valgrind must report: the check can fail. */
static int canary(void)
{
	volatile unsigned char secret[1] = {1};
	VALGRIND_MAKE_MEM_UNDEFINED((void *)secret, 1);
	if (secret[0] & 1)
		puts("canary: branched on a secret");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--canary") == 0)
		return canary();
	if (argc < 2 || !RUNNING_ON_VALGRIND) {
		fprintf(stderr, "usage: valgrind --error-exitcode=1 test_rsa_ct KEY.pem...\n");
		return 2;
	}
	sotls_rsa_ct_mulx_forced = host_has_mulx_adx();
	int levels = 0;
	for (int impl = 0; impl < SOTLS_RSA_IMPLS; impl++) {
		if (!sotls_rsa_impl_supported((enum sotls_rsa_impl)impl))
			continue;
		levels++;
		/* More than 32 operations on the first key reach a blinding refresh. */
		for (int a = 1; a < argc; a++)
			if (run(argv[a], (enum sotls_rsa_impl)impl, a == 1 ? 34 : 2) != 0)
				return 1;
	}
	return levels > 0 ? 0 : 1;
}

/*
 * Constant-time check of ECDSA signing on P-384 and P-521 (mbedTLS's
 * generic ECP with sotls's arithmetic mod n, lib/crypto/ecdsa_scalar.c),
 * run under valgrind memcheck (tests/unit/meson.build, suite ct) like
 * test_p256_ct: the private key's limbs and every byte the RNG returns (the
 * nonce's) are marked undefined, so memcheck reports every branch and
 * memory index that depends on them through the key's range check, the
 * nonce's draw and range check, and s = k^-1 (e + r d) mod n; on P-384 also
 * through mbedTLS's deterministic wrapper, as the handshake signs. The
 * library (built with SOTLS_CT_VALGRIND) declassifies only what it
 * publishes: the outcome of the range checks, x(kG), and s.
 *
 * mbedTLS's point multiplication k·G itself is not checked: its field
 * arithmetic branches on coordinate values, which mbedTLS randomises (its
 * blinding) but which valgrind sees depend on k, and it begins with a
 * variable-time range check of k. ecdsa_ct.supp suppresses exactly the
 * reports whose stack is inside mbedtls_ecp_mul.
 *
 *   test_ecdsa_ct            exit 0 when every signature verifies
 *                            (valgrind --error-exitcode makes a report fail it)
 *   test_ecdsa_ct --canary   inverts a secret nonce with mbedTLS's
 *                            variable-time mbedtls_mpi_inv_mod, as the old
 *                            signing code did: memcheck must report it under
 *                            the same suppressions (meson expects this run
 *                            to fail).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/ecdsa.h>
#include <valgrind/memcheck.h>

static void secret(void *p, size_t n)
{
	(void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
}

static void public(void *p, size_t n)
{
	(void)VALGRIND_MAKE_MEM_DEFINED(p, n);
}

static void secret_mpi(mbedtls_mpi *x)
{
	secret(x->MBEDTLS_PRIVATE(p), x->MBEDTLS_PRIVATE(n) * sizeof(mbedtls_mpi_uint));
}

/* Its sign and length too: mbedTLS computes them from the value. */
static void public_mpi(mbedtls_mpi *x)
{
	public(x, sizeof(*x));
	public(x->MBEDTLS_PRIVATE(p), x->MBEDTLS_PRIVATE(n) * sizeof(mbedtls_mpi_uint));
}

/* A fixed stream (splitmix64); its bytes are secret once drawn when
 * rng.secret is set. */
struct rng {
	uint64_t state;
	int secret;
};

static int test_rng(void *ctx, unsigned char *out, size_t len)
{
	struct rng *g = ctx;

	for (size_t i = 0; i < len; i++) {
		uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		out[i] = (unsigned char)(z ^ (z >> 31));
	}
	if (g->secret)
		secret(out, len);
	return 0;
}

static int failures;

static void check(int ok, const char *curve, const char *what)
{
	if (!ok) {
		printf("test_ecdsa_ct: %s: %s failed\n", curve, what);
		failures++;
	}
}

/* Signs with a secret key and a secret nonce, then checks the signature
 * with everything public again. */
static void run(mbedtls_ecp_group_id id, const char *curve, uint64_t seed)
{
	mbedtls_ecp_group grp;
	mbedtls_mpi d, r, s;
	mbedtls_ecp_point q;
	uint8_t hash[64];
	struct rng g = {seed, 0};

	mbedtls_ecp_group_init(&grp);
	mbedtls_mpi_init(&d);
	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	mbedtls_ecp_point_init(&q);
	memset(hash, 0xa5, sizeof(hash));
	/* Key generation is mbedTLS's and not under test: d is made secret
	 * after it, and the RNG's bytes from then on. */
	check(mbedtls_ecp_group_load(&grp, id) == 0 &&
		      mbedtls_ecp_gen_keypair(&grp, &d, &q, test_rng, &g) == 0,
	      curve, "key generation");
	secret_mpi(&d);
	g.secret = 1;

	for (int i = 0; i < 2; i++) {
		hash[0] = (uint8_t)i;
		const int ret = mbedtls_ecdsa_sign(&grp, &r, &s, &d, hash, sizeof(hash),
						   test_rng, &g);
		public_mpi(&r);
		public_mpi(&s);
		check(ret == 0, curve, "sign");
		check(ret == 0 && mbedtls_ecdsa_verify(&grp, hash, sizeof(hash), &q, &r, &s) == 0,
		      curve, "verify");
	}
	/* The handshake's path: mbedTLS's deterministic wrapper, its HMAC-DRBG
	 * seeded from the secret key. Not on P-521: the wrapper writes d into
	 * 66 bytes with mbedtls_mpi_write_binary, which branches on the 6 bytes
	 * of d's top limb above them (always zero: d < n). */
	if (id == MBEDTLS_ECP_DP_SECP384R1) {
		const int ret = mbedtls_ecdsa_sign_det_ext(&grp, &r, &s, &d, hash, 48,
							   MBEDTLS_MD_SHA384, test_rng, &g);
		public_mpi(&r);
		public_mpi(&s);
		check(ret == 0, curve, "deterministic sign");
		check(ret == 0 && mbedtls_ecdsa_verify(&grp, hash, 48, &q, &r, &s) == 0, curve,
		      "deterministic verify");
	}
	printf("test_ecdsa_ct: %s: signed with a secret key and nonce\n", curve);
	mbedtls_ecp_group_free(&grp);
	mbedtls_mpi_free(&d);
	mbedtls_mpi_free(&r);
	mbedtls_mpi_free(&s);
	mbedtls_ecp_point_free(&q);
}

/* The old signing code's inversion of k, with k secret. */
static int canary(void)
{
	mbedtls_ecp_group grp;
	mbedtls_mpi k, inv;
	struct rng g = {1, 1};
	unsigned char kb[48];

	mbedtls_ecp_group_init(&grp);
	mbedtls_mpi_init(&k);
	mbedtls_mpi_init(&inv);
	test_rng(&g, kb, sizeof(kb));
	kb[0] = 0x7f;
	const int ret = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP384R1) != 0 ||
			mbedtls_mpi_read_binary(&k, kb, sizeof(kb)) != 0 ||
			mbedtls_mpi_inv_mod(&inv, &k, &grp.N) != 0;
	public_mpi(&inv);
	printf("test_ecdsa_ct: canary inverted a secret: %d\n", ret);
	mbedtls_ecp_group_free(&grp);
	mbedtls_mpi_free(&k);
	mbedtls_mpi_free(&inv);
	return 0;
}

int main(int argc, char **argv)
{
	if (!RUNNING_ON_VALGRIND) {
		printf("test_ecdsa_ct: must run under valgrind (meson runs it so)\n");
		return 1;
	}
	if (argc == 2 && strcmp(argv[1], "--canary") == 0)
		return canary();
	run(MBEDTLS_ECP_DP_SECP384R1, "P-384", 384);
	run(MBEDTLS_ECP_DP_SECP521R1, "P-521", 521);
	return failures != 0;
}

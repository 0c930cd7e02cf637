/*
 * Constant-time check of P-256's secret paths, run under valgrind memcheck
 * (tests/unit/meson.build, suite ct), the way BoringSSL validates its code:
 * the secret inputs (random bytes of a key, the private key) are marked
 * undefined with VALGRIND_MAKE_MEM_UNDEFINED, so memcheck reports every
 * branch and every memory address computed from them, through key
 * generation, public key derivation, ECDH and ECDSA signing (nonce and
 * RFC 6979's portable SHA-256 included) on every implementation level, and
 * both table lookups (p256_point.h) with a secret index. The library declassifies only what it may
 * publish (lib/crypto/p256_internal.h, sotls_ct_public).
 *
 *   test_p256_ct            exit 0 when every operation gave the right result
 *                           (valgrind --error-exitcode makes a report fail it)
 *   test_p256_ct --canary   branches on a secret byte on purpose: memcheck
 *                           must report it (meson expects this run to fail),
 *                           which shows the marking reaches the code.
 */
#include <stdio.h>
#include <string.h>

#include "ct_check.h"

#include "p256.h"
#include "p256_internal.h"
#include "p256_point.h"

static int failures;

static void check(int ok, const char *level, const char *what)
{
	if (!ok) {
		printf("test_p256_ct: %s: %s gave a wrong result\n", level, what);
		failures++;
	}
}

static void run(const struct p256_impl *im)
{
	uint8_t rnd[SOTLS_P256_KEYGEN_RANDOM], priv[32], pub[65], pub2[65], peer_priv[32],
		peer[65], z[32], z2[32], hash[32], sig[64];

	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)(i * 37 + 11);
	memset(hash, 0x5a, sizeof(hash));
	check(sotls_p256_keygen(im, rnd, peer_priv, peer) == 0, im->name, "peer keygen");

	secret(rnd, sizeof(rnd));
	const int kg = sotls_p256_keygen(im, rnd, priv, pub);
	public(priv, sizeof(priv));
	public(pub, sizeof(pub));
	check(kg == 0, im->name, "keygen");

	secret(priv, sizeof(priv));
	const int pk = sotls_p256_public_key(im, priv, pub2);
	public(pub2, sizeof(pub2));
	check(pk == 0 && memcmp(pub, pub2, 65) == 0, im->name, "public key");

	const int dh = sotls_p256_ecdh(im, priv, peer, z);
	public(z, sizeof(z));
	check(dh == 0, im->name, "ECDH");

	const int sg = sotls_p256_sign(im, priv, hash, sizeof(hash), NULL, 0, sig);
	public(sig, sizeof(sig));
	check(sg == 0, im->name, "ECDSA sign");

	/* hedged: the additional data is secret too */
	uint8_t extra[32];
	memset(extra, 0xc3, sizeof(extra));
	secret(extra, sizeof(extra));
	const int hs = sotls_p256_sign(im, priv, hash, sizeof(hash), extra, sizeof(extra), sig);
	public(sig, sizeof(sig));
	check(hs == 0, im->name, "hedged ECDSA sign");

	/* The results themselves, with everything public again. */
	public(priv, sizeof(priv));
	check(sotls_p256_ecdh(im, peer_priv, pub, z2) == 0 && memcmp(z, z2, 32) == 0, im->name,
	      "ECDH agreement");
	check(sotls_p256_verify(im, pub, hash, sizeof(hash), sig) == 0, im->name, "signature");
	printf("test_p256_ct: %s: keygen, public key, ECDH, ECDSA sign ran with secret inputs\n",
	       im->name);
}

/*
 * Both table lookups, called directly: valgrind's CPUID hides the AVX2 that
 * would choose the AVX2 one. (The SHA-NI compression cannot run here:
 * valgrind 3.19 does not execute the SHA instructions. It has no branch or
 * address but its block count.)
 */
static void run_selects(void)
{
	/* Other architectures build the portable code only (lib/crypto/meson.build). */
	static p256_select_fn *const selects[] = {
		p256_select_generic,
#if defined(__x86_64__)
		p256_select_avx2,
#endif
	};
	static const char *const names[] = {"generic", "avx2"};
	uint64_t tab[16 * 12], r[12], idx = 5;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		tab[i] = i * 0x9e3779b97f4a7c15ull;
	for (size_t s = 0; s < sizeof(selects) / sizeof(selects[0]); s++) {
		secret(&idx, sizeof(idx));
		selects[s](r, tab, 16, 3, idx);
		public(r, sizeof(r));
		public(&idx, sizeof(idx));
		check(memcmp(r, tab + 4 * 3 * (idx - 1), sizeof(r)) == 0, names[s], "table lookup");
	}
	printf("test_p256_ct: every table lookup ran with a secret index\n");
}

int main(int argc, char **argv)
{
	if (!RUNNING_ON_VALGRIND) {
		printf("test_p256_ct: must run under valgrind (meson runs it so)\n");
		return 1;
	}
	if (argc == 2 && strcmp(argv[1], "--canary") == 0) {
		uint8_t k[32] = {1};

		secret(k, sizeof(k));
		printf("test_p256_ct: canary %d\n", leaky(k));
		return 0;
	}
	/* Every level, whatever CPUID says: valgrind's synthetic CPUID hides
	 * BMI2/ADX, but it executes MULX, ADCX and ADOX on any host. */
	run(&p256_impl_generic);
#if defined(__x86_64__)
	run(&p256_impl_mulx);
#endif
	run_selects();
	return failures != 0;
}

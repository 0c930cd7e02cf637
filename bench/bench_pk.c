/*
 * sotls-bench-pk: public-key operations per second on one core, sotls's
 * levels side by side with OpenSSL (EVP), mbedTLS's own ECP (what the
 * handshake ran before sotls's ALT hooks), nettle and libsodium, in one run:
 *
 *   P-256 ECDSA sign, verify (SHA-256 hash given), ECDH key generation +
 *   shared secret, X25519 key generation + shared secret, and the RSA
 *   private-key operation and verification (bench_pk_rsa.c).
 *
 * "sotls-via-mbedtls" rows go through mbedTLS's public functions with the
 * ALT hooks (what the TLS handshake calls, with its MPI conversions and, for
 * signing, its RFC 6979 HMAC-DRBG). "mbedtls" rows call mbedTLS's generic
 * ECP on the same curve (lib/crypto/ec_mbedtls_alt.h).
 *
 * Method: each row gets --seconds in total, split into --rounds slices; the
 * rounds sweep a group's rows in an order that rotates every round, and the
 * best slice counts (noise only makes a run slower). Ratios are against the
 * OpenSSL row of the same group, so they hold even on a loaded machine.
 * Every implementation's output is checked (signatures verified by OpenSSL,
 * shared secrets compared) before it is timed.
 *
 *   sotls-bench-pk [--seconds S] [--rounds R] [--only p256|x25519|rsa] [--json]
 */
#include "bench_pk.h"
#include "bench_pk_rsa.h"

#include <mbedtls/ecdh.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/pk.h>
#include <nettle/curve25519.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec_mbedtls_alt.h"
#include "openssl_ec.h"
#include "p256.h"
#include "p256_internal.h"

/* ------------------------------------------------------------ harness */

static FILE *table;
static int json_rows;

void bench_pk_die(const char *what)
{
	fprintf(stderr, "sotls-bench-pk: %s\n", what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_pk_random(void *unused, unsigned char *out, size_t len)
{
	static uint64_t s = 0x5eed0f5017ull;

	(void)unused;
	for (size_t i = 0; i < len; i++) {
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		out[i] = (uint8_t)(z ^ (z >> 31));
	}
	return 0;
}

/* One row of the table (and of the JSON array); ref: OpenSSL's rate for
 * the same operation in the same run, 0 if none. */
static void print_row(const struct bench_pk_opts *o, const char *op, const char *impl,
		      double per_s, double ref)
{
	fprintf(table, "%-26s %-22s %10.0f /s", op, impl, per_s);
	if (ref > 0)
		fprintf(table, "  %5.2fx OpenSSL", per_s / ref);
	fprintf(table, "\n");
	if (o->json)
		printf("%s\n  {\"op\": \"%s\", \"impl\": \"%s\", \"ops_per_s\": %.1f, "
		       "\"vs_openssl\": %.3f}",
		       json_rows++ ? "," : "", op, impl, per_s, ref > 0 ? per_s / ref : 0.0);
}

/* Operations per second over one slice of about `slice` seconds. */
static double slice_rate(const struct bench_pk_impl *im, double slice)
{
	const double t0 = now();
	double t;
	long n = 0;

	do {
		for (int i = 0; i < 4; i++)
			if (im->op(im->ctx) != 0) {
				fprintf(stderr, "sotls-bench-pk: %s failed while measuring\n", im->name);
				exit(1);
			}
		n += 4;
		t = now();
	} while (t - t0 < slice);
	return (double)n / (t - t0);
}

void bench_pk_group(const struct bench_pk_opts *o, const char *op,
		    const struct bench_pk_impl *impls, size_t n)
{
	double best[16] = {0}, ref = 0;

	if (n > 16)
		bench_pk_die("too many rows in a group");
	for (size_t i = 0; i < n; i++)
		if (impls[i].op(impls[i].ctx) != 0) {
			fprintf(stderr, "sotls-bench-pk: %s: %s fails\n", op, impls[i].name);
			exit(1);
		}
	for (int r = 0; r < o->rounds; r++)
		for (size_t k = 0; k < n; k++) {
			const size_t i = (k + (size_t)r) % n;
			const double rate = slice_rate(&impls[i], o->seconds / o->rounds);

			if (rate > best[i])
				best[i] = rate;
		}
	for (size_t i = 0; i < n; i++)
		if (strcmp(impls[i].name, "openssl") == 0)
			ref = best[i];
	for (size_t i = 0; i < n; i++)
		print_row(o, op, impls[i].name, best[i], ref);
	fprintf(table, "\n");
	fflush(table);
}

/* ------------------------------------------------------- OpenSSL (EVP) */

struct ossl {
	EVP_PKEY *key, *peer;
	EVP_PKEY_CTX *sign, *verify, *gen;
	uint8_t hash[32], der[80], out[80];
	size_t der_len;
};

static int ossl_sign(void *c)
{
	struct ossl *s = c;
	size_t len = sizeof(s->out);

	return EVP_PKEY_sign(s->sign, s->out, &len, s->hash, 32) == 1 ? 0 : -1;
}

static int ossl_verify(void *c)
{
	struct ossl *s = c;

	return EVP_PKEY_verify(s->verify, s->der, s->der_len, s->hash, 32) == 1 ? 0 : -1;
}

/* A fresh key, and the shared secret with the peer: one side of a handshake. */
static int ossl_ecdh(void *c)
{
	struct ossl *s = c;
	EVP_PKEY *k = NULL;
	uint8_t z[64];
	size_t len = sizeof(z);
	int ret = -1;

	if (EVP_PKEY_keygen(s->gen, &k) != 1)
		return -1;
	EVP_PKEY_CTX *d = EVP_PKEY_CTX_new(k, NULL);
	if (d != NULL && EVP_PKEY_derive_init(d) == 1 && EVP_PKEY_derive_set_peer(d, s->peer) == 1 &&
	    EVP_PKEY_derive(d, z, &len) == 1)
		ret = 0;
	EVP_PKEY_CTX_free(d);
	EVP_PKEY_free(k);
	return ret;
}

/* alg "EC" (P-256) or "X25519" */
static void ossl_setup(struct ossl *s, const char *alg)
{
	bench_pk_random(NULL, s->hash, 32);
	s->gen = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);
	if (s->gen == NULL || EVP_PKEY_keygen_init(s->gen) != 1 ||
	    (strcmp(alg, "EC") == 0 && EVP_PKEY_CTX_set_group_name(s->gen, "P-256") != 1) ||
	    EVP_PKEY_keygen(s->gen, &s->key) != 1 || EVP_PKEY_keygen(s->gen, &s->peer) != 1)
		bench_pk_die("OpenSSL key generation failed");
	if (strcmp(alg, "EC") != 0)
		return;
	s->sign = EVP_PKEY_CTX_new(s->key, NULL);
	s->verify = EVP_PKEY_CTX_new(s->key, NULL);
	if (s->sign == NULL || s->verify == NULL || EVP_PKEY_sign_init(s->sign) != 1 ||
	    EVP_PKEY_verify_init(s->verify) != 1)
		bench_pk_die("OpenSSL ECDSA set-up failed");
	s->der_len = sizeof(s->der);
	if (EVP_PKEY_sign(s->sign, s->der, &s->der_len, s->hash, 32) != 1)
		bench_pk_die("OpenSSL ECDSA sign failed");
}

static void ossl_free(struct ossl *s)
{
	EVP_PKEY_CTX_free(s->sign);
	EVP_PKEY_CTX_free(s->verify);
	EVP_PKEY_CTX_free(s->gen);
	EVP_PKEY_free(s->key);
	EVP_PKEY_free(s->peer);
}

static void ossl_pub(EVP_PKEY *k, uint8_t *out, size_t len)
{
	size_t got = 0;

	if (EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, out, len, &got) != 1 ||
	    got != len)
		bench_pk_die("cannot read an OpenSSL public key");
}

/* ------------------------------------------------------ sotls's P-256 */

struct ours {
	const struct p256_impl *im;
	uint8_t priv[32], pub[65], peer[65], hash[32], sig[64], rnd[48];
};

static int ours_sign(void *c)
{
	struct ours *s = c;

	return sotls_p256_sign(s->im, s->priv, s->hash, 32, NULL, 0, s->sig);
}

static int ours_verify(void *c)
{
	struct ours *s = c;

	return sotls_p256_verify(s->im, s->pub, s->hash, 32, s->sig);
}

static int ours_ecdh(void *c)
{
	struct ours *s = c;
	uint8_t priv[32], pub[65], z[32];

	s->rnd[0]++;
	if (sotls_p256_keygen(s->im, s->rnd, priv, pub) != 0)
		return -1;
	return sotls_p256_ecdh(s->im, priv, s->peer, z);
}

/* -------------------------------------------- mbedTLS: ECP and the ALT */

struct mbed {
	mbedtls_ecp_group grp;
	mbedtls_mpi d, r, s;
	mbedtls_ecp_point q, peer;
	mbedtls_pk_context pk; /* for the ALT path's DER signatures */
	uint8_t hash[32], der[MBEDTLS_ECDSA_MAX_LEN];
	size_t der_len;
};

static int mbed_sign(void *c)
{
	struct mbed *m = c;

	return sotls_ecdsa_sign_generic(&m->grp, &m->r, &m->s, &m->d, m->hash, 32, bench_pk_random,
					NULL);
}

static int mbed_verify(void *c)
{
	struct mbed *m = c;

	return sotls_ecdsa_verify_generic(&m->grp, m->hash, 32, &m->q, &m->r, &m->s);
}

static int mbed_ecdh(void *c)
{
	struct mbed *m = c;
	mbedtls_mpi d, z;
	mbedtls_ecp_point q;

	mbedtls_mpi_init(&d);
	mbedtls_mpi_init(&z);
	mbedtls_ecp_point_init(&q);
	int ret = sotls_ecp_gen_public_generic(&m->grp, &d, &q, bench_pk_random, NULL);
	if (ret == 0)
		ret = sotls_ecp_compute_shared_generic(&m->grp, &z, &m->peer, &d, bench_pk_random,
						       NULL);
	mbedtls_mpi_free(&d);
	mbedtls_mpi_free(&z);
	mbedtls_ecp_point_free(&q);
	return ret;
}

/* Through mbedTLS's public API, as the handshake calls it (the ALT hooks). */
static int alt_sign(void *c)
{
	struct mbed *m = c;

	return mbedtls_pk_sign(&m->pk, MBEDTLS_MD_SHA256, m->hash, 32, m->der, sizeof(m->der),
			       &m->der_len, bench_pk_random, NULL);
}

static int alt_verify(void *c)
{
	struct mbed *m = c;

	return mbedtls_pk_verify(&m->pk, MBEDTLS_MD_SHA256, m->hash, 32, m->der, m->der_len);
}

static int alt_ecdh(void *c)
{
	struct mbed *m = c;
	mbedtls_mpi d, z;
	mbedtls_ecp_point q;

	mbedtls_mpi_init(&d);
	mbedtls_mpi_init(&z);
	mbedtls_ecp_point_init(&q);
	int ret = mbedtls_ecdh_gen_public(&m->grp, &d, &q, bench_pk_random, NULL);
	if (ret == 0)
		ret = mbedtls_ecdh_compute_shared(&m->grp, &z, &m->peer, &d, bench_pk_random, NULL);
	mbedtls_mpi_free(&d);
	mbedtls_mpi_free(&z);
	mbedtls_ecp_point_free(&q);
	return ret;
}

static void mbed_setup(struct mbed *m, mbedtls_ecp_group_id id, const uint8_t *peer,
		       size_t peer_len)
{
	mbedtls_ecp_group_init(&m->grp);
	mbedtls_mpi_init(&m->d);
	mbedtls_mpi_init(&m->r);
	mbedtls_mpi_init(&m->s);
	mbedtls_ecp_point_init(&m->q);
	mbedtls_ecp_point_init(&m->peer);
	mbedtls_pk_init(&m->pk);
	bench_pk_random(NULL, m->hash, 32);
	if (mbedtls_ecp_group_load(&m->grp, id) != 0 ||
	    mbedtls_ecp_point_read_binary(&m->grp, &m->peer, peer, peer_len) != 0 ||
	    sotls_ecp_gen_public_generic(&m->grp, &m->d, &m->q, bench_pk_random, NULL) != 0)
		bench_pk_die("mbedTLS set-up failed");
	if (id != MBEDTLS_ECP_DP_SECP256R1)
		return;
	if (mbed_sign(m) != 0 ||
	    mbedtls_pk_setup(&m->pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
	    mbedtls_ecp_gen_key(id, mbedtls_pk_ec(m->pk), bench_pk_random, NULL) != 0 ||
	    alt_sign(m) != 0)
		bench_pk_die("mbedTLS ECDSA set-up failed");
}

static void mbed_free(struct mbed *m)
{
	mbedtls_ecp_group_free(&m->grp);
	mbedtls_mpi_free(&m->d);
	mbedtls_mpi_free(&m->r);
	mbedtls_mpi_free(&m->s);
	mbedtls_ecp_point_free(&m->q);
	mbedtls_ecp_point_free(&m->peer);
	mbedtls_pk_free(&m->pk);
}

/* ------------------------------------------------------------- nettle */

static void nettle_random(void *ctx, size_t len, uint8_t *out)
{
	bench_pk_random(ctx, out, len);
}

struct nett {
	struct ecc_scalar key;
	struct ecc_point pub, peer;
	struct dsa_signature sig;
	uint8_t hash[32];
};

static int nettle_sign(void *c)
{
	struct nett *n = c;

	ecdsa_sign(&n->key, NULL, nettle_random, 32, n->hash, &n->sig);
	return 0;
}

static int nettle_verify(void *c)
{
	struct nett *n = c;

	return ecdsa_verify(&n->pub, 32, n->hash, &n->sig) ? 0 : -1;
}

static int nettle_ecdh(void *c)
{
	struct nett *n = c;
	const struct ecc_curve *ecc = nettle_get_secp_256r1();
	struct ecc_scalar k;
	struct ecc_point pub, z;

	ecc_scalar_init(&k, ecc);
	ecc_point_init(&pub, ecc);
	ecc_point_init(&z, ecc);
	ecdsa_generate_keypair(&pub, &k, NULL, nettle_random);
	ecc_point_mul(&z, &k, &n->peer);
	ecc_scalar_clear(&k);
	ecc_point_clear(&pub);
	ecc_point_clear(&z);
	return 0;
}

static void nettle_setup(struct nett *n, const uint8_t peer[65])
{
	const struct ecc_curve *ecc = nettle_get_secp_256r1();
	mpz_t x, y;

	ecc_scalar_init(&n->key, ecc);
	ecc_point_init(&n->pub, ecc);
	ecc_point_init(&n->peer, ecc);
	dsa_signature_init(&n->sig);
	bench_pk_random(NULL, n->hash, 32);
	ecdsa_generate_keypair(&n->pub, &n->key, NULL, nettle_random);
	mpz_init(x);
	mpz_init(y);
	mpz_import(x, 32, 1, 1, 1, 0, peer + 1);
	mpz_import(y, 32, 1, 1, 1, 0, peer + 33);
	if (!ecc_point_set(&n->peer, x, y))
		bench_pk_die("nettle rejects the peer point");
	mpz_clear(x);
	mpz_clear(y);
	nettle_sign(n);
}

static void nettle_free(struct nett *n)
{
	ecc_scalar_clear(&n->key);
	ecc_point_clear(&n->pub);
	ecc_point_clear(&n->peer);
	dsa_signature_clear(&n->sig);
}

/* ------------------------------------------------------------- X25519 */

struct x25519 {
	uint8_t sk[32], peer[32];
};

static int sodium_x25519(void *c)
{
	struct x25519 *x = c;
	uint8_t pub[32], z[32];

	x->sk[0]++;
	if (crypto_scalarmult_base(pub, x->sk) != 0)
		return -1;
	return crypto_scalarmult(z, x->sk, x->peer);
}

static int nettle_x25519(void *c)
{
	struct x25519 *x = c;
	uint8_t pub[32], z[32];

	x->sk[0]++;
	curve25519_mul_g(pub, x->sk);
	curve25519_mul(z, x->sk, x->peer);
	return 0;
}

/* -------------------------------------------------------------- groups */

static void run_p256(const struct bench_pk_opts *o)
{
	struct ossl os = {0};
	struct ours ours[P256_LEVELS];
	struct mbed mb;
	struct nett nt;
	struct bench_pk_impl sign[8], verify[8], ecdh[8];
	const char *const names[P256_LEVELS] = {"sotls-generic", "sotls-mulx"};
	size_t n = 0;
	uint8_t peer[65];

	ossl_setup(&os, "EC");
	ossl_pub(os.peer, peer, sizeof(peer));
	mbed_setup(&mb, MBEDTLS_ECP_DP_SECP256R1, peer, sizeof(peer));
	nettle_setup(&nt, peer);
	for (int l = 0; l < P256_LEVELS; l++) {
		const struct p256_impl *im = p256_impl_get((enum p256_level)l);
		struct ours *s = &ours[n];

		if (im == NULL)
			continue;
		s->im = im;
		bench_pk_random(NULL, s->rnd, sizeof(s->rnd));
		bench_pk_random(NULL, s->hash, sizeof(s->hash));
		memcpy(s->peer, peer, sizeof(peer));
		if (sotls_p256_keygen(im, s->rnd, s->priv, s->pub) != 0 || ours_sign(s) != 0)
			bench_pk_die("sotls P-256 set-up failed");
		/* Our signature must satisfy OpenSSL before it is timed. */
		EVP_PKEY *pk = openssl_p256_key(NULL, s->pub);
		if (pk == NULL || openssl_p256_verify(pk, s->hash, 32, s->sig) != 0)
			bench_pk_die("OpenSSL rejects a sotls signature");
		EVP_PKEY_free(pk);

		sign[n] = (struct bench_pk_impl){names[l], ours_sign, s};
		verify[n] = (struct bench_pk_impl){names[l], ours_verify, s};
		ecdh[n] = (struct bench_pk_impl){names[l], ours_ecdh, s};
		n++;
	}
	const struct bench_pk_impl others[][3] = {
		{{"sotls-via-mbedtls", alt_sign, &mb},
		 {"sotls-via-mbedtls", alt_verify, &mb},
		 {"sotls-via-mbedtls", alt_ecdh, &mb}},
		{{"openssl", ossl_sign, &os}, {"openssl", ossl_verify, &os}, {"openssl", ossl_ecdh, &os}},
		{{"mbedtls", mbed_sign, &mb}, {"mbedtls", mbed_verify, &mb}, {"mbedtls", mbed_ecdh, &mb}},
		{{"nettle", nettle_sign, &nt},
		 {"nettle", nettle_verify, &nt},
		 {"nettle", nettle_ecdh, &nt}},
	};
	for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++, n++) {
		sign[n] = others[k][0];
		verify[n] = others[k][1];
		ecdh[n] = others[k][2];
	}
	bench_pk_group(o, "p256-ecdsa-sign", sign, n);
	bench_pk_group(o, "p256-ecdsa-verify", verify, n);
	bench_pk_group(o, "p256-ecdh-keygen+shared", ecdh, n);
	ossl_free(&os);
	mbed_free(&mb);
	nettle_free(&nt);
}

static void run_x25519(const struct bench_pk_opts *o)
{
	struct ossl os = {0};
	struct mbed mb;
	struct x25519 x;
	uint8_t peer[32];

	if (sodium_init() < 0)
		bench_pk_die("sodium_init failed");
	ossl_setup(&os, "X25519");
	ossl_pub(os.peer, peer, sizeof(peer));
	mbed_setup(&mb, MBEDTLS_ECP_DP_CURVE25519, peer, sizeof(peer));
	bench_pk_random(NULL, x.sk, sizeof(x.sk));
	memcpy(x.peer, peer, sizeof(peer));
	const struct bench_pk_impl rows[] = {
		{"libsodium", sodium_x25519, &x}, {"sotls-via-mbedtls", alt_ecdh, &mb},
		{"openssl", ossl_ecdh, &os},	  {"mbedtls", mbed_ecdh, &mb},
		{"nettle", nettle_x25519, &x},
	};
	bench_pk_group(o, "x25519-keygen+shared", rows, sizeof(rows) / sizeof(rows[0]));
	ossl_free(&os);
	mbed_free(&mb);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sotls-bench-pk [--seconds S] [--rounds R] [--only p256|x25519|rsa] "
		   "[--json]\n"
		   "  --seconds S  measuring time per row (default 2), split into rounds\n"
		   "  --rounds R   rounds (default 5)\n"
		   "  --json       print one JSON array on stdout (the table goes to stderr)\n");
}

int main(int argc, char **argv)
{
	struct bench_pk_opts o = {2.0, 5, 0};
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			o.json = 1;
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			o.seconds = atof(argv[++i]);
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			o.rounds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!(o.seconds > 0) || o.rounds < 1) {
		usage(stderr);
		return 2;
	}
	table = o.json ? stderr : stdout;
	fprintf(table, "sotls-bench-pk: P-256 level chosen here: %s; %.1f s per row in %d rounds\n\n",
		p256_impl_default()->name, o.seconds, o.rounds);
	if (o.json)
		printf("[");
	if (only == NULL || strcmp(only, "p256") == 0)
		run_p256(&o);
	if (only == NULL || strcmp(only, "x25519") == 0)
		run_x25519(&o);
	if (only == NULL || strcmp(only, "rsa") == 0)
		bench_pk_rsa(&o);
	if (o.json)
		printf("\n]\n");
	return 0;
}

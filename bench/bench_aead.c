/*
 * sotls-bench-aead: ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM and AES-256-GCM
 * seal/open throughput on one core, for every sotls implementation the CPU
 * features left by SOTLS_CPU run (each row says which features it uses),
 * OpenSSL (EVP) and mbedTLS, all measured in the same run.
 *
 * Method. Every record carries a 13-byte AAD, as in TLS 1.2, and is sealed or
 * opened out of place with a 12-byte nonce and a 16-byte tag. Each cell
 * (cipher, op, size, implementation) gets --seconds of measuring in total,
 * split into --rounds slices; the rounds sweep all cells in turn, and within a
 * group (cipher, op, size) the implementations run back to back in an order
 * that rotates every round, so that background load and clock changes hit all
 * of them alike. Within a slice, batches of records are timed with rdtsc and
 * the median batch counts (see measure()); of the slices, the best is
 * reported: noise only ever makes a run slower. Cycles per byte are TSC
 * ticks, which run at a fixed rate that can differ from the core clock under
 * turbo or power saving; MB/s (10^6 bytes per second) converts them with the
 * TSC frequency, measured against CLOCK_MONOTONIC at start-up.
 *
 * Before measuring, every implementation's seal output is compared with the
 * portable sotls code's and every open must succeed: a broken implementation
 * is reported, never timed.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <mbedtls/gcm.h>
#include <mbedtls/version.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "aead.h"
#include "cpu.h"
#include "openssl_aead.h"

#define AAD_LEN 13 /* TLS 1.2: seq_num(8) + type(1) + version(2) + length(2) */
#define MAX_ITEMS 32

/* Table order; --cipher selects among them. */
static const enum sotls_aead_alg ALGS[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_ARIA_256_GCM,
					   SOTLS_AEAD_AES_128_GCM, SOTLS_AEAD_AES_256_GCM};
#define N_ALGS (sizeof(ALGS) / sizeof(ALGS[0]))
#define ALG_SLOTS 5 /* enum sotls_aead_alg values are 1..4 */

enum kind { K_SOTLS, K_OPENSSL, K_MBEDTLS };
enum op { OP_SEAL, OP_OPEN };
static const char *const OP_NAMES[] = {"seal", "open"};

/* One implementation keyed for one cipher. */
struct engine {
	enum kind kind;
	char name[64];
	char uses[192]; /* the CPU features a sotls implementation uses, else "-" */
	enum sotls_aead_alg alg;
	struct sotls_aead aead;
	EVP_CIPHER_CTX *enc, *dec;
	mbedtls_gcm_context gcm;
};

/* Inputs of one (cipher, size): plaintext, and its ciphertext + tag. */
struct data {
	enum sotls_aead_alg alg;
	size_t size;
	uint8_t *pt, *ct, *out;
	uint8_t tag[16];
};

struct cell {
	struct engine *eng;
	size_t group; /* the cells of its (cipher, op, size), adjacent */
	struct data *data;
	enum op op;
	double best_mbps, best_cpb;
};

static const uint8_t NONCE[12] = {0x00, 0x00, 0x00, 0x01, 0x5e, 0xed, 0x0a, 0x1a,
				  0x00, 0x00, 0x00, 0x2a};
static const uint8_t AAD[AAD_LEN] = {0, 0, 0, 0, 0, 0, 0, 7, 0x17, 0x03, 0x03, 0x40, 0x00};

static FILE *table; /* the human-readable output: stdout, or stderr with --json */

static void die(const char *what)
{
	fprintf(stderr, "sotls-bench-aead: %s\n", what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* TSC ticks per second, against CLOCK_MONOTONIC over ~100 ms. */
static double tsc_hz(void)
{
	const struct timespec pause = {0, 100 * 1000 * 1000};
	const double t0 = now();
	const uint64_t c0 = __rdtsc();

	nanosleep(&pause, NULL);
	const uint64_t c1 = __rdtsc();
	const double t1 = now();
	return (double)(c1 - c0) / (t1 - t0);
}

static void *xalloc(size_t n)
{
	void *p = NULL;

	/* Page-aligned, like a record buffer would typically be. */
	if (posix_memalign(&p, 4096, n == 0 ? 1 : n) != 0)
		die("out of memory");
	memset(p, 0, n);
	return p;
}

/* ------------------------------------------------------------- engines */

/* features: for K_SOTLS, the CPU features that pick its implementation. */
static int engine_init(struct engine *e, enum kind kind, uint32_t features,
		       enum sotls_aead_alg alg, const uint8_t *key)
{
	const size_t key_len = sotls_aead_key_len(alg);

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->alg = alg;
	snprintf(e->name, sizeof(e->name), "%s",
		 kind == K_SOTLS ? "sotls" : kind == K_OPENSSL ? "openssl" : "mbedtls");
	snprintf(e->uses, sizeof(e->uses), "-");
	switch (kind) {
	case K_SOTLS: {
		const int rc =
			sotls_aead_init_features(&e->aead, alg, key, key_len, features);
		if (rc == 0) {
			snprintf(e->name, sizeof(e->name), "%s", sotls_aead_impl_name(&e->aead));
			sotls_cpu_describe(sotls_aead_impl_needs(&e->aead), e->uses,
					   sizeof(e->uses));
		}
		return rc;
	}
	case K_OPENSSL: {
		const EVP_CIPHER *c = openssl_aead_cipher(alg);
		e->enc = EVP_CIPHER_CTX_new();
		e->dec = EVP_CIPHER_CTX_new();
		if (c == NULL || e->enc == NULL || e->dec == NULL ||
		    EVP_EncryptInit_ex(e->enc, c, NULL, key, NULL) != 1 ||
		    EVP_DecryptInit_ex(e->dec, c, NULL, key, NULL) != 1)
			return -1;
		return 0;
	}
	case K_MBEDTLS: {
		const int aes = alg == SOTLS_AEAD_AES_128_GCM || alg == SOTLS_AEAD_AES_256_GCM;

		mbedtls_gcm_init(&e->gcm);
		return mbedtls_gcm_setkey(&e->gcm, aes ? MBEDTLS_CIPHER_ID_AES : MBEDTLS_CIPHER_ID_ARIA,
					  key, (unsigned)(key_len * 8));
	}
	}
	return -1;
}

static void engine_free(struct engine *e)
{
	switch (e->kind) {
	case K_SOTLS:
		sotls_aead_clear(&e->aead);
		break;
	case K_OPENSSL:
		EVP_CIPHER_CTX_free(e->enc);
		EVP_CIPHER_CTX_free(e->dec);
		break;
	case K_MBEDTLS:
		mbedtls_gcm_free(&e->gcm);
		break;
	}
}

/* One TLS-like record: 0 on success. */
static int seal(struct engine *e, const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[16])
{
	int outl;

	switch (e->kind) {
	case K_SOTLS:
		return sotls_aead_seal(&e->aead, NONCE, AAD, AAD_LEN, in, len, out, tag);
	case K_OPENSSL:
		/* The key schedule stays; only the IV is set per record, as in libssl. */
		if (EVP_EncryptInit_ex(e->enc, NULL, NULL, NULL, NONCE) != 1 ||
		    EVP_EncryptUpdate(e->enc, NULL, &outl, AAD, AAD_LEN) != 1 ||
		    EVP_EncryptUpdate(e->enc, out, &outl, in, (int)len) != 1 ||
		    EVP_EncryptFinal_ex(e->enc, out + outl, &outl) != 1 ||
		    EVP_CIPHER_CTX_ctrl(e->enc, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
			return -1;
		return 0;
	case K_MBEDTLS:
		return mbedtls_gcm_crypt_and_tag(&e->gcm, MBEDTLS_GCM_ENCRYPT, len, NONCE, 12, AAD,
						 AAD_LEN, in, out, 16, tag);
	}
	return -1;
}

static int open_(struct engine *e, const uint8_t *in, size_t len, uint8_t tag[16], uint8_t *out)
{
	int outl;

	switch (e->kind) {
	case K_SOTLS:
		return sotls_aead_open(&e->aead, NONCE, AAD, AAD_LEN, in, len, tag, out);
	case K_OPENSSL:
		if (EVP_DecryptInit_ex(e->dec, NULL, NULL, NULL, NONCE) != 1 ||
		    EVP_DecryptUpdate(e->dec, NULL, &outl, AAD, AAD_LEN) != 1 ||
		    EVP_DecryptUpdate(e->dec, out, &outl, in, (int)len) != 1 ||
		    EVP_CIPHER_CTX_ctrl(e->dec, EVP_CTRL_AEAD_SET_TAG, 16, tag) != 1 ||
		    EVP_DecryptFinal_ex(e->dec, out + outl, &outl) <= 0)
			return -1;
		return 0;
	case K_MBEDTLS:
		return mbedtls_gcm_auth_decrypt(&e->gcm, len, NONCE, 12, AAD, AAD_LEN, tag, 16, in,
						out);
	}
	return -1;
}

/* ---------------------------------------------------------- measuring */

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One slice of about `slice` seconds. The work is timed in batches of at
 * least ~16 KiB with rdtsc, and the slice's result is its median batch: on a
 * shared machine the process is descheduled now and then, and the few
 * batches that span such a gap must not count, while a batch of a few tens
 * of microseconds is usually not interrupted at all. Keeps the best slice.
 */
#define MAX_BATCHES 65536
static uint64_t batch_ticks[MAX_BATCHES];

static void measure(struct cell *c, double slice, double hz)
{
	struct engine *e = c->eng;
	struct data *d = c->data;
	const size_t batch = d->size >= 16384 ? 1 : (16384 + d->size - 1) / d->size;
	uint8_t tag[16];
	size_t nb = 0;
	int rc = 0;

	/* Warm-up: caches, branch predictors, and the AVX-512 license. */
	for (size_t i = 0; i < batch && rc == 0; i++)
		rc = c->op == OP_SEAL ? seal(e, d->pt, d->size, d->out, tag)
				      : open_(e, d->ct, d->size, d->tag, d->out);

	const double t0 = now();
	do {
		const uint64_t c0 = __rdtsc();
		if (c->op == OP_SEAL)
			for (size_t i = 0; i < batch; i++)
				rc |= seal(e, d->pt, d->size, d->out, tag);
		else
			for (size_t i = 0; i < batch; i++)
				rc |= open_(e, d->ct, d->size, d->tag, d->out);
		batch_ticks[nb++] = __rdtsc() - c0;
	} while (nb < MAX_BATCHES && now() - t0 < slice);

	if (rc != 0) {
		fprintf(stderr, "sotls-bench-aead: %s %s %s %zu failed while measuring\n",
			e->name, sotls_aead_alg_name(d->alg), OP_NAMES[c->op], d->size);
		exit(1);
	}
	qsort(batch_ticks, nb, sizeof(batch_ticks[0]), cmp_u64);
	const double cpb = (double)batch_ticks[nb / 2] / ((double)batch * (double)d->size);
	const double mbps = hz / cpb / 1e6;
	if (mbps > c->best_mbps) {
		c->best_mbps = mbps;
		c->best_cpb = cpb;
	}
}

/* Every engine must produce the reference record and open it. */
static void verify(struct engine *e, struct data *d)
{
	uint8_t *out = xalloc(d->size), tag[16];

	if (seal(e, d->pt, d->size, out, tag) != 0 || memcmp(out, d->ct, d->size) != 0 ||
	    memcmp(tag, d->tag, 16) != 0) {
		fprintf(stderr, "sotls-bench-aead: %s %s seal of %zu bytes disagrees with "
				"sotls's portable code; not benchmarking a wrong implementation\n",
			e->name, sotls_aead_alg_name(d->alg), d->size);
		exit(1);
	}
	memset(out, 0, d->size);
	if (open_(e, d->ct, d->size, d->tag, out) != 0 || memcmp(out, d->pt, d->size) != 0) {
		fprintf(stderr, "sotls-bench-aead: %s %s open of %zu bytes fails\n", e->name,
			sotls_aead_alg_name(d->alg), d->size);
		exit(1);
	}
	free(out);
}

/* ------------------------------------------------------------ options */

struct options {
	double seconds;
	int rounds;
	int json, pin;
	size_t sizes[MAX_ITEMS];
	size_t n_sizes;
	int alg[ALG_SLOTS];	/* indexed by enum sotls_aead_alg */
	int op[2];		/* indexed by enum op */
	const char *impls[MAX_ITEMS]; /* name filters; none = all */
	size_t n_impls;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sotls-bench-aead [options]\n"
		"  --seconds S      measuring time per cell, split over the rounds (default 0.3)\n"
		"  --rounds N       slices per cell; the best is kept (default 3)\n"
		"  --size LIST      record sizes in bytes, comma separated (default 64,1500,16384)\n"
		"  --cipher LIST    ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM, AES-256-GCM, or\n"
		"                   aria, aes for both of a family (default all four)\n"
		"  --op LIST        seal, open (default both)\n"
		"  --impl LIST      names as in the table (e.g. sotls-gcm-aes-vaes-avx512), sotls\n"
		"                   (every sotls implementation), openssl, mbedtls (default all);\n"
		"                   sotls rows: each implementation the features SOTLS_CPU\n"
		"                   leaves run, the default (best) first\n"
		"  --json           print one JSON array on stdout (the table goes to stderr)\n"
		"  --no-pin         do not pin the process to the CPU it starts on\n"
		"  --help\n");
}

/* Calls fn on each comma-separated item of list (modified in place). */
static void each_item(char *list, void (*fn)(struct options *, const char *),
		      struct options *o)
{
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save))
		fn(o, tok);
}

static void add_size(struct options *o, const char *s)
{
	char *end;
	errno = 0;
	const unsigned long long v = strtoull(s, &end, 10);

	if (errno != 0 || *end != '\0' || end == s || v < 1 || v > (1u << 30) ||
	    o->n_sizes == MAX_ITEMS)
		die("bad --size (1 to 2^30 bytes, at most 32 sizes)");
	o->sizes[o->n_sizes++] = (size_t)v;
}

static void add_cipher(struct options *o, const char *s)
{
	int found = 0;

	for (size_t g = 0; g < N_ALGS; g++) {
		const char *name = sotls_aead_alg_name(ALGS[g]);

		/* "aria" and "aes" select a family: the name up to its first '-'. */
		if (strcasecmp(s, name) == 0 ||
		    (strlen(s) == (size_t)(strchr(name, '-') - name) &&
		     strncasecmp(s, name, strlen(s)) == 0)) {
			o->alg[ALGS[g]] = 1;
			found = 1;
		}
	}
	/* The ARIA-only versions took 128 and 256 for the two ARIAs. */
	if (strcmp(s, "128") == 0 || strcmp(s, "256") == 0) {
		o->alg[s[0] == '1' ? SOTLS_AEAD_ARIA_128_GCM : SOTLS_AEAD_ARIA_256_GCM] = 1;
		found = 1;
	}
	if (!found)
		die("bad --cipher (ARIA-128-GCM, ARIA-256-GCM, AES-128-GCM, AES-256-GCM, aria, "
		    "aes)");
}

static void add_op(struct options *o, const char *s)
{
	if (strcmp(s, "seal") == 0)
		o->op[OP_SEAL] = 1;
	else if (strcmp(s, "open") == 0)
		o->op[OP_OPEN] = 1;
	else
		die("bad --op (seal or open)");
}

static void add_impl(struct options *o, const char *s)
{
	if (o->n_impls == MAX_ITEMS)
		die("too many --impl names");
	o->impls[o->n_impls++] = s;
}

static int impl_selected(const struct options *o, const char *name)
{
	if (o->n_impls == 0)
		return 1;
	for (size_t i = 0; i < o->n_impls; i++)
		if (strcmp(o->impls[i], name) == 0 ||
		    (strcmp(o->impls[i], "sotls") == 0 && strncmp(name, "sotls-", 6) == 0))
			return 1;
	return 0;
}

static void parse(struct options *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->seconds = 0.3;
	o->rounds = 3;
	o->pin = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(a, "--no-pin") == 0) {
			o->pin = 0;
		} else if (val == NULL) {
			usage(stderr);
			exit(2);
		} else if (strcmp(a, "--seconds") == 0) {
			o->seconds = strtod(val, NULL);
			if (!(o->seconds > 0 && o->seconds <= 60))
				die("bad --seconds (0 < S <= 60)");
			i++;
		} else if (strcmp(a, "--rounds") == 0) {
			o->rounds = atoi(val);
			if (o->rounds < 1 || o->rounds > 100)
				die("bad --rounds (1..100)");
			i++;
		} else if (strcmp(a, "--size") == 0) {
			each_item(val, add_size, o);
			i++;
		} else if (strcmp(a, "--cipher") == 0) {
			each_item(val, add_cipher, o);
			i++;
		} else if (strcmp(a, "--op") == 0) {
			each_item(val, add_op, o);
			i++;
		} else if (strcmp(a, "--impl") == 0) {
			each_item(val, add_impl, o);
			i++;
		} else {
			usage(stderr);
			exit(2);
		}
	}
	if (o->n_sizes == 0) {
		static const size_t def[] = {64, 1500, 16384};
		for (size_t i = 0; i < 3; i++)
			o->sizes[o->n_sizes++] = def[i];
	}
	int any_alg = 0;
	for (size_t g = 0; g < N_ALGS; g++)
		any_alg |= o->alg[ALGS[g]];
	for (size_t g = 0; g < N_ALGS && !any_alg; g++)
		o->alg[ALGS[g]] = 1;
	if (!o->op[OP_SEAL] && !o->op[OP_OPEN])
		o->op[OP_SEAL] = o->op[OP_OPEN] = 1;
}

/* --------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct options o;
	/* sotls's implementations per cipher (at most this many), then the peers. */
	enum { MAX_VARIANTS = 16, MAX_ENGINES = MAX_VARIANTS + 2 };
	char features[256], masked[256];

	parse(&o, argc, argv);
	table = o.json ? stderr : stdout;

	int cpu = -1;
	if (o.pin) {
		cpu_set_t set;

		cpu = sched_getcpu();
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set) != 0)
			cpu = -1;
	}

	/* Keys, records and engines. The reference record comes from the
	 * portable sotls code whether or not it is being measured. */
	size_t n_data = 0, n_eng = 0, n_cells = 0;
	struct data *data = calloc(N_ALGS * o.n_sizes, sizeof(*data));
	struct engine *engs = calloc(N_ALGS * MAX_ENGINES, sizeof(*engs));
	struct cell *cells = calloc(N_ALGS * 2 * o.n_sizes * MAX_ENGINES, sizeof(*cells));
	if (data == NULL || engs == NULL || cells == NULL)
		die("out of memory");
	srand(1);
	for (size_t g = 0; g < N_ALGS; g++) {
		const enum sotls_aead_alg alg = ALGS[g];
		uint8_t key[32];
		struct sotls_aead ref;

		if (!o.alg[alg])
			continue;
		for (size_t i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rand();
		if (sotls_aead_init_features(&ref, alg, key, sotls_aead_key_len(alg), 0) != 0)
			die("sotls_aead_init_features(portable) failed");

		/* Every sotls implementation the process's features run, the
		 * default first; then the peers. */
		struct engine *first = &engs[n_eng];
		uint32_t sets[MAX_VARIANTS];
		const size_t nv = sotls_aead_variants(alg, sotls_cpu_features(), sets, MAX_VARIANTS);
		size_t n_here = 0;
		for (size_t m = 0; m < nv + 2; m++) {
			const enum kind kind = m < nv ? K_SOTLS : m == nv ? K_OPENSSL : K_MBEDTLS;
			struct engine *e = &first[n_here];

			if (engine_init(e, kind, m < nv ? sets[m] : 0, alg, key) != 0) {
				fprintf(stderr, "sotls-bench-aead: cannot key %s for %s\n", e->name,
					sotls_aead_alg_name(alg));
				return 1;
			}
			if (impl_selected(&o, e->name))
				n_here++;
			else
				engine_free(e);
		}
		if (n_here == 0)
			die("--impl selects nothing that can run here");
		n_eng += n_here;
		for (size_t s = 0; s < o.n_sizes; s++) {
			struct data *d = &data[n_data++];

			d->alg = alg;
			d->size = o.sizes[s];
			d->pt = xalloc(d->size);
			d->ct = xalloc(d->size);
			d->out = xalloc(d->size);
			for (size_t i = 0; i < d->size; i++)
				d->pt[i] = (uint8_t)rand();
			if (sotls_aead_seal(&ref, NONCE, AAD, AAD_LEN, d->pt, d->size, d->ct,
					    d->tag) != 0)
				die("reference seal failed");
			for (size_t m = 0; m < n_here; m++)
				verify(&first[m], d);
		}
		sotls_aead_clear(&ref);
		/* Table order: op, then size; the implementations of one row
		 * group are adjacent (the measuring loop relies on it). */
		for (int op = 0; op < 2; op++) {
			if (!o.op[op])
				continue;
			for (size_t s = 0; s < o.n_sizes; s++)
				for (size_t m = 0; m < n_here; m++)
					cells[n_cells++] = (struct cell){
						.eng = &first[m],
						.group = n_here,
						.data = &data[n_data - o.n_sizes + s],
						.op = (enum op)op};
		}
	}

	const double slice = o.seconds / o.rounds;
	const double hz = tsc_hz();
	char cpu_txt[32] = "not pinned";
	if (cpu >= 0)
		snprintf(cpu_txt, sizeof(cpu_txt), "pinned to CPU %d", cpu);
	fprintf(table,
		"sotls-bench-aead: ARIA-GCM and AES-GCM, one core (%s), %d-byte AAD, out of place;\n"
		"  best of %d x %.3f s per cell (median of rdtsc-timed batches), %zu cells, ~%.0f s\n"
		"  peers: %s, mbed TLS %s%s%s\n"
		"  sotls: CPU features used %s; masked by SOTLS_CPU: %s\n"
		"  TSC %.3f GHz measured against CLOCK_MONOTONIC; cyc/B counts TSC cycles\n\n",
		cpu_txt, AAD_LEN, o.rounds, slice, n_cells, o.seconds * (double)n_cells,
		OpenSSL_version(OPENSSL_VERSION), MBEDTLS_VERSION_STRING,
		getenv("OPENSSL_ia32cap") != NULL ? "; OPENSSL_ia32cap=" : "",
		getenv("OPENSSL_ia32cap") != NULL ? getenv("OPENSSL_ia32cap") : "",
		sotls_cpu_describe(sotls_cpu_features(), features, sizeof(features)),
		sotls_cpu_describe(sotls_cpu_detected() & ~sotls_cpu_features(), masked,
				   sizeof(masked)),
		hz / 1e9);
	fflush(table);

	/* Rounds over all cells; within each group of adjacent cells (same
	 * cipher, op, size), the starting implementation rotates. */
	const int progress = isatty(STDERR_FILENO);
	for (int r = 0; r < o.rounds; r++) {
		if (progress) {
			fprintf(stderr, "  round %d/%d\r", r + 1, o.rounds);
			fflush(stderr);
		}
		for (size_t g = 0; g < n_cells; g += cells[g].group)
			for (size_t k = 0; k < cells[g].group; k++)
				measure(&cells[g + (k + (size_t)r) % cells[g].group], slice, hz);
	}
	if (progress)
		fprintf(stderr, "            \r");

	fprintf(table, "%-13s %-5s %6s  %-44s %9s %10s %10s  %s\n", "cipher", "op", "bytes",
		"impl", "MB/s", "TSC cyc/B", "vs OpenSSL", "CPU features it uses");
	if (o.json)
		printf("[");
	for (size_t g = 0; g < n_cells; g += cells[g].group) {
		const size_t n_impls = cells[g].group;
		double ossl = 0;

		for (size_t k = 0; k < n_impls; k++)
			if (cells[g + k].eng->kind == K_OPENSSL)
				ossl = cells[g + k].best_mbps;
		for (size_t k = 0; k < n_impls; k++) {
			const struct cell *c = &cells[g + k];
			const char *cipher = sotls_aead_alg_name(c->data->alg);
			char ratio[16] = "-";

			if (ossl > 0)
				snprintf(ratio, sizeof(ratio), "%.2fx", c->best_mbps / ossl);
			fprintf(table, "%-13s %-5s %6zu  %-44s %9.1f %10.2f %10s  %s\n", cipher,
				OP_NAMES[c->op], c->data->size, c->eng->name, c->best_mbps,
				c->best_cpb, ratio, c->eng->uses);
			if (o.json) {
				printf("%s\n  {\"impl\": \"%s\", \"cipher\": \"%s\", \"op\": \"%s\", "
				       "\"uses\": \"%s\", \"size\": %zu, \"mbps\": %.2f, \"cpb\": %.3f, ",
				       g + k == 0 ? "" : ",", c->eng->name, cipher, OP_NAMES[c->op],
				       c->eng->uses, c->data->size, c->best_mbps, c->best_cpb);
				if (ossl > 0)
					printf("\"vs_openssl\": %.3f, ", c->best_mbps / ossl);
				else
					printf("\"vs_openssl\": null, ");
				printf("\"tsc_ghz\": %.3f, \"seconds\": %.3f, \"rounds\": %d}", hz / 1e9,
				       o.seconds, o.rounds);
			}
		}
		fprintf(table, "\n");
	}
	if (o.json)
		printf("\n]\n");

	for (size_t i = 0; i < n_eng; i++)
		engine_free(&engs[i]);
	for (size_t i = 0; i < n_data; i++) {
		free(data[i].pt);
		free(data[i].ct);
		free(data[i].out);
	}
	free(data);
	free(engs);
	free(cells);
	return 0;
}

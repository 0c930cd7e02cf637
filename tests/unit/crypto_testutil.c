#include "crypto_testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------ random test data */

static uint64_t rng_state;

void rng_seed_from_env(const char *prog, uint64_t dflt)
{
	const char *s = getenv("SOTLS_TEST_SEED");
	const uint64_t seed = s != NULL ? strtoull(s, NULL, 0) : dflt;

	rng_state = seed;
	printf("%s: seed 0x%llx (set SOTLS_TEST_SEED to replay another)\n", prog,
	       (unsigned long long)seed);
}

uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

size_t rng_below(size_t n)
{
	return (size_t)(rng_next() % n);
}

void rng_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng_next();
}

/* ---------------------------------------------------------------- bytes */

size_t hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	const size_t n = strlen(hex) / 2;

	assert_true(n <= cap && strlen(hex) % 2 == 0);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

long first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

uint32_t load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void ctr32_add(uint8_t ctr[16], uint32_t delta)
{
	store_be32(ctr + 12, load_be32(ctr + 12) + delta);
}

/* -------------------------------------------------- buffers at page edges */

void fence_init(struct fence *f, size_t cap)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t area = (cap + pg - 1) / pg * pg;

	f->map_len = area + 2 * pg;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	assert_true(f->map != MAP_FAILED);
	assert_int_equal(mprotect(f->map, pg, PROT_NONE), 0);
	assert_int_equal(mprotect(f->map + pg + area, pg, PROT_NONE), 0);
	f->lo = f->map + pg;
	f->end = f->map + pg + area;
}

void fence_free(struct fence *f)
{
	munmap(f->map, f->map_len);
}

uint8_t *fence_at(const struct fence *f, int right, size_t n)
{
	return right ? f->end - n : f->lo;
}

char fault_desc[192];
static const char *fault_prog = "test";
static struct sigaction cmocka_segv;

static void on_segv(int sig)
{
	static const char msg[] = ": SIGSEGV (out-of-bounds access?) while running: ";

	if (write(STDERR_FILENO, fault_prog, strlen(fault_prog)) < 0 ||
	    write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0 ||
	    write(STDERR_FILENO, fault_desc, strlen(fault_desc)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0) {
		/* nothing more to do */
	}
	if (cmocka_segv.sa_handler != SIG_DFL && cmocka_segv.sa_handler != SIG_IGN)
		cmocka_segv.sa_handler(sig);
	_exit(1);
}

void fault_catch_begin(const char *prog)
{
	struct sigaction sa;

	fault_prog = prog;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &cmocka_segv), 0);
}

void fault_catch_end(void)
{
	fault_desc[0] = '\0';
	assert_int_equal(sigaction(SIGSEGV, &cmocka_segv, NULL), 0);
}

#include "ctr32_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "crypto_testutil.h"

#define MAX_BLOCKS CTR32_MAX_BLOCKS
#define GUARD 32
#define GUARD_BYTE 0xc5

static const size_t KEY_LENS[] = {16, 24, 32};

static size_t n_cases;

/* Whether this CPU runs impl (SOTLS_CPU aside: every implementation is tested). */
static bool runs(const struct ctr32_impl *impl)
{
	return (impl->needs & ~sotls_cpu_detected()) == 0;
}

void ctr32_print_impls(const struct ctr32_suite *s)
{
	char run[128] = "", skipped[128] = "";

	for (size_t i = 0; i < s->n_impls; i++) {
		char *dst = runs(&s->impls[i]) ? run : skipped;

		strncat(dst, " ", sizeof(run) - strlen(dst) - 1);
		strncat(dst, s->impls[i].name, sizeof(run) - strlen(dst) - 1);
	}
	printf("%s: ctr32 implementations run:%s; skipped (CPU lacks them):%s\n", s->prog, run,
	       skipped[0] ? skipped : " none");
}

void ctr32_check_kat(const struct ctr32_suite *s, const char *name, const uint8_t *key,
		     size_t key_len, const uint8_t pt[16], const uint8_t ct[16])
{
	s->set_key(key, key_len);
	for (size_t m = 0; m < s->n_impls; m++) {
		const struct ctr32_impl *impl = &s->impls[m];

		if (!runs(impl))
			continue;
		for (uint32_t j = 0; j < 70; j++) {
			const size_t nblocks = j + 1 + j % 5;
			static const uint8_t zeros[75 * 16];
			uint8_t out[75 * 16], ctr[16], want_ctr[16];

			memcpy(ctr, pt, 16);
			ctr32_add(ctr, 0u - j);
			memcpy(want_ctr, ctr, 16);
			ctr32_add(want_ctr, (uint32_t)nblocks);
			s->run(impl, ctr, zeros, out, nblocks);
			if (memcmp(out + 16 * j, ct, 16) != 0)
				fail_msg("%s: %s wrong in block %u of %zu", impl->name, name, j,
					 nblocks);
			if (memcmp(ctr, want_ctr, 16) != 0)
				fail_msg("%s: %s: counter after %zu blocks is wrong", impl->name,
					 name, nblocks);
		}
	}
}

/*
 * One call checked against the reference: the output, the counter left
 * behind, the input untouched (out of place), and the guard bytes on both
 * sides of the output untouched (wide code must not write past the end).
 */
static void check_case(const struct ctr32_suite *s, const struct ctr32_impl *impl,
		       const uint8_t *key, size_t key_len, const uint8_t ctr0[16], size_t nblocks,
		       size_t in_off, size_t out_off, int in_place)
{
	static uint8_t src[MAX_BLOCKS * 16 + 2 * GUARD], dst[MAX_BLOCKS * 16 + 2 * GUARD];
	static uint8_t input[MAX_BLOCKS * 16], want[MAX_BLOCKS * 16];
	const size_t n = nblocks * 16;
	uint8_t ctr[16], want_ctr[16];

	assert_true(nblocks <= MAX_BLOCKS);
	s->set_key(key, key_len);
	rng_fill(input, n);
	memcpy(want_ctr, ctr0, 16);
	s->reference(want_ctr, input, want, nblocks);

	memset(dst, GUARD_BYTE, sizeof(dst));
	uint8_t *out = dst + GUARD + out_off;
	const uint8_t *in = out;
	if (in_place) {
		memcpy(out, input, n);
	} else {
		memcpy(src + GUARD + in_off, input, n);
		in = src + GUARD + in_off;
	}
	memcpy(ctr, ctr0, 16);
	s->run(impl, ctr, in, out, nblocks);

	const char *mode = in_place ? "in place" : "out of place";
	const long d = first_diff(out, want, n);
	if (d >= 0)
		fail_msg("%s: %zu-bit key, %zu blocks, %s, in+%zu out+%zu, counter word %08x: "
			 "output differs from %s at byte %ld (block %ld)",
			 impl->name, key_len * 8, nblocks, mode, in_off, out_off,
			 load_be32(ctr0 + 12), s->ref, d, d / 16);
	if (memcmp(ctr, want_ctr, 16) != 0)
		fail_msg("%s: %zu-bit key, %zu blocks, %s, counter word %08x: counter left "
			 "as %08x, expected %08x (first 12 bytes %s)",
			 impl->name, key_len * 8, nblocks, mode, load_be32(ctr0 + 12),
			 load_be32(ctr + 12), load_be32(want_ctr + 12),
			 memcmp(ctr, want_ctr, 12) == 0 ? "intact" : "CHANGED");
	for (size_t i = 0; i < GUARD + out_off; i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s, out+%zu: wrote %zu bytes before the output",
				 impl->name, nblocks, mode, out_off, GUARD + out_off - i);
	for (size_t i = GUARD + out_off + n; i < sizeof(dst); i++)
		if (dst[i] != GUARD_BYTE)
			fail_msg("%s: %zu blocks, %s, out+%zu: wrote byte %zu past the end of "
				 "the output",
				 impl->name, nblocks, mode, out_off, i - (GUARD + out_off + n));
	if (!in_place && memcmp(in, input, n) != 0)
		fail_msg("%s: %zu blocks, out of place: the input was modified", impl->name,
			 nblocks);
	n_cases++;
}

void test_ctr32_vs_reference(void **state)
{
	const struct ctr32_suite *s = *state;

	for (size_t m = 0; m < s->n_impls; m++) {
		const struct ctr32_impl *impl = &s->impls[m];

		if (!runs(impl))
			continue;
		for (size_t c = 0; c < s->n_counts; c++)
			for (size_t l = 0; l < 3; l++) {
				uint8_t key[32], ctr0[16];

				rng_fill(key, sizeof(key));
				rng_fill(ctr0, sizeof(ctr0));
				/* Offsets 0..3 on both sides, in a pattern that varies
				 * with the count so that all pairs turn up. */
				const size_t in_off = (c + l) % 4, out_off = (c / 4 + 2 * l) % 4;
				const size_t nblocks = s->counts[c];

				check_case(s, impl, key, KEY_LENS[l], ctr0, nblocks, in_off, out_off,
					   0);
				check_case(s, impl, key, KEY_LENS[l], ctr0, nblocks, 0, out_off, 1);
			}
	}
	printf("%s: %zu ctr32 cases against %s so far\n", s->prog, n_cases, s->ref);
}

/*
 * The wrap is put at every block position of a 70-block call, so it crosses
 * every lane and register of the wide code (the reference knows nothing of
 * lanes), and a long call wraps too.
 */
void test_ctr32_counter_wrap(void **state)
{
	const struct ctr32_suite *s = *state;

	for (size_t m = 0; m < s->n_impls; m++) {
		const struct ctr32_impl *impl = &s->impls[m];
		uint8_t key[32], ctr0[16];

		if (!runs(impl))
			continue;
		rng_fill(key, sizeof(key));
		for (uint32_t j = 0; j < 70; j++) {
			/* Byte 11 = 0xff: a carry out of the last word would change it. */
			rng_fill(ctr0, 12);
			ctr0[11] = 0xff;
			store_be32(ctr0 + 12, 0xffffffffu - j);
			check_case(s, impl, key, KEY_LENS[j % 3], ctr0, 70, j % 4, (j / 4) % 4, 0);
			check_case(s, impl, key, 16, ctr0, 70, 0, 1, 1);
		}
		memset(ctr0, 0xff, 16);
		store_be32(ctr0 + 12, 0xfffffff0u);
		check_case(s, impl, key, 16, ctr0, MAX_BLOCKS, 3, 1, 0);
		check_case(s, impl, key, 32, ctr0, MAX_BLOCKS, 3, 1, 0);
	}
}

void test_ctr32_zero_blocks(void **state)
{
	const struct ctr32_suite *s = *state;

	for (size_t m = 0; m < s->n_impls; m++) {
		const struct ctr32_impl *impl = &s->impls[m];
		uint8_t key[16], ctr[16], ctr0[16], out[64], out0[64];

		if (!runs(impl))
			continue;
		rng_fill(key, sizeof(key));
		rng_fill(ctr0, sizeof(ctr0));
		rng_fill(out0, sizeof(out0));
		memcpy(out, out0, sizeof(out));
		memcpy(ctr, ctr0, sizeof(ctr));
		s->set_key(key, 16);
		s->run(impl, ctr, NULL, out, 0);
		if (memcmp(ctr, ctr0, 16) != 0)
			fail_msg("%s: zero blocks changed the counter", impl->name);
		if (memcmp(out, out0, sizeof(out)) != 0)
			fail_msg("%s: zero blocks wrote to the output", impl->name);
	}
}

void test_ctr32_page_edges(void **state)
{
	static uint8_t input[300 * 16], want[300 * 16];
	const struct ctr32_suite *s = *state;
	struct fence fin, fout;

	fault_catch_begin(s->prog);
	fence_init(&fin, sizeof(input));
	fence_init(&fout, sizeof(input));
	for (size_t m = 0; m < s->n_impls; m++) {
		const struct ctr32_impl *impl = &s->impls[m];

		if (!runs(impl))
			continue;
		for (size_t nblocks = 0; nblocks <= 300; nblocks += nblocks < 70 ? 1 : 23) {
			const size_t n = nblocks * 16, key_len = KEY_LENS[nblocks % 3];
			uint8_t key[32], ctr0[16], want_ctr[16];

			rng_fill(key, sizeof(key));
			rng_fill(ctr0, sizeof(ctr0));
			rng_fill(input, n);
			s->set_key(key, key_len);
			memcpy(want_ctr, ctr0, 16);
			s->reference(want_ctr, input, want, nblocks);
			for (int c = 0; c < 4; c++) {
				const int right = c & 1, in_place = c >> 1;
				uint8_t *in = fence_at(&fin, right, n);
				uint8_t *out = in_place ? in : fence_at(&fout, right, n);
				uint8_t ctr[16];

				snprintf(fault_desc, sizeof(fault_desc),
					 "%s, %zu blocks, buffers %s a page edge, %s", impl->name,
					 nblocks, right ? "end at" : "start at",
					 in_place ? "in place" : "out of place");
				memcpy(in, input, n);
				memcpy(ctr, ctr0, 16);
				s->run(impl, ctr, in, out, nblocks);
				if (memcmp(out, want, n) != 0 || memcmp(ctr, want_ctr, 16) != 0)
					fail_msg("%s: wrong output or counter", fault_desc);
			}
		}
	}
	fence_free(&fin);
	fence_free(&fout);
	fault_catch_end();
}

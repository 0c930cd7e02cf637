/*
 * CPU level selection (lib/crypto/cpu.h): level names, the detected levels
 * against the kernel's own view (/proc/cpuinfo), the public-key features
 * (MULX/ADX, IFMA) likewise, the chosen level, and the
 * SOTLS_CPU override, which may lower the level but never raise it.
 *
 *   test_cpu                      the level must be the highest supported one
 *                                 (capped by SOTLS_CPU if that happens to be set)
 *   test_cpu --expect-cap NAME    run with SOTLS_CPU=NAME (meson sets it): the
 *                                 level must be min(NAME, highest supported), and
 *                                 sotls_aead_init must pick that implementation
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aead.h"
#include "cpu.h"

static const char *expect_cap; /* NAME from --expect-cap, or NULL */

static const char *const NAMES[SOTLS_CPU_LEVELS] = {"generic", "aesni", "avx2", "avx512"};

static int level_from_name(const char *name)
{
	for (int l = 0; l < SOTLS_CPU_LEVELS; l++)
		if (strcmp(name, NAMES[l]) == 0)
			return l;
	return -1;
}

static enum sotls_cpu_level highest_supported(void)
{
	int l = SOTLS_CPU_LEVELS - 1;

	while (l > 0 && !sotls_cpu_supports((enum sotls_cpu_level)l))
		l--;
	return (enum sotls_cpu_level)l;
}

static void test_level_names(void **state)
{
	(void)state;
	assert_int_equal(SOTLS_CPU_LEVELS, 4);
	for (int l = 0; l < SOTLS_CPU_LEVELS; l++) {
		const char *n = sotls_cpu_level_name((enum sotls_cpu_level)l);

		assert_non_null(n);
		assert_string_equal(n, NAMES[l]);
	}
	assert_null(sotls_cpu_level_name(SOTLS_CPU_LEVELS));
	assert_null(sotls_cpu_level_name((enum sotls_cpu_level)-1));
	assert_null(sotls_cpu_level_name((enum sotls_cpu_level)1000));
}

/* Each level includes the one below it, and out-of-range values are never supported. */
static void test_supports_is_monotonic(void **state)
{
	(void)state;
	assert_true(sotls_cpu_supports(SOTLS_CPU_GENERIC));
	for (int l = 1; l < SOTLS_CPU_LEVELS; l++)
		if (sotls_cpu_supports((enum sotls_cpu_level)l) &&
		    !sotls_cpu_supports((enum sotls_cpu_level)(l - 1)))
			fail_msg("level %s supported but %s is not", NAMES[l], NAMES[l - 1]);
	assert_false(sotls_cpu_supports(SOTLS_CPU_LEVELS));
	assert_false(sotls_cpu_supports((enum sotls_cpu_level)-1));
}

/* 1 if the space-separated flag list has this word. */
static int has_flag(const char *flags, const char *word)
{
	const size_t n = strlen(word);

	for (const char *p = flags; (p = strstr(p, word)) != NULL; p += n)
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/*
 * Detection agrees with the kernel, which clears the AVX / AVX-512 flags it
 * does not enable in XCR0. The lists are those of cpu.h. Run under SOTLS_CPU
 * too, this also shows that sotls_cpu_supports ignores it.
 */
static void test_matches_proc_cpuinfo(void **state)
{
	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	(void)state;
	if (f == NULL) {
		printf("test_cpu: no /proc/cpuinfo, skipping the cross-check\n");
		skip();
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found) {
		printf("test_cpu: no flags line in /proc/cpuinfo, skipping the cross-check\n");
		skip();
	}
	const char *fl = strchr(line, ':');
	assert_non_null(fl);

	enum sotls_cpu_level want = SOTLS_CPU_GENERIC;
	if (has_flag(fl, "aes") && has_flag(fl, "pclmulqdq") && has_flag(fl, "ssse3") &&
	    has_flag(fl, "sse4_1") && has_flag(fl, "avx")) {
		want = SOTLS_CPU_AESNI;
		if (has_flag(fl, "avx2") && has_flag(fl, "gfni")) {
			want = SOTLS_CPU_AVX2;
			if (has_flag(fl, "avx512f") && has_flag(fl, "avx512bw") &&
			    has_flag(fl, "avx512vl") && has_flag(fl, "vaes") &&
			    has_flag(fl, "vpclmulqdq"))
				want = SOTLS_CPU_AVX512;
		}
	}
	const enum sotls_cpu_level got = highest_supported();
	printf("test_cpu: /proc/cpuinfo suggests %s, sotls_cpu_supports says %s\n", NAMES[want],
	       NAMES[got]);
	if (got != want)
		fail_msg("highest supported level is %s, but the kernel's CPU flags give %s",
			 NAMES[got], NAMES[want]);

	/* The public-key features (and SHA-NI, for RFC 6979), capped with the
	 * level (SOTLS_CPU). */
	const enum sotls_cpu_level level = sotls_cpu_level();
	const bool mulx = has_flag(fl, "bmi2") && has_flag(fl, "adx");
	assert_int_equal(sotls_cpu_has_mulx_adx(), mulx && level != SOTLS_CPU_GENERIC);
	assert_int_equal(sotls_cpu_has_ifma(),
			 mulx && has_flag(fl, "avx512ifma") && level == SOTLS_CPU_AVX512);
	assert_int_equal(sotls_cpu_has_sha_ni(),
			 has_flag(fl, "sha_ni") && level != SOTLS_CPU_GENERIC);
}

static void test_chosen_level(void **state)
{
	const char *env = getenv("SOTLS_CPU");
	enum sotls_cpu_level cap = SOTLS_CPU_AVX512;

	(void)state;
	if (expect_cap != NULL) {
		/* Make sure the test set-up really passed the variable. */
		if (env == NULL || strcmp(env, expect_cap) != 0)
			fail_msg("expected SOTLS_CPU=%s in the environment, found %s", expect_cap,
				 env != NULL ? env : "(unset)");
		const int c = level_from_name(expect_cap);
		if (c < 0)
			fail_msg("--expect-cap %s is not a level name", expect_cap);
		cap = (enum sotls_cpu_level)c;
	} else if (env != NULL) {
		/* cpu.c reads an unknown value as generic, the safe choice. */
		const int c = level_from_name(env);
		printf("test_cpu: note: SOTLS_CPU=%s is set in the environment\n", env);
		cap = c >= 0 ? (enum sotls_cpu_level)c : SOTLS_CPU_GENERIC;
	}

	const enum sotls_cpu_level top = highest_supported();
	const enum sotls_cpu_level want = cap < top ? cap : top;
	const enum sotls_cpu_level got = sotls_cpu_level();

	printf("test_cpu: highest supported %s, cap %s, chosen %s\n", NAMES[top], NAMES[cap],
	       sotls_cpu_level_name(got) != NULL ? sotls_cpu_level_name(got) : "(invalid)");
	if (!sotls_cpu_supports(got))
		fail_msg("chosen level %d is not supported by this CPU", (int)got);
	if (got != want)
		fail_msg("chosen level is %s, expected %s (highest supported %s, cap %s)",
			 sotls_cpu_level_name(got), NAMES[want], NAMES[top], NAMES[cap]);
	/* Chosen once: later calls agree. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(sotls_cpu_level(), got);

	/* And the AEAD picks that implementation by default. */
	static const uint8_t key[16];
	struct sotls_aead a;
	char name[32];

	assert_int_equal(sotls_aead_init(&a, SOTLS_AEAD_ARIA_128_GCM, key, sizeof(key)), 0);
	snprintf(name, sizeof(name), "sotls-%s", NAMES[want]);
	if (strcmp(sotls_aead_impl_name(&a), name) != 0)
		fail_msg("sotls_aead_init chose %s, expected %s", sotls_aead_impl_name(&a), name);
	sotls_aead_clear(&a);
}

/* MULX/ADX follows the kernel's bmi2 and adx flags, and SOTLS_CPU=generic turns it off. */
static void test_mulx(void **state)
{
	static char line[8192];
	const char *env = getenv("SOTLS_CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	int want = 0;

	(void)state;
	if (f == NULL)
		skip();
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			want = has_flag(line, "bmi2") && has_flag(line, "adx");
			break;
		}
	fclose(f);
	if (env != NULL && level_from_name(env) <= 0)
		want = 0;
	printf("test_cpu: MULX/ADX %s\n", sotls_cpu_has_mulx() ? "used" : "not used");
	assert_int_equal(sotls_cpu_has_mulx(), want);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--expect-cap") == 0) {
		expect_cap = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--expect-cap generic|aesni|avx2|avx512]\n", argv[0]);
		return 2;
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_supports_is_monotonic),
		cmocka_unit_test(test_matches_proc_cpuinfo),
		cmocka_unit_test(test_chosen_level),
		cmocka_unit_test(test_mulx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

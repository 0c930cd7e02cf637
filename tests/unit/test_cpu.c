/*
 * CPU features and the choice of implementations (lib/crypto/cpu.h): the
 * feature names, detection against the kernel's own view (/proc/cpuinfo),
 * the SOTLS_CPU syntax, the features chosen under it, and that each table
 * picks by features rather than by a ladder of levels.
 *
 *   test_cpu                     the features must be those detected
 *                                (masked by SOTLS_CPU if that happens to be set)
 *   test_cpu --expect-env VALUE  run with SOTLS_CPU=VALUE (meson sets it): the
 *                                features must be the detected ones VALUE allows
 *   test_cpu --expect-detected NAMES
 *                                detection must give exactly NAMES (as
 *                                sotls_cpu_describe writes them), for an
 *                                emulated CPU, whose /proc/cpuinfo is the host's
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aead.h"
#include "cpu.h"
#include "sha256.h"
#include "sotls.h"

static const char *expect_env; /* VALUE from --expect-env, or NULL */
static const char *expect_detected; /* NAMES from --expect-detected, or NULL */

static void test_feature_names(void **state)
{
	(void)state;
	for (unsigned i = 0; i < SOTLS_CPU_FEATURES; i++) {
		const char *n = sotls_cpu_feature_name(i);

		assert_non_null(n);
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(n, sotls_cpu_feature_name(j));
	}
	assert_null(sotls_cpu_feature_name(SOTLS_CPU_FEATURES));

	char buf[256];
	assert_string_equal(sotls_cpu_describe(0, buf, sizeof(buf)), "-");
	assert_string_equal(sotls_cpu_describe(SOTLS_CPU_AES | SOTLS_CPU_GFNI, buf, sizeof(buf)),
			    "aes+gfni");
	/* Truncated, still terminated. */
	assert_int_equal(strlen(sotls_cpu_describe(SOTLS_CPU_ALL, buf, 10)), 9);
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
 * does not enable in XCR0; the feature names are its flag names. Run under
 * SOTLS_CPU too, this also shows that sotls_cpu_detected ignores it.
 */
static void test_matches_proc_cpuinfo(void **state)
{
	/* On an emulated CPU the kernel's file is the host's: the emulator's
	 * model is what was asked for (-cpu max: every extension it has). */
	if (expect_detected != NULL) {
		char buf[256];

		(void)state;
		assert_string_equal(sotls_cpu_describe(sotls_cpu_detected(), buf, sizeof(buf)),
				    expect_detected);
		return;
	}

	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;
	char buf[256];

	(void)state;
	if (f == NULL) {
		printf("test_cpu: no /proc/cpuinfo, skipping the cross-check\n");
		skip();
	}
	/* x86 calls the list "flags", arm64 "Features"; qemu-user shows the
	 * host's file, which then has no line of this architecture's. */
#if defined(__aarch64__)
	static const char KEY[] = "Features";
#else
	static const char KEY[] = "flags";
#endif
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, KEY, sizeof(KEY) - 1) == 0) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found) {
		printf("test_cpu: no %s line in /proc/cpuinfo, skipping the cross-check\n", KEY);
		skip();
	}
	const char *fl = strchr(line, ':');
	assert_non_null(fl);

	uint32_t want = 0;
	for (unsigned i = 0; i < SOTLS_CPU_FEATURES; i++)
		if (has_flag(fl, sotls_cpu_feature_name(i)))
			want |= 1u << i;
	printf("test_cpu: detected %s\n", sotls_cpu_describe(sotls_cpu_detected(), buf,
							      sizeof(buf)));
	if (sotls_cpu_detected() != want)
		fail_msg("detected 0x%x, but the kernel's CPU flags give 0x%x",
			 sotls_cpu_detected(), want);
}

/* The SOTLS_CPU syntax (cpu.h), parsed without the CPU's say. */
static void test_parse(void **state)
{
	static const struct {
		const char *value;
		bool ok;
		uint32_t allowed;
	} CASES[] = {
		{"-gfni,-avx512f", true, SOTLS_CPU_ALL & ~(SOTLS_CPU_GFNI | SOTLS_CPU_AVX512F)},
		{"-vaes", true, SOTLS_CPU_ALL & ~SOTLS_CPU_VAES},
		{"aes,pclmulqdq,avx", true, SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX},
		{"+sha_ni", true, SOTLS_CPU_SHA},
		/* In a list, avx2 is the feature; alone, the old level. */
		{"avx2,aes", true, SOTLS_CPU_AVX2 | SOTLS_CPU_AES},
		{"-avx2,+avx2,-vaes", true, SOTLS_CPU_ALL & ~SOTLS_CPU_VAES},
		{"avx512,-gfni", false, 0},
		/* The old levels keep their meaning. */
		{"generic", true, 0},
		{"aesni", true,
		 SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE | SOTLS_CPU_SHA |
			 SOTLS_CPU_BMI2 | SOTLS_CPU_ADX},
		{"avx2", true,
		 SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE | SOTLS_CPU_SHA |
			 SOTLS_CPU_BMI2 | SOTLS_CPU_ADX | SOTLS_CPU_AVX2 | SOTLS_CPU_GFNI},
		{"avx512", true, SOTLS_CPU_ALL},
		/* aarch64's names, as its kernel's Features line has them. */
		{"-aes,-pmull", true, SOTLS_CPU_ALL & ~(SOTLS_CPU_AES | SOTLS_CPU_PMULL)},
		{"asimd,pmull,sha2", true, SOTLS_CPU_ASIMD | SOTLS_CPU_PMULL | SOTLS_CPU_SHA2},
		{"-asimd", true, SOTLS_CPU_ALL & ~SOTLS_CPU_ASIMD},
		{"+sha2,aes", true, SOTLS_CPU_SHA2 | SOTLS_CPU_AES},
		{"neon", false, 0},
		/* Typos: nothing at all. */
		{"", false, 0},
		{"aesni2", false, 0},
		{"-gfni,,-vaes", false, 0},
		{"-gfni,avx9", false, 0},
		{"-", false, 0},
		{"AES", false, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		uint32_t got = 0xdead;
		const bool ok = sotls_cpu_parse(CASES[i].value, &got);

		if (ok != CASES[i].ok || got != CASES[i].allowed)
			fail_msg("SOTLS_CPU=\"%s\": %s 0x%x, expected %s 0x%x", CASES[i].value,
				 ok ? "ok" : "refused", got, CASES[i].ok ? "ok" : "refused",
				 CASES[i].allowed);
	}
}

static void test_chosen_features(void **state)
{
	const char *env = getenv("SOTLS_CPU");
	uint32_t allowed = SOTLS_CPU_ALL;
	char buf[256];

	(void)state;
	if (expect_env != NULL && (env == NULL || strcmp(env, expect_env) != 0))
		fail_msg("expected SOTLS_CPU=%s in the environment, found %s", expect_env,
			 env != NULL ? env : "(unset)");
	if (env != NULL) {
		printf("test_cpu: SOTLS_CPU=%s\n", env);
		(void)sotls_cpu_parse(env, &allowed);
	}
	const uint32_t want = sotls_cpu_detected() & allowed;
	printf("test_cpu: features used %s\n",
	       sotls_cpu_describe(sotls_cpu_features(), buf, sizeof(buf)));
	assert_int_equal(sotls_cpu_features(), want);
	/* Chosen once: later calls agree. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(sotls_cpu_features(), want);

	/* And the AEAD picks by them by default, needing nothing more. */
	static const uint8_t key[16];
	static const enum sotls_aead_alg ALGS[] = {SOTLS_AEAD_ARIA_128_GCM, SOTLS_AEAD_AES_128_GCM};
	for (size_t i = 0; i < sizeof(ALGS) / sizeof(ALGS[0]); i++) {
		struct sotls_aead a, b;

		assert_int_equal(sotls_aead_init(&a, ALGS[i], key, sizeof(key)), 0);
		assert_int_equal(sotls_aead_init_features(&b, ALGS[i], key, sizeof(key), want), 0);
		assert_string_equal(sotls_aead_impl_name(&a), sotls_aead_impl_name(&b));
		assert_int_equal(sotls_aead_impl_needs(&a) & ~want, 0);
		printf("test_cpu: %s runs %s\n", sotls_aead_alg_name(ALGS[i]),
		       sotls_aead_impl_name(&a));
		sotls_aead_clear(&a);
		sotls_aead_clear(&b);
	}
	/* The SHA-256 compression too. */
	const struct sotls_sha256_impl *sha = SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, want);
	assert_ptr_equal(sotls_sha256_blocks(), sha->blocks);
}

/* An ARMv8 CPU with the Cryptography Extensions (Cortex-A53 on). */
#define ARMV8_CRYPTO (SOTLS_CPU_ASIMD | SOTLS_CPU_AES | SOTLS_CPU_PMULL | SOTLS_CPU_SHA2)
/* ARIA's pick without PMULL. */
#define ARIA_NO_PMULL "sotls-aria-neon+ghash-generic"

/* What the AEAD table picks for a feature set, against what it should. */
struct aead_pick {
	enum sotls_aead_alg alg;
	uint32_t have;
	const char *want;
};

static void check_aead_picks(const struct aead_pick *p, size_t n)
{
	char name[64];
	for (size_t i = 0; i < n; i++) {
		sotls_aead_describe(p[i].alg, p[i].have, name, sizeof(name));
		if (strcmp(name, p[i].want) != 0)
			fail_msg("%s with %s: picked %s, expected %s", sotls_aead_alg_name(p[i].alg),
				 sotls_cpu_describe(p[i].have, (char[256]){0}, 256), name, p[i].want);
	}
}

#if defined(__x86_64__)
/* Feature sets of CPU families, as sets of this CPU-independent test. */
#define HASWELL                                                                            \
	(SOTLS_CPU_AES | SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE | SOTLS_CPU_AVX2 |          \
	 SOTLS_CPU_BMI2 | SOTLS_CPU_ADX)
#define ZEN3 (HASWELL | SOTLS_CPU_SHA | SOTLS_CPU_VAES | SOTLS_CPU_VPCLMUL)
#define ALDER_LAKE (ZEN3 | SOTLS_CPU_GFNI)
#define ICE_LAKE SOTLS_CPU_ALL

/*
 * Each table picks the first entry whose needs are all present, feature by
 * feature, whatever this CPU is: no GFNI means the best ARIA without GFNI
 * even with AVX-512, and SHA-NI is used without GFNI or AVX2.
 */
static void test_picks_by_features(void **state)
{
	static const struct aead_pick AEAD[] = {
		/* AVX2 without GFNI: ARIA and GHASH stitched, GHASH on xmm ... */
		{SOTLS_AEAD_ARIA_128_GCM, HASWELL, "sotls-gcm-aria-aesni-avx2"},
		{SOTLS_AEAD_ARIA_128_GCM, ZEN3 & ~SOTLS_CPU_VAES, "sotls-gcm-aria-aesni-avx2"},
		/* ... or, with VAES and VPCLMULQDQ, on ymm, AVX-512 or not. */
		{SOTLS_AEAD_ARIA_128_GCM, ZEN3, "sotls-gcm-aria-vaes-avx2"},
		/* Without PCLMULQDQ nothing is stitched. */
		{SOTLS_AEAD_ARIA_256_GCM, HASWELL & ~SOTLS_CPU_PCLMUL,
		 "sotls-aria-aesni-avx2+ghash-generic"},
		{SOTLS_AEAD_ARIA_128_GCM, HASWELL & ~SOTLS_CPU_AVX2, "sotls-aria-aesni-avx+ghash-pclmul"},
		{SOTLS_AEAD_ARIA_128_GCM, ALDER_LAKE, "sotls-aria-gfni-avx2+ghash-vpclmul-avx2"},
		{SOTLS_AEAD_ARIA_128_GCM, ICE_LAKE, "sotls-aria-gfni-avx512+ghash-vpclmul-avx512"},
		{SOTLS_AEAD_ARIA_128_GCM, ICE_LAKE & ~SOTLS_CPU_GFNI, "sotls-gcm-aria-vaes-avx2"},
		{SOTLS_AEAD_ARIA_256_GCM, ICE_LAKE & ~SOTLS_CPU_AVX512F,
		 "sotls-aria-gfni-avx2+ghash-vpclmul-avx2"},
		{SOTLS_AEAD_ARIA_256_GCM, ALDER_LAKE & ~SOTLS_CPU_VPCLMUL,
		 "sotls-aria-gfni-avx2+ghash-pclmul"},
		{SOTLS_AEAD_ARIA_128_GCM, SOTLS_CPU_GFNI | SOTLS_CPU_AVX2 | SOTLS_CPU_AVX |
						  SOTLS_CPU_SSSE3,
		 "sotls-aria-gfni-avx2+ghash-generic"},
		{SOTLS_AEAD_ARIA_128_GCM, 0, "sotls-aria-generic+ghash-generic"},
		{SOTLS_AEAD_AES_128_GCM, ICE_LAKE, "sotls-gcm-aes-vaes-avx512"},
		/* VAES without AVX-512 (Zen 3, Alder Lake): the ymm loop. */
		{SOTLS_AEAD_AES_128_GCM, ZEN3, "sotls-gcm-aes-vaes-avx2"},
		{SOTLS_AEAD_AES_256_GCM, ALDER_LAKE, "sotls-gcm-aes-vaes-avx2"},
		{SOTLS_AEAD_AES_256_GCM, ICE_LAKE & ~SOTLS_CPU_AVX512BW, "sotls-gcm-aes-vaes-avx2"},
		/* No VAES (Haswell to Cascade Lake), or VAES without VPCLMULQDQ:
		 * the stitched AES-NI loop. */
		{SOTLS_AEAD_AES_128_GCM, HASWELL, "sotls-gcm-aes-aesni-pclmul"},
		{SOTLS_AEAD_AES_256_GCM, ZEN3 & ~SOTLS_CPU_VAES, "sotls-gcm-aes-aesni-pclmul"},
		{SOTLS_AEAD_AES_128_GCM, ZEN3 & ~SOTLS_CPU_VPCLMUL, "sotls-gcm-aes-aesni-pclmul"},
		{SOTLS_AEAD_AES_256_GCM, ICE_LAKE & ~SOTLS_CPU_VAES, "sotls-gcm-aes-aesni-pclmul"},
		/* Without PCLMULQDQ nothing is stitched. */
		{SOTLS_AEAD_AES_128_GCM, HASWELL & ~SOTLS_CPU_PCLMUL, "sotls-aes-aesni+ghash-generic"},
		{SOTLS_AEAD_AES_256_GCM, 0, "sotls-aes-ct64+ghash-generic"},
		{SOTLS_AEAD_AES_256_GCM, SOTLS_CPU_PCLMUL | SOTLS_CPU_AVX_BASE,
		 "sotls-aes-ct64+ghash-pclmul"},
	};

	(void)state;
	check_aead_picks(AEAD, sizeof(AEAD) / sizeof(AEAD[0]));

	/* SHA-NI needs neither GFNI nor AVX. */
	const uint32_t sha_only = SOTLS_CPU_SHA | SOTLS_CPU_SSSE3 | SOTLS_CPU_SSE41;
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, sha_only)->impl.name, "shani");
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, HASWELL)->impl.name, "generic");
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, ZEN3)->impl.name, "shani");
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, ICE_LAKE & ~SOTLS_CPU_GFNI)
				    ->impl.name,
			    "shani");
}
#elif defined(__aarch64__)
/* Each of aarch64's optional extensions is picked up on its own. */
static void test_picks_by_features(void **state)
{
	static const struct aead_pick AEAD[] = {
		{SOTLS_AEAD_AES_128_GCM, ARMV8_CRYPTO, "sotls-aes-armv8ce+ghash-pmull"},
		{SOTLS_AEAD_AES_256_GCM, ARMV8_CRYPTO & ~SOTLS_CPU_PMULL,
		 "sotls-aes-armv8ce+ghash-generic"},
		{SOTLS_AEAD_AES_128_GCM, ARMV8_CRYPTO & ~SOTLS_CPU_AES, "sotls-aes-ct64+ghash-pmull"},
		/* Nothing of it without Advanced SIMD, which every file uses. */
		{SOTLS_AEAD_AES_128_GCM, ARMV8_CRYPTO & ~SOTLS_CPU_ASIMD,
		 "sotls-aes-ct64+ghash-generic"},
		{SOTLS_AEAD_AES_128_GCM, 0, "sotls-aes-ct64+ghash-generic"},
		{SOTLS_AEAD_ARIA_128_GCM, ARMV8_CRYPTO & ~SOTLS_CPU_PMULL, ARIA_NO_PMULL},
		{SOTLS_AEAD_ARIA_128_GCM, 0, "sotls-aria-generic+ghash-generic"},
		{SOTLS_AEAD_ARIA_256_GCM, ARMV8_CRYPTO, "sotls-aria-neon+ghash-pmull"},
		{SOTLS_AEAD_ARIA_128_GCM, ARMV8_CRYPTO & ~SOTLS_CPU_AES,
		 "sotls-aria-generic+ghash-pmull"},
		/* x86's features mean nothing here. */
		{SOTLS_AEAD_AES_128_GCM, SOTLS_CPU_ALL & ~ARMV8_CRYPTO,
		 "sotls-aes-ct64+ghash-generic"},
	};

	(void)state;
	check_aead_picks(AEAD, sizeof(AEAD) / sizeof(AEAD[0]));
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, ARMV8_CRYPTO)->impl.name,
			    "armv8");
	assert_string_equal(
		SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, SOTLS_CPU_SHA2 | SOTLS_CPU_ASIMD)->impl.name,
		"armv8");
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, ARMV8_CRYPTO & ~SOTLS_CPU_SHA2)
				    ->impl.name,
			    "generic");
}
#else
/* Only the portable code is built here. */
static void test_picks_by_features(void **state)
{
	static const struct aead_pick AEAD[] = {
		{SOTLS_AEAD_ARIA_128_GCM, SOTLS_CPU_ALL, "sotls-aria-generic+ghash-generic"},
		{SOTLS_AEAD_AES_128_GCM, SOTLS_CPU_ALL, "sotls-aes-ct64+ghash-generic"},
	};

	(void)state;
	check_aead_picks(AEAD, sizeof(AEAD) / sizeof(AEAD[0]));
	assert_string_equal(SOTLS_CPU_PICK(SOTLS_SHA256_IMPLS, SOTLS_CPU_ALL)->impl.name,
			    "generic");
}
#endif

/* A feature set with a feature this CPU lacks is refused, not downgraded. */
static void test_init_refuses_missing(void **state)
{
	static const uint8_t key[16];
	struct sotls_aead a;

	(void)state;
	for (unsigned i = 0; i < SOTLS_CPU_FEATURES; i++) {
		const uint32_t f = 1u << i;
		const int rc = sotls_aead_init_features(&a, SOTLS_AEAD_AES_128_GCM, key, 16, f);

		assert_int_equal(rc, (sotls_cpu_detected() & f) ? 0 : SOTLS_CRYPTO_UNSUPPORTED);
	}
	assert_int_equal(sotls_aead_init_features(&a, SOTLS_AEAD_AES_128_GCM, key, 16,
						  1u << SOTLS_CPU_FEATURES),
			 SOTLS_CRYPTO_BAD_ARG);
	sotls_aead_clear(&a);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--expect-env") == 0) {
		expect_env = argv[2];
	} else if (argc == 3 && strcmp(argv[1], "--expect-detected") == 0) {
		expect_detected = argv[2];
	} else if (argc != 1) {
		fprintf(stderr,
			"usage: %s [--expect-env SOTLS_CPU-VALUE | --expect-detected NAMES]\n",
			argv[0]);
		return 2;
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_names),
		cmocka_unit_test(test_matches_proc_cpuinfo),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_chosen_features),
		cmocka_unit_test(test_picks_by_features),
		cmocka_unit_test(test_init_refuses_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

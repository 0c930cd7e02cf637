/* The cipher suites sotls speaks, and the parser for suite lists. */
#include <string.h>
#include <strings.h>

#include "ciphers.h"
#include "handshake.h"

/*
 * In the default order of preference (see DEFAULT_SUITES in config.c): ARIA
 * first, then AES; within each, ECDSA before RSA, 128-bit before 256-bit
 * keys. sotls_supported_suites lists them in this order too.
 */
static const struct sotls_suite SUITES[] = {
	{0xC05C, "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256", "ECDHE-ECDSA-ARIA128-GCM-SHA256",
	 SOTLS_AEAD_ARIA_128_GCM, SOTLS_PRF_SHA256},
	{0xC060, "TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256", "ECDHE-ARIA128-GCM-SHA256",
	 SOTLS_AEAD_ARIA_128_GCM, SOTLS_PRF_SHA256},
	{0xC05D, "TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384", "ECDHE-ECDSA-ARIA256-GCM-SHA384",
	 SOTLS_AEAD_ARIA_256_GCM, SOTLS_PRF_SHA384},
	{0xC061, "TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384", "ECDHE-ARIA256-GCM-SHA384",
	 SOTLS_AEAD_ARIA_256_GCM, SOTLS_PRF_SHA384},
	{0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256",
	 SOTLS_AEAD_AES_128_GCM, SOTLS_PRF_SHA256},
	{0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
	 SOTLS_AEAD_AES_128_GCM, SOTLS_PRF_SHA256},
	{0xC02C, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384",
	 SOTLS_AEAD_AES_256_GCM, SOTLS_PRF_SHA384},
	{0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
	 SOTLS_AEAD_AES_256_GCM, SOTLS_PRF_SHA384},
};
#define NSUITES (sizeof(SUITES) / sizeof(SUITES[0]))
/* A list naming every suite must fit a configuration's suite array. */
_Static_assert(NSUITES <= SOTLS_MAX_SUITES, "SOTLS_MAX_SUITES too small for the suite table");

static const char *const SUITE_NAMES[NSUITES + 1] = {
	"TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256",
	"TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	NULL,
};

SOTLS_API const char *const *sotls_supported_suites(void)
{
	return SUITE_NAMES;
}

const struct sotls_suite *sotls_suite_by_id(uint16_t id)
{
	for (size_t i = 0; i < NSUITES; i++)
		if (SUITES[i].id == id)
			return &SUITES[i];
	return NULL;
}

static void add_id(int ids[SOTLS_MAX_SUITES + 1], size_t *n, int id)
{
	for (size_t i = 0; i < *n; i++)
		if (ids[i] == id)
			return;
	if (*n < SOTLS_MAX_SUITES)
		ids[(*n)++] = id;
}

/* Adds the suites one name stands for; false if it names none. */
static bool add_name(int ids[SOTLS_MAX_SUITES + 1], size_t *n, const char *name, size_t len)
{
#define ALG(alg, ...) alg,
	static const enum sotls_aead_alg ALGS[] = {SOTLS_CIPHERS(ALG)};
	for (size_t g = 0; g < sizeof(ALGS) / sizeof(ALGS[0]); g++) {
		const char *group = sotls_aead_alg_name(ALGS[g]);
		if (strlen(group) == len && strncasecmp(group, name, len) == 0) {
			for (size_t i = 0; i < NSUITES; i++)
				if (SUITES[i].alg == ALGS[g])
					add_id(ids, n, SUITES[i].id);
			return true;
		}
	}
	for (size_t i = 0; i < NSUITES; i++) {
		if ((strlen(SUITES[i].iana) == len && strncasecmp(SUITES[i].iana, name, len) == 0) ||
		    (strlen(SUITES[i].openssl) == len &&
		     strncasecmp(SUITES[i].openssl, name, len) == 0)) {
			add_id(ids, n, SUITES[i].id);
			return true;
		}
	}
	return false;
}

int sotls_suites_parse(const char *list, int ids[SOTLS_MAX_SUITES + 1])
{
	int tmp[SOTLS_MAX_SUITES + 1] = {0};
	size_t n = 0;

	if (list == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	const char *p = list;
	while (*p != '\0') {
		size_t len = strcspn(p, ":, \t");
		if (len > 0 && !add_name(tmp, &n, p, len))
			return SOTLS_ERR_UNKNOWN_SUITE;
		p += len;
		if (*p != '\0')
			p++;
	}
	if (n == 0)
		return SOTLS_ERR_UNKNOWN_SUITE;
	tmp[n] = 0;
	memcpy(ids, tmp, sizeof(tmp));
	return 0;
}

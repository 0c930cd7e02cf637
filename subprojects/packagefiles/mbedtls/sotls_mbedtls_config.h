/*
 * Added to upstream's default config through MBEDTLS_USER_CONFIG_FILE, so
 * config.h stays untouched. ARIA is off upstream and in Debian's build; sotls
 * exists to speak the ARIA-GCM suites.
 */
#define MBEDTLS_ARIA_C

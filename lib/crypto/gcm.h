/* The GCM engine's view of one implementation level (internal to lib/crypto). */
#ifndef SOTLS_CRYPTO_GCM_H
#define SOTLS_CRYPTO_GCM_H

#include "aria.h"
#include "ghash.h"

struct sotls_gcm_impl {
	const char *name;
	sotls_aria_ctr32_fn ctr32;
	sotls_ghash_init_fn ghash_init;
	sotls_ghash_update_fn ghash_update;
};

#endif

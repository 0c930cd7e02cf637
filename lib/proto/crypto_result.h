/*
 * lib/crypto's results (crypto_err.h) as the library's errors, for the
 * layers that pass one on unchanged. A layer that gives a result its own
 * meaning (the record layer's bad_record_mac, resumption's refused ticket)
 * decides that itself.
 */
#ifndef SOTLS_PROTO_CRYPTO_RESULT_H
#define SOTLS_PROTO_CRYPTO_RESULT_H

#include "crypto_err.h"
#include "sotls.h"

static inline int sotls_err_from_crypto(int rc)
{
	switch (rc) {
	case 0: return 0;
	case SOTLS_CRYPTO_UNSUPPORTED: return SOTLS_ERR_UNSUPPORTED;
	case SOTLS_CRYPTO_BAD_TAG: return SOTLS_ERR_BAD_RECORD_MAC;
	case SOTLS_CRYPTO_BAD_KEY: return SOTLS_ERR_KEY_LOAD;
	case SOTLS_CRYPTO_FAULT: return SOTLS_ERR_PRIVATE_KEY_CHECK;
	case SOTLS_CRYPTO_NO_MEMORY: return SOTLS_ERR_OUT_OF_MEMORY;
	case SOTLS_CRYPTO_NO_RANDOM: return SOTLS_ERR_SYSCALL;
	default: return SOTLS_ERR_INVALID_ARGUMENT;
	}
}

#endif

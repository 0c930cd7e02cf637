/*
 * What lib/crypto's functions return: 0, or one of these. They say what
 * went wrong in the primitive's terms; what that means for TLS is decided
 * above (a tag that fails is bad_record_mac to the record layer and a
 * refused ticket to resumption), so lib/crypto includes no public header.
 * lib/proto/crypto_result.h turns them into SOTLS_ERR_* where a layer
 * passes one on unchanged.
 */
#ifndef SOTLS_CRYPTO_ERR_H
#define SOTLS_CRYPTO_ERR_H

enum sotls_crypto_err {
	SOTLS_CRYPTO_BAD_ARG = -1,     /* a pointer, length or key size it cannot take */
	SOTLS_CRYPTO_UNSUPPORTED = -2, /* a CPU feature, key shape or size it does not do */
	SOTLS_CRYPTO_BAD_TAG = -3,     /* authentication failed: nothing decrypted is left */
	SOTLS_CRYPTO_BAD_KEY = -4,     /* the parts given do not make a key */
	SOTLS_CRYPTO_FAULT = -5,       /* a private-key result failed its check */
	SOTLS_CRYPTO_NO_MEMORY = -6,
	SOTLS_CRYPTO_NO_RANDOM = -7, /* getrandom failed */
};

#endif

/*
 * mbedTLS's SHA-256 compression (MBEDTLS_SHA256_PROCESS_ALT in
 * sotls_mbedtls_config.h) on sotls's (sha256.h): the SHA-NI one where the
 * CPU has it. mbedTLS keeps the buffering and padding and calls this once
 * a 64-byte block.
 */
#include <mbedtls/sha256.h>

#include "mbedtls_internals.h"
#include "sha256.h"

int mbedtls_internal_sha256_process(mbedtls_sha256_context *ctx, const unsigned char data[64])
{
	sotls_sha256_blocks()(sotls_mbed_sha256_state(ctx), data, 1);
	return 0;
}

/*
 * Our side of the handshake on the wire: mbedTLS sends every record of a
 * flight by itself; they are gathered here and go out in one send when
 * mbedTLS turns to reading (or the handshake ends or fails), as OpenSSL
 * sends a flight: one TCP segment instead of three or four, and a third of
 * the handshake's sends. On an engine connection the application takes
 * them (sotls_hs_out).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include "hs_internal.h"

/* mbedTLS sends every record of a flight by itself; they are gathered
 * here and go out in one send when mbedTLS turns to reading (or the
 * handshake ends or fails), as OpenSSL sends a flight: one TCP segment
 * instead of three or four, and a third of the handshake's sends. */
int sotls_hs_sock_send(struct sotls_hs *hs, const uint8_t *buf, size_t len)
{
	if (len > SOTLS_HS_MAX_FLIGHT || hs->flight_len + len > SOTLS_HS_MAX_FLIGHT)
		return sotls_hs_fail(hs, SOTLS_ERR_INTERNAL, SOTLS_ALERT_INTERNAL_ERROR,
				     "our handshake flight would exceed %u bytes (a certificate chain "
				     "that large cannot be sent)",
				     SOTLS_HS_MAX_FLIGHT);
	if (hs->flight_len + len > hs->flight_cap) {
		size_t cap = hs->flight_cap == 0 ? 4096 : hs->flight_cap;
		while (cap < hs->flight_len + len)
			cap *= 2;
		uint8_t *p = realloc(hs->flight, cap);
		if (p == NULL)
			return MBEDTLS_ERR_SSL_ALLOC_FAILED;
		hs->flight = p;
		hs->flight_cap = cap;
	}
	memcpy(hs->flight + hs->flight_len, buf, len);
	hs->flight_len += len;
	return (int)len;
}

int sotls_hs_flush(struct sotls_hs *hs)
{
	int rc = sotls_wire_drain(hs->wire, hs->flight, &hs->flight_sent, hs->flight_len, 0);
	if (rc == SOTLS_WANT_WRITE)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	if (rc < 0) {
		hs->bio_errno = errno;
		return MBEDTLS_ERR_NET_SEND_FAILED;
	}
	hs->flight_len = hs->flight_sent = 0;
	return 0;
}

const uint8_t *sotls_hs_out(const struct sotls_hs *hs, size_t *len)
{
	*len = hs->flight_len - hs->flight_sent;
	return *len > 0 ? hs->flight + hs->flight_sent : NULL;
}

int sotls_hs_out_taken(struct sotls_hs *hs, size_t n)
{
	if (n > hs->flight_len - hs->flight_sent)
		return SOTLS_ERR_INVALID_ARGUMENT;
	hs->flight_sent += n;
	if (hs->flight_sent == hs->flight_len)
		hs->flight_len = hs->flight_sent = 0;
	return 0;
}

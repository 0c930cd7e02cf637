/*
 * The key log (sotls_config_set_keylog): the NSS key log line, which
 * Wireshark and every SSLKEYLOGFILE tool read, for a TLS 1.2 handshake:
 *   CLIENT_RANDOM <32-byte client random> <48-byte master secret>
 * both in lowercase hex. Built on the stack and wiped once the callback has
 * it, so the secret lives no longer here than in the handshake.
 */
#include <string.h>

#include "hs_internal.h"
#include "util.h"

#define LABEL "CLIENT_RANDOM "

static char *hex(char *out, const uint8_t *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		*out++ = digits[in[i] >> 4];
		*out++ = digits[in[i] & 15];
	}
	return out;
}

void sotls_hs_keylog(const struct sotls_hs *hs)
{
	if (hs->cfg->keylog_cb == NULL)
		return;
	char line[sizeof(LABEL) - 1 + 2 * sizeof(hs->client_random) + 1 + 2 * sizeof(hs->master) + 1];
	char *p = line;
	memcpy(p, LABEL, sizeof(LABEL) - 1);
	p = hex(p + sizeof(LABEL) - 1, hs->client_random, sizeof(hs->client_random));
	*p++ = ' ';
	p = hex(p, hs->master, sizeof(hs->master));
	*p = '\0';
	hs->cfg->keylog_cb(hs->conn, line, hs->cfg->keylog_arg);
	sotls_wipe(line, sizeof(line));
}

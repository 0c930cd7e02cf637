/*
 * ALPN (RFC 7301). A client's list goes to mbedTLS, which offers it and
 * checks the server's answer. A server's choice is made here, from the
 * ClientHello's list that msg_check.c has already checked for syntax, and
 * before any reply: by the server's own order or its callback, with the
 * policy deciding what no overlap means. mbedTLS then writes the chosen name
 * into the ServerHello (hs.c, after the ClientHello step).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_internal.h"

/* RFC 7301 §3.1: opaque ProtocolName<1..2^8-1>. */
#define MAX_PROTOCOL 255

void sotls_alpn_free(struct sotls_config *cfg)
{
	if (cfg->alpn == NULL)
		return;
	for (char **p = cfg->alpn; *p != NULL; p++)
		free(*p);
	free(cfg->alpn);
	cfg->alpn = NULL;
}

SOTLS_API int sotls_config_set_alpn(struct sotls_config *cfg, const char *const *protos, size_t n)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	if (n > SOTLS_ALPN_MAX || (n > 0 && protos == NULL))
		return SOTLS_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < n; i++) {
		/* RFC 7301 §3.1: "Empty strings MUST NOT be included". */
		if (protos[i] == NULL || protos[i][0] == '\0' || strlen(protos[i]) > MAX_PROTOCOL)
			return SOTLS_ERR_INVALID_ARGUMENT;
		for (size_t j = 0; j < i; j++)
			if (strcmp(protos[i], protos[j]) == 0)
				return SOTLS_ERR_INVALID_ARGUMENT;
	}
	char **list = NULL;
	if (n > 0) {
		list = calloc(n + 1, sizeof(*list));
		if (list == NULL)
			return SOTLS_ERR_OUT_OF_MEMORY;
		for (size_t i = 0; i < n; i++) {
			if ((list[i] = strdup(protos[i])) == NULL) {
				struct sotls_config partial = {.alpn = list};
				sotls_alpn_free(&partial);
				return SOTLS_ERR_OUT_OF_MEMORY;
			}
		}
	}
	sotls_alpn_free(cfg);
	cfg->alpn = list;
	return 0;
}

SOTLS_API int sotls_config_set_alpn_policy(struct sotls_config *cfg,
					   enum sotls_alpn_policy policy)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (policy != SOTLS_ALPN_STRICT && policy != SOTLS_ALPN_LENIENT &&
	    policy != SOTLS_ALPN_REQUIRED)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->alpn_policy = policy;
	return 0;
}

/* One selection callback at a time, of either form: setting one drops the
 * other, so by_callback never has to choose between two answers. */
static int set_select(struct sotls_config *cfg, sotls_alpn_select_cb cb,
		      sotls_alpn_select_conn_cb conn_cb, void *arg)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->alpn_cb = cb;
	cfg->alpn_conn_cb = conn_cb;
	cfg->alpn_cb_arg = cb != NULL || conn_cb != NULL ? arg : NULL;
	return 0;
}

SOTLS_API int sotls_config_set_alpn_select(struct sotls_config *cfg, sotls_alpn_select_cb cb,
					   void *arg)
{
	return set_select(cfg, cb, NULL, arg);
}

SOTLS_API int sotls_config_set_alpn_select_conn(struct sotls_config *cfg,
						sotls_alpn_select_conn_cb cb, void *arg)
{
	return set_select(cfg, NULL, cb, arg);
}

/* ---- the server's choice ---- */

/* The next name of the checked protocol_name_list from *at (a length byte
 * and that many bytes); false at its end. */
static bool next_offered(const struct sotls_hs *hs, size_t *at, const uint8_t **name, size_t *len)
{
	if (*at >= hs->alpn_offer_len)
		return false;
	*len = hs->alpn_offer[*at];
	*name = hs->alpn_offer + *at + 1;
	*at += 1 + *len;
	return true;
}

static int choose(struct sotls_hs *hs, const uint8_t *name, size_t len)
{
	memcpy(hs->alpn, name, len);
	hs->alpn[len] = '\0';
	return 0;
}

/* RFC 7301 §3.2: "the server SHALL select the most highly preferred
 * protocol that it supports and that is also advertised by the client". */
static int by_preference(struct sotls_hs *hs)
{
	for (char **p = hs->cfg->alpn; *p != NULL; p++) {
		size_t plen = strlen(*p), len;
		const uint8_t *name;
		for (size_t at = 0; next_offered(hs, &at, &name, &len);)
			if (len == plen && memcmp(name, *p, len) == 0)
				return choose(hs, name, len);
	}
	return 0;
}

/* The callback sees the offered names as C strings, in the client's order;
 * a name holding a NUL cannot be one, so it is left out. */
static int by_callback(struct sotls_hs *hs)
{
	size_t n = 0, len;
	const uint8_t *name;
	for (size_t at = 0; next_offered(hs, &at, &name, &len);)
		n++;
	/* n pointers, then the names with their NULs: the list's own length
	 * bounds the copies. */
	char **offered = calloc(1, n * sizeof(char *) + hs->alpn_offer_len);
	if (offered == NULL)
		return sotls_hs_fail(hs, SOTLS_ERR_OUT_OF_MEMORY, SOTLS_ALERT_INTERNAL_ERROR,
				     "no memory for the client's ALPN list");
	char *text = (char *)(offered + n);
	size_t k = 0;
	for (size_t at = 0; next_offered(hs, &at, &name, &len);) {
		if (memchr(name, '\0', len) != NULL)
			continue;
		memcpy(text, name, len);
		text[len] = '\0';
		offered[k++] = text;
		text += len + 1;
	}
	const struct sotls_config *cfg = hs->cfg;
	const char *const *list = (const char *const *)offered;
	int pick = cfg->alpn_conn_cb != NULL
			   ? cfg->alpn_conn_cb(hs->conn, cfg->alpn_cb_arg, hs->sni, list, k)
			   : cfg->alpn_cb(cfg->alpn_cb_arg, hs->sni, list, k);
	int rc = 0;
	if (pick >= 0 && (size_t)pick < k)
		choose(hs, (const uint8_t *)offered[pick], strlen(offered[pick]));
	else if (pick != SOTLS_ALPN_NONE)
		rc = sotls_hs_fail(hs, SOTLS_ERR_INVALID_ARGUMENT, SOTLS_ALERT_INTERNAL_ERROR,
				   "the ALPN callback chose %d of %zu protocols", pick, k);
	free(offered);
	return rc;
}

int sotls_alpn_choose(struct sotls_hs *hs)
{
	const struct sotls_config *cfg = hs->cfg;
	hs->alpn[0] = '\0';
	bool callback = cfg->alpn_cb != NULL || cfg->alpn_conn_cb != NULL;
	if (cfg->alpn == NULL && !callback)
		return 0; /* no ALPN here: RFC 5246 §7.4.1.4, the extension goes unanswered */
	if (!hs->alpn_offered)
		return cfg->alpn_policy != SOTLS_ALPN_REQUIRED
			       ? 0
			       : sotls_hs_fail(hs, SOTLS_ERR_NO_APPLICATION_PROTOCOL,
					       SOTLS_ALERT_NO_APPLICATION_PROTOCOL,
					       "the client offers no ALPN protocol and the server "
					       "requires one");
	int rc = callback ? by_callback(hs) : by_preference(hs);
	if (rc != 0 || hs->alpn[0] != '\0' || cfg->alpn_policy == SOTLS_ALPN_LENIENT)
		return rc;
	/* RFC 7301 §3.2: "In the event that the server supports no protocols
	 * that the client advertises, then the server SHALL respond with a
	 * fatal "no_application_protocol" alert." */
	char offered[96] = "";
	size_t used = 0, len;
	const uint8_t *name;
	for (size_t at = 0; next_offered(hs, &at, &name, &len) && used < sizeof(offered);)
		used += (size_t)snprintf(offered + used, sizeof(offered) - used, "%s%.*s",
					 used ? "," : "", (int)len, (const char *)name);
	return sotls_hs_fail(hs, SOTLS_ERR_NO_APPLICATION_PROTOCOL,
			     SOTLS_ALERT_NO_APPLICATION_PROTOCOL,
			     "none of the protocols the client offers over ALPN (%s) is one the "
			     "server has",
			     offered);
}

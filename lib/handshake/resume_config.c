/*
 * The setters of sotls.h's "Session resumption". The ticket keys are the
 * one part of a configuration that may change while connections use it
 * (a fleet rotates them): they live behind their own lock
 * (ticket_keys.c), so sotls_config_add_ticket_key is allowed at any time.
 */
#include <errno.h>
#include <string.h>

#include "handshake.h"
#include "resume.h"

SOTLS_API int sotls_config_set_session_cache(struct sotls_config *cfg, size_t max_sessions,
					     size_t max_bytes, unsigned lifetime)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	struct sotls_resume_config *r = &cfg->resume;
	r->cache_on = max_sessions != 0;
	if (max_sessions != 0)
		r->cache_sessions = max_sessions;
	if (max_bytes != 0)
		r->cache_bytes = max_bytes;
	if (lifetime != 0)
		r->cache_lifetime = lifetime;
	return 0;
}

SOTLS_API int sotls_config_set_session_store(struct sotls_config *cfg, sotls_session_put_fn put,
					     sotls_session_get_fn get, sotls_session_del_fn del,
					     void *arg)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if ((put == NULL) != (get == NULL))
		return SOTLS_ERR_INVALID_ARGUMENT;
	struct sotls_resume_config *r = &cfg->resume;
	r->put = put;
	r->get = get;
	r->del = put != NULL ? del : NULL;
	r->store_arg = put != NULL ? arg : NULL;
	if (put != NULL)
		r->cache_on = true;
	return 0;
}

SOTLS_API int sotls_config_set_session_tickets(struct sotls_config *cfg, int enable,
					       unsigned lifetime)
{
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->resume.tickets = enable != 0;
	if (lifetime != 0)
		cfg->resume.ticket_lifetime = lifetime;
	return 0;
}

SOTLS_API int sotls_config_add_ticket_key(struct sotls_config *cfg,
					  const struct sotls_ticket_key *key)
{
	if (cfg == NULL || key == NULL || cfg->role != SOTLS_ROLE_SERVER)
		return SOTLS_ERR_INVALID_ARGUMENT;
	return sotls_ticket_keyring_add(cfg->resume.keys, key);
}

SOTLS_API int sotls_config_set_ticket_key_file(struct sotls_config *cfg, const char *path)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (path == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	rc = sotls_ticket_keyring_set_file(cfg->resume.keys, path);
	if (rc == SOTLS_ERR_TICKET_KEYS || rc == SOTLS_ERR_SYSCALL) {
		int e = errno; /* documented: the caller reads it after the call */
		sotls_config_fail(cfg, rc, "%s: %s", path,
				  rc == SOTLS_ERR_TICKET_KEYS ? sotls_ticket_key_refusal(e)
							      : strerror(e));
		errno = e;
	}
	return rc;
}

SOTLS_API int sotls_config_set_ticket_key_callback(struct sotls_config *cfg,
						   sotls_ticket_key_fn fn, void *arg)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (fn == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	sotls_ticket_keyring_set_callback(cfg->resume.keys, fn, arg);
	return 0;
}

SOTLS_API int sotls_config_set_ticket_rotation(struct sotls_config *cfg, unsigned rotate_every)
{
	int rc = sotls_config_server_writable(cfg);
	if (rc != 0)
		return rc;
	if (rotate_every == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	cfg->resume.rotate_every = rotate_every;
	return 0;
}

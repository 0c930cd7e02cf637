#include "server_config.h"

#include <stdio.h>

#include "keylog_env.h"
#include "server_setup.h"

struct sotls_config *server_config_build(struct server_config_opts *o, bool http,
					 bool say_ephemeral)
{
	static const char *const alpn[] = {"http/1.1"};
	struct sotls_config *cfg = sotls_config_new(SOTLS_ROLE_SERVER);
	if (cfg == NULL)
		return NULL;
	int rc = server_cert_setup(cfg, o->cert[0], o->key[0], say_ephemeral, "-k / --insecure");
	for (int i = 1; rc == 0 && i < o->n_cert; i++) {
		rc = sotls_config_add_cert_file(cfg, o->cert[i], o->key[i], NULL, 0);
		if (rc > 0)
			rc = 0;
	}
	if (rc == SERVER_CERT_EPHEMERAL_FAILED) {
		sotls_config_free(cfg);
		return NULL;
	}
	if (rc == 0 && http)
		rc = sotls_config_set_alpn(cfg, alpn, 1);
	if (rc == 0 && o->require_alpn)
		rc = sotls_config_set_alpn_policy(cfg, SOTLS_ALPN_REQUIRED);
	if (rc == 0 && o->sni_strict)
		rc = sotls_config_set_sni_policy(cfg, SOTLS_SNI_REFUSE_UNKNOWN);
	if (rc == 0 && o->cipher != NULL)
		rc = sotls_config_set_suites(cfg, o->cipher);
	if (rc == 0)
		rc = sotls_config_set_ktls(cfg, o->ktls);
	if (rc == 0)
		rc = sotls_config_set_sendfile_mode(cfg, o->sendfile);
	if (rc != 0)
		print_config_error("configuration", cfg, rc);
	if (rc == 0 && (keylog_from_env(cfg) != 0 || server_log_setup(cfg) != 0))
		rc = -1; /* the message is out */
	if (rc == 0 && server_resume_apply(cfg, &o->resume) != 0)
		rc = -1; /* the message is out */
	if (rc != 0) {
		sotls_config_free(cfg);
		return NULL;
	}
	return cfg;
}

void server_config_reload(struct server_config_opts *o, bool http, bool say_ephemeral,
			  pthread_mutex_t *lock, struct sotls_config **cur)
{
	struct sotls_config *cfg = server_config_build(o, http, say_ephemeral);
	if (cfg == NULL) {
		fprintf(stderr, "SIGHUP: reload failed (the reason is above), keeping the "
				"configuration in use\n");
		return;
	}
	pthread_mutex_lock(lock);
	struct sotls_config *old = *cur;
	*cur = cfg;
	pthread_mutex_unlock(lock);
	sotls_config_free(old);
	printf("SIGHUP: reloaded %d certificate(s)\n", o->n_cert);
	fflush(stdout);
}

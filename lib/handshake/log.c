/*
 * The log (sotls_config_set_log): what the library decides on its own, told
 * to the application. Callers test cfg->log_cb first (SOTLS_LOG), so a
 * configuration without a callback formats nothing.
 */
#include <stdarg.h>
#include <stdio.h>

#include "handshake.h"

SOTLS_API int sotls_config_set_log(struct sotls_config *cfg, sotls_log_cb cb, void *arg)
{
	/* Fixed before use: connections on other threads read it unlocked. */
	int rc = sotls_config_writable(cfg);
	if (rc != 0)
		return rc;
	cfg->log_cb = cb;
	cfg->log_arg = cb != NULL ? arg : NULL;
	return 0;
}

void sotls_log_emit(const struct sotls_config *cfg, const struct sotls_conn *c,
		    enum sotls_log_event event, const char *fmt, ...)
{
	/* One line; a longer one is cut rather than allocated for. */
	char line[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cfg->log_cb(c, event, line, cfg->log_arg);
}

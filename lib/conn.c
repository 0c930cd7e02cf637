/*
 * The connection: runs the handshake through lib/handshake, picks the path
 * of each direction (userspace for now; kTLS comes later), and routes send,
 * recv and shutdown to the record layer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handshake.h"
#include "record.h"
#include "sotls.h"
#include "util.h"

enum conn_state {
	CONN_NEW,	/* handshake not started or in progress */
	CONN_OPEN,	/* records flow */
	CONN_FAILED,	/* a fatal error; err says which */
};

#define REASON_KTLS_NOT_ATTEMPTED \
	"userspace record layer: kernel TLS offload not attempted (no kernel path in this version)"
#define REASON_KTLS_OFF "userspace record layer: kernel TLS disabled by configuration"

struct sotls_conn {
	struct sotls_config *cfg;
	int fd;
	enum conn_state state;
	int err;
	char *server_name;
	struct sotls_hs *hs;
	const struct sotls_suite *suite;
	const char *reason;
	struct sotls_record rec;
	bool rec_ready;
	char detail[256];
};

SOTLS_API int sotls_conn_new(struct sotls_config *cfg, int fd, struct sotls_conn **out)
{
	if (cfg == NULL || fd < 0 || out == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (cfg->role == SOTLS_ROLE_SERVER && !cfg->have_chain)
		return SOTLS_ERR_BAD_STATE;
	struct sotls_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	sotls_config_ref(cfg);
	c->cfg = cfg;
	c->fd = fd;
	c->state = CONN_NEW;
	*out = c;
	return 0;
}

SOTLS_API int sotls_conn_set_server_name(struct sotls_conn *c, const char *name)
{
	if (c == NULL || (name != NULL && (name[0] == '\0' || strlen(name) > 255)))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state != CONN_NEW || c->hs != NULL)
		return SOTLS_ERR_BAD_STATE;
	char *copy = NULL;
	if (name != NULL && (copy = strdup(name)) == NULL)
		return SOTLS_ERR_OUT_OF_MEMORY;
	free(c->server_name);
	c->server_name = copy;
	return 0;
}

static int conn_fail(struct sotls_conn *c, int err)
{
	if (c->state != CONN_FAILED) {
		c->state = CONN_FAILED;
		c->err = err;
	}
	if (c->hs != NULL) {
		sotls_hs_free(c->hs);
		c->hs = NULL;
	}
	return c->err;
}

/* Keys and sequence numbers from the handshake into the record layer. */
static int start_records(struct sotls_conn *c, struct sotls_hs_result *res)
{
	bool server = c->cfg->role == SOTLS_ROLE_SERVER;
	struct sotls_rec_keys client = {res->kb.client_key, res->kb.client_salt, res->client_seq};
	struct sotls_rec_keys server_k = {res->kb.server_key, res->kb.server_salt, res->server_seq};

	int rc = sotls_record_init(&c->rec, c->fd, res->suite->alg, server ? &server_k : &client,
				   server ? &client : &server_k, NULL, 0);
	sotls_wipe(&res->kb, sizeof(res->kb));
	if (rc != 0) {
		snprintf(c->detail, sizeof(c->detail), "record layer set-up failed: %s",
			 sotls_strerror(rc));
		return rc;
	}
	c->rec_ready = true;
	c->suite = res->suite;
	c->reason = c->cfg->ktls == SOTLS_KTLS_OFF ? REASON_KTLS_OFF : REASON_KTLS_NOT_ATTEMPTED;
	return 0;
}

SOTLS_API int sotls_handshake(struct sotls_conn *c)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_OPEN)
		return 0;
	if (c->state == CONN_FAILED)
		return c->err;

	if (c->hs == NULL) {
		const char *name = c->server_name ? c->server_name : c->cfg->server_name;
		int rc = sotls_hs_new(&c->hs, c->cfg, c->fd, name, c->detail, sizeof(c->detail));
		if (rc != 0)
			return conn_fail(c, rc);
	}

	struct sotls_hs_result res;
	int sys_errno = 0;
	int rc = sotls_hs_step(c->hs, &res, c->detail, sizeof(c->detail), &sys_errno);
	if (rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
		return rc;
	/* Done either way: mbedTLS's state and secrets go now. */
	sotls_hs_free(c->hs);
	c->hs = NULL;
	if (rc != 0) {
		conn_fail(c, rc);
		if (rc == SOTLS_ERR_SYSCALL)
			errno = sys_errno;
		return rc;
	}
	rc = start_records(c, &res);
	if (rc != 0)
		return conn_fail(c, rc);
	c->state = CONN_OPEN;

	if (c->cfg->ktls == SOTLS_KTLS_REQUIRE) {
		/* No kernel path exists yet, so "require" cannot be met. The
		 * peer learns it from an internal_error alert. */
		snprintf(c->detail, sizeof(c->detail),
			 "kernel TLS required by configuration, but this version has no kernel "
			 "TLS path");
		sotls_record_fatal(&c->rec, SOTLS_ALERT_INTERNAL_ERROR, SOTLS_ERR_KTLS_REQUIRED);
		return conn_fail(c, SOTLS_ERR_KTLS_REQUIRED);
	}
	return 0;
}

/* Runs the handshake first if needed; 0 when records may flow. */
static int ready(struct sotls_conn *c)
{
	if (c->state == CONN_OPEN)
		return 0;
	return sotls_handshake(c);
}

/* Records a record-layer failure on the connection. */
static ssize_t rec_result(struct sotls_conn *c, ssize_t rc)
{
	if (rc >= 0 || rc == SOTLS_WANT_READ || rc == SOTLS_WANT_WRITE)
		return rc;
	if (rc == SOTLS_ERR_CLOSED || rc == SOTLS_ERR_INVALID_ARGUMENT)
		return rc; /* caller mistakes end nothing */
	if (rc == SOTLS_ERR_PEER_ALERT)
		snprintf(c->detail, sizeof(c->detail), "alert %d from the peer", c->rec.peer_alert);
	else if (rc == SOTLS_ERR_SYSCALL)
		snprintf(c->detail, sizeof(c->detail), "%s", strerror(c->rec.sys_errno));
	else if (c->rec.sent_alert > 0)
		snprintf(c->detail, sizeof(c->detail), "sent fatal alert %d to the peer",
			 c->rec.sent_alert);
	else
		c->detail[0] = '\0';
	int saved = errno;
	if (rc == SOTLS_ERR_SYSCALL)
		saved = c->rec.sys_errno;
	conn_fail(c, (int)rc);
	errno = saved;
	return rc;
}

SOTLS_API ssize_t sotls_send(struct sotls_conn *c, const void *buf, size_t len)
{
	if (c == NULL || (buf == NULL && len > 0))
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED)
		return c->err;
	int rc = ready(c);
	if (rc != 0)
		return rc;
	return rec_result(c, sotls_record_send(&c->rec, buf, len));
}

SOTLS_API ssize_t sotls_recv(struct sotls_conn *c, void *buf, size_t len)
{
	if (c == NULL || buf == NULL || len == 0)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED && !(c->rec_ready && c->rec.plain_len > 0))
		return c->err;
	int rc = ready(c);
	if (rc != 0)
		return rc;
	return rec_result(c, sotls_record_recv(&c->rec, buf, len));
}

SOTLS_API int sotls_shutdown(struct sotls_conn *c)
{
	if (c == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_OPEN)
		return SOTLS_ERR_BAD_STATE;
	return (int)rec_result(c, sotls_record_shutdown(&c->rec));
}

SOTLS_API void sotls_conn_free(struct sotls_conn *c)
{
	if (c == NULL)
		return;
	sotls_hs_free(c->hs);
	if (c->rec_ready)
		sotls_record_free(&c->rec);
	sotls_config_free(c->cfg);
	free(c->server_name);
	sotls_wipe(c, sizeof(*c));
	free(c);
}

SOTLS_API int sotls_get_info(const struct sotls_conn *c, struct sotls_info *info)
{
	if (c == NULL || info == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	memset(info, 0, sizeof(*info));
	info->suite = "";
	info->version = "";
	info->tx_reason = "";
	info->rx_reason = "";
	info->aead_impl = "";
	info->peer_alert = -1;
	if (!c->rec_ready || c->suite == NULL)
		return 0;
	info->suite = c->suite->iana;
	info->suite_id = c->suite->id;
	info->version = "TLSv1.2";
	info->tx_path = SOTLS_PATH_USERSPACE;
	info->rx_path = SOTLS_PATH_USERSPACE;
	info->tx_reason = c->reason;
	info->rx_reason = c->reason;
	info->aead_impl = sotls_aead_impl_name(&c->rec.tx.aead);
	info->peer_alert = c->rec.peer_alert;
	info->tx_records = c->rec.tx_records;
	info->rx_records = c->rec.rx_records;
	return 0;
}

SOTLS_API const char *sotls_conn_error_detail(const struct sotls_conn *c)
{
	return c == NULL ? "" : c->detail;
}

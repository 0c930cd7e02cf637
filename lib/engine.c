/*
 * The engine's buffers: an engine connection (sotls_conn_new_engine) is the
 * connection of conn.c on a wire without a socket (wire.h), so the
 * handshake and the record layer stop where they would read or write and
 * the application moves the ciphertext here. During the handshake the bytes
 * go straight into the handshake reader's record and come from its flight;
 * after it, into the record layer's receive buffer, where records are opened
 * in place, and from its send buffer, where they were sealed.
 */
#include <stdlib.h>
#include <string.h>

#include "conn_internal.h"
#include "handshake.h"
#include "sotls.h"

/* Who takes received ciphertext now: the handshake reader, the record
 * layer (while it, not the kernel, reads, and the connection is not yet
 * handed to a socket), or nobody (NONE). The buffer and its "done" must
 * agree, so both ask here. */
enum in_target { IN_NONE, IN_HANDSHAKE, IN_RECORD };

static enum in_target in_target(const struct sotls_conn *c)
{
	if (c->state == CONN_FAILED || c->wire.eof)
		return IN_NONE;
	if (c->hs != NULL)
		return IN_HANDSHAKE;
	if (c->state == CONN_OPEN && c->rec != NULL && !c->k.rx && !c->eng->handed_off)
		return IN_RECORD;
	return IN_NONE;
}

SOTLS_API void *sotls_engine_recv_buf(struct sotls_conn *c, size_t *cap)
{
	if (cap == NULL)
		return NULL;
	*cap = 0;
	if (c == NULL || c->eng == NULL)
		return NULL;
	switch (in_target(c)) {
	case IN_HANDSHAKE: return sotls_hs_in_space(c->hs, cap);
	case IN_RECORD: return sotls_record_in_space(c->rec, cap);
	default: return NULL;
	}
}

SOTLS_API int sotls_engine_recv_done(struct sotls_conn *c, size_t n)
{
	if (c == NULL || c->eng == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (n == 0) {
		/* Nothing came (the socket had none): the receive buffer goes
		 * back if empty, so an idle connection holds none. */
		if (in_target(c) == IN_RECORD)
			sotls_record_in_added(c->rec, 0);
		return 0;
	}
	switch (in_target(c)) {
	case IN_HANDSHAKE: return sotls_hs_in_added(c->hs, n);
	case IN_RECORD: return sotls_record_in_added(c->rec, n);
	default: return SOTLS_ERR_INVALID_ARGUMENT;
	}
}

SOTLS_API size_t sotls_engine_feed(struct sotls_conn *c, const void *data, size_t len)
{
	if (data == NULL)
		return 0;
	size_t cap;
	uint8_t *p = sotls_engine_recv_buf(c, &cap);
	if (p == NULL)
		return 0;
	size_t n = len < cap ? len : cap;
	memcpy(p, data, n);
	return sotls_engine_recv_done(c, n) == 0 ? n : 0;
}

SOTLS_API int sotls_engine_recv_eof(struct sotls_conn *c)
{
	if (c == NULL || c->eng == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	c->wire.eof = true;
	return 0;
}

SOTLS_API const void *sotls_engine_send_buf(struct sotls_conn *c, size_t *len)
{
	if (len == NULL)
		return NULL;
	*len = 0;
	if (c == NULL || c->eng == NULL)
		return NULL;
	struct conn_engine *e = c->eng;
	if (e->residue != NULL) {
		*len = e->residue_len - e->residue_off;
		return e->residue + e->residue_off;
	}
	if (c->hs != NULL)
		return sotls_hs_out(c->hs, len);
	if (c->rec != NULL && !c->k.tx)
		return sotls_record_out(c->rec, len);
	return NULL;
}

SOTLS_API int sotls_engine_send_done(struct sotls_conn *c, size_t n)
{
	if (c == NULL || c->eng == NULL)
		return SOTLS_ERR_INVALID_ARGUMENT;
	if (n == 0)
		return 0;
	struct conn_engine *e = c->eng;
	if (e->residue != NULL) {
		if (n > e->residue_len - e->residue_off)
			return SOTLS_ERR_INVALID_ARGUMENT;
		e->residue_off += n;
		if (e->residue_off == e->residue_len) {
			free(e->residue);
			e->residue = NULL;
		}
		return 0;
	}
	if (c->hs != NULL)
		return sotls_hs_out_taken(c->hs, n);
	if (c->rec != NULL && !c->k.tx)
		return sotls_record_out_taken(c->rec, n);
	return SOTLS_ERR_INVALID_ARGUMENT;
}

SOTLS_API unsigned sotls_engine_state(struct sotls_conn *c)
{
	if (c == NULL || c->eng == NULL)
		return 0;
	unsigned st = 0;
	size_t n;
	if (sotls_engine_send_buf(c, &n) != NULL && n > 0)
		st |= SOTLS_ENGINE_SEND;
	if (c->state == CONN_FAILED)
		return st | SOTLS_ENGINE_FAILED;
	/* Without borrowing a receive buffer just to say so. */
	if (c->hs != NULL ? sotls_hs_in_space(c->hs, &n) != NULL && n > 0
			  : c->state == CONN_OPEN && c->rec != NULL && !c->k.rx &&
				    c->rec->pol.err == 0 && !c->rec->pol.rx_closed && !c->wire.eof &&
				    !c->eng->handed_off)
		st |= SOTLS_ENGINE_RECV;
	if (c->state == CONN_NEW && c->eng->hs_rc == SOTLS_WANT_PRIVATE_KEY)
		st |= SOTLS_ENGINE_PRIVATE_KEY;
	if (c->state == CONN_NEW && c->eng->hs_rc == SOTLS_WANT_CERTIFICATE)
		st |= SOTLS_ENGINE_CERTIFICATE;
	if (c->state == CONN_OPEN)
		st |= SOTLS_ENGINE_OPEN;
	if (c->rec != NULL && c->rec->pol.rx_closed)
		st |= SOTLS_ENGINE_CLOSED;
	return st;
}

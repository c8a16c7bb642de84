/* control_tokens.c - gpuctl's token commands: add (a name, a role and the
 * credential's public key: gpuctl made the key pair and keeps the secret;
 * the reply carries gpud's key to pin), list, revoke (its connections cut
 * off at once). The requests come checked (ctlcmd.h);
 * these are the steps of their table rows (control.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth.h"
#include "chan.h"
#include "clock.h"
#include "conn.h"
#include "control_internal.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "scheduler.h"
#include "store.h"

static void token_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int rc = store_token_add(st, r->tok.name, r->tok.pk, r->role,
				 gclock_wall());

	if (rc == GERR_STATE) {
		snprintf(r->err, sizeof(r->err), "a token named '%s' (or one with "
			 "this key) already exists", r->tok.name);
		return;
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot store the token: %s", gerr_str(rc));
		return;
	}
	r->stored = 1;
}

/* The reply: the name, its role and gpud's key for the credential to pin
 * (chan.h); gpud never had the secret, so it sends no credential. */
static void token_after(void *arg)
{
	struct ctl_req *r = arg;
	char hex[2 * CHAN_PK_LEN + 1];

	if (r->stored) {
		auth_hex(r->d->identity.pk, CHAN_PK_LEN, hex);
		r->reply = ctlcmd_reply_encode(CTLCMD_TOKEN_ADD, &(struct ctlcmd_reply){
			.token = r->tok.name, .role = r->role, .gpud_key = hex });
		if (!r->reply)
			snprintf(r->err, sizeof(r->err), "out of memory");
	}
	ctl_finish(r);
}

void ctl_token_list_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_token *ts = NULL;
	struct ctlcmd_token *rows;
	size_t n = 0;

	if (store_token_list(st, &ts, &n)) {
		snprintf(r->err, sizeof(r->err), "cannot list tokens");
		return;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++)
		rows[i] = (struct ctlcmd_token){ .name = ts[i].name,
			.created_at = ts[i].created_at, .revoked = ts[i].revoked,
			.role = auth_role_name(ts[i].role) ? auth_role_name(ts[i].role) : "?" };
	if (rows)
		r->reply = ctlcmd_reply_encode(CTLCMD_TOKEN_LIST, &(struct ctlcmd_reply){
			.tokens = rows, .n_tokens = n });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
	free(rows);
	store_token_free_array(ts, n);
}

void ctl_token_revoke_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int rc;

	/* Kept for token_revoke_after, which cuts its connections. */
	snprintf(r->tok.name, sizeof(r->tok.name), "%s", r->in.name);
	rc = store_token_revoke(st, r->tok.name);
	if (rc == GERR_NOTFOUND) {
		snprintf(r->err, sizeof(r->err), "no token named '%s'", r->tok.name);
		return;
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot revoke: %s", gerr_str(rc));
		return;
	}
	store_event(st, gclock_wall(), 0, 0, 0, 0, "token_revoke", r->tok.name);
	r->reply = ctlcmd_reply_encode(CTLCMD_TOKEN_REVOKE,
				       &(struct ctlcmd_reply){ .revoked = r->tok.name });
}

void ctl_token_revoke_after(void *arg)
{
	struct ctl_req *r = arg;

	/* A revoked token's workers are cut off now, not at their next login. */
	if (r->reply)
		conn_close_token(r->d, r->tok.name);
	ctl_finish(r);
}

/* The public key is checked here, on the loop thread, and stored on the
 * database thread. */
void ctl_token_add_start(struct ctl_req *r)
{
	r->role = r->in.role;
	memset(&r->tok, 0, sizeof(r->tok));
	snprintf(r->tok.name, sizeof(r->tok.name), "%s", r->in.name);
	if (auth_unhex(r->in.public_key, r->tok.pk, sizeof(r->tok.pk)) ||
	    !crypto_core_ed25519_is_valid_point(r->tok.pk)) {
		snprintf(r->err, sizeof(r->err), "public_key is not an Ed25519 "
			 "public key (64 hex digits)");
		ctl_finish(r);
		return;
	}
	if (dbq_submit(r->d->dbq, token_work, token_after, r)) {
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}

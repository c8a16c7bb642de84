/* control_tokens.c - gpuctl's token commands: add (with a role, the
 * reply carrying the credential file's text), list, revoke (its
 * connections cut off at once). The requests come checked (ctlcmd.h);
 * these are the steps of their table rows (control.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "chan.h"
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
	int rc = store_token_add(st, r->tok.name, r->tok.stored, r->role,
				 sched_now());

	if (rc == GERR_STATE) {
		snprintf(r->err, sizeof(r->err), "a token named '%s' already exists",
			 r->tok.name);
		return;
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot store the token: %s", gerr_str(rc));
		return;
	}
	r->reply = json_pack("{s:b, s:s, s:s}", "ok", 1, "token", r->token_text,
			     "role", auth_role_name(r->role));
}

/* The credential file's text: the token and gpud's key (chan.h). */
static void token_after(void *arg)
{
	struct ctl_req *r = arg;
	char hex[2 * CHAN_PK_LEN + 1];
	char *cred;

	if (r->reply) {
		auth_hex(r->d->identity.pk, CHAN_PK_LEN, hex);
		cred = auth_credential_text(r->token_text, r->d->identity.pk);
		json_object_set_new(r->reply, "gpud_key", json_string(hex));
		json_object_set_new(r->reply, "credential",
				    cred ? json_string(cred) : json_null());
		if (cred) {
			memset(cred, 0, strlen(cred));
			free(cred);
		}
	}
	ctl_finish(r);
}

void ctl_token_list_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_token *ts = NULL;
	size_t n = 0;
	json_t *arr;

	if (store_token_list(st, &ts, &n)) {
		snprintf(r->err, sizeof(r->err), "cannot list tokens");
		return;
	}
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:f, s:b, s:s}", "name",
			ts[i].name, "created_at", ts[i].created_at, "revoked",
			ts[i].revoked, "role", auth_role_name(ts[i].role)
			? auth_role_name(ts[i].role) : "?"));
	store_token_free_array(ts, n);
	r->reply = json_pack("{s:b, s:o}", "ok", 1, "tokens", arr);
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
	store_event(st, sched_now(), 0, 0, 0, 0, "token_revoke", r->tok.name);
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

/* The token is made here, on the loop thread, and stored on the database
 * thread. */
void ctl_token_add_start(struct ctl_req *r)
{
	r->role = r->in.role;
	if (auth_token_new(r->in.name, &r->token_text, &r->tok)) {
		snprintf(r->err, sizeof(r->err), "cannot create a token");
		ctl_finish(r);
		return;
	}
	if (dbq_submit(r->d->dbq, token_work, token_after, r)) {
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}

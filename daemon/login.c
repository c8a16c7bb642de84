/* login.c - a TCP connection's login (login.h): HELLO or CTL_HELLO, then
 * WELCOME. Who connected is the credential whose public key the TLS
 * handshake proved (chan_peer_key); it is looked up, with its role, on the
 * database thread. The name a HELLO gives must be that credential's.
 *
 * A worker is one process: its row is (token, instance), the instance
 * its HELLO names. A second login of the same (token, instance) while the
 * first connection is still open replaces it: the older one is closed
 * (ERROR "replaced by a newer login of the same worker"), so a process
 * that reconnects before gpud noticed its old connection died is not kept
 * waiting, and keeps its leases.
 */
#include "login.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "chan.h"
#include "clock.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "place.h"
#include "proto.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

_Static_assert(MSG_WORKLOADS_MAX == MAX_WORKLOADS, "HELLO's workload bound");
_Static_assert(MSG_DEVICE_MAX < sizeof(((struct conn *)0)->device),
	       "HELLO's device bound");
_Static_assert(MSG_WORKER_MAX == AUTH_NAME_MAX, "HELLO's worker bound");

/* The place a HELLO names: 0, or GERR_PROTO (a warning naming the field)
 * when a field breaks place.h's rule. */
static int hello_place(struct conn *c, const struct msg_hello *m)
{
	const char *v[PLACE_FIELDS] = {
		[PLACE_HOST] = m->host, [PLACE_SLURM_JOB] = m->slurm_job,
		[PLACE_SLURM_ARRAY] = m->slurm_array, [PLACE_POD] = m->pod,
	};

	memset(&c->place, 0, sizeof(c->place));
	for (int f = 0; f < PLACE_FIELDS; f++) {
		if (place_set(&c->place, (enum place_field)f, v[f])) {
			LOG_WARN(&c->d->log, "HELLO refused: bad %s peer=%s",
				 place_field_name((enum place_field)f), c->peer);
			return GERR_PROTO;
		}
	}
	return 0;
}

static int start_check(struct conn *c);

int login_hello(struct conn *c, const json_t *msg)
{
	struct msg_hello m;
	json_t *ok = json_array();

	/* msg.h bounds the proto version, the name, the device and the
	 * workload list (MAX_WORKLOADS); place.h checks the place. */
	if (msg_hello_decode(msg, &m, NULL, 0) || auth_name_valid(m.worker) ||
	    hello_place(c, &m)) {
		json_decref(ok);
		return GERR_PROTO;
	}
	if (place_instance_check(m.instance)) {
		LOG_WARN(&c->d->log, "HELLO refused: bad instance peer=%s",
			 c->peer);
		json_decref(ok);
		return GERR_PROTO;
	}
	for (size_t i = 0; i < m.n_workloads; i++) {
		if (workload_find(m.workloads[i]))
			json_array_append_new(ok, json_string(m.workloads[i]));
	}
	snprintf(c->name, sizeof(c->name), "%s", m.worker);
	snprintf(c->instance, sizeof(c->instance), "%s", m.instance);
	snprintf(c->device, sizeof(c->device), "%s", m.device);
	c->threads = (uint32_t)m.threads; /* msg.h bounds it to 65535 */
	c->workloads_json = json_dumps(ok, JSON_COMPACT);
	json_decref(ok);
	if (!c->workloads_json)
		return GERR_NOMEM;
	return start_check(c);
}

int login_ctl_hello(struct conn *c, const json_t *msg)
{
	struct msg_ctl_hello m;

	if (msg_ctl_hello_decode(msg, &m, NULL, 0) || auth_name_valid(m.name))
		return GERR_PROTO;
	snprintf(c->name, sizeof(c->name), "%s", m.name);
	snprintf(c->device, sizeof(c->device), "gpuctl");
	c->remote_ctl = 1;
	return start_check(c);
}

struct auth_req {
	struct conn *c;
	char name[AUTH_NAME_MAX + 1];       /* the HELLO's */
	char cred[AUTH_NAME_MAX + 1];       /* the key's credential */
	char instance[PLACE_INSTANCE_MAX + 1];
	char device[64];
	struct place place;
	uint8_t pk[CHAN_PK_LEN];
	int loopback;                       /* the peer is this machine */
	int has_pk;
	int other_key;                      /* a certificate, not Ed25519 */
	int old_kind;                       /* the name's row has no key */
	int remote_ctl;
	int rc;
	enum auth_role role;
	int64_t worker_id;
};

static void auth_work(struct store *st, void *arg)
{
	struct auth_req *r = arg;

	r->rc = r->has_pk ? store_token_by_key(st, r->pk, r->cred, &r->role)
			  : GERR_NOTFOUND;
	if (r->rc == GERR_NOTFOUND) {
		uint8_t pk[CHAN_PK_LEN];
		int has_key = 1;

		/* Say why when the name is a credential of the old kind. */
		r->old_kind = store_token_get(st, r->name, pk, &has_key,
					      NULL) == 0 && !has_key;
	}
	/* The name the peer gave is its key's credential's. */
	if (r->rc == 0 && strcmp(r->cred, r->name) != 0)
		r->rc = GERR_AUTH;
	/* The one secret in gpud's directory (and its backups) is the local
	 * worker's: it is no key from another machine. */
	if (r->rc == 0 && !r->loopback && strcmp(r->cred, AUTH_LOCAL_NAME) == 0)
		r->rc = GERR_PERM;
	/* A token works for what its role is for, nothing else. */
	if (r->rc == 0 &&
	    (r->role == AUTH_ROLE_WORKER) == (r->remote_ctl != 0))
		r->rc = GERR_PERM;
	if (r->rc == 0 && !r->remote_ctl)
		r->rc = store_worker_upsert(st, r->name, r->instance,
					    r->device, gclock_wall(),
					    &r->worker_id);
	if (r->rc == 0 && !r->remote_ctl)
		r->rc = store_worker_set_place(st, r->worker_id, &r->place);
	if (r->rc == 0 && !r->remote_ctl) {
		/* Each login's place stays in its event (a row shows its
		 * latest one). */
		char detail[sizeof(r->device) + PLACE_TEXT_MAX + 1];
		char where[PLACE_TEXT_MAX];

		place_format(&r->place, where, sizeof(where));
		snprintf(detail, sizeof(detail), "%s%s%s", r->device,
			 where[0] ? " " : "", where);
		store_event(st, gclock_wall(), 0, 0, 0, r->worker_id, "connect",
			    detail);
	}
}

static const char *refusal(const struct auth_req *r)
{
	if (r->old_kind)
		return "this credential is of the old kind (token = NAME:SECRET, "
		       "from before TLS 1.3): make a new one with gpuctl token "
		       "add NAME --role ROLE";
	if (r->rc == GERR_NOTFOUND && r->other_key)
		return "the client certificate's key is not an Ed25519 one: a "
		       "credential's key is needed (gpuctl token add)";
	if (r->rc == GERR_NOTFOUND && !r->has_pk)
		return "no client certificate: a credential's key is needed "
		       "(gpuctl token add)";
	if (r->rc == GERR_NOTFOUND)
		return "bad token: no live credential has the key this "
		       "connection proved (unknown or revoked)";
	if (r->rc == GERR_AUTH)
		return "the name given is not the name of the key's credential";
	if (r->rc == GERR_PERM && !r->loopback &&
	    strcmp(r->cred, AUTH_LOCAL_NAME) == 0)
		return "the local worker's credential logs in from this machine "
		       "only: give a worker elsewhere its own (gpuctl token add)";
	if (r->rc == GERR_PERM)
		return r->remote_ctl ? "a worker token cannot run gpuctl"
				     : "only a worker token may lease work";
	return gerr_str(r->rc);
}

/* The same worker's older connection, now that c logged in: closed (see
 * the top of this file). c is READY already, so closing the older one
 * does not mark the worker offline (server.c's on_conn_closed). */
static void replace_older(struct conn *c)
{
	struct conn *o, *next;

	for (o = c->d->conns; o; o = next) {
		next = o->next;
		if (o == c || o->is_ctl || o->remote_ctl || o->closing ||
		    o->state != CONN_READY || o->worker_id != c->worker_id)
			continue;
		LOG_WARN(&c->d->log, "worker %s@%s id=%" PRId64 " logged in "
			 "again from %s: its connection from %s is closed",
			 c->name, c->instance, c->worker_id, c->peer, o->peer);
		conn_send_error(o, GERR_STATE, "replaced by a newer login of "
				"the same worker", 0, 0);
		conn_close(o, "replaced by a newer login");
	}
}

static void auth_after(void *arg)
{
	struct auth_req *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;

	int held = r->rc || c->closing ? 0
		   : conn_count_token(d, c->name, r->worker_id);

	if (!c->closing && r->rc) {
		/* The reason tells the peer only what it knows: which key
		 * it showed, and which name it gave. */
		/* GERR_AUTH: the credential itself is refused, and the
		 * worker stops retrying (gpuworker's exit 6); a failure of
		 * gpud's own (the database) may pass. */
		int cred = r->rc == GERR_NOTFOUND || r->rc == GERR_AUTH ||
			   r->rc == GERR_PERM;
		conn_send_error(c, cred ? GERR_AUTH : GERR_AGAIN, refusal(r), 0, 0);
		conn_close(c, refusal(r));
	} else if (!c->closing && held >= d->cfg.max_conns_per_cred) {
		/* One token may not hold every slot (listeners.h). */
		char why[160];

		snprintf(why, sizeof(why), "token %s already has %d connections "
			 "(--max-connections-per-credential %d)", c->name, held,
			 d->cfg.max_conns_per_cred);
		conn_send_error(c, GERR_AGAIN, why, 0, 0);
		conn_close(c, why);
	} else if (!c->closing) {
		struct msg_welcome m = {
			.worker_id = (uint64_t)r->worker_id,
			.heartbeat_s = d->cfg.heartbeat_s,
			.checkpoint_s = d->cfg.checkpoint_s,
			.role = auth_role_name(r->role),
		};
		json_t *h = NULL;
		char where[PLACE_TEXT_MAX];

		place_format(&c->place, where, sizeof(where));
		c->worker_id = r->worker_id;
		c->role = r->role;
		c->state = CONN_READY;
		if (r->remote_ctl)
			LOG_DEBUG(&d->log, "gpuctl online token=%s role=%s "
				  "peer=%s", c->name, m.role, c->peer);
		else
			LOG_INFO(&d->log, "worker online worker=%s@%s id=%"
				 PRId64 " device=%s peer=%s%s%s", c->name,
				 c->instance, c->worker_id, c->device, c->peer,
				 where[0] ? " " : "", where);
		msg_welcome_encode(&m, &h);
		conn_send(c, PROTO_WELCOME, h, NULL, 0);
		if (!r->remote_ctl)
			replace_older(c);
	}
	free(r);
	conn_step_done(c);
}

/* Look up the key the TLS handshake proved; the connection waits
 * (CONN_AUTH, busy) until auth_after answers. */
static int start_check(struct conn *c)
{
	struct auth_req *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return GERR_NOMEM;
	r->c = c;
	r->remote_ctl = c->remote_ctl;
	rc = chan_peer_key(&c->ch, r->pk);
	r->has_pk = rc == 0;
	r->other_key = rc == GERR_UNSUPPORTED;
	r->loopback = strncmp(c->peer, "127.", 4) == 0 ||
		      strcmp(c->peer, "::1") == 0 ||
		      strncmp(c->peer, "::ffff:127.", 11) == 0;
	memcpy(r->name, c->name, sizeof(r->name));
	memcpy(r->instance, c->instance, sizeof(r->instance));
	memcpy(r->device, c->device, sizeof(r->device));
	r->place = c->place;
	c->state = CONN_AUTH;
	if (conn_step_db(c, 1, auth_work, auth_after, r)) {
		free(r);
		return GERR_STATE;
	}
	return 0;
}

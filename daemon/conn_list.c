/* conn_list.c - the open connections as a whole (conn.h): the memory
 * budget they share, counting them for the caps (listeners.c, login.c),
 * shedding one not logged in, the timeouts' sweep, finding a worker's,
 * and waking the parked ones. Every
 * function walks gpud->conns, newest first. Loop thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "gerr.h"
#include "gpud.h"

int conn_step_db(struct conn *c, int batch, dbq_work_fn work,
		 dbq_after_fn after, void *arg)
{
	int rc;

	conn_ref(c);
	c->busy = 1;
	rc = batch ? dbq_submit_batch(c->d->dbq, work, after, arg)
		   : dbq_submit(c->d->dbq, work, after, arg);
	if (rc == 0)
		return 0;
	c->busy = 0;
	conn_unref(c);
	return GERR_STATE;
}

void conn_close_all(struct gpud *d)
{
	while (d->conns)
		conn_close(d->conns, "shutting down");
}

void conn_sweep(struct gpud *d)
{
	uint64_t now = uv_now(d->loop);
	uint64_t login_ms = (uint64_t)(d->cfg.login_timeout_s * 1000);
	uint64_t idle_ms = (uint64_t)(d->cfg.idle_timeout_s * 1000);
	struct conn *c, *next;
	char why[96];

	for (c = d->conns; c; c = next) {
		next = c->next; /* c may close */
		if (c->is_ctl || c->closing)
			continue;
		if (c->state != CONN_READY && now - c->opened_ms > login_ms) {
			snprintf(why, sizeof(why), "no login within %.3g s "
				 "(--login-timeout)", d->cfg.login_timeout_s);
			conn_close(c, why);
		} else if (c->state == CONN_READY && idle_ms &&
			   uv_stream_get_write_queue_size(&c->u.s) > 0 &&
			   now - c->written_ms > idle_ms) {
			snprintf(why, sizeof(why), "its replies unread for %.3g s "
				 "(--idle-timeout)", d->cfg.idle_timeout_s);
			conn_close(c, why);
		} else if (c->state == CONN_READY && idle_ms && !c->busy &&
			   !c->spool_inflight && (c->len || c->slen) &&
			   now - c->progress_ms > idle_ms) {
			/* Its buffers count against --frame-memory: a partial
			 * frame or record that stops growing (paused or dripped)
			 * may not hold them for ever. */
			snprintf(why, sizeof(why), "stalled: %zu bytes of a frame "
				 "without progress for %.3g s (--idle-timeout)",
				 c->len + c->slen, d->cfg.idle_timeout_s);
			conn_close(c, why);
		} else if (c->state == CONN_READY && idle_ms && !c->busy &&
			   !c->read_paused && !c->spool_inflight &&
			   uv_stream_get_write_queue_size(&c->u.s) == 0 &&
			   now - c->active_ms > idle_ms) {
			snprintf(why, sizeof(why), "idle: no message for %.3g s "
				 "(--idle-timeout)", d->cfg.idle_timeout_s);
			conn_close(c, why);
		}
	}
}

int conn_count_tcp(struct gpud *d, const char *peer, int *ret_peer)
{
	int all = 0, same = 0;

	for (struct conn *c = d->conns; c; c = c->next) {
		if (c->is_ctl || c->closing)
			continue;
		all++;
		same += peer && strcmp(c->peer, peer) == 0;
	}
	if (ret_peer)
		*ret_peer = same;
	return all;
}

int conn_count_prelogin(struct gpud *d, const char *peer, int *ret_peer)
{
	int all = 0, same = 0;

	for (struct conn *c = d->conns; c; c = c->next) {
		if (c->is_ctl || c->closing || c->state == CONN_READY)
			continue;
		all++;
		same += peer && strcmp(c->peer, peer) == 0;
	}
	if (ret_peer)
		*ret_peer = same;
	return all;
}

/* Addresses conn_shed_prelogin tells apart: one pass over the
 * connections, a short table (a flood from more addresses than this is
 * met by shedding the oldest). */
#define SHED_PEERS 64

struct shed_peer {
	const char *peer;
	int n;                  /* its connections not logged in */
	struct conn *oldest;
};

int conn_shed_prelogin(struct gpud *d, int min, const char *why)
{
	struct shed_peer t[SHED_PEERS];
	size_t used = 0, best = 0;
	struct conn *c, *oldest = NULL;

	/* The list is newest first: each later one is older. */
	for (c = d->conns; c; c = c->next) {
		size_t i;

		if (c->is_ctl || c->closing || c->state == CONN_READY)
			continue;
		oldest = c;
		for (i = 0; i < used && strcmp(t[i].peer, c->peer) != 0; i++)
			;
		if (i == used && used < SHED_PEERS)
			t[used++] = (struct shed_peer){ c->peer, 0, NULL };
		if (i < used) {
			t[i].n++;
			t[i].oldest = c;
		}
	}
	for (size_t i = 1; i < used; i++)
		if (t[i].n > t[best].n)
			best = i;
	if (used && t[best].n >= min && t[best].n > 1)
		c = t[best].oldest;
	else
		c = oldest && min <= 1 ? oldest : NULL;
	if (!c)
		return 0;
	conn_close(c, why);
	return 1;
}

int conn_count_token(struct gpud *d, const char *name, int64_t worker_id)
{
	int n = 0;

	for (struct conn *c = d->conns; c; c = c->next)
		n += !c->is_ctl && !c->closing && c->state == CONN_READY &&
		     strcmp(c->name, name) == 0 &&
		     (c->remote_ctl || c->worker_id != worker_id);
	return n;
}

int64_t conn_worker_lease(struct gpud *d, int64_t worker_id, int64_t *ret_job)
{
	for (struct conn *c = d->conns; c; c = c->next) {
		if (!c->is_ctl && c->worker_id == worker_id && c->lease_id) {
			*ret_job = c->job_id;
			return c->lease_id;
		}
	}
	return 0;
}

const struct conn *conn_find_worker(struct gpud *d, int64_t worker_id)
{
	const struct conn *any = NULL;

	for (const struct conn *c = d->conns; c; c = c->next) {
		if (c->is_ctl || c->closing || c->state != CONN_READY ||
		    c->worker_id != worker_id)
			continue;
		if (c->lease_id)
			return c;
		any = any ? any : c;
	}
	return any;
}

void conn_wake_parked(struct gpud *d)
{
	struct conn *c, *next;

	for (c = d->conns; c; c = next) {
		next = c->next; /* c may close while it is answered */
		if (c->parked && !c->closing && c->ops->wake)
			c->ops->wake(c);
	}
}

void conn_close_token(struct gpud *d, const char *name)
{
	struct conn *c = d->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (!c->is_ctl && c->state != CONN_HELLO && strcmp(c->name, name) == 0) {
			conn_send_error(c, GERR_AUTH, "token revoked", 0, 0);
			conn_close(c, "token revoked");
		}
	}
}

int conn_count_leases(struct gpud *d)
{
	int n = 0;

	for (struct conn *c = d->conns; c; c = c->next)
		n += !c->is_ctl && c->state == CONN_READY && !c->closing && c->lease_id;
	return n;
}

int conn_count_workers(struct gpud *d)
{
	int n = 0;

	for (struct conn *c = d->conns; c; c = c->next)
		n += !c->is_ctl && !c->remote_ctl && c->state == CONN_READY &&
		     !c->closing;
	return n;
}

int conn_workload_served(struct gpud *d, const char *workload)
{
	char quoted[80];

	snprintf(quoted, sizeof(quoted), "\"%s\"", workload);
	for (struct conn *c = d->conns; c; c = c->next)
		if (!c->is_ctl && c->state == CONN_READY && c->workloads_json &&
		    strstr(c->workloads_json, quoted))
			return 1;
	return 0;
}

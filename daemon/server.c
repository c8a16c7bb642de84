/* server.c - gpud's lifetime (server.h): listeners (opened through
 * listeners.c), timers, start-up recovery, drain and shutdown. It owns the
 * table that routes accepted connections' frames to worker_proto.c and
 * control.c, and the hook that lets lower modules wake parked claims. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "blob_audit.h"
#include "clock.h"
#include "conn.h"
#include "control.h"
#include "datadir.h"
#include "dbq.h"
#include "fileio.h"
#include "gerr.h"
#include "gpud.h"
#include "health.h"
#include "http.h"
#include "lifecycle.h"
#include "listeners.h"
#include "login.h"
#include "notify.h"
#include "scheduler.h"
#include "server.h"
#include "store.h"
#include "upload.h"
#include "worker_proto.h"

#define EXPIRY_PERIOD_MS 1000
/* Jobs' progress for their rates (and systemd's status line): one query
 * per active job a second, whatever the number of workers. */
#define SAMPLE_PERIOD_MS 1000

/* ---- connections ---- */

static void on_conn_closed(struct conn *c)
{
	/* Not when a newer login of the same worker replaced it (login.c). */
	if (!conn_find_worker(c->d, c->worker_id))
		health_worker_offline(c->d, c->worker_id);
}

/* Every connection's frames go here; conn.c knows no handler by name. */
static const struct conn_handlers handlers = {
	.hello = login_hello,
	.ctl_hello = login_ctl_hello,
	.claim = wp_claim,
	.heartbeat = wp_heartbeat,
	.upload = upload_receive,
	.release = wp_release,
	.fetch = wp_fetch,
	.withdraw = wp_withdraw,
	.wake = wp_wake,
	.unpark = wp_unpark,
	.closed = on_conn_closed,
	.control = control_handle_by,
};

/* ---- timers ---- */

struct expiry_req {
	struct gpud *d;
	int64_t *ids;
	size_t n;
	int rc;
};

static void expiry_work(struct store *st, void *arg)
{
	struct expiry_req *r = arg;
	double now = gclock_wall();

	r->rc = store_lease_expire(st, now, &r->ids, &r->n);
	for (size_t i = 0; r->rc == 0 && i < r->n; i++)
		store_event(st, now, 0, r->ids[i], 0, 0, "expire",
			    "deadline passed; lease back to pending");
}

static void expiry_after(void *arg)
{
	struct expiry_req *r = arg;

	/* A ping after a round trip through the database thread: systemd's
	 * watchdog then sees a stuck loop or a stuck database alike. */
	if (r->d->watchdog && r->rc == 0)
		notify_send("WATCHDOG=1");

	for (size_t i = 0; i < r->n; i++)
		LOG_WARN(&r->d->log, "lease expired lease=%" PRId64
			 " (no heartbeat before the deadline); it will be re-issued",
			 r->ids[i]);
	if (r->n)
		conn_wake_parked(r->d);
	free(r->ids);
	free(r);
}

/* r (calloc'ed, r->d set) to the database thread; freed here when the
 * queue refuses it. */
static void submit_or_free(struct gpud *d, dbq_work_fn work,
			   dbq_after_fn after, void *r)
{
	if (dbq_submit(d->dbq, work, after, r))
		free(r);
}

static void on_expiry_timer(uv_timer_t *t)
{
	struct gpud *d = t->data;
	struct expiry_req *r;

	/* A failed write to the data directory holds until one succeeds. */
	gpud_storage_probe(d);
	glog_flush(&d->log, 0); /* a burst of repeated lines that ended */
	if (dbq_pending(d->dbq) > 64)
		return; /* the database thread is behind; try next tick */
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->d = d;
	submit_or_free(d, expiry_work, expiry_after, r);
}

struct sample_req {
	struct gpud *d;
	size_t n;
	int64_t *jobs;
	uint64_t *units;
	uint64_t *totals;
	size_t by_state[JOB_NSTATES];
};

static void sample_work(struct store *st, void *arg)
{
	struct sample_req *r = arg;
	struct store_job *jobs = NULL;
	size_t n = 0;

	if (store_job_list(st, &jobs, &n))
		return;
	r->jobs = calloc(n + 1, sizeof(*r->jobs));
	r->units = calloc(n + 1, sizeof(*r->units));
	r->totals = calloc(n + 1, sizeof(*r->totals));
	for (size_t i = 0; r->jobs && r->units && r->totals && i < n; i++) {
		r->by_state[jobs[i].state]++;
		if (jobs[i].state != JOB_ACTIVE)
			continue;
		r->jobs[r->n] = jobs[i].id;
		r->units[r->n] = sched_job_progress(st, jobs[i].id);
		r->totals[r->n] = jobs[i].total_units;
		r->n++;
	}
	store_job_free_array(jobs, n);
}

static void sample_after(void *arg)
{
	struct sample_req *r = arg;
	double now = gclock_wall();

	char status[256];
	int len;

	for (size_t i = 0; i < r->n; i++)
		gpud_rate_sample(r->d, r->jobs[i], r->units[i], now);
	/* One line for `systemctl status gpud`. */
	len = snprintf(status, sizeof(status),
		       "STATUS=jobs: %zu active, %zu paused, %zu done, %zu failed; "
		       "workers: %d online",
		       r->by_state[JOB_ACTIVE], r->by_state[JOB_PAUSED],
		       r->by_state[JOB_DONE], r->by_state[JOB_FAILED],
		       conn_count_workers(r->d));
	if (r->n > 0 && r->totals[0] > 0 && len > 0 && (size_t)len < sizeof(status))
		len += snprintf(status + len, sizeof(status) - (size_t)len,
			 "; job %" PRId64 " %.1f%%", r->jobs[0],
			 100.0 * (double)r->units[0] / (double)r->totals[0]);
	if (r->d->fd_short_ms && uv_now(r->d->loop) - r->d->fd_short_ms <
	    SAMPLE_PERIOD_MS && len > 0 && (size_t)len < sizeof(status))
		snprintf(status + len, sizeof(status) - (size_t)len,
			 "; out of file descriptors");
	notify_send(status);
	free(r->jobs);
	free(r->units);
	free(r->totals);
	free(r);
}

static void on_sample_timer(uv_timer_t *t)
{
	struct sample_req *r = calloc(1, sizeof(*r));

	if (r) {
		r->d = t->data;
		submit_or_free(r->d, sample_work, sample_after, r);
	}
}

/* ---- start-up recovery ---- */

struct recover_req {
	struct gpud *d;
	int at_start;             /* no worker is connected yet */
	double grace_s;           /* then: leases live at least this long */
	struct store_lease *done;
	size_t n;
};

static void recover_work(struct store *st, void *arg)
{
	struct recover_req *r = arg;

	if (r->at_start) {
		/* Workers that held leases while gpud was down are in their
		 * reconnect backoff: give them a lease timeout to come back
		 * and upload what they finished meanwhile. */
		double now = gclock_wall();

		health_reset(st);
		store_lease_grace(st, now, now + r->grace_s);
	}
	if (store_lease_list_state(st, LEASE_DONE, &r->done, &r->n)) {
		r->done = NULL;
		r->n = 0;
	}
}

static void recover_after(void *arg)
{
	struct recover_req *r = arg;

	/* Results stored before a crash but not yet verified: verify now. */
	for (size_t i = 0; i < r->n; i++) {
		LOG_INFO(&r->d->log, "recovery: verifying stored result lease=%" PRId64
			 " epoch=%" PRIu64, r->done[i].id, r->done[i].epoch);
		upload_verify(r->d, r->done[i].id, r->done[i].epoch);
	}
	store_lease_free_array(r->done, r->n);
	free(r);
}

/* Verify every stored result (done, not verified): at start, and after a
 * verification could not commit for want of storage. */
static void recover(struct gpud *d, int at_start)
{
	struct recover_req *r = calloc(1, sizeof(*r));

	if (!r)
		return;
	r->d = d;
	r->at_start = at_start;
	r->grace_s = d->cfg.lease_timeout_s;
	submit_or_free(d, recover_work, recover_after, r);
}

/* The wake hook (gpud.h): parked claims, and the verifications that could
 * not commit, once storage is back. */
static void server_wake(struct gpud *d)
{
	conn_wake_parked(d);
	if (d->reverify && !d->storage_error && !d->stopping) {
		d->reverify = 0;
		recover(d, 0);
	}
}

/* ---- listeners ---- */

static int listen_tcp(struct gpud *d)
{
	struct sockaddr_storage ss;
	int rc;

	if (uv_ip4_addr(d->cfg.listen_host, d->cfg.listen_port,
			(struct sockaddr_in *)&ss) &&
	    uv_ip6_addr(d->cfg.listen_host, d->cfg.listen_port,
			(struct sockaddr_in6 *)&ss)) {
		LOG_ERROR(&d->log, "bad listen address %s", d->cfg.listen_host);
		return GERR_INVAL;
	}
	rc = listeners_add_tcp(d, (struct sockaddr *)&ss, &ss);
	if (rc) {
		LOG_ERROR(&d->log, "cannot listen on %s:%d: %s", d->cfg.listen_host,
			  d->cfg.listen_port, uv_strerror(rc));
		return GERR_IO;
	}
	char host[64] = "", path[4096], text[128];
	int port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET)
		uv_ip4_name((struct sockaddr_in *)&ss, host, sizeof(host));
	else
		uv_ip6_name((struct sockaddr_in6 *)&ss, host, sizeof(host));
	snprintf(text, sizeof(text), "%s:%d\n", host, port);
	snprintf(path, sizeof(path), "%s/gpud.addr", d->cfg.data_dir);
	fileio_write_atomic(path, text, strlen(text), 0644);
	LOG_INFO(&d->log, "listening for workers on %s:%d", host, port);
	return 0;
}

/* The page and /metrics (http.c); where, in DATA/gpud.http. */
static int listen_http(struct gpud *d)
{
	char path[4096], text[300];
	const char *host = d->cfg.http_host;
	int port, rc;

	snprintf(path, sizeof(path), "%s/gpud.http", d->cfg.data_dir);
	unlink(path); /* a stale one would point at nothing */
	if (d->cfg.http_port < 0)
		return 0;
	rc = http_start(d, &port);
	if (rc == GERR_IO && !d->cfg.http_asked)
		return 0; /* the default address taken: no page (logged) */
	if (rc)
		return rc;
	snprintf(text, sizeof(text), strchr(host, ':') ? "[%s]:%d\n" : "%s:%d\n",
		 host, port);
	fileio_write_atomic(path, text, strlen(text), 0644);
	LOG_INFO(&d->log, "status page and metrics on %s://%.*s/",
		 http_is_tls(d) ? "https" : "http", (int)strlen(text) - 1, text);
	return 0;
}

/* Whether something answers on the Unix socket at path (another gpud of
 * another data directory given the same --socket). */
static int socket_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, used;

	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	used = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return used;
}

static int listen_pipe(struct gpud *d)
{
	int rc;

	/* A socket file left by a crashed gpud would make bind fail. */
	unlink(d->cfg.socket_path);
	rc = listeners_add_pipe(d, d->cfg.socket_path);
	if (rc) {
		LOG_ERROR(&d->log, "cannot listen on %s: %s", d->cfg.socket_path,
			  uv_strerror(rc));
		return GERR_IO;
	}
	LOG_INFO(&d->log, "control socket %s", d->cfg.socket_path);
	return 0;
}

/* A new identity key at path. Credentials made before it (any but the
 * local worker's, rewritten with it) pin the old key: a warning then; a
 * brand-new directory has none to warn about. */
static void say_new_identity(struct gpud *d, const char *path)
{
	struct store_token *toks = NULL;
	size_t n = 0, others = 0;

	if (store_token_list(d->store, &toks, &n) == 0)
		for (size_t i = 0; i < n; i++)
			others += !toks[i].revoked &&
				  strcmp(toks[i].name, "local") != 0;
	store_token_free_array(toks, n);
	if (others)
		LOG_WARN(&d->log, "made a new identity key %s: the %zu "
			 "credential(s) made before (gpuctl token add) pin "
			 "another key and are refused", path, others);
	else
		LOG_INFO(&d->log, "made the identity key %s", path);
}

/* gpud's identity: DATA/gpud.key, made at the first start. Workers pin its
 * public key, so a new one (the file lost) needs new credentials. */
static int load_identity(struct gpud *d)
{
	char path[4096], err[512], hex[2 * CHAN_PK_LEN + 1];
	int rc;

	snprintf(path, sizeof(path), "%s/gpud.key", d->cfg.data_dir);
	if (access(path, F_OK) == 0) {
		rc = chan_identity_read(path, &d->identity, err, sizeof(err));
	} else {
		chan_identity_new(&d->identity);
		rc = chan_identity_write(path, &d->identity, err, sizeof(err));
		if (rc == 0)
			say_new_identity(d, path);
	}
	if (rc) {
		LOG_ERROR(&d->log, "%s", err);
		return rc;
	}
	/* TLS shows this key in a self-signed certificate, made here. */
	if (rc == 0)
		rc = chan_identity_cert(&d->identity, "gpud", err, sizeof(err));
	if (rc) {
		LOG_ERROR(&d->log, "%s", err);
		return rc;
	}
	auth_hex(d->identity.pk, CHAN_PK_LEN, hex);
	LOG_INFO(&d->log, "gpud-key %s", hex);
	return 0;
}

/* The local worker's credential: DATA/local-worker.token (mode 0600) with
 * its key pair, whose public key is registered once, and gpud's key, so a
 * worker on this machine connects with no manual step. */
struct token_req {
	struct auth_token tok;
	int fresh;      /* a key pair made now: it replaces the stored one */
	int rc;
};

static void token_work(struct store *st, void *arg)
{
	struct token_req *r = arg;
	uint8_t pk[AUTH_KEY_LEN];
	int has_key = 0;

	if (store_token_get(st, r->tok.name, pk, &has_key, NULL) == 0 &&
	    has_key && memcmp(pk, r->tok.pk, sizeof(pk)) == 0) {
		r->rc = 0;
		return;
	}
	r->rc = store_token_add(st, r->tok.name, r->tok.pk, AUTH_ROLE_WORKER,
				gclock_wall());
	/* The file is gone (a restored backup holds none): gpud's own
	 * credential takes the new key; a revoked one stays revoked. */
	if (r->rc == GERR_STATE && r->fresh && has_key)
		r->rc = store_token_rekey(st, r->tok.name, r->tok.pk,
					  gclock_wall());
}

/* Write tok's credential, pinning gpud's key, to path. */
static int write_credential(struct gpud *d, const char *path,
			    const struct auth_token *tok)
{
	char *cred = auth_credential_text(tok, d->identity.pk);
	int rc = cred ? auth_token_write_file(path, cred) : GERR_NOMEM;

	if (cred) {
		sodium_memzero(cred, strlen(cred));
		free(cred);
	}
	if (rc)
		LOG_ERROR(&d->log, "cannot write %s: %s", path, gerr_str(rc));
	return rc;
}

static int local_token(struct gpud *d, struct store *st)
{
	char path[4096], err[600];
	struct token_req r = {0};
	int rc = GERR_NOTFOUND, fresh = 1;

	snprintf(path, sizeof(path), "%s/local-worker.token", d->cfg.data_dir);
	if (access(path, F_OK) == 0) {
		rc = auth_token_read_file(path, &r.tok, err, sizeof(err));
		if (rc && rc != GERR_UNSUPPORTED) {
			LOG_ERROR(&d->log, "local token %s: %s", path, err);
			return GERR_INVAL;
		}
		if (rc)
			LOG_WARN(&d->log, "%s was of the old kind: replaced by a "
				 "key pair", path);
		fresh = rc != 0;
	}
	if (fresh && auth_token_new(AUTH_LOCAL_NAME, &r.tok))
		return GERR_NOMEM;
	r.fresh = fresh;
	/* New, of the old kind, or pinning another key: (re)written. */
	if (fresh || !r.tok.has_gpud_key ||
	    memcmp(r.tok.gpud_key, d->identity.pk, CHAN_PK_LEN) != 0) {
		rc = write_credential(d, path, &r.tok);
		if (rc) {
			sodium_memzero(&r.tok, sizeof(r.tok));
			return GERR_IO;
		}
	}
	/* Runs before the database thread starts, so calling the store here
	 * is still single-threaded. */
	token_work(st, &r);
	sodium_memzero(&r.tok.seed, sizeof(r.tok.seed));
	if (r.rc && r.rc != GERR_STATE) {
		LOG_ERROR(&d->log, "cannot register the local token: %s",
			  gerr_str(r.rc));
		return r.rc;
	}
	if (r.rc == GERR_STATE)
		LOG_WARN(&d->log, "a token named '%s' exists with another key; "
			 "%s does not match it", r.tok.name, path);
	return 0;
}

/* Temporary files and blobs no row names, left by a crash between a
 * blob's write and its row's commit (or a rejected result): removed before
 * anything can write a new one. */
static void sweep_blobs(struct gpud *d)
{
	struct store_blob_ref *refs = NULL;
	size_t n = 0;
	int rc = store_blob_refs(d->store, 1, &refs, &n);

	if (rc) {
		LOG_WARN(&d->log, "sweep skipped: cannot list the blobs rows "
			 "name: %s", store_errmsg(d->store));
		return;
	}
	rc = audit_sweep(d->cfg.data_dir, refs, n, &d->log, NULL);
	if (rc)
		LOG_WARN(&d->log, "sweep incomplete: %s", gerr_str(rc));
	size_t missing = audit_missing(d->cfg.data_dir, refs, n);
	if (missing)
		LOG_ERROR(&d->log, "%zu blob(s) the database names are missing "
			  "from %s/blobs: run gpuctl check to see which jobs "
			  "they belong to", missing, d->cfg.data_dir);
	free(refs);
}

static void say_damaged(struct gpud *d, const char *dbpath, const char *err)
{
	LOG_ERROR(&d->log, "%s", err);
	LOG_ERROR(&d->log,
		  "gpud will not start on a damaged database, and has changed "
		  "nothing in %s. To recover: stop here; copy the whole "
		  "directory somewhere safe; then either start gpud on a copy "
		  "of the last backup (gpuctl backup wrote it: cp -a BACKUP "
		  "NEWDIR; gpud --data NEWDIR), or salvage what SQLite can "
		  "still read: sqlite3 %s .recover | sqlite3 %s.recovered, move "
		  "%s, %s-wal and %s-shm aside and %s.recovered to %s, start "
		  "gpud and run gpuctl check.", d->cfg.data_dir, dbpath, dbpath,
		  dbpath, dbpath, dbpath, dbpath, dbpath);
}

int server_start(struct gpud *d)
{
	char err[1024];
	char dbpath[4096];
	int rc;

	d->wake_parked = server_wake;
	snprintf(dbpath, sizeof(dbpath), "%s/gpud.db", d->cfg.data_dir);
	/* Checked before anything is written: listen_pipe replaces a socket
	 * file, which must be none but a dead gpud's. */
	if (socket_in_use(d->cfg.socket_path)) {
		LOG_ERROR(&d->log, "another process listens on %s: give this gpud "
			  "its own --socket", d->cfg.socket_path);
		return GERR_STATE;
	}
	rc = datadir_check_fresh(d->cfg.data_dir, d->cfg.init, &d->log, err,
				 sizeof(err));
	if (rc) {
		LOG_ERROR(&d->log, "%s", err);
		return rc;
	}
	rc = store_open(dbpath, &d->store, err, sizeof(err));
	if (rc == GERR_CORRUPT) {
		say_damaged(d, dbpath, err);
		return rc;
	}
	if (rc) {
		LOG_ERROR(&d->log, "cannot open %s: %s", dbpath, err);
		return rc;
	}
	rc = load_identity(d);
	if (rc)
		return rc;
	rc = local_token(d, d->store);
	if (rc)
		return rc;
	sweep_blobs(d);
	audit_digests(d->store, &d->log);
	rc = dbq_open(d->loop, d->store, &d->dbq);
	if (rc)
		return rc;
	recover(d, 1);
	rc = listeners_start(d, &handlers);
	if (!rc)
		rc = listen_pipe(d);
	if (!rc)
		rc = listen_tcp(d);
	if (!rc)
		rc = listen_http(d);
	if (rc)
		return rc;
	uv_timer_init(d->loop, &d->expiry_timer);
	d->expiry_timer.data = d;
	uv_timer_start(&d->expiry_timer, on_expiry_timer, EXPIRY_PERIOD_MS,
		       EXPIRY_PERIOD_MS);
	uv_timer_init(d->loop, &d->sample_timer);
	d->sample_timer.data = d;
	uv_timer_start(&d->sample_timer, on_sample_timer, 0, SAMPLE_PERIOD_MS);
	if ((rc = lifecycle_start(d)))
		return rc;
	/* The expiry tick (1 s) carries the pings; systemd wants them at
	 * least every WATCHDOG_USEC, so anything from 3 s up works. */
	d->watchdog = notify_watchdog_usec() >= 3000000;
	if (notify_watchdog_usec() && !d->watchdog)
		LOG_WARN(&d->log, "WatchdogSec below 3 s is too short for gpud; no pings");
	notify_send("READY=1\nSTATUS=serving");
	return 0;
}

static void on_drain_tick(uv_timer_t *t)
{
	struct gpud *d = t->data;
	int held = conn_count_leases(d);

	if (held > 0 && uv_now(d->loop) < d->drain_deadline)
		return;
	if (held > 0)
		LOG_WARN(&d->log, "drain: %d worker(s) did not release in time; "
			 "their leases resume from the last checkpoint", held);
	else
		LOG_INFO(&d->log, "drain: every lease checkpointed and released");
	uv_close((uv_handle_t *)&d->drain_timer, NULL);
	d->drain_done(d);
}

void server_drain(struct gpud *d, void (*done)(struct gpud *d))
{
	d->draining = 1;
	d->drain_done = done;
	d->drain_deadline = uv_now(d->loop) + (uint64_t)(d->cfg.drain_s * 1000);
	notify_send("STATUS=draining: workers checkpoint and release their leases");
	conn_wake_parked(d); /* parked claims get their NOLEASE now */
	uv_timer_init(d->loop, &d->drain_timer);
	d->drain_timer.data = d;
	uv_timer_start(&d->drain_timer, on_drain_tick, 0, 100);
}

static void on_dbq_closed(void *opaque)
{
	struct gpud *d = opaque;

	store_close(d->store);
	d->store = NULL;
}

void server_stop(struct gpud *d)
{
	if (d->stopping)
		return;
	d->stopping = 1;
	notify_send("STOPPING=1\nSTATUS=stopping: finishing database work in flight");
	LOG_INFO(&d->log, "stopping: finishing database work in flight");
	if (d->expiry_timer.data)
		uv_close((uv_handle_t *)&d->expiry_timer, NULL);
	if (d->sample_timer.data)
		uv_close((uv_handle_t *)&d->sample_timer, NULL);
	/* Stopped during a drain (a second signal): its timer goes too. */
	if (d->draining && !uv_is_closing((uv_handle_t *)&d->drain_timer))
		uv_close((uv_handle_t *)&d->drain_timer, NULL);
	lifecycle_stop(d);
	if (d->listeners) {
		listeners_stop(d);
		unlink(d->cfg.socket_path);
	}
	http_stop(d); /* what waits is answered 503 */
	conn_close_all(d);
	if (d->dbq) {
		dbq_close(d->dbq, on_dbq_closed, d);
		d->dbq = NULL;
	}
	gpud_rate_clear(d);
}

/* lifecycle.c - the lifecycle tick and the end hook (lifecycle.h). */
#include "lifecycle.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dbq.h"
#include "gerr.h"
#include "results.h"
#include "store.h"
#include "store_lifecycle.h"
#include "workload.h"

extern char **environ;

#define KILLED_STOPPING 2
/* After a hook exits, how long its pipes may still bring output. */
#define HOOK_DRAIN_MS 1000

/* One end waiting for its hook. */
struct hook_job {
	int64_t job;
	char state[16];
	char workload[64];
	char name[STORE_JOB_NAME_MAX + 1];
	struct hook_job *next;
};

/* One hook running: its process, its two output pipes, its timeout. */
struct hook_run {
	struct lifecycle *lc;
	uv_process_t proc;
	uv_pipe_t out[2];
	uv_timer_t timer;
	int64_t job;
	int open;               /* handles not closed yet */
	int killed;             /* 1: at its timeout; KILLED_STOPPING */
	int exited;             /* its exit seen; the pipes drain */
	size_t logged;          /* output bytes logged */
	char line[2][256];      /* a line being read, per pipe */
	char rbuf[4096];        /* what a read lands in */
	size_t line_n[2];
	struct hook_run *next;
};

struct lifecycle {
	struct gpud *d;
	uv_timer_t tick;
	int tick_open;
	int busy;               /* a tick's database work in flight */
	int stopping;
	int64_t last_event;     /* the newest end handled; -1 before the first tick */
	double last_tick;       /* gclock_wall of the last tick, 0 none */
	struct hook_job *q_head, *q_tail;
	size_t q_n;
	struct hook_run *running;
	unsigned n_running;
};

struct tick_req {
	struct lifecycle *lc;
	double now, ran;
	int64_t last_event;
	int rc;
	int64_t stopped[STORE_TICK_MAX];
	size_t n_stopped;
	struct store_job_end *ends;
	size_t n_ends;
	uint64_t dependents;
	char msg[256];          /* the store's message when rc */
};

static void maybe_free(struct lifecycle *lc)
{
	if (lc->stopping && !lc->busy && !lc->tick_open && !lc->n_running &&
	    !lc->running)
		free(lc);
}

/* ---- the hook ---- */

static void run_close_cb(uv_handle_t *h)
{
	struct hook_run *hr = h->data;
	struct lifecycle *lc = hr->lc;

	if (--hr->open > 0)
		return;
	for (struct hook_run **p = &lc->running; *p; p = &(*p)->next)
		if (*p == hr) {
			*p = hr->next;
			break;
		}
	free(hr);
	maybe_free(lc);
}

static void run_close(struct hook_run *hr)
{
	uv_handle_t *hs[4] = { (uv_handle_t *)&hr->proc, (uv_handle_t *)&hr->out[0],
			       (uv_handle_t *)&hr->out[1], (uv_handle_t *)&hr->timer };

	for (int i = 0; i < 4; i++)
		if (!uv_is_closing(hs[i]))
			uv_close(hs[i], run_close_cb);
}

static void hook_next(struct lifecycle *lc);
static void on_hook_timeout(uv_timer_t *t);

/* A line of the hook's output into gpud's log, within the bound. */
static void log_line(struct hook_run *hr, const char *s, size_t n)
{
	struct gpud *d = hr->lc->d;

	if (hr->logged >= LIFECYCLE_HOOK_LOG_MAX)
		return;
	hr->logged += n + 1;
	if (hr->logged >= LIFECYCLE_HOOK_LOG_MAX) {
		LOG_INFO(&d->log, "end hook job=%" PRId64 ": (more output not logged)",
			 hr->job);
		return;
	}
	/* Printable ASCII only into the log. */
	char clean[sizeof(hr->line[0]) + 1];
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < sizeof(clean); i++)
		clean[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	clean[k] = '\0';
	LOG_INFO(&d->log, "end hook job=%" PRId64 ": %s", hr->job, clean);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct hook_run *hr = h->data;

	(void)suggested;
	/* Both pipes share it: each read is consumed before the next. */
	buf->base = hr->rbuf;
	buf->len = sizeof(hr->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct hook_run *hr = s->data;
	int k = (uv_pipe_t *)s == &hr->out[0] ? 0 : 1;

	if (nread < 0) {
		/* The end of its output (every holder of the pipe gone). */
		if (hr->line_n[k])
			log_line(hr, hr->line[k], hr->line_n[k]);
		hr->line_n[k] = 0;
		if (!uv_is_closing((uv_handle_t *)s))
			uv_close((uv_handle_t *)s, run_close_cb);
		return;
	}
	for (ssize_t i = 0; i < nread; i++) {
		char c = buf->base[i];

		if (c == '\n' || hr->line_n[k] == sizeof(hr->line[k])) {
			log_line(hr, hr->line[k], hr->line_n[k]);
			hr->line_n[k] = 0;
			if (c == '\n')
				continue;
		}
		hr->line[k][hr->line_n[k]++] = c;
	}
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct hook_run *hr = p->data;
	struct lifecycle *lc = hr->lc;
	struct gpud *d = lc->d;

	if (hr->killed == KILLED_STOPPING)
		LOG_WARN(&d->log, "end hook job=%" PRId64 " killed: gpud stops",
			 hr->job);
	else if (hr->killed)
		LOG_WARN(&d->log, "end hook job=%" PRId64 " killed after %.0f s "
			 "(end-hook-timeout)", hr->job, d->cfg.end_hook_timeout_s);
	else if (sig)
		LOG_WARN(&d->log, "end hook job=%" PRId64 " ended by signal %d",
			 hr->job, sig);
	else if (status)
		LOG_WARN(&d->log, "end hook job=%" PRId64 " exited with status %"
			 PRId64, hr->job, status);
	else
		LOG_INFO(&d->log, "end hook job=%" PRId64 " done", hr->job);
	/* Whatever its children still hold open, it is over: the group is
	 * killed (its pid cannot be reused while the group lives). What it
	 * wrote last is read until the pipes end, for at most HOOK_DRAIN_MS. */
	uv_kill(-p->pid, SIGKILL);
	lc->n_running--;
	hr->exited = 1;
	uv_close((uv_handle_t *)&hr->proc, run_close_cb);
	uv_timer_stop(&hr->timer);
	uv_timer_start(&hr->timer, on_hook_timeout, HOOK_DRAIN_MS, 0);
	hook_next(lc);
}

static void on_hook_timeout(uv_timer_t *t)
{
	struct hook_run *hr = t->data;

	if (hr->exited) {
		run_close(hr); /* pipes a child that left the group holds */
		return;
	}
	hr->killed = 1;
	/* Its process group: a hook's own children go with it. */
	uv_kill(-hr->proc.pid, SIGKILL);
}

/* The result path a hook is given: the job's plot when its workload
 * draws one, else its folder in the results directory. */
static void result_path(const struct gpud *d, const struct hook_job *j,
			char *buf, size_t len)
{
	const struct workload *wl = workload_find(j->workload);

	if (wl && wl->plot_name &&
	    results_path(d->cfg.results_dir, j->job, wl->plot_name, buf, len) == 0)
		return;
	snprintf(buf, len, "%s/job-%" PRId64, d->cfg.results_dir, j->job);
}

/* gpud's own variables a hook does not inherit: systemd's channels to
 * gpud (a hook must not speak for it) and the job's, which it is given. */
static int private_env(const char *e)
{
	static const char *const prefixes[] = { "NOTIFY_SOCKET=", "WATCHDOG_",
						"LISTEN_", "GPUD_JOB_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(e, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int hook_spawn(struct lifecycle *lc, const struct hook_job *j)
{
	struct gpud *d = lc->d;
	struct hook_run *hr = calloc(1, sizeof(*hr));
	char id[24], result[4096], e_id[48], e_state[48], e_result[4200],
		e_wl[96], e_name[96];
	size_t n_env = 0;
	char **env = NULL;
	int rc;

	if (!hr)
		return GERR_NOMEM;
	for (char **e = environ; e && *e; e++)
		n_env++;
	env = calloc(n_env + 6, sizeof(*env));
	if (!env) {
		free(hr);
		return GERR_NOMEM;
	}
	snprintf(id, sizeof(id), "%" PRId64, j->job);
	result_path(d, j, result, sizeof(result));
	snprintf(e_id, sizeof(e_id), "GPUD_JOB_ID=%s", id);
	snprintf(e_state, sizeof(e_state), "GPUD_JOB_STATE=%s", j->state);
	snprintf(e_result, sizeof(e_result), "GPUD_JOB_RESULT=%s", result);
	snprintf(e_wl, sizeof(e_wl), "GPUD_JOB_WORKLOAD=%s", j->workload);
	snprintf(e_name, sizeof(e_name), "GPUD_JOB_NAME=%s", j->name);
	size_t k = 0;
	for (size_t i = 0; i < n_env; i++)
		if (!private_env(environ[i]))
			env[k++] = environ[i];
	env[k++] = e_id;
	env[k++] = e_state;
	env[k++] = e_result;
	env[k++] = e_wl;
	env[k++] = e_name;
	env[k] = NULL;

	char *args[] = { (char *)d->cfg.end_hook, id, (char *)j->state, result,
			 (char *)j->workload, (char *)j->name, NULL };
	uv_stdio_container_t stdio[3] = {
		{ .flags = UV_IGNORE },
		{ .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
		  .data.stream = (uv_stream_t *)&hr->out[0] },
		{ .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
		  .data.stream = (uv_stream_t *)&hr->out[1] },
	};
	uv_process_options_t opt = {
		.exit_cb = on_exit_cb, .file = d->cfg.end_hook, .args = args,
		.env = env, .cwd = "/", .flags = UV_PROCESS_DETACHED,
		.stdio_count = 3, .stdio = stdio,
	};

	hr->lc = lc;
	hr->job = j->job;
	uv_pipe_init(d->loop, &hr->out[0], 0);
	uv_pipe_init(d->loop, &hr->out[1], 0);
	uv_timer_init(d->loop, &hr->timer);
	hr->out[0].data = hr->out[1].data = hr->timer.data = hr->proc.data = hr;
	hr->next = lc->running;
	lc->running = hr;
	rc = uv_spawn(d->loop, &hr->proc, &opt);
	free(env);
	if (rc) {
		LOG_WARN(&d->log, "end hook job=%" PRId64 ": cannot run %s: %s",
			 j->job, d->cfg.end_hook, uv_strerror(rc));
		/* uv_spawn's failure leaves its handle to be closed too. */
		hr->open = 4;
		run_close(hr);
		return 0;
	}
	hr->open = 4;
	lc->n_running++;
	uv_read_start((uv_stream_t *)&hr->out[0], on_alloc, on_read);
	uv_read_start((uv_stream_t *)&hr->out[1], on_alloc, on_read);
	uv_timer_start(&hr->timer, on_hook_timeout,
		       (uint64_t)(d->cfg.end_hook_timeout_s * 1000), 0);
	LOG_INFO(&d->log, "end hook job=%" PRId64 " state=%s: started %s (pid %d)",
		 j->job, j->state, d->cfg.end_hook, hr->proc.pid);
	return 0;
}

/* Start queued hooks while fewer than end_hook_max run. */
static void hook_next(struct lifecycle *lc)
{
	struct gpud *d = lc->d;

	while (!lc->stopping && lc->q_head && d->cfg.end_hook &&
	       lc->n_running < d->cfg.end_hook_max) {
		struct hook_job *j = lc->q_head;

		lc->q_head = j->next;
		if (!lc->q_head)
			lc->q_tail = NULL;
		lc->q_n--;
		if (hook_spawn(lc, j))
			LOG_WARN(&d->log, "end hook job=%" PRId64 ": out of memory; "
				 "skipped", j->job);
		free(j);
	}
}

static void hook_queue(struct lifecycle *lc, const struct store_job_end *e)
{
	struct gpud *d = lc->d;
	struct hook_job *j;

	if (lc->q_n >= LIFECYCLE_HOOK_QUEUE_MAX || !(j = calloc(1, sizeof(*j)))) {
		LOG_WARN(&d->log, "end hook job=%" PRId64 " state=%s skipped: %zu "
			 "hooks wait already", e->job_id, e->state, lc->q_n);
		return;
	}
	j->job = e->job_id;
	snprintf(j->state, sizeof(j->state), "%s", e->state ? e->state : "");
	snprintf(j->workload, sizeof(j->workload), "%s", e->workload ? e->workload : "");
	snprintf(j->name, sizeof(j->name), "%s", e->name ? e->name : "");
	if (lc->q_tail)
		lc->q_tail->next = j;
	else
		lc->q_head = j;
	lc->q_tail = j;
	lc->q_n++;
}

/* ---- the tick ---- */

static void tick_work(struct store *st, void *arg)
{
	struct tick_req *r = arg;
	uint64_t n;

	if (r->last_event < 0) {
		/* At start: ends before it run no hook; a job whose
		 * predecessor failed while its end was not handled fails now. */
		if ((r->rc = store_event_last_id(st, &r->last_event)))
			return;
		if (store_job_fail_dependents(st, 0, r->now, &n) == 0)
			r->dependents += n;
	}
	r->rc = store_lifecycle_tick(st, r->now, r->ran, r->stopped, &r->n_stopped);
	if (r->rc)
		snprintf(r->msg, sizeof(r->msg), "%s", store_errmsg(st));
	if (store_job_ends(st, r->last_event, 64, &r->ends, &r->n_ends))
		return;
	for (size_t i = 0; i < r->n_ends; i++) {
		const struct store_job_end *e = &r->ends[i];

		if (e->state && strcmp(e->state, "done") != 0 &&
		    store_job_fail_dependents(st, e->job_id, r->now, &n) == 0)
			r->dependents += n;
		r->last_event = e->event_id;
	}
}

static void tick_after(void *arg)
{
	struct tick_req *r = arg;
	struct lifecycle *lc = r->lc;
	struct gpud *d = lc->d;
	int wake = 0;

	lc->busy = 0;
	if (r->last_event >= 0)
		lc->last_event = r->last_event;
	if (r->rc)
		LOG_WARN(&d->log, "lifecycle tick: %s: %s", gerr_str(r->rc), r->msg);
	for (size_t i = 0; i < r->n_stopped; i++)
		LOG_WARN(&d->log, "job=%" PRId64 " stopped: its time limit is "
			 "reached (gpuctl requeue continues it)", r->stopped[i]);
	if (r->dependents)
		LOG_WARN(&d->log, "%" PRIu64 " job(s) failed: the job each was "
			 "to run after failed or was cancelled", r->dependents);
	for (size_t i = 0; i < r->n_ends; i++) {
		const struct store_job_end *e = &r->ends[i];

		if (e->state && strcmp(e->state, "done") == 0)
			wake = 1;
		if (d->cfg.end_hook && !lc->stopping)
			hook_queue(lc, e);
	}
	store_job_end_free_array(r->ends, r->n_ends);
	free(r);
	/* A job that waited for one now done may run. */
	if (wake && !lc->stopping)
		gpud_wake_parked(d);
	hook_next(lc);
	maybe_free(lc);
}

static void on_tick(uv_timer_t *t)
{
	struct lifecycle *lc = t->data;
	struct tick_req *r;
	double now = gclock_wall(), ran = 0;

	if (lc->busy || lc->stopping)
		return;
	/* A tick counts the time since the last, at most two periods: a
	 * stalled loop or a stopped gpud is no time run. */
	if (lc->last_tick > 0 && now > lc->last_tick)
		ran = now - lc->last_tick;
	if (ran > 2.0 * LIFECYCLE_PERIOD_MS / 1000)
		ran = 2.0 * LIFECYCLE_PERIOD_MS / 1000;
	lc->last_tick = now;
	if (!(r = calloc(1, sizeof(*r))))
		return;
	*r = (struct tick_req){ .lc = lc, .now = now, .ran = ran,
				.last_event = lc->last_event };
	lc->busy = 1;
	if (dbq_submit(lc->d->dbq, tick_work, tick_after, r)) {
		lc->busy = 0;
		free(r);
	}
}

static void tick_closed(uv_handle_t *h)
{
	struct lifecycle *lc = h->data;

	lc->tick_open = 0;
	maybe_free(lc);
}

int lifecycle_start(struct gpud *d)
{
	struct lifecycle *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return GERR_NOMEM;
	lc->d = d;
	lc->last_event = -1;
	uv_timer_init(d->loop, &lc->tick);
	lc->tick.data = lc;
	lc->tick_open = 1;
	uv_timer_start(&lc->tick, on_tick, 0, LIFECYCLE_PERIOD_MS);
	d->lifecycle = lc;
	return 0;
}

void lifecycle_stop(struct gpud *d)
{
	struct lifecycle *lc = d ? d->lifecycle : NULL;

	if (!lc)
		return;
	d->lifecycle = NULL;
	lc->stopping = 1;
	if (lc->q_n)
		LOG_WARN(&d->log, "stopping: %zu end hook(s) not run", lc->q_n);
	while (lc->q_head) {
		struct hook_job *j = lc->q_head;
		lc->q_head = j->next;
		free(j);
	}
	lc->q_tail = NULL;
	lc->q_n = 0;
	/* Hooks still running are killed: shutdown waits for no hook. */
	for (struct hook_run *hr = lc->running; hr; hr = hr->next)
		if (!hr->exited && !uv_is_closing((uv_handle_t *)&hr->proc) &&
		    hr->proc.pid > 0) {
			hr->killed = KILLED_STOPPING;
			uv_kill(-hr->proc.pid, SIGKILL);
		}
	uv_close((uv_handle_t *)&lc->tick, tick_closed);
}

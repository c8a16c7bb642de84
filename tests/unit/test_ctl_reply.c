/* test_ctl_reply.c - the control API's typed replies (common/ctlcmd.c):
 * every reply that gpud builds from its struct decodes back equal, with
 * the keys and JSON types that gpuctl --json, the status page and
 * /metrics read (nulls for "not yet", reals for times and rates); a
 * malformed reply is refused with the path of the field at fault; a
 * stand-in's reply that leaves out what gpuctl does not need is read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ctlcmd.h"
#include "gerr.h"
#include "unit_main.h"

/* Encode rep as id's reply, then decode it into *out (cleared by the
 * caller); the JSON is returned for its keys. */
static json_t *round_trip(enum ctlcmd_id id, const struct ctlcmd_reply *rep,
			  struct ctlcmd_reply *out)
{
	char err[256] = "";
	json_t *r = ctlcmd_reply_encode(id, rep);

	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[id], r, out, err,
					     sizeof(err)), 0);
	assert_string_equal(err, "");
	return r;
}

/* Decoding r as id's reply fails with want. */
static void refused(enum ctlcmd_id id, const char *text, const char *want)
{
	struct ctlcmd_reply out;
	char err[256] = "";
	json_t *r = json_loads(text, 0, NULL);

	assert_non_null(r);
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[id], r, &out, err,
					     sizeof(err)), GERR_INVAL);
	assert_string_equal(err, want);
	json_decref(r);
}

static const char *holders[] = { "node7-gpu0", "node8-gpu1" };

static struct ctlcmd_job sample_job(int64_t id)
{
	return (struct ctlcmd_job){
		.id = id, .name = "big-run", .workload = "graveler",
		.unit_name = "battles", .state = "running", .priority = -3,
		.total_units = 1000000000, .units_done = 430000000,
		.units_running = 12, .units_verified = 400000000,
		.leases = { 3, 1, 0, 2, 0, 0 }, .replicas = { 0, 0, 0, 0, 0, 1 },
		.replicas_waiting = 2, .failed_waiting = 1, .check = "full",
		.workers = holders, .n_workers = 2, .reason = NULL,
		.submitted_at = 1700000000.5, .created_at = 1700000000.5,
		.started_at = 1700000100.25, .finished_at = 0, .elapsed_s = 100,
		.avg_rate = 4.3e6, .attempts = 2, .verify_failures = 0,
		.damaged = NULL, .rate = 5.49e7, .eta_s = 600,
	};
}

static void job_equal(const struct ctlcmd_job *a, const struct ctlcmd_job *b)
{
	assert_int_equal(a->id, b->id);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->workload, b->workload);
	assert_string_equal(a->state, b->state);
	assert_int_equal(a->priority, b->priority);
	assert_int_equal(a->units_running, b->units_running);
	assert_memory_equal(a->leases, b->leases, sizeof(a->leases));
	assert_memory_equal(a->replicas, b->replicas, sizeof(a->replicas));
	assert_int_equal(a->n_workers, b->n_workers);
	for (size_t i = 0; i < a->n_workers; i++)
		assert_string_equal(a->workers[i], b->workers[i]);
	assert_null(b->reason);
	assert_true(a->started_at == b->started_at && a->finished_at == b->finished_at);
	assert_true(a->avg_rate == b->avg_rate && a->eta_s == b->eta_s);
	assert_int_equal(a->verify_failures, b->verify_failures);
}

/* status: the job row's keys in gpud's order, nulls for what is not
 * there yet, reals for times and rates; and back. */
static void test_status(void **state)
{
	struct ctlcmd_job jobs[2] = { sample_job(1), sample_job(2) };
	const char *warn[] = { "out of file descriptors (last 3 s ago)" };
	struct ctlcmd_reply out;
	json_t *r, *j;

	(void)state;
	jobs[1].params = json_pack("{s:i}", "n", 7);
	jobs[1].name = NULL;
	jobs[1].eta_s = 0;
	r = round_trip(CTLCMD_STATUS, &(struct ctlcmd_reply){ .jobs = jobs, .n_jobs = 2,
		       .hidden = 3, .warnings = warn, .n_warnings = 1 }, &out);
	assert_int_equal(out.n_jobs, 2);
	assert_int_equal(out.hidden, 3);
	assert_string_equal(out.warnings[0], warn[0]);
	job_equal(&jobs[0], &out.jobs[0]);
	assert_null(out.jobs[1].name);
	assert_true(json_equal(out.jobs[1].params, jobs[1].params));
	j = json_array_get(json_object_get(r, "jobs"), 1);
	assert_true(json_is_null(json_object_get(j, "name")));
	assert_true(json_is_null(json_object_get(j, "finished_at")));
	assert_true(json_is_null(json_object_get(j, "eta_s")));
	assert_true(json_is_null(json_object_get(j, "reason")));
	assert_true(json_is_real(json_object_get(j, "started_at")));
	assert_true(json_is_real(json_object_get(j, "elapsed_s")));
	assert_true(json_is_integer(json_object_get(j, "attempts")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "leases"),
							    "cancelled")), 0);
	assert_true(json_is_null(json_object_get(j, "owner")));
	assert_int_equal(json_object_size(j), 30);
	/* The first key and the last, as gpud has always written them. */
	assert_string_equal(json_object_iter_key(json_object_iter(j)), "id");
	assert_ptr_equal(ctlcmd_reply_list(CTLCMD_STATUS, r), json_object_get(r, "jobs"));
	ctlcmd_reply_clear(&out);
	json_decref(r);
	json_decref(jobs[1].params);
	/* No warning: no key. */
	r = ctlcmd_reply_encode(CTLCMD_STATUS, &(struct ctlcmd_reply){ .n_jobs = 0 });
	assert_non_null(r);
	assert_null(json_object_get(r, "warnings"));
	assert_int_equal(json_array_size(json_object_get(r, "jobs")), 0);
	json_decref(r);
}

static void test_workers(void **state)
{
	struct ctlcmd_worker w[2] = {
		{ .id = 1, .name = "fleet@node7/slurm9_0/cuda:0",
		  .credential = "fleet", .instance = "node7/slurm9_0/cuda:0",
		  .device = "cuda:0", .online = 1,
		  .failures = 2, .rate = 5.5e7, .last_seen = 1700000000,
		  .place = { "node7", NULL, NULL, "pod-3" }, .lease = 40, .trust_after = 3,
		  .trusted = 1, .job = 2, .threads = 16, .job_unit = "battles" },
		{ .id = 2, .name = "idle", .device = "cpu" },
	};
	struct ctlcmd_reply out;
	json_t *r, *o;

	(void)state;
	r = round_trip(CTLCMD_WORKERS, &(struct ctlcmd_reply){ .workers = w, .n_workers = 2 },
		       &out);
	assert_int_equal(out.n_workers, 2);
	assert_string_equal(out.workers[0].name, "fleet@node7/slurm9_0/cuda:0");
	assert_string_equal(out.workers[0].credential, "fleet");
	assert_string_equal(out.workers[0].instance, "node7/slurm9_0/cuda:0");
	assert_null(out.workers[1].credential); /* an older gpud's row */
	assert_string_equal(out.workers[0].place[0], "node7");
	assert_null(out.workers[0].place[1]);
	assert_string_equal(out.workers[0].place[3], "pod-3");
	assert_int_equal(out.workers[0].lease, 40);
	assert_int_equal(out.workers[0].threads, 16);
	assert_string_equal(out.workers[0].job_unit, "battles");
	assert_true(out.workers[0].job_unit_sent && out.workers[1].job_unit_sent);
	assert_int_equal(out.workers[1].lease, 0);
	assert_null(out.workers[1].job_unit);
	o = json_array_get(json_object_get(r, "workers"), 1);
	assert_true(json_is_null(json_object_get(o, "lease")));
	assert_true(json_is_null(json_object_get(o, "job")));
	assert_true(json_is_null(json_object_get(o, "threads")));
	assert_true(json_is_null(json_object_get(o, "host")));
	assert_true(json_is_real(json_object_get(o, "rate")));
	assert_true(json_is_false(json_object_get(o, "online")));
	ctlcmd_reply_clear(&out);
	json_decref(r);
}

static void test_others(void **state)
{
	struct ctlcmd_token t[1] = { { "w1", 1700000000, 1, "viewer" } };
	struct ctlcmd_problem p[1] = { { 3, 0, "params of job", "ab12", "missing" } };
	int64_t dj[1] = { 3 };
	const char *db[] = { "row 4 missing from index" }, *ex[] = { "values", "plot" };
	struct ctlcmd_wl_param wp[1] = { { "n", "integer", NULL, "how many" } };
	struct ctlcmd_wl_export we[1] = { { "plot", "the plot" } };
	struct ctlcmd_workload wl[1] = { { "graveler", "battles", "", wp, 1, we, 1, 1 } };
	struct ctlcmd_reply out;
	json_t *r;

	(void)state;
	r = round_trip(CTLCMD_TOKEN_LIST, &(struct ctlcmd_reply){ .tokens = t, .n_tokens = 1 },
		       &out);
	assert_string_equal(out.tokens[0].role, "viewer");
	assert_true(out.tokens[0].revoked);
	ctlcmd_reply_clear(&out);
	json_decref(r);
	r = round_trip(CTLCMD_TOKEN_ADD, &(struct ctlcmd_reply){ .token = "w1:s3cr3t",
		       .role = AUTH_ROLE_ADMIN, .gpud_key = "ab", .credential = NULL }, &out);
	assert_int_equal(out.role, AUTH_ROLE_ADMIN);
	assert_null(out.credential);
	assert_true(json_is_null(json_object_get(r, "credential")));
	json_decref(r);
	r = round_trip(CTLCMD_CHECK, &(struct ctlcmd_reply){ .damaged = 1, .database = db,
		       .n_database = 1, .references = 4, .blobs_checked = 3, .problems = p,
		       .n_problems = 1, .problems_total = 5, .damaged_jobs = dj,
		       .n_damaged_jobs = 1 }, &out);
	assert_true(out.damaged);
	assert_int_equal(out.damaged_jobs[0], 3);
	assert_string_equal(out.problems[0].problem, "missing");
	assert_int_equal(out.problems[0].lease, 0);
	assert_true(json_is_null(json_object_get(json_array_get(
		json_object_get(r, "problems"), 0), "lease")));
	ctlcmd_reply_clear(&out);
	json_decref(r);
	r = round_trip(CTLCMD_PAGE_LINK, &(struct ctlcmd_reply){
		.url = "http://127.0.0.1:7780/login?key=ab", .key = "ab",
		.expires_at = 1e9, .revoked_links = 0 }, &out);
	assert_string_equal(out.url, "http://127.0.0.1:7780/login?key=ab");
	assert_string_equal(out.key, "ab");
	assert_true(out.expires_at == 1e9);
	json_decref(r);
	ctlcmd_reply_clear(&out);
	r = round_trip(CTLCMD_WORKER_DRAIN, &(struct ctlcmd_reply){ .worker = "fleet@n1:7",
		       .changed = 1 }, &out);
	assert_string_equal(out.worker, "fleet@n1:7");
	assert_int_equal(out.changed, 1);
	json_decref(r);
	ctlcmd_reply_clear(&out);
	r = round_trip(CTLCMD_PAGE_LINK, &(struct ctlcmd_reply){ .revoked_links = 3 }, &out);
	assert_null(out.url);
	assert_int_equal(out.revoked_links, 3);
	json_decref(r);
	ctlcmd_reply_clear(&out);
	r = round_trip(CTLCMD_BACKUP, &(struct ctlcmd_reply){ .path = "/b", .bytes = 9,
		       .database_blake2b = "cd", .ident_files = 2, .seconds = 1.5,
		       .verified = 1, .problems_total = 0 }, &out);
	assert_int_equal(out.ident_files, 2);
	assert_int_equal(json_integer_value(json_object_get(r, "files")), 2);
	assert_int_equal(json_array_size(json_object_get(r, "database")), 0);
	ctlcmd_reply_clear(&out);
	json_decref(r);
	r = round_trip(CTLCMD_WORKLOADS, &(struct ctlcmd_reply){ .workloads = wl,
		       .n_workloads = 1 }, &out);
	assert_int_equal(out.workloads[0].n_params, 1);
	assert_null(out.workloads[0].params[0].def);
	assert_string_equal(out.workloads[0].exports[0].help, "the plot");
	assert_true(out.workloads[0].extend);
	ctlcmd_reply_clear(&out);
	json_decref(r);
	r = round_trip(CTLCMD_RESULT, &(struct ctlcmd_reply){ .job = 4, .workload = "graveler",
		       .state = "done", .answer_bytes = 10, .text = "max 177\n",
		       .exports = ex, .n_exports = 2, .units_verified = 9 }, &out);
	assert_string_equal(out.exports[1], "plot");
	assert_int_equal(out.n_files, 0);
	assert_true(json_is_null(json_object_get(r, "reason")));
	assert_true(json_is_null(json_object_get(r, "params")));
	ctlcmd_reply_clear(&out);
	r = ctlcmd_result_answer(r, json_integer(1));
	assert_null(json_object_get(r, "ok"));
	assert_null(json_object_get(r, "text"));
	assert_int_equal(json_integer_value(json_object_get(r, "answer")), 1);
	json_decref(r);
}

/* A malformed reply is refused, and says where. */
static void test_malformed(void **state)
{
	(void)state;
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[{\"id\":1,\"workload\":\"w\","
		"\"state\":\"done\"},{\"id\":2,\"workload\":\"w\",\"state\":\"done\","
		"\"units_done\":\"many\"}]}",
		"jobs[1].units_done: is not an integer from 0 to 9223372036854775807");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[{\"workload\":\"w\",\"state\":\"x\"}]}",
		"jobs[0].id: missing, wants a positive integer");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":{}}",
		"jobs: is not an array of objects");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[7]}", "jobs[0]: not an object");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[{\"id\":1,\"workload\":\"w\","
		"\"state\":\"done\",\"leases\":{\"pending\":-1}}]}",
		"jobs[0].leases: is not an object of 6 counts (pending, ..)");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[{\"id\":1,\"workload\":\"w\","
		"\"state\":\"done\",\"workers\":[\"a\",3]}]}", "jobs[0].workers[1]: not a string");
	refused(CTLCMD_STATUS, "{\"ok\":true,\"jobs\":[{\"id\":1,\"workload\":\"w\","
		"\"state\":\"done\",\"name\":\"no spaces\"}]}",
		"jobs[0].name: is not a name of 1 to 64 characters of A-Z a-z 0-9 . _ -, "
		"or null");
	refused(CTLCMD_WORKERS, "{\"ok\":true,\"workers\":[{\"id\":1,\"name\":\"a\","
		"\"online\":1}]}", "workers[0].online: is not true or false");
	refused(CTLCMD_CHECK, "{\"ok\":true,\"damaged_jobs\":[1,-2]}",
		"damaged_jobs[1]: not an integer in range");
	refused(CTLCMD_WORKLOADS, "{\"ok\":true,\"workloads\":[{\"name\":\"g\","
		"\"params\":[{\"type\":\"x\"}]}]}", "workloads[0].params[0].name: missing, "
		"wants a string");
	refused(CTLCMD_TOKEN_ADD, "{\"ok\":true,\"role\":\"root\"}",
		"role: is not worker, viewer or admin");
	refused(CTLCMD_STATUS, "[]", "not a JSON object");
}

/* What a stand-in (or an older gpud) leaves out reads as its default:
 * counts 0, times "not sent", no unit sent. */
static void test_lenient(void **state)
{
	struct ctlcmd_reply out;
	char err[256];
	json_t *r = json_loads("{\"ok\":true,\"jobs\":[{\"id\":5,\"workload\":\"w\","
			       "\"state\":\"active\",\"leases\":{\"leased\":2}}],"
			       "\"workers\":[]}", 0, NULL);

	(void)state;
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_STATUS], r, &out, err,
					     sizeof(err)), 0);
	assert_int_equal(out.jobs[0].leases[1], 2);
	assert_int_equal(out.jobs[0].leases[0], 0);
	assert_true(out.jobs[0].elapsed_s < 0 && out.jobs[0].avg_rate < 0);
	assert_true(out.jobs[0].started_at < 0);
	assert_true(out.jobs[0].priority == INT64_MIN && out.jobs[0].attempts < 0);
	assert_int_equal(out.hidden, 0);
	assert_null(out.warnings);
	ctlcmd_reply_clear(&out);
	ctlcmd_reply_clear(&out);  /* zeroed: a no-op */
	ctlcmd_reply_clear(NULL);
	json_decref(r);
	r = json_loads("{\"ok\":true,\"workers\":[{\"id\":1,\"name\":\"a\"}]}", 0, NULL);
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_WORKERS], r, &out, err,
					     sizeof(err)), 0);
	assert_false(out.workers[0].job_unit_sent);
	ctlcmd_reply_clear(&out);
	json_decref(r);
}

/* The envelope and the lease states' names. */
static void test_envelope(void **state)
{
	const char *e = NULL;
	json_t *r = ctlcmd_reply_error("no job 9");

	(void)state;
	assert_false(ctlcmd_reply_ok(r, &e));
	assert_string_equal(e, "no job 9");
	json_decref(r);
	r = ctlcmd_reply_encode(CTLCMD_SUBMIT, &(struct ctlcmd_reply){ .job = 1 });
	assert_true(ctlcmd_reply_ok(r, &e));
	assert_null(json_object_get(ctlcmd_reply_body(r), "ok"));
	json_decref(r);
	assert_string_equal(ctlcmd_lease_state_name(0), "pending");
	assert_string_equal(ctlcmd_lease_state_name(CTLCMD_LEASE_STATES - 1), "cancelled");
	assert_string_equal(ctlcmd_lease_state_name(CTLCMD_LEASE_STATES), "?");
	assert_null(ctlcmd_reply_list(CTLCMD_PING, r));
}

/* events: a job's rows, and a job's owner in status (issue 35). */
static void test_events(void **state)
{
	struct ctlcmd_event ev[2] = {
		{ .id = 4, .ts = 1795910400.5, .kind = "submit", .detail = "{}" },
		{ .id = 9, .ts = 1795910401.0, .kind = "grant", .lease = 2, .epoch = 1,
		  .worker = "fleet@n1" },
	};
	struct ctlcmd_job job = sample_job(5);
	struct ctlcmd_reply out = {0};
	json_t *r;

	(void)state;
	r = round_trip(CTLCMD_EVENTS, &(struct ctlcmd_reply){ .job = 5, .state = "active",
		       .events = ev, .n_events = 2, .last_event = 9 }, &out);
	assert_int_equal(out.n_events, 2);
	assert_int_equal(out.last_event, 9);
	assert_string_equal(out.state, "active");
	assert_true(out.events[0].ts == ev[0].ts && out.events[1].ts == ev[1].ts);
	assert_string_equal(out.events[0].detail, "{}");
	assert_null(out.events[0].worker);
	assert_true(json_is_null(json_object_get(json_array_get(
		json_object_get(r, "events"), 0), "lease")));
	assert_int_equal(out.events[1].lease, 2);
	assert_string_equal(out.events[1].worker, "fleet@n1");
	ctlcmd_reply_clear(&out);
	json_decref(r);
	refused(CTLCMD_EVENTS, "{\"ok\":true,\"job\":5,\"state\":\"done\",\"events\":"
		"[{\"ts\":1,\"kind\":\"x\"}],\"last_event\":1}",
		"events[0].id: missing, wants a positive integer");

	job.owner = "ops-admin";
	r = round_trip(CTLCMD_STATUS, &(struct ctlcmd_reply){ .jobs = &job, .n_jobs = 1 }, &out);
	assert_string_equal(out.jobs[0].owner, "ops-admin");
	ctlcmd_reply_clear(&out);
	json_decref(r);
}

UNIT_MAIN(cmocka_unit_test(test_status),
	cmocka_unit_test(test_workers),
	cmocka_unit_test(test_others),
	cmocka_unit_test(test_malformed),
	cmocka_unit_test(test_lenient),
	cmocka_unit_test(test_envelope),
	cmocka_unit_test(test_events))

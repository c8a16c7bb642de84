/* test_ctl_cmd.c - the control API's command table and codec
 * (common/ctlcmd.c): every row is whole, decoding refuses bad types,
 * values out of bounds and missing required fields with gpud's messages,
 * what gpuctl encodes decodes back the same, and the typed replies. */
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

/* Decode text as a request of its own "cmd"; returns the codec's code and
 * leaves its message in err. */
/* A token_add request's public key (any 64 hex digits decode). */
#define PK "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static int decode(const char *text, struct ctlcmd_req *out, char *err, size_t n)
{
	json_t *req = json_loads(text, JSON_ALLOW_NUL, NULL);
	const struct ctlcmd *c;
	int rc;

	assert_non_null(req);
	c = ctlcmd_find(json_string_value(json_object_get(req, "cmd")));
	assert_non_null(c);
	err[0] = '\0';
	rc = ctlcmd_decode(c, req, out, err, n);
	json_decref(req);
	return rc;
}

static void refused(const char *text, const char *want)
{
	struct ctlcmd_req out;
	char err[512];

	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(decode(text, &out, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, want);
	/* Nothing written on failure. */
	assert_int_equal(((unsigned char *)&out)[0], 0x5a);
}

static void test_table(void **state)
{
	(void)state;
	for (int i = 0; i < CTLCMD_COUNT; i++) {
		const struct ctlcmd *c = &ctlcmd_table[i];

		assert_non_null(c->name);
		assert_ptr_equal(ctlcmd_find(c->name), c);
		assert_true(c->role == AUTH_ROLE_VIEWER || c->role == AUTH_ROLE_ADMIN);
		/* Viewers read; nothing a viewer may ask changes anything
		 * but page_link, which stores a page key's hash. */
		if (c->role == AUTH_ROLE_VIEWER && i != CTLCMD_PAGE_LINK)
			assert_true(c->flags & CTLCMD_READONLY);
	}
	assert_null(ctlcmd_find("frobnicate"));
	assert_null(ctlcmd_find(NULL));
	assert_true(ctlcmd_allowed(ctlcmd_find("status"), AUTH_ROLE_VIEWER));
	assert_false(ctlcmd_allowed(ctlcmd_find("status"), AUTH_ROLE_WORKER));
	assert_false(ctlcmd_allowed(ctlcmd_find("cancel"), AUTH_ROLE_VIEWER));
	assert_true(ctlcmd_allowed(ctlcmd_find("cancel"), AUTH_ROLE_ADMIN));
	assert_false(ctlcmd_allowed(ctlcmd_find("token_list"), AUTH_ROLE_VIEWER));
}

static void test_bad_types(void **state)
{
	(void)state;
	refused("{\"cmd\":\"cancel\",\"job\":\"3\"}",
		"'cancel' needs a job id (a positive integer)");
	refused("{\"cmd\":\"status\",\"all\":1}", "'status': 'all' is true or false");
	refused("{\"cmd\":\"history\",\"limit\":2.5}",
		"'history' needs 'limit': an integer from 1 to 100000");
	refused("{\"cmd\":\"extend\",\"job\":1,\"args\":[]}",
		"'extend' needs 'args': an object");
	refused("{\"cmd\":\"export\",\"job\":1,\"what\":7}", "export needs 'what'");
	refused("{\"cmd\":\"page_link\",\"valid\":59}",
		"a page link is valid for 1 minute to 90 days");
	refused("{\"cmd\":\"page_link\",\"revoke\":1}",
		"page_link's 'revoke' is true or false");
	refused("{\"cmd\":\"backup\",\"dir\":\"/x\",\"copy\":\"yes\"}",
		"backup's 'copy' is true or false");
	refused("{\"cmd\":\"token_add\",\"name\":\"a\",\"role\":3}",
		"a token's role is worker, viewer or admin");
	refused("{\"cmd\":\"submit\",\"workload\":\"graveler\",\"args\":{},\"name\":5}",
		"a job name is 1 to 64 characters of A-Z a-z 0-9 . _ -");
}

static void test_out_of_bounds(void **state)
{
	(void)state;
	refused("{\"cmd\":\"result\",\"job\":0}",
		"'result' needs a job id (a positive integer)");
	refused("{\"cmd\":\"status\",\"job\":-4}",
		"'status' needs a job id (a positive integer)");
	refused("{\"cmd\":\"history\",\"limit\":100001}",
		"'history' needs 'limit': an integer from 1 to 100000");
	refused("{\"cmd\":\"priority\",\"job\":2,\"priority\":1001}",
		"'priority' needs 'priority': an integer from -1000 to 1000");
	refused("{\"cmd\":\"submit\",\"workload\":\"graveler\",\"args\":{},"
		"\"priority\":-1001}",
		"a job's priority is an integer from -1000 to 1000 (higher runs first)");
	refused("{\"cmd\":\"submit\",\"workload\":\"graveler\",\"args\":{},"
		"\"name\":\"no spaces\"}",
		"a job name is 1 to 64 characters of A-Z a-z 0-9 . _ -");
	refused("{\"cmd\":\"token_revoke\",\"name\":\"\"}",
		"token_revoke needs a valid token name");
	refused("{\"cmd\":\"token_add\",\"name\":\"a/b\"}",
		"token names are 1..64 characters of A-Z a-z 0-9 . _ -");
	refused("{\"cmd\":\"token_add\",\"name\":\"a\",\"role\":\"root\"}",
		"a token's role is worker, viewer or admin");
	refused("{\"cmd\":\"backup\",\"dir\":\"relative/dir\"}",
		"backup needs 'dir': an absolute path of at most 3800 bytes");
	/* A NUL inside a JSON string would cut the path short. */
	refused("{\"cmd\":\"backup\",\"dir\":\"/a\\u0000b\"}",
		"backup needs 'dir': an absolute path of at most 3800 bytes");
	refused("{\"cmd\":\"export\",\"job\":1,"
		"\"what\":\"123456789012345678901234567890123\"}", "export needs 'what'");
}

static void test_missing(void **state)
{
	(void)state;
	refused("{\"cmd\":\"pause\"}", "'pause' needs a job id (a positive integer)");
	refused("{\"cmd\":\"worker_drain\"}", "a worker is named CREDENTIAL@INSTANCE "
		"(gpuctl workers), or by its credential for all its processes");
	refused("{\"cmd\":\"worker_forgive\",\"name\":\"\"}", "a worker is named "
		"CREDENTIAL@INSTANCE (gpuctl workers), or by its credential for all its processes");
	/* null is absent: a required field still missing. */
	refused("{\"cmd\":\"resume\",\"job\":null}",
		"'resume' needs a job id (a positive integer)");
	refused("{\"cmd\":\"priority\",\"job\":2}",
		"'priority' needs 'priority': an integer from -1000 to 1000");
	refused("{\"cmd\":\"submit\",\"workload\":\"graveler\"}",
		"'submit' needs 'args': an object");
	refused("{\"cmd\":\"submit\",\"args\":{}}",
		"'submit' needs 'workload': a string of 0 to 255 bytes");
	refused("{\"cmd\":\"backup\"}",
		"backup needs 'dir': an absolute path of at most 3800 bytes");
	refused("{\"cmd\":\"token_revoke\"}", "token_revoke needs a valid token name");
}

static void test_defaults(void **state)
{
	struct ctlcmd_req q;
	char err[256];

	(void)state;
	assert_int_equal(decode("{\"cmd\":\"history\"}", &q, err, sizeof(err)), 0);
	assert_int_equal(q.cmd, CTLCMD_HISTORY);
	assert_int_equal(q.limit, CTLCMD_HISTORY_LIMIT_DEFAULT);
	assert_int_equal(q.all, 0);
	assert_int_equal(decode("{\"cmd\":\"token_add\",\"name\":\"w1\","
				"\"public_key\":\"" PK "\"}", &q, err,
				sizeof(err)), 0);
	assert_int_equal(q.role, AUTH_ROLE_WORKER);
	/* An optional null reads as absent; unknown keys are ignored. */
	assert_int_equal(decode("{\"cmd\":\"submit\",\"workload\":\"w\",\"args\":{},"
				"\"name\":null,\"extra\":1}", &q, err, sizeof(err)), 0);
	assert_null(q.name);
	assert_int_equal(q.priority, 0);
	assert_int_equal(decode("{\"cmd\":\"ping\",\"job\":\"x\"}", &q, err,
				sizeof(err)), 0);
	assert_int_equal(q.job, 0);
}

/* What gpuctl encodes, gpud decodes back to the same struct. */
static void round_trip(const struct ctlcmd_req *in)
{
	json_t *req = ctlcmd_encode(in);
	struct ctlcmd_req out;
	char err[256] = "";

	assert_non_null(req);
	assert_string_equal(json_string_value(json_object_get(req, "cmd")),
			    ctlcmd_table[in->cmd].name);
	assert_int_equal(ctlcmd_decode(&ctlcmd_table[in->cmd], req, &out, err,
				       sizeof(err)), 0);
	assert_int_equal(out.cmd, in->cmd);
	assert_int_equal(out.job, in->job);
	assert_int_equal(out.priority, in->priority);
	assert_int_equal(out.all, in->all);
	assert_int_equal(out.copy, in->copy);
	assert_true(out.args == in->args);
	assert_true((out.name == NULL) == (in->name == NULL));
	if (in->name)
		assert_string_equal(out.name, in->name);
	if (in->dir)
		assert_string_equal(out.dir, in->dir);
	if (in->what)
		assert_string_equal(out.what, in->what);
	if (in->cmd == CTLCMD_HISTORY)
		assert_int_equal(out.limit, in->limit);
	if (in->cmd == CTLCMD_TOKEN_ADD) {
		assert_int_equal(out.role, in->role);
		assert_string_equal(out.public_key, in->public_key);
	}
	json_decref(req);
}

static void test_round_trip(void **state)
{
	json_t *args = json_pack("{s:s}", "battles", "1e9");

	(void)state;
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_PING });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_STATUS, .job = 7, .all = 1 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_HISTORY, .limit = 5 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_HISTORY,
		   .limit = CTLCMD_HISTORY_LIMIT_DEFAULT });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_PRIORITY, .job = 2,
		   .priority = -1000 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_SUBMIT, .workload = "graveler",
		   .args = args, .name = "run-1", .priority = 7 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_EXPORT, .job = 3, .what = "plot",
		   .args = args });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_ADD, .name = "v",
		   .role = AUTH_ROLE_VIEWER, .public_key = PK });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_ADD, .name = "w",
		   .role = AUTH_ROLE_WORKER, .public_key = PK });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_BACKUP, .dir = "/b", .copy = 1 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_PAGE_LINK, .valid = 3600 });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_PAGE_LINK, .revoke = 1,
		   .valid = CTLCMD_PAGE_VALID_DEFAULT });
	/* A worker by its process's name (with '@' and ':'), or a credential. */
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_WORKER_DRAIN, .name = "fleet@n1:7" });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_WORKER_RESUME, .name = "fleet" });
	round_trip(&(struct ctlcmd_req){ .cmd = CTLCMD_WORKER_FORGIVE, .name = "a@b" });
	/* The encoded request holds its own reference to args. */
	assert_int_equal(args->refcount, 1);
	json_decref(args);
	assert_null(ctlcmd_encode(&(struct ctlcmd_req){ .cmd = CTLCMD_COUNT }));
	/* Text that is not UTF-8 cannot be JSON. */
	assert_null(ctlcmd_encode(&(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_REVOKE,
				  .name = "\xff" }));
}

/* The typed replies: what gpud encodes, gpuctl decodes; a reply that
 * breaks the table is refused. */
static void test_replies(void **state)
{
	struct ctlcmd_reply rep;
	char err[256];
	json_t *r;

	(void)state;
	r = ctlcmd_reply_encode(CTLCMD_EXTEND, &(struct ctlcmd_reply){ .job = 4,
				.state = "queued", .total_units = 9000 });
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_EXTEND], r, &rep,
					     err, sizeof(err)), 0);
	assert_int_equal(rep.job, 4);
	assert_string_equal(rep.state, "queued");
	assert_int_equal(rep.total_units, 9000);
	json_object_del(r, "state");
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_EXTEND], r, &rep,
					     err, sizeof(err)), GERR_INVAL);
	json_decref(r);
	r = json_pack("{s:b, s:i}", "ok", 1, "job", 0);
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_SUBMIT], r, &rep,
					     err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "'submit' needs a job id (a positive integer)");
	json_decref(r);
	/* Every row has a typed reply. */
	for (size_t i = 0; i < CTLCMD_COUNT; i++)
		assert_non_null(ctlcmd_table[i].reply);
}

/* history's filters, status's user and events (issue 35): decoded with
 * their bounds, refused with gpud's messages, and back as encoded. */
static void test_filters(void **state)
{
	struct ctlcmd_req out, in = { .cmd = CTLCMD_HISTORY, .limit = 9,
		.since = 1795910400, .until = 1795996800, .state = "done",
		.workload = "sudoku", .user = "uid 1000" };
	char err[512];
	json_t *req;

	(void)state;
	req = ctlcmd_encode(&in);
	assert_non_null(req);
	assert_int_equal(ctlcmd_decode(&ctlcmd_table[CTLCMD_HISTORY], req, &out, err,
				       sizeof(err)), 0);
	assert_true(out.since == in.since && out.until == in.until && out.limit == 9);
	assert_string_equal(out.state, "done");
	assert_string_equal(out.workload, "sudoku");
	assert_string_equal(out.user, "uid 1000");
	json_decref(req);
	assert_int_equal(decode("{\"cmd\":\"events\",\"job\":3}", &out, err,
				sizeof(err)), 0);
	assert_true(out.job == 3 && out.limit == CTLCMD_EVENTS_LIMIT_DEFAULT &&
		    out.since == 0 && out.after == 0);
	req = json_pack("{s:s, s:s}", "cmd", "status", "user", "ann");
	assert_int_equal(ctlcmd_decode(&ctlcmd_table[CTLCMD_STATUS], req, &out, err,
				       sizeof(err)), 0);
	assert_string_equal(out.user, "ann");
	json_decref(req);
	assert_int_equal(ctlcmd_find("events")->role, AUTH_ROLE_VIEWER);

	refused("{\"cmd\":\"history\",\"since\":-1}",
		"'since' is a time in Unix seconds, from 0 to 4102444800");
	refused("{\"cmd\":\"history\",\"until\":4102444801}",
		"'until' is a time in Unix seconds, from 0 to 4102444800");
	refused("{\"cmd\":\"history\",\"since\":\"2h\"}",
		"'since' is a time in Unix seconds, from 0 to 4102444800");
	refused("{\"cmd\":\"history\",\"user\":\"\"}",
		"a user is 1 to 64 bytes: a credential's name or a Unix user");
	refused("{\"cmd\":\"history\",\"state\":7}",
		"a finished job's state is done, failed or cancelled");
	refused("{\"cmd\":\"events\"}", "'events' needs a job id (a positive integer)");
	refused("{\"cmd\":\"events\",\"job\":1,\"limit\":100001}",
		"'events' needs 'limit': an integer from 1 to 100000");
	refused("{\"cmd\":\"events\",\"job\":1,\"after\":-1}",
		"'after' is an event id, an integer >= 0");
}

UNIT_MAIN(cmocka_unit_test(test_table),
	cmocka_unit_test(test_bad_types),
	cmocka_unit_test(test_out_of_bounds),
	cmocka_unit_test(test_missing),
	cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_round_trip),
	cmocka_unit_test(test_replies),
	cmocka_unit_test(test_filters))

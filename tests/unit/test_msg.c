/* test_msg.c - the worker protocol's message codec: a round trip of every
 * message, and each refusal (missing field, wrong type, out of range,
 * overlong string, bad hex, unknown enum value) in both directions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "msg.h"
#include "unit_main.h"

#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX_B "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

/* buf (size bytes) filled with c and NUL-terminated: the longest string
 * it holds. */
static char *fill(char *buf, size_t size, char c)
{
	memset(buf, c, size - 1);
	buf[size - 1] = '\0';
	return buf;
}

/* Encode, check the frame codec takes the header, decode into out. */
static json_t *round_trip(enum proto_type type, const void *in, void *out,
			  size_t size)
{
	json_t *h = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[200] = "";

	assert_int_equal(msg_encode(type, in, size, &h), 0);
	assert_non_null(h);
	assert_int_equal(proto_frame_encode(type, h, NULL, 0, &buf, &len), 0);
	free(buf);
	assert_int_equal(msg_decode(type, h, out, size, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return h; /* caller frees; out borrows from it */
}

static void test_hello(void **state)
{
	struct msg_hello in = {
		.proto = PROTO_VERSION, .worker = "w-1",
		.instance = "node7/slurm1234_5/cuda:0", .device = "cuda:0",
		.workloads = { "graveler", "officers" }, .n_workloads = 2,
		.cuda = 1, .threads = 16,
	}, out;
	json_t *h = round_trip(PROTO_HELLO, &in, &out, sizeof(in));

	(void)state;
	assert_int_equal(out.proto, PROTO_VERSION);
	assert_string_equal(out.worker, "w-1");
	assert_string_equal(out.instance, "node7/slurm1234_5/cuda:0");
	assert_string_equal(out.device, "cuda:0");
	assert_int_equal(out.n_workloads, 2);
	assert_string_equal(out.workloads[0], "graveler");
	assert_string_equal(out.workloads[1], "officers");
	assert_int_equal(out.cuda, 1);
	assert_int_equal(out.threads, 16);
	json_decref(h);

	/* Optional fields left out: absent, and decoded as 0. */
	in.cuda = 0;
	in.threads = 0;
	in.n_workloads = 0;
	assert_int_equal(msg_hello_encode(&in, &h), 0);
	assert_null(json_object_get(h, "cuda"));
	assert_null(json_object_get(h, "threads"));
	assert_int_equal(msg_hello_decode(h, &out, NULL, 0), 0);
	assert_int_equal(out.cuda, 0);
	assert_int_equal(out.n_workloads, 0);
	assert_null(out.host);
	assert_null(out.pod);
	json_decref(h);

	/* The instance is required. */
	h = json_pack("{s:I, s:s, s:s, s:[]}", "proto", (json_int_t)PROTO_VERSION,
		      "worker", "w", "device", "cpu", "workloads");
	assert_int_equal(msg_hello_decode(h, &out, NULL, 0), GERR_PROTO);
	json_decref(h);
}

/* Where the worker runs rides in HELLO, and the largest HELLO (every
 * bound at its maximum) still fits the login frame limit. */
static void test_hello_place(void **state)
{
	static char names[MSG_WORKLOADS_MAX][MSG_WORKLOAD_MAX + 1];
	char worker[MSG_WORKER_MAX + 1], device[MSG_DEVICE_MAX + 1];
	char instance[PLACE_INSTANCE_MAX + 1];
	char host[PLACE_HOST_MAX + 1], pod[PLACE_POD_MAX + 1];
	char job[PLACE_SLURM_MAX + 1], array[PLACE_SLURM_MAX + 1];
	struct msg_hello in = {
		.proto = PROTO_VERSION, .worker = "w", .instance = "node7:1",
		.device = "cpu", .host = "node7", .slurm_job = "1240", .slurm_array = "1234_0",
		.pod = "gpuworker-3-x7k2p",
	}, out;
	json_t *h = round_trip(PROTO_HELLO, &in, &out, sizeof(in));
	char *text;

	(void)state;
	assert_string_equal(out.host, "node7");
	assert_string_equal(out.slurm_job, "1240");
	assert_string_equal(out.slurm_array, "1234_0");
	assert_string_equal(out.pod, "gpuworker-3-x7k2p");
	json_decref(h);

	in.worker = fill(worker, sizeof(worker), 'w');
	in.instance = fill(instance, sizeof(instance), 'i');
	in.device = fill(device, sizeof(device), 'd');
	in.host = fill(host, sizeof(host), 'h');
	in.pod = fill(pod, sizeof(pod), 'p');
	in.slurm_job = fill(job, sizeof(job), '9');
	in.slurm_array = fill(array, sizeof(array), '9');
	in.cuda = 1;
	in.threads = 65535;
	for (size_t i = 0; i < MSG_WORKLOADS_MAX; i++) {
		memset(names[i], 'n', MSG_WORKLOAD_MAX);
		in.workloads[i] = names[i];
	}
	in.n_workloads = MSG_WORKLOADS_MAX;
	assert_int_equal(msg_hello_encode(&in, &h), 0);
	text = json_dumps(h, JSON_COMPACT);
	assert_non_null(text);
	assert_true(strlen(text) < PROTO_LOGIN_MAX_JSON);
	free(text);
	json_decref(h);

	/* One byte over a place bound is refused both ways. */
	in.n_workloads = 0;
	char longer[PLACE_POD_MAX + 2];
	in.pod = fill(longer, sizeof(longer), 'p');
	assert_int_equal(msg_hello_encode(&in, &h), GERR_INVAL);
	assert_null(h);
	h = json_pack("{s:I, s:s, s:s, s:s, s:[], s:s}", "proto",
		      (json_int_t)PROTO_VERSION, "worker", "w", "instance", "i",
		      "device", "cpu", "workloads", "host", longer);
	assert_int_equal(msg_hello_decode(h, &out, NULL, 0), GERR_PROTO);
	json_decref(h);
}

static void test_handshake(void **state)
{
	struct msg_welcome w = { .worker_id = 7, .heartbeat_s = 2.5,
				 .checkpoint_s = 60 }, w2;
	json_t *h;

	(void)state;
	h = round_trip(PROTO_WELCOME, &w, &w2, sizeof(w));
	assert_int_equal(w2.worker_id, 7);
	assert_true(w2.heartbeat_s == 2.5);
	assert_true(w2.checkpoint_s == 60);
	json_decref(h);
}

static void test_claim_lease(void **state)
{
	struct msg_claim c = {0}, c2;
	json_t *params = json_pack("{s:i}", "n", 3);
	json_t *spec = json_pack("{s:[i,i]}", "range", 0, 10);
	struct msg_lease l = {
		.lease = 4, .epoch = 2, .job = 1, .workload = "graveler",
		.params = params, .spec = spec, .units = 1000,
		.deadline_s = 600, .units_done = 500,
	}, l2;
	struct msg_nolease n = { .retry_s = 0.2, .reason = "no jobs" }, n2;
	json_t *h;

	(void)state;
	/* CLAIM has no field: its header is empty, and a rate a worker
	 * states anyway is ignored (gpud sizes leases by what it measured). */
	h = round_trip(PROTO_CLAIM, &c, &c2, sizeof(c));
	assert_int_equal(json_object_size(h), 0);
	json_decref(h);
	h = json_pack("{s:f}", "rate", 1e12);
	assert_int_equal(msg_claim_decode(h, &c2, NULL, 0), 0);
	assert_int_equal(c2.none, 0);
	json_decref(h);

	h = round_trip(PROTO_LEASE, &l, &l2, sizeof(l));
	assert_int_equal(l2.lease, 4);
	assert_int_equal(l2.epoch, 2);
	assert_int_equal(l2.job, 1);
	assert_string_equal(l2.workload, "graveler");
	assert_true(json_equal(l2.params, params));
	assert_true(json_equal(l2.spec, spec));
	assert_int_equal(l2.units, 1000);
	assert_true(l2.deadline_s == 600);
	assert_int_equal(l2.units_done, 500);
	/* Encoding copied the objects: the caller's stay its own. */
	assert_ptr_not_equal(l2.params, params);
	assert_int_equal(params->refcount, 1);
	json_decref(h);

	h = round_trip(PROTO_NOLEASE, &n, &n2, sizeof(n));
	assert_true(n2.retry_s == 0.2);
	assert_string_equal(n2.reason, "no jobs");
	json_decref(h);

	/* An empty NOLEASE reads as the defaults. */
	h = json_object();
	assert_int_equal(msg_nolease_decode(h, &n2, NULL, 0), 0);
	assert_true(n2.retry_s == 1);
	assert_null(n2.reason);
	assert_int_equal(msg_claim_decode(h, &c2, NULL, 0), 0);
	json_decref(h);
	json_decref(params);
	json_decref(spec);
}

static void test_lease_traffic(void **state)
{
	struct msg_heartbeat hb = { .lease = 4, .epoch = 2, .units_done = 9 }, hb2;
	struct msg_hb_ack ha = { .lease = 4, .epoch = 2,
				 .action = MSG_HB_RELEASE }, ha2;
	struct msg_checkpoint ck = { .lease = 4, .epoch = 2,
				     .units_done = INT64_MAX }, ck2;
	struct msg_result r = { .lease = 4, .epoch = 2, .units_done = 10,
				.seconds = 1.25 }, r2;
	struct msg_ack ack = { .lease = 4, .epoch = 2,
			       .what = MSG_ACK_RESULT }, ack2;
	struct msg_release rel = { .lease = 4, .epoch = 3,
				   .error = "out of memory" }, rel2;
	json_t *h;

	(void)state;
	h = round_trip(PROTO_HEARTBEAT, &hb, &hb2, sizeof(hb));
	assert_memory_equal(&hb, &hb2, sizeof(hb));
	json_decref(h);
	h = round_trip(PROTO_HB_ACK, &ha, &ha2, sizeof(ha));
	assert_int_equal(ha2.action, MSG_HB_RELEASE);
	assert_int_equal(ha2.lease, 4);
	json_decref(h);
	h = round_trip(PROTO_CHECKPOINT, &ck, &ck2, sizeof(ck));
	assert_memory_equal(&ck, &ck2, sizeof(ck));
	json_decref(h);
	h = round_trip(PROTO_RESULT, &r, &r2, sizeof(r));
	assert_int_equal(r2.units_done, 10);
	assert_true(r2.seconds == 1.25);
	json_decref(h);
	h = round_trip(PROTO_ACK, &ack, &ack2, sizeof(ack));
	assert_int_equal(ack2.what, MSG_ACK_RESULT);
	json_decref(h);
	h = round_trip(PROTO_RELEASE, &rel, &rel2, sizeof(rel));
	assert_int_equal(rel2.epoch, 3);
	assert_string_equal(rel2.error, "out of memory");
	json_decref(h);
	rel.error = NULL;
	h = round_trip(PROTO_RELEASE, &rel, &rel2, sizeof(rel));
	assert_null(rel2.error);
	json_decref(h);

	for (int a = MSG_HB_CONTINUE; a <= MSG_HB_GIVE_BACK; a++) {
		enum msg_hb_action back;

		assert_int_equal(msg_hb_action_parse(msg_hb_action_name(a),
						     &back), 0);
		assert_int_equal(back, a);
	}
	assert_int_equal(msg_hb_action_parse("pause", &(enum msg_hb_action){0}),
			 GERR_INVAL);
	assert_string_equal(msg_ack_what_name(MSG_ACK_CHECKPOINT), "checkpoint");
	assert_string_equal(msg_ack_what_name((enum msg_ack_what)9), "?");
}

static void test_fetch_blob_error(void **state)
{
	struct msg_fetch f = { .hash = HEX_A }, f2;
	struct msg_blob b = { .hash = HEX_A }, b2;
	struct msg_error e = { .code = GERR_STALE, .message = "stale epoch",
			       .lease = 4, .epoch = 2 }, e2;
	json_t *h;

	(void)state;
	h = round_trip(PROTO_FETCH, &f, &f2, sizeof(f));
	assert_string_equal(f2.hash, HEX_A);
	json_decref(h);
	h = round_trip(PROTO_BLOB, &b, &b2, sizeof(b));
	assert_string_equal(b2.hash, HEX_A);
	json_decref(h);
	h = round_trip(PROTO_ERROR, &e, &e2, sizeof(e));
	assert_int_equal(e2.code, GERR_STALE);
	assert_string_equal(e2.message, "stale epoch");
	assert_int_equal(e2.lease, 4);
	assert_int_equal(e2.epoch, 2);
	assert_null(e2.hash);
	json_decref(h);

	/* WITHDRAW: a reason, or nothing on the wire at all. */
	struct msg_withdraw w = { .reason = "worker stopping" }, w2;
	h = round_trip(PROTO_WITHDRAW, &w, &w2, sizeof(w));
	assert_string_equal(w2.reason, "worker stopping");
	json_decref(h);
	w = (struct msg_withdraw){ 0 };
	h = round_trip(PROTO_WITHDRAW, &w, &w2, sizeof(w));
	assert_int_equal(json_object_size(h), 0);
	assert_null(w2.reason);
	json_decref(h);

	/* Not about a lease: no lease, no epoch on the wire. */
	e = (struct msg_error){ .code = GERR_NOTFOUND, .message = "no such blob",
				.hash = HEX_B };
	h = round_trip(PROTO_ERROR, &e, &e2, sizeof(e));
	assert_null(json_object_get(h, "lease"));
	assert_null(json_object_get(h, "epoch"));
	assert_int_equal(e2.lease, 0);
	assert_string_equal(e2.hash, HEX_B);
	json_decref(h);
}

/* Decoding text as type must fail with GERR_PROTO and a reason naming
 * the field. */
static void refused(enum proto_type type, const char *text, const char *field)
{
	union {
		struct msg_hello hello;
		struct msg_lease lease;
		struct msg_error error;
		char any[512];
	} u;
	size_t size = type == PROTO_HELLO ? sizeof(struct msg_hello)
		: type == PROTO_LEASE ? sizeof(struct msg_lease)
		: type == PROTO_ERROR ? sizeof(struct msg_error)
		: type == PROTO_HEARTBEAT ? sizeof(struct msg_heartbeat)
		: type == PROTO_HB_ACK ? sizeof(struct msg_hb_ack)
		: type == PROTO_ACK ? sizeof(struct msg_ack)
		: type == PROTO_FETCH ? sizeof(struct msg_fetch)
		: type == PROTO_WELCOME ? sizeof(struct msg_welcome)
		: type == PROTO_CLAIM ? sizeof(struct msg_claim)
		: type == PROTO_RELEASE ? sizeof(struct msg_release)
		: type == PROTO_WITHDRAW ? sizeof(struct msg_withdraw)
		: 0;
	json_error_t jerr;
	json_t *h = json_loads(text, JSON_ALLOW_NUL, &jerr);
	char err[200] = "";

	if (!h)
		fail_msg("bad test JSON %s: %s", text, jerr.text);
	memset(&u, 0x5a, sizeof(u));
	if (msg_decode(type, h, &u, size, err, sizeof(err)) != GERR_PROTO)
		fail_msg("%s accepted as %s", text, proto_type_name(type));
	if (!strstr(err, field) || !strstr(err, proto_type_name(type)))
		fail_msg("reason \"%s\" does not name %s", err, field);
	/* Invariant 1: nothing half-decoded is left behind. */
	for (size_t i = 0; i < size; i++)
		assert_int_equal(u.any[i], 0);
	json_decref(h);
}

static void test_refusals(void **state)
{
	char text[2048];
	char big[MSG_TEXT_MAX + 2];

	(void)state;
	/* Missing required fields. */
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"workloads\":[]}",
		"\"device\"");
	refused(PROTO_HEARTBEAT, "{\"lease\":1,\"epoch\":1}", "\"units_done\"");
	refused(PROTO_LEASE, "{\"lease\":1,\"epoch\":1,\"job\":1,"
		"\"workload\":\"g\",\"params\":{},\"units\":5}", "\"spec\"");
	refused(PROTO_ERROR, "{\"code\":-1}", "\"message\"");
	refused(PROTO_WELCOME, "{\"worker_id\":1}", "\"heartbeat_s\"");
	/* Wrong types. */
	refused(PROTO_HEARTBEAT, "{\"lease\":\"x\",\"epoch\":1,\"units_done\":1}",
		"\"lease\"");
	refused(PROTO_HEARTBEAT, "{\"lease\":1.5,\"epoch\":1,\"units_done\":1}",
		"\"lease\"");
	refused(PROTO_LEASE, "{\"lease\":1,\"epoch\":1,\"job\":1,"
		"\"workload\":\"g\",\"params\":[],\"spec\":{},\"units\":5}",
		"\"params\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":\"graveler\"}", "\"workloads\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":[1]}", "\"workloads\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":[],\"cuda\":1}", "\"cuda\"");
	refused(PROTO_WITHDRAW, "{\"reason\":7}", "\"reason\"");
	refused(PROTO_RELEASE, "{\"lease\":1,\"epoch\":1,\"error\":5}",
		"\"error\"");
	refused(PROTO_ERROR, "{\"code\":\"-1\",\"message\":\"m\"}", "\"code\"");
	/* Out of range. */
	refused(PROTO_HEARTBEAT, "{\"lease\":-1,\"epoch\":1,\"units_done\":1}",
		"\"lease\"");
	refused(PROTO_HELLO, "{\"proto\":2,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":[]}", "\"proto\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":[],\"threads\":70000}", "\"threads\"");
	refused(PROTO_ERROR, "{\"code\":4294967296,\"message\":\"m\"}",
		"\"code\"");
	/* Unknown enum values. */
	refused(PROTO_HB_ACK, "{\"lease\":1,\"epoch\":1,\"action\":\"pause\"}",
		"\"action\"");
	refused(PROTO_ACK, "{\"lease\":1,\"epoch\":1,\"what\":\"\"}", "\"what\"");
	/* Hex: length, case, digits. */
	refused(PROTO_FETCH, "{\"hash\":\"abc\"}", "\"hash\"");
	refused(PROTO_FETCH, "{\"hash\":\"" HEX_A "0\"}", "\"hash\"");
	snprintf(text, sizeof(text), "{\"hash\":\"%.63sA\"}", HEX_A);
	refused(PROTO_FETCH, text, "\"hash\"");
	snprintf(text, sizeof(text), "{\"hash\":\"%.63sg\"}", HEX_A);
	refused(PROTO_FETCH, text, "\"hash\"");
	/* Overlong strings; a NUL inside one. */
	fill(big, sizeof(big), 'x');
	snprintf(text, sizeof(text), "{\"code\":-1,\"message\":\"%s\"}", big);
	refused(PROTO_ERROR, text, "\"message\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":"
		"\"0123456789012345678901234567890123456789012345678901234567890123\","
		"\"workloads\":[]}", "\"device\"");
	refused(PROTO_HELLO, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
		"\"workloads\":[\"0123456789012345678901234567890123\"]}",
		"\"workloads\"");
	snprintf(text, sizeof(text), "{\"proto\":1,\"worker\":\"w\","
		 "\"instance\":\"%.65s\",\"device\":\"cpu\",\"workloads\":[]}",
		 big);
	refused(PROTO_HELLO, text, "\"instance\"");
	refused(PROTO_LEASE, "{\"lease\":1,\"epoch\":1,\"job\":1,"
		"\"workload\":\"g\\u0000h\",\"params\":{},\"spec\":{},"
		"\"units\":5}", "\"workload\"");
	/* Too many workloads. */
	strcpy(text, "{\"proto\":1,\"worker\":\"w\",\"instance\":\"i\",\"device\":\"cpu\","
	       "\"workloads\":[");
	for (int i = 0; i <= MSG_WORKLOADS_MAX; i++)
		strcat(text, i ? ",\"a\"" : "\"a\"");
	strcat(text, "]}");
	refused(PROTO_HELLO, text, "\"workloads\"");
	/* Not an object at all. */
	refused(PROTO_CLAIM, "[]", "header");
}

static void test_encode_refusals(void **state)
{
	char big[MSG_TEXT_MAX + 2];
	json_t *h = (json_t *)1;
	struct msg_heartbeat hb = { .lease = (uint64_t)INT64_MAX + 1 };
	struct msg_fetch f = { .hash = "ABC" };
	struct msg_hb_ack ha = { .action = (enum msg_hb_action)7 };
	struct msg_lease l = { .workload = "g" }; /* no params, no spec */
	struct msg_error e = { .code = -1 };      /* no message */
	struct msg_release rel = { .lease = 1 };
	struct msg_welcome w = { .heartbeat_s = INFINITY };
	struct msg_hello hello = { .proto = PROTO_VERSION, .worker = "w",
				   .instance = "i", .device = "cpu",
				   .n_workloads = MSG_WORKLOADS_MAX + 1 };

	(void)state;
	assert_int_equal(msg_heartbeat_encode(&hb, &h), GERR_INVAL);
	assert_null(h);
	assert_int_equal(msg_fetch_encode(&f, &h), GERR_INVAL);
	assert_int_equal(msg_hb_ack_encode(&ha, &h), GERR_INVAL);
	assert_int_equal(msg_lease_encode(&l, &h), GERR_INVAL);
	assert_int_equal(msg_error_encode(&e, &h), GERR_INVAL);
	assert_int_equal(msg_welcome_encode(&w, &h), GERR_INVAL);
	assert_int_equal(msg_hello_encode(&hello, &h), GERR_INVAL);
	rel.error = fill(big, sizeof(big), 'x');
	assert_int_equal(msg_release_encode(&rel, &h), GERR_INVAL);
	big[MSG_TEXT_MAX] = '\0';
	assert_int_equal(msg_release_encode(&rel, &h), 0);
	json_decref(h);
	/* The struct must be the type's. */
	assert_int_equal(msg_encode(PROTO_FETCH, &hb, sizeof(hb), &h), GERR_INVAL);
	assert_int_equal(msg_encode(PROTO_CTL_REQ, &hb, sizeof(hb), &h),
			 GERR_INVAL);
	assert_false(msg_known(PROTO_CTL_REPLY));
	assert_true(msg_known(PROTO_BLOB));
}

static void test_bin_rule(void **state)
{
	char err[100] = "";

	(void)state;
	assert_int_equal(msg_check_bin(PROTO_CHECKPOINT, 0, err, sizeof(err)),
			 GERR_PROTO);
	assert_non_null(strstr(err, "CHECKPOINT"));
	assert_int_equal(msg_check_bin(PROTO_RESULT, 0, NULL, 0), GERR_PROTO);
	assert_int_equal(msg_check_bin(PROTO_RESULT, 10, NULL, 0), 0);
	assert_int_equal(msg_check_bin(PROTO_LEASE, 0, NULL, 0), 0);
	assert_int_equal(msg_check_bin(PROTO_BLOB, 0, NULL, 0), 0);
}

UNIT_MAIN(cmocka_unit_test(test_hello),
	cmocka_unit_test(test_hello_place),
	cmocka_unit_test(test_handshake),
	cmocka_unit_test(test_claim_lease),
	cmocka_unit_test(test_lease_traffic),
	cmocka_unit_test(test_fetch_blob_error),
	cmocka_unit_test(test_refusals),
	cmocka_unit_test(test_encode_refusals),
	cmocka_unit_test(test_bin_rule))

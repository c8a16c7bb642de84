/* test_proto.c - frame codec: round trips, every rejection path, fuzzing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "log.h"
#include "proto.h"
#include "unit_main.h"

/* Deterministic PRNG (xorshift64*): the state lives in each test. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A valid encoded frame with a small JSON object and an attachment. */
static uint8_t *sample_frame(size_t *ret_len, size_t *ret_json_len)
{
	json_t *j = json_pack("{s:s, s:I, s:[s,s], s:b}", "worker", "w-1",
			      "threads", (json_int_t)8, "workloads", "a", "b",
			      "cuda", 1);
	uint8_t *buf;
	int r;

	assert_non_null(j);
	r = proto_frame_encode(PROTO_HELLO, j, "BINARY", 6, &buf, ret_len);
	json_decref(j);
	assert_int_equal(r, 0);
	if (ret_json_len)
		*ret_json_len = *ret_len - PROTO_HEADER_LEN - 6;
	return buf;
}

static int parse(const uint8_t *buf, size_t len, struct proto_frame *f,
		 size_t *consumed, size_t *need, char *err)
{
	return proto_frame_parse(buf, len, f, consumed, need, err, 128);
}

static void test_round_trip(void **state)
{
	struct proto_frame f;
	size_t len, jlen, consumed = 0, need = 0;
	char err[128];
	uint8_t *buf = sample_frame(&len, &jlen);
	const char *s;
	uint64_t u;

	(void)state;
	/* Header bytes are exactly as documented (big-endian). */
	assert_memory_equal(buf, "\x47\x50\x55\x44\x01\x01\x00\x00", 8);
	assert_int_equal(buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11],
			 jlen);
	assert_memory_equal(buf + 12, "\0\0\0\x06", 4);

	assert_int_equal(parse(buf, len, &f, &consumed, &need, err), 0);
	assert_int_equal(consumed, len);
	assert_int_equal(f.type, PROTO_HELLO);
	assert_true(json_is_object(f.json));
	assert_int_equal(f.bin_len, 6);
	assert_ptr_equal(f.bin, buf + PROTO_HEADER_LEN + jlen);
	assert_memory_equal(f.bin, "BINARY", 6);
	assert_int_equal(proto_get_str(f.json, "worker", 64, &s), 0);
	assert_string_equal(s, "w-1");
	assert_int_equal(proto_get_u64(f.json, "threads", &u), 0);
	assert_int_equal(u, 8);
	proto_frame_clear(&f);
	assert_null(f.json);
	proto_frame_clear(NULL);
	free(buf);
}

static void test_every_type_and_empty_bin(void **state)
{
	(void)state;
	for (int t = 1; t <= PROTO_TYPE_MAX; t++) {
		if (t == 2 || t == 3) /* retired: refused (below) */
			continue;
		json_t *j = json_pack("{s:i}", "n", t);
		struct proto_frame f;
		size_t len, consumed;
		uint8_t *buf;

		assert_int_equal(proto_frame_encode((enum proto_type)t, j, NULL,
						    0, &buf, &len),
				 0);
		json_decref(j);
		assert_int_equal(parse(buf, len, &f, &consumed, NULL, NULL), 0);
		assert_int_equal(f.type, t);
		assert_null(f.bin);
		assert_int_equal(f.bin_len, 0);
		assert_string_not_equal(proto_type_name(t), "?");
		proto_frame_clear(&f);
		free(buf);
	}
	assert_string_equal(proto_type_name(PROTO_HB_ACK), "HB_ACK");
	assert_string_equal(proto_type_name(2), "?");
	assert_string_equal(proto_type_name(0), "?");
	assert_string_equal(proto_type_name(PROTO_TYPE_MAX + 1), "?");
	assert_string_equal(proto_type_name(-1), "?");
	/* A retired type (the token challenge's) is refused like an unknown. */
	{
		json_t *j = json_pack("{s:i}", "n", 1);
		struct proto_frame f;
		size_t len, consumed;
		uint8_t *buf;

		assert_int_equal(proto_frame_encode(PROTO_HELLO, j, NULL, 0, &buf,
						    &len), 0);
		assert_int_equal(proto_frame_encode((enum proto_type)3, j, NULL,
						    0, &buf, &len), GERR_INVAL);
		json_decref(j);
		buf[5] = 3;
		assert_int_equal(parse(buf, len, &f, &consumed, NULL, NULL),
				 GERR_PROTO);
		free(buf);
	}
}

static void test_two_frames_in_one_buffer(void **state)
{
	size_t len, consumed;
	uint8_t *one = sample_frame(&len, NULL);
	uint8_t *two = malloc(2 * len + 3);
	struct proto_frame f;

	(void)state;
	memcpy(two, one, len);
	memcpy(two + len, one, len);
	memcpy(two + 2 * len, "GPU", 3);
	assert_int_equal(parse(two, 2 * len + 3, &f, &consumed, NULL, NULL), 0);
	assert_int_equal(consumed, len);
	proto_frame_clear(&f);
	assert_int_equal(
		parse(two + len, len + 3, &f, &consumed, NULL, NULL), 0);
	assert_int_equal(consumed, len);
	proto_frame_clear(&f);
	assert_int_equal(parse(two + 2 * len, 3, &f, &consumed, NULL, NULL),
			 GERR_AGAIN);
	free(one);
	free(two);
}

static void test_truncated_every_offset(void **state)
{
	size_t len, jlen;
	uint8_t *buf = sample_frame(&len, &jlen);
	char err[128];

	(void)state;
	for (size_t i = 0; i < len; i++) {
		struct proto_frame f = { 0 };
		size_t consumed = 12345, need = 0;
		/* A heap copy of exactly i bytes lets ASan catch overreads. */
		uint8_t *part = malloc(i ? i : 1);

		memcpy(part, buf, i);
		assert_int_equal(parse(part, i, &f, &consumed, &need, err),
				 GERR_AGAIN);
		assert_int_equal(consumed, 12345); /* untouched */
		assert_null(f.json);
		if (i >= PROTO_HEADER_LEN)
			assert_int_equal(need, len);
		else
			assert_int_equal(need, PROTO_HEADER_LEN);
		free(part);
	}
	/* NULL with zero length is just "need more". */
	{
		struct proto_frame f;
		size_t consumed;

		assert_int_equal(parse(NULL, 0, &f, &consumed, NULL, err),
				 GERR_AGAIN);
	}
	free(buf);
}

/* Header-only buffer (no payload present at all) with one field changed. */
static int parse_header(const uint8_t hdr[16], char *err)
{
	struct proto_frame f;
	size_t consumed, need = 0;

	return proto_frame_parse(hdr, 16, &f, &consumed, &need, err, 128);
}

static void good_header(uint8_t h[16], uint32_t jl, uint32_t bl)
{
	put_be32(h, PROTO_MAGIC);
	h[4] = PROTO_VERSION;
	h[5] = PROTO_CTL_REQ;
	h[6] = h[7] = 0;
	put_be32(h + 8, jl);
	put_be32(h + 12, bl);
}

static void test_bad_header_fields(void **state)
{
	uint8_t h[16];
	char err[128];

	(void)state;
	good_header(h, 2, 0);
	assert_int_equal(parse_header(h, err), GERR_AGAIN);

	good_header(h, 2, 0);
	h[0] = 'X';
	err[0] = 0;
	assert_int_equal(parse_header(h, err), GERR_PROTO);
	assert_non_null(strstr(err, "magic"));
	/* ...and refused as soon as the four magic bytes are in. */
	assert_int_equal(proto_frame_parse(h, 4, &(struct proto_frame){ 0 },
					   &(size_t){ 0 }, NULL, err, 128),
			 GERR_PROTO);

	for (int v = 0; v < 256; v++) {
		if (v == PROTO_VERSION)
			continue;
		good_header(h, 2, 0);
		h[4] = (uint8_t)v;
		assert_int_equal(parse_header(h, err), GERR_PROTO);
	}
	assert_non_null(strstr(err, "version"));

	for (int t = 0; t < 256; t++) {
		good_header(h, 2, 0);
		h[5] = (uint8_t)t;
		if (t >= 1 && t <= PROTO_TYPE_MAX && t != 2 && t != 3)
			assert_int_equal(parse_header(h, err), GERR_AGAIN);
		else
			assert_int_equal(parse_header(h, err), GERR_PROTO);
	}

	for (int bit = 0; bit < 16; bit++) {
		good_header(h, 2, 0);
		h[6 + bit / 8] = (uint8_t)(1u << (bit % 8));
		assert_int_equal(parse_header(h, err), GERR_PROTO);
	}
	assert_non_null(strstr(err, "flags"));

	good_header(h, 0, 0);
	assert_int_equal(parse_header(h, err), GERR_PROTO);
	good_header(h, 0, 5);
	assert_int_equal(parse_header(h, err), GERR_PROTO);
}

static void test_oversized_refused_without_payload(void **state)
{
	uint8_t h[16];
	char err[128];
	struct proto_frame f;
	size_t consumed, need = 0;

	(void)state;
	good_header(h, PROTO_MAX_JSON, PROTO_MAX_BIN);
	assert_int_equal(parse_header(h, err), GERR_AGAIN); /* at the limit */

	good_header(h, PROTO_MAX_JSON + 1, 0);
	assert_int_equal(parse_header(h, err), GERR_TOOBIG);
	assert_non_null(strstr(err, "JSON"));
	good_header(h, UINT32_MAX, 0);
	assert_int_equal(parse_header(h, err), GERR_TOOBIG);
	/* json_len alone is enough: refused with 12 bytes in hand. */
	assert_int_equal(
		proto_frame_parse(h, 12, &f, &consumed, &need, err, 128),
		GERR_TOOBIG);

	good_header(h, 2, PROTO_MAX_BIN + 1);
	assert_int_equal(parse_header(h, err), GERR_TOOBIG);
	good_header(h, 2, UINT32_MAX);
	assert_int_equal(parse_header(h, err), GERR_TOOBIG);
	good_header(h, UINT32_MAX, UINT32_MAX);
	assert_int_equal(parse_header(h, err), GERR_TOOBIG);

	/* The largest legal frame reports its full size as need. */
	good_header(h, PROTO_MAX_JSON, PROTO_MAX_BIN);
	assert_int_equal(
		proto_frame_parse(h, 16, &f, &consumed, &need, err, 128),
		GERR_AGAIN);
	assert_int_equal(need, 16 + (size_t)PROTO_MAX_JSON + PROTO_MAX_BIN);
}

static int parse_json_text(const char *text, size_t tlen, char *err)
{
	uint8_t *buf = malloc(16 + tlen);
	struct proto_frame f = { 0 };
	size_t consumed;
	int r;

	good_header(buf, (uint32_t)tlen, 0);
	memcpy(buf + 16, text, tlen);
	r = proto_frame_parse(buf, 16 + tlen, &f, &consumed, NULL, err, 128);
	if (r == 0) {
		assert_int_equal(consumed, 16 + tlen);
		proto_frame_clear(&f);
	} else {
		assert_null(f.json);
	}
	free(buf);
	return r;
}

/* A connection's narrower limits refuse from the header alone, field by
 * field: a type not expected, then JSON, then an attachment. */
static void test_header_limit(void **state)
{
	const struct proto_limits login = {
		.types = PROTO_BIT(PROTO_HELLO), .max_json = PROTO_LOGIN_MAX_JSON,
	};
	const struct proto_limits ready = {
		.types = PROTO_BIT(PROTO_CLAIM) | PROTO_BIT(PROTO_RESULT),
		.max_json = PROTO_WORKER_MAX_JSON, .max_bin = 1000,
		.bin_types = PROTO_BIT(PROTO_RESULT),
	};
	uint8_t h[16];
	char err[160];

	(void)state;
	good_header(h, 100, 0);
	h[5] = PROTO_HELLO;
	assert_int_equal(proto_header_limit(h, 16, &login, err, sizeof(err)), 0);
	/* Fewer bytes than a header: what is there is fine. */
	for (size_t n = 0; n < 16; n++)
		assert_int_equal(proto_header_limit(h, n, &login, err, sizeof(err)), 0);
	h[5] = PROTO_CLAIM;
	assert_int_equal(proto_header_limit(h, 6, &login, err, sizeof(err)), GERR_PROTO);
	assert_non_null(strstr(err, "CLAIM is not accepted"));
	h[5] = PROTO_HELLO;
	put_be32(h + 8, PROTO_LOGIN_MAX_JSON + 1);
	assert_int_equal(proto_header_limit(h, 12, &login, err, sizeof(err)), GERR_TOOBIG);
	assert_non_null(strstr(err, "exceeds 8192"));
	put_be32(h + 8, PROTO_LOGIN_MAX_JSON);
	assert_int_equal(proto_header_limit(h, 12, &login, err, sizeof(err)), 0);
	/* The 257 MiB before login: refused at the 16th byte. */
	put_be32(h + 8, 1u << 20);
	put_be32(h + 12, PROTO_MAX_BIN);
	assert_int_equal(proto_header_limit(h, 16, &login, err, sizeof(err)), GERR_TOOBIG);
	put_be32(h + 8, 10);
	put_be32(h + 12, 1);
	assert_int_equal(proto_header_limit(h, 16, &login, err, sizeof(err)), GERR_PROTO);
	assert_non_null(strstr(err, "may not carry an attachment"));

	h[5] = PROTO_CLAIM;
	put_be32(h + 12, 0);
	assert_int_equal(proto_header_limit(h, 16, &ready, err, sizeof(err)), 0);
	put_be32(h + 12, 5);
	assert_int_equal(proto_header_limit(h, 16, &ready, err, sizeof(err)), GERR_PROTO);
	h[5] = PROTO_RESULT;
	assert_int_equal(proto_header_limit(h, 16, &ready, err, sizeof(err)), 0);
	put_be32(h + 12, 1001);
	assert_int_equal(proto_header_limit(h, 16, &ready, err, sizeof(err)), GERR_TOOBIG);
	assert_non_null(strstr(err, "RESULT: attachment of 1001 bytes exceeds 1000"));
	put_be32(h + 8, PROTO_WORKER_MAX_JSON + 1);
	assert_int_equal(proto_header_limit(h, 12, &ready, err, sizeof(err)), GERR_TOOBIG);
	assert_int_equal(proto_header_limit(NULL, 0, &ready, err, sizeof(err)), GERR_INVAL);
}

/* Each worker message's JSON is held to its type's bound from the header,
 * whatever the connection allows; gpud's and gpuctl's to the frame's. */
static void test_type_max_json(void **state)
{
	const struct proto_limits ready = {
		.types = PROTO_BIT(PROTO_HEARTBEAT) | PROTO_BIT(PROTO_RELEASE),
		.max_json = PROTO_WORKER_MAX_JSON,
	};
	uint8_t h[16];
	char err[160];

	(void)state;
	assert_int_equal(proto_type_max_json(PROTO_HELLO), PROTO_LOGIN_MAX_JSON);
	assert_int_equal(proto_type_max_json(PROTO_HEARTBEAT), PROTO_SMALL_MAX_JSON);
	assert_int_equal(proto_type_max_json(PROTO_RESULT), PROTO_SMALL_MAX_JSON);
	assert_int_equal(proto_type_max_json(PROTO_RELEASE), PROTO_TEXT_MAX_JSON);
	assert_int_equal(proto_type_max_json(PROTO_LEASE), PROTO_MAX_JSON);
	assert_int_equal(proto_type_max_json(PROTO_CTL_REQ), PROTO_MAX_JSON);
	assert_int_equal(proto_type_max_json(0), 0);
	assert_int_equal(proto_type_max_json(PROTO_TYPE_MAX + 1), 0);
	good_header(h, PROTO_SMALL_MAX_JSON, 0);
	h[5] = PROTO_HEARTBEAT;
	assert_int_equal(proto_header_limit(h, 16, &ready, err, sizeof(err)), 0);
	put_be32(h + 8, 60000);
	assert_int_equal(proto_header_limit(h, 12, &ready, err, sizeof(err)), GERR_TOOBIG);
	assert_non_null(strstr(err, "HEARTBEAT: JSON header of 60000 bytes exceeds 2048"));
	/* A RELEASE's text fits; its type's bound is below the state's. */
	h[5] = PROTO_RELEASE;
	put_be32(h + 8, PROTO_TEXT_MAX_JSON);
	assert_int_equal(proto_header_limit(h, 12, &ready, err, sizeof(err)), 0);
	put_be32(h + 8, PROTO_TEXT_MAX_JSON + 1);
	assert_int_equal(proto_header_limit(h, 12, &ready, err, sizeof(err)), GERR_TOOBIG);
}

/* The header and JSON of a frame, without its attachment: returned as soon
 * as the JSON is there, the attachment's length announced. */
static void test_parse_head(void **state)
{
	size_t len = 0, jl = 0, used = 0, need = 0;
	uint8_t *buf = sample_frame(&len, &jl);
	struct proto_frame f, g;
	char err[160];

	(void)state;
	for (size_t n = 0; n < 16 + jl; n++) {
		assert_int_equal(proto_frame_parse_head(buf, n, &f, &used, &need,
							err, sizeof(err)), GERR_AGAIN);
		assert_int_equal(need, n < 16 ? 16 : 16 + jl);
	}
	assert_int_equal(proto_frame_parse_head(buf, 16 + jl, &f, &used, &need,
						err, sizeof(err)), 0);
	assert_int_equal(used, 16 + jl);
	assert_null(f.bin);
	assert_int_equal(f.bin_len, len - 16 - jl);
	assert_int_equal(proto_frame_parse(buf, len, &g, &used, &need, err,
					   sizeof(err)), 0);
	assert_int_equal(used, len);
	assert_true(json_equal(f.json, g.json));
	assert_int_equal(f.type, g.type);
	proto_frame_clear(&f);
	proto_frame_clear(&g);
	/* Bad JSON is refused as by the whole parse. */
	buf[16] = '[';
	assert_int_equal(proto_frame_parse_head(buf, 16 + jl, &f, &used, &need,
						err, sizeof(err)), GERR_PROTO);
	free(buf);
}

static void test_bad_json(void **state)
{
	static const char *const bad[] = {
		"[]",			/* not an object */
		"[1,2]",		/* not an object */
		"\"str\"",		/* scalar */
		"42",			/* scalar */
		"null",			/* scalar */
		"{",			/* truncated */
		"{\"a\":1,\"a\":2}",	/* duplicate key */
		"{\"a\":1} x",		/* trailing garbage */
		"{\"a\":1}{}",		/* two values */
		"{\"a\":\"\\u0000\"}",	/* NUL in string */
		"{\"a\":\"\xff\xfe\"}",	/* invalid UTF-8 */
		"{a:1}",		/* not JSON */
		" ",			/* whitespace only */
		"{\"a\":99999999999999999999999}", /* integer overflow */
	};
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(parse_json_text(bad[i], strlen(bad[i]), err),
				 GERR_PROTO);
		assert_true(strlen(err) > 0);
	}
	/* Embedded NUL byte in the JSON text itself. */
	assert_int_equal(parse_json_text("{}\0", 3, err), GERR_PROTO);
	assert_int_equal(parse_json_text("{\"a\"\0:1}", 8, err), GERR_PROTO);
	/* Deep nesting is refused by jansson's depth limit, not the stack. */
	{
		size_t n = 100000;
		char *deep = malloc(2 * n + 8);
		size_t k = 0;

		deep[k++] = '{';
		memcpy(deep + k, "\"a\":", 4);
		k += 4;
		for (size_t i = 0; i < n; i++)
			deep[k++] = '[';
		for (size_t i = 0; i < n; i++)
			deep[k++] = ']';
		deep[k++] = '}';
		assert_int_equal(parse_json_text(deep, k, err), GERR_PROTO);
		free(deep);
	}
	assert_int_equal(parse_json_text("{}", 2, err), 0);
	assert_int_equal(parse_json_text(" {\"a\" : [1, {}]} \n", 18, err), 0);
}

static void test_encode_rejects(void **state)
{
	json_t *arr = json_array(), *obj = json_object();
	uint8_t *buf = (uint8_t *)"sentinel";
	size_t len = 7;

	(void)state;
	assert_int_equal(proto_frame_encode(PROTO_ACK, arr, NULL, 0, &buf, &len),
			 GERR_INVAL);
	assert_int_equal(proto_frame_encode(PROTO_ACK, NULL, NULL, 0, &buf, &len),
			 GERR_INVAL);
	assert_int_equal(proto_frame_encode((enum proto_type)0, obj, NULL, 0,
					    &buf, &len),
			 GERR_INVAL);
	assert_int_equal(proto_frame_encode((enum proto_type)(PROTO_TYPE_MAX + 1), obj, NULL, 0,
					    &buf, &len),
			 GERR_INVAL);
	assert_int_equal(proto_frame_encode(PROTO_ACK, obj, NULL, 5, &buf, &len),
			 GERR_INVAL);
	assert_int_equal(proto_frame_encode(PROTO_ACK, obj, "x",
					    (size_t)PROTO_MAX_BIN + 1, &buf,
					    &len),
			 GERR_TOOBIG);
	/* JSON over the limit. */
	{
		char *big = malloc(PROTO_MAX_JSON + 1);

		memset(big, 'x', PROTO_MAX_JSON);
		big[PROTO_MAX_JSON] = 0;
		json_object_set_new(obj, "big", json_string(big));
		free(big);
		assert_int_equal(proto_frame_encode(PROTO_ACK, obj, NULL, 0,
						    &buf, &len),
				 GERR_TOOBIG);
	}
	/* Outputs untouched on failure. */
	assert_string_equal((char *)buf, "sentinel");
	assert_int_equal(len, 7);
	json_decref(arr);
	json_decref(obj);
}

static void test_get_helpers(void **state)
{
	json_error_t je;
	json_t *o = json_loads(
		"{\"u\":5,\"zero\":0,\"neg\":-1,\"f\":1.5,\"s\":\"abc\","
		"\"b\":true,\"n\":null,\"big\":9223372036854775807,"
		"\"empty\":\"\",\"arr\":[1]}",
		0, &je);
	json_t *nul;
	uint64_t u = 77;
	const char *s = "unchanged";

	(void)state;
	assert_non_null(o);
	assert_int_equal(proto_get_u64(o, "u", &u), 0);
	assert_int_equal(u, 5);
	assert_int_equal(proto_get_u64(o, "zero", &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(proto_get_u64(o, "big", &u), 0);
	assert_int_equal(u, 9223372036854775807ULL);
	u = 77;
	assert_int_equal(proto_get_u64(o, "neg", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(o, "f", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(o, "s", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(o, "b", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(o, "n", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(o, "missing", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(NULL, "u", &u), GERR_PROTO);
	assert_int_equal(proto_get_u64(json_object_get(o, "arr"), "u", &u),
			 GERR_PROTO);
	assert_int_equal(u, 77);

	assert_int_equal(proto_get_str(o, "s", 3, &s), 0);
	assert_string_equal(s, "abc");
	assert_int_equal(proto_get_str(o, "empty", 0, &s), 0);
	assert_string_equal(s, "");
	s = "unchanged";
	assert_int_equal(proto_get_str(o, "s", 2, &s), GERR_PROTO);
	assert_int_equal(proto_get_str(o, "u", 10, &s), GERR_PROTO);
	assert_int_equal(proto_get_str(o, "n", 10, &s), GERR_PROTO);
	assert_int_equal(proto_get_str(o, "missing", 10, &s), GERR_PROTO);
	nul = json_stringn("a\0b", 3);
	json_object_set_new(o, "nul", nul);
	assert_int_equal(proto_get_str(o, "nul", 10, &s), GERR_PROTO);
	assert_string_equal(s, "unchanged");
	json_decref(o);
}

/* Random garbage, and mutations of valid frames: never crash, never claim
 * more bytes than given, always return one of the documented codes. */
static void check_one(const uint8_t *buf, size_t len)
{
	struct proto_frame f = { 0 };
	size_t consumed = 0, need = 0;
	char err[64];
	int r = proto_frame_parse(buf, len, &f, &consumed, &need, err,
				  sizeof(err));

	if (r == 0) {
		assert_true(consumed <= len && consumed >= PROTO_HEADER_LEN + 1);
		assert_true(json_is_object(f.json));
		assert_true(f.type >= 1 && f.type <= PROTO_TYPE_MAX);
		proto_frame_clear(&f);
	} else {
		assert_true(r == GERR_AGAIN || r == GERR_PROTO ||
			    r == GERR_TOOBIG);
		if (r == GERR_AGAIN)
			assert_true(need > len);
	}
}

static void test_fuzz(void **state)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	size_t flen;
	uint8_t *frame = sample_frame(&flen, NULL);

	(void)state;
	for (int i = 0; i < 100000; i++) {
		size_t len = rng_next(&seed) % 96;
		uint8_t *buf = malloc(len ? len : 1);
		int mode = (int)(rng_next(&seed) % 3);

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)rng_next(&seed);
		if (mode == 1 && len >= 16) {
			/* Plausible header so the JSON parser gets garbage. */
			good_header(buf, (uint32_t)(rng_next(&seed) % (len - 15)),
				    0);
			buf[5] = (uint8_t)(1 + rng_next(&seed) % PROTO_TYPE_MAX);
			if (buf[11] == 0)
				buf[11] = 1;
			if (rng_next(&seed) & 1 && len > 17) {
				buf[16] = '{';
			}
		} else if (mode == 2) {
			/* Mutated valid frame, possibly truncated. */
			free(buf);
			len = flen - rng_next(&seed) % 4;
			buf = malloc(len);
			memcpy(buf, frame, len);
			for (int m = 0; m < 1 + (int)(rng_next(&seed) % 4); m++)
				buf[rng_next(&seed) % len] ^=
					(uint8_t)(1u << (rng_next(&seed) % 8));
		}
		check_one(buf, len);
		free(buf);
	}
	free(frame);
}

static void test_log_level_parse(void **state)
{
	enum glog_level l = GLOG_INFO;

	(void)state;
	assert_int_equal(glog_level_parse("error", &l), 0);
	assert_int_equal(l, GLOG_ERROR);
	assert_int_equal(glog_level_parse("warn", &l), 0);
	assert_int_equal(l, GLOG_WARN);
	assert_int_equal(glog_level_parse("info", &l), 0);
	assert_int_equal(l, GLOG_INFO);
	assert_int_equal(glog_level_parse("debug", &l), 0);
	assert_int_equal(l, GLOG_DEBUG);
	assert_int_equal(glog_level_parse("verbose", &l), GERR_INVAL);
	assert_int_equal(glog_level_parse("", &l), GERR_INVAL);
	assert_int_equal(glog_level_parse(NULL, &l), GERR_INVAL);
	assert_int_equal(l, GLOG_DEBUG);
}

UNIT_MAIN(cmocka_unit_test(test_round_trip),
	cmocka_unit_test(test_every_type_and_empty_bin),
	cmocka_unit_test(test_two_frames_in_one_buffer),
	cmocka_unit_test(test_truncated_every_offset),
	cmocka_unit_test(test_bad_header_fields),
	cmocka_unit_test(test_oversized_refused_without_payload),
	cmocka_unit_test(test_header_limit),
	cmocka_unit_test(test_type_max_json),
	cmocka_unit_test(test_parse_head),
	cmocka_unit_test(test_bad_json),
	cmocka_unit_test(test_encode_rejects),
	cmocka_unit_test(test_get_helpers),
	cmocka_unit_test(test_fuzz),
	cmocka_unit_test(test_log_level_parse))

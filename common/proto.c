/* proto.c - frame codec for gpud's wire protocol (see proto.h).
 *
 * Invariants:
 *  1. The parser never reads past buf[len - 1] and never allocates more than
 *     the JSON it is handed; the 16-byte header is validated field by field
 *     as soon as each field is complete, so garbage is refused after at most
 *     16 bytes and an oversized frame is refused before its payload arrives.
 *  2. A frame is returned only when every byte of it is present; the caller
 *     keeps the buffer alive for as long as it uses frame.bin.
 *  3. ret_* outputs are written only on success, except *ret_need, which is
 *     written with GERR_AGAIN (that is its purpose).
 */
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"

static const char *const type_names[PROTO_TYPE_MAX + 1] = {
	[PROTO_HELLO] = "HELLO",
	[PROTO_WELCOME] = "WELCOME",
	[PROTO_CLAIM] = "CLAIM",
	[PROTO_LEASE] = "LEASE",
	[PROTO_NOLEASE] = "NOLEASE",
	[PROTO_HEARTBEAT] = "HEARTBEAT",
	[PROTO_HB_ACK] = "HB_ACK",
	[PROTO_CHECKPOINT] = "CHECKPOINT",
	[PROTO_RESULT] = "RESULT",
	[PROTO_ACK] = "ACK",
	[PROTO_RELEASE] = "RELEASE",
	[PROTO_ERROR] = "ERROR",
	[PROTO_CTL_REQ] = "CTL_REQ",
	[PROTO_CTL_REPLY] = "CTL_REPLY",
	[PROTO_FETCH] = "FETCH",
	[PROTO_BLOB] = "BLOB",
	[PROTO_CTL_HELLO] = "CTL_HELLO",
	[PROTO_WITHDRAW] = "WITHDRAW",
};

/* What each worker message needs (proto.h); 0: PROTO_MAX_JSON. */
static const uint32_t type_max_json[PROTO_TYPE_MAX + 1] = {
	[PROTO_HELLO] = PROTO_LOGIN_MAX_JSON,
	[PROTO_CTL_HELLO] = PROTO_SMALL_MAX_JSON,
	[PROTO_CLAIM] = PROTO_SMALL_MAX_JSON,
	[PROTO_HEARTBEAT] = PROTO_SMALL_MAX_JSON,
	[PROTO_CHECKPOINT] = PROTO_SMALL_MAX_JSON,
	[PROTO_RESULT] = PROTO_SMALL_MAX_JSON,
	[PROTO_FETCH] = PROTO_SMALL_MAX_JSON,
	[PROTO_RELEASE] = PROTO_TEXT_MAX_JSON,
	[PROTO_WITHDRAW] = PROTO_TEXT_MAX_JSON,
};

uint32_t proto_type_max_json(int type)
{
	if (type < 1 || type > PROTO_TYPE_MAX)
		return 0;
	return type_max_json[type] ? type_max_json[type] : PROTO_MAX_JSON;
}

/* A type of proto.h's table (not 0, not retired, not past the last). */
static int type_known(int type)
{
	return type >= 1 && type <= PROTO_TYPE_MAX && type_names[type];
}

const char *proto_type_name(int type)
{
	if (!type_known(type))
		return "?";
	return type_names[type];
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Check the header fields that are fully present in buf[0..len). */
static int check_header(const uint8_t *buf, size_t len, char *err,
			size_t errlen)
{
	if (len >= 4 && get_be32(buf) != PROTO_MAGIC)
		return gerr_fail(GERR_PROTO, err, errlen,
			    "bad magic 0x%08x (not a gpud peer?)",
			    (unsigned)get_be32(buf));
	if (len >= 5 && buf[4] != PROTO_VERSION)
		return gerr_fail(GERR_PROTO, err, errlen,
			    "unsupported protocol version %u (want %u)",
			    (unsigned)buf[4], (unsigned)PROTO_VERSION);
	if (len >= 6 && !type_known(buf[5]))
		return gerr_fail(GERR_PROTO, err, errlen, "bad message type %u",
			    (unsigned)buf[5]);
	if (len >= 8 && get_be16(buf + 6) != 0)
		return gerr_fail(GERR_PROTO, err, errlen,
			    "reserved flags 0x%04x are not zero",
			    (unsigned)get_be16(buf + 6));
	if (len >= 12) {
		uint32_t jl = get_be32(buf + 8);

		if (jl == 0)
			return gerr_fail(GERR_PROTO, err, errlen,
				    "empty JSON header");
		if (jl > PROTO_MAX_JSON)
			return gerr_fail(GERR_TOOBIG, err, errlen,
				    "JSON header of %u bytes exceeds %u",
				    (unsigned)jl, (unsigned)PROTO_MAX_JSON);
	}
	if (len >= 16 && get_be32(buf + 12) > PROTO_MAX_BIN)
		return gerr_fail(GERR_TOOBIG, err, errlen,
			    "attachment of %u bytes exceeds %u",
			    (unsigned)get_be32(buf + 12),
			    (unsigned)PROTO_MAX_BIN);
	return 0;
}

int proto_header_limit(const uint8_t *buf, size_t len,
		       const struct proto_limits *lim, char *err,
		       size_t errlen)
{
	if (!buf || !lim)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	if (len >= 6 && buf[5] <= PROTO_TYPE_MAX &&
	    !(lim->types & PROTO_BIT(buf[5])))
		return gerr_fail(GERR_PROTO, err, errlen,
			    "%s is not accepted now", proto_type_name(buf[5]));
	if (len >= 12) {
		uint32_t max = proto_type_max_json(buf[5]);

		if (lim->max_json < max)
			max = lim->max_json;
		if (get_be32(buf + 8) > max)
			return gerr_fail(GERR_TOOBIG, err, errlen,
				    "%s: JSON header of %u bytes exceeds %u",
				    proto_type_name(buf[5]),
				    (unsigned)get_be32(buf + 8), (unsigned)max);
	}
	if (len >= 16 && get_be32(buf + 12) > 0 && buf[5] <= PROTO_TYPE_MAX &&
	    !(lim->bin_types & PROTO_BIT(buf[5])))
		return gerr_fail(GERR_PROTO, err, errlen,
			    "%s may not carry an attachment (%u bytes announced)",
			    proto_type_name(buf[5]), (unsigned)get_be32(buf + 12));
	if (len >= 16 && get_be32(buf + 12) > lim->max_bin)
		return gerr_fail(GERR_TOOBIG, err, errlen,
			    "%s: attachment of %u bytes exceeds %u",
			    proto_type_name(buf[5]), (unsigned)get_be32(buf + 12),
			    (unsigned)lim->max_bin);
	return 0;
}

/* Parse the header and JSON; the attachment's bytes are needed in buf
 * too when whole is set. */
static int parse(const uint8_t *buf, size_t len, int whole,
		 struct proto_frame *ret_frame, size_t *ret_consumed,
		 size_t *ret_need, char *err, size_t errlen)
{
	uint32_t json_len, bin_len;
	size_t total;
	json_t *json;
	json_error_t jerr;
	int r;

	if (!buf && len > 0)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL buffer");
	if (!ret_frame || !ret_consumed)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL output");

	r = check_header(buf, len, err, errlen);
	if (r < 0)
		return r;
	if (len < PROTO_HEADER_LEN) {
		if (ret_need)
			*ret_need = PROTO_HEADER_LEN;
		return gerr_fail(GERR_AGAIN, err, errlen,
			    "need %u header bytes, have %zu",
			    (unsigned)PROTO_HEADER_LEN, len);
	}

	json_len = get_be32(buf + 8);
	bin_len = get_be32(buf + 12);
	/* Cannot overflow: both are bounded by check_header (< 2^29 total). */
	total = (size_t)PROTO_HEADER_LEN + json_len + (whole ? bin_len : 0);
	if (len < total) {
		if (ret_need)
			*ret_need = total;
		return gerr_fail(GERR_AGAIN, err, errlen,
			    "need %zu frame bytes, have %zu", total, len);
	}

	json = json_loadb((const char *)buf + PROTO_HEADER_LEN, json_len,
			  JSON_REJECT_DUPLICATES, &jerr);
	if (!json)
		return gerr_fail(GERR_PROTO, err, errlen,
			    "%s message: invalid JSON at byte %d: %s",
			    proto_type_name(buf[5]), jerr.position, jerr.text);
	if (!json_is_object(json)) {
		json_decref(json);
		return gerr_fail(GERR_PROTO, err, errlen,
			    "%s message: JSON header is not an object",
			    proto_type_name(buf[5]));
	}

	ret_frame->type = (enum proto_type)buf[5];
	ret_frame->json = json;
	ret_frame->bin = whole && bin_len ? buf + PROTO_HEADER_LEN + json_len
					  : NULL;
	ret_frame->bin_len = bin_len;
	*ret_consumed = total;
	return 0;
}

int proto_frame_parse(const uint8_t *buf, size_t len,
		      struct proto_frame *ret_frame, size_t *ret_consumed,
		      size_t *ret_need, char *err, size_t errlen)
{
	return parse(buf, len, 1, ret_frame, ret_consumed, ret_need, err,
		     errlen);
}

int proto_frame_parse_head(const uint8_t *buf, size_t len,
			   struct proto_frame *ret_frame, size_t *ret_consumed,
			   size_t *ret_need, char *err, size_t errlen)
{
	return parse(buf, len, 0, ret_frame, ret_consumed, ret_need, err,
		     errlen);
}

void proto_frame_clear(struct proto_frame *f)
{
	if (!f)
		return;
	json_decref(f->json);
	f->json = NULL;
	f->bin = NULL;
	f->bin_len = 0;
}

int proto_frame_encode(enum proto_type type, const json_t *json,
		       const void *bin, size_t bin_len, uint8_t **ret_buf,
		       size_t *ret_len)
{
	const size_t flags = JSON_COMPACT;
	size_t json_len, total;
	uint8_t *out;

	if (!type_known((int)type))
		return GERR_INVAL;
	if (!json || !json_is_object(json) || !ret_buf || !ret_len)
		return GERR_INVAL;
	if (bin_len > 0 && !bin)
		return GERR_INVAL;
	if (bin_len > PROTO_MAX_BIN)
		return GERR_TOOBIG;

	/* First pass sizes the dump, second writes it in place. */
	json_len = json_dumpb(json, NULL, 0, flags);
	if (json_len == 0)
		return GERR_INVAL; /* jansson could not encode it */
	if (json_len > PROTO_MAX_JSON)
		return GERR_TOOBIG;

	total = PROTO_HEADER_LEN + json_len + bin_len;
	out = malloc(total);
	if (!out)
		return GERR_NOMEM;
	if (json_dumpb(json, (char *)out + PROTO_HEADER_LEN, json_len,
		       flags) != json_len) {
		free(out);
		return GERR_INVAL;
	}
	put_be32(out, PROTO_MAGIC);
	out[4] = PROTO_VERSION;
	out[5] = (uint8_t)type;
	put_be16(out + 6, 0);
	put_be32(out + 8, (uint32_t)json_len);
	put_be32(out + 12, (uint32_t)bin_len);
	if (bin_len)
		memcpy(out + PROTO_HEADER_LEN + json_len, bin, bin_len);
	*ret_buf = out;
	*ret_len = total;
	return 0;
}

int proto_get_u64(const json_t *obj, const char *key, uint64_t *ret)
{
	const json_t *v;
	json_int_t i;

	if (!obj || !key || !ret || !json_is_object(obj))
		return GERR_PROTO;
	v = json_object_get(obj, key);
	if (!v || !json_is_integer(v))
		return GERR_PROTO;
	i = json_integer_value(v);
	if (i < 0)
		return GERR_PROTO;
	*ret = (uint64_t)i;
	return 0;
}

int proto_get_str(const json_t *obj, const char *key, size_t maxlen,
		  const char **ret)
{
	const json_t *v;
	const char *s;
	size_t n;

	if (!obj || !key || !ret || !json_is_object(obj))
		return GERR_PROTO;
	v = json_object_get(obj, key);
	if (!v || !json_is_string(v))
		return GERR_PROTO;
	s = json_string_value(v);
	n = json_string_length(v);
	if (!s || n > maxlen || memchr(s, '\0', n))
		return GERR_PROTO;
	*ret = s;
	return 0;
}

/* proto.h - gpud's wire protocol: versioned, length-prefixed frames.
 *
 * One format serves workers and remote gpuctl (TCP, inside the secure
 * channel of chan.h: every frame below travels sealed) and gpuctl on the
 * Unix socket (plain frames: the socket is gpud's user's alone).
 *
 * Frame, all integers big-endian:
 *   offset size  field
 *   0      4     magic     0x47505544 ("GPUD"): resynchronisation is never
 *                          attempted; a wrong magic closes the connection
 *   4      1     version   PROTO_VERSION
 *   5      1     type      enum proto_type
 *   6      2     flags     must be 0 (reserved)
 *   8      4     json_len  length of the JSON header, 1..PROTO_MAX_JSON
 *   12     4     bin_len   length of the binary attachment, 0..PROTO_MAX_BIN
 *   16     ...   json      a UTF-8 JSON object (the message's fields)
 *   16+json_len  bin       opaque bytes (a blob), may be empty
 *
 * The limits bound memory per connection before any payload is read: a
 * header announcing more is refused at once (GERR_TOOBIG). A connection
 * narrows them by its state (struct proto_limits, checked from the header
 * alone): before login a worker may send only the message its state
 * expects, HELLO or AUTH, of at most PROTO_LOGIN_MAX_JSON bytes and with
 * nothing attached; after login its JSON is at most PROTO_WORKER_MAX_JSON
 * and only CHECKPOINT and RESULT carry an attachment. Each message type
 * has its own JSON bound besides (proto_type_max_json: its fields' bounds
 * with room to spare), applied by proto_header_limit whatever the state:
 * a HEARTBEAT announcing 60 KiB is refused from its header. An attachment
 * need not be buffered: proto_frame_parse_head returns a frame's JSON as
 * soon as it is present, and the caller reads the attachment's bytes
 * itself (gpud streams uploads to a file: conn.c).
 *
 * Messages (type: JSON fields; "->" worker to gpud, "<-" gpud to worker;
 * the worker messages' typed structs and field rules are in msg.h):
 *   HELLO      -> {"proto":1,"worker":name,"device":"cpu|cuda:N",
 *                  "workloads":[names],"cuda":bool,"threads":n,
 *                  "host":name,"slurm_job":"N","slurm_array":"A_T",
 *                  "pod":name}  (where it runs, each optional: place.h)
 *   WELCOME    <- {"worker_id":n,"heartbeat_s":n,"checkpoint_s":n,
 *                  "role":"worker|viewer|admin"}
 *   CTL_HELLO  -> {"proto":1,"name":token name}  remote gpuctl's login
 *                 instead of HELLO (then WELCOME; then
 *                 CTL_REQ/CTL_REPLY as on the Unix socket, by role)
 *   CLAIM      -> {}   (leases are sized by the rates gpud measures on
 *                 verified work; a worker states none)
 *   LEASE      <- {"lease":id,"epoch":e,"job":id,"workload":name,
 *                  "params":{..},"spec":{..},"units":n,"deadline_s":n,
 *                  "units_done":n}  bin = last checkpoint blob or empty
 *   NOLEASE    <- {"retry_s":n,"reason":text}
 *   HEARTBEAT  -> {"lease":id,"epoch":e,"units_done":n}
 *   HB_ACK     <- {"lease":id,"epoch":e,"action":"continue|stop|release"}
 *   CHECKPOINT -> {"lease":id,"epoch":e,"units_done":n}  bin = blob
 *   RESULT     -> {"lease":id,"epoch":e,"units_done":n,"seconds":f}
 *                 bin = blob
 *   ACK        <- {"lease":id,"epoch":e,"what":"checkpoint|result|release"}
 *   RELEASE    -> {"lease":id,"epoch":e[,"error":text]}   give a lease back
 *                 (pause/stop, or the run failed: error says why)
 *   FETCH      -> {"hash":hex64}   ask for a stored blob (job input, an
 *                 earlier result) that a lease's params or spec names
 *   BLOB       <- {"hash":hex64}  bin = the blob (header + zlib stream), or
 *                 ERROR {"code","message","hash"} when gpud has none
 *   ERROR      <- {"code":n,"message":text,"lease":id?,"epoch":e?}
 *   CTL_REQ    gpuctl -> gpud {"cmd":name, ...}  bin = an input file for
 *                 "submit" (optional)
 *   CTL_REPLY  gpud -> gpuctl {"ok":bool,"error":text?, ...}
 *
 * Ownership: proto_frame_parse borrows the input buffer and returns a frame
 * whose json is a new reference (caller json_decref's it) and whose bin
 * points INTO the input buffer (valid while the buffer is).
 * proto_frame_encode returns a malloc'ed buffer the caller frees.
 * Thread-safe: no shared state.
 */
#ifndef GPUD_PROTO_H
#define GPUD_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define PROTO_MAGIC 0x47505544u
#define PROTO_VERSION 1
#define PROTO_HEADER_LEN 16
#define PROTO_MAX_JSON (1u << 20)        /* 1 MiB */
#define PROTO_MAX_BIN (256u << 20)       /* 256 MiB */
/* HELLO is the largest login message: a name, a device, 32 workload
 * names and the worker's place (about 400 bytes), under 3 KiB even with
 * every character escaped twice over. */
#define PROTO_LOGIN_MAX_JSON 8192u
#define PROTO_WORKER_MAX_JSON (64u << 10) /* a RELEASE's error text fits */
/* The JSON of a message with a few numbers and short names (CLAIM,
 * HEARTBEAT, CHECKPOINT, RESULT, FETCH, AUTH, CTL_HELLO): under 300 bytes
 * in practice. */
#define PROTO_SMALL_MAX_JSON 2048u
/* A message with one text of MSG_TEXT_MAX characters (RELEASE, WITHDRAW):
 * 1024 characters escaped as \uXXXX are 6 KiB. */
#define PROTO_TEXT_MAX_JSON 8192u

enum proto_type {
	PROTO_HELLO = 1,
	/* 2 and 3: retired (the token challenge before TLS); refused */
	PROTO_WELCOME = 4,
	PROTO_CLAIM = 5,
	PROTO_LEASE = 6,
	PROTO_NOLEASE = 7,
	PROTO_HEARTBEAT = 8,
	PROTO_HB_ACK = 9,
	PROTO_CHECKPOINT = 10,
	PROTO_RESULT = 11,
	PROTO_ACK = 12,
	PROTO_RELEASE = 13,
	PROTO_ERROR = 14,
	PROTO_CTL_REQ = 15,
	PROTO_CTL_REPLY = 16,
	PROTO_FETCH = 17,
	PROTO_BLOB = 18,
	PROTO_CTL_HELLO = 19,
	PROTO_WITHDRAW = 20,
	PROTO_TYPE_MAX = 20,
};

struct proto_frame {
	enum proto_type type;
	json_t *json;        /* new reference, always a JSON object */
	const uint8_t *bin;  /* points into the parsed buffer; NULL if empty */
	size_t bin_len;
};

/* What one connection accepts now, narrower than the frame limits above.
 * types and bin_types are bit masks of message types (bit t for type t). */
struct proto_limits {
	uint32_t types;      /* the types allowed */
	uint32_t max_json;   /* <= PROTO_MAX_JSON */
	uint32_t max_bin;    /* <= PROTO_MAX_BIN */
	uint32_t bin_types;  /* the types that may carry an attachment */
};

#define PROTO_BIT(t) (1u << (t))

/* Name of a message type ("HELLO"), or "?" */
const char *proto_type_name(int type);

/* The most JSON bytes a frame of that type may carry: PROTO_LOGIN_MAX_JSON
 * for HELLO, PROTO_SMALL_MAX_JSON or PROTO_TEXT_MAX_JSON for the other
 * worker messages, PROTO_MAX_JSON for gpud's messages and gpuctl's; 0 for
 * a type that does not exist. */
uint32_t proto_type_max_json(int type);

/* Parse one frame from the start of buf.
 * Returns 0 and fills *ret_frame and *ret_consumed when a whole frame is
 * present; GERR_AGAIN when more bytes are needed (*ret_need, if non-NULL,
 * says how many bytes the frame needs in total once the header is known);
 * GERR_PROTO (bad magic, version, type, flags, JSON not an object),
 * GERR_TOOBIG (announced lengths over the limits) otherwise. On error a
 * reason is written into err. */
int proto_frame_parse(const uint8_t *buf, size_t len,
		      struct proto_frame *ret_frame, size_t *ret_consumed,
		      size_t *ret_need, char *err, size_t errlen);

/* Parse a frame's header and JSON from the start of buf, not its
 * attachment: as proto_frame_parse, except that the frame is returned once
 * its JSON is present, with bin NULL and bin_len the attachment's announced
 * length, and *ret_consumed covers the header and the JSON only (the
 * attachment's bytes follow in the stream). */
int proto_frame_parse_head(const uint8_t *buf, size_t len,
			   struct proto_frame *ret_frame, size_t *ret_consumed,
			   size_t *ret_need, char *err, size_t errlen);

/* Check the header at the start of buf[0..len) against lim, each field as
 * soon as it is present, so a frame the connection may not take is refused
 * before its payload is buffered; the JSON is also held to its type's
 * bound (proto_type_max_json). Returns 0 (acceptable so far, or buf
 * holds less than a header) or GERR_PROTO (a type not allowed now) or
 * GERR_TOOBIG (lengths over lim), with a reason in err. */
int proto_header_limit(const uint8_t *buf, size_t len,
		       const struct proto_limits *lim, char *err,
		       size_t errlen);

/* Release what proto_frame_parse gave (the JSON reference). NULL-safe. */
void proto_frame_clear(struct proto_frame *f);

/* Encode a frame. json is borrowed (must be an object). bin may be NULL.
 * Returns 0 and a malloc'ed buffer in *ret_buf / *ret_len. */
int proto_frame_encode(enum proto_type type, const json_t *json,
		       const void *bin, size_t bin_len, uint8_t **ret_buf,
		       size_t *ret_len);

/* JSON field helpers for message handlers; they validate type and range.
 * Return 0 or GERR_PROTO. */
int proto_get_u64(const json_t *obj, const char *key, uint64_t *ret);
int proto_get_str(const json_t *obj, const char *key, size_t maxlen,
		  const char **ret);

#endif

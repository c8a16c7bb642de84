/* libFuzzer target: the worker protocol's message codec (common/msg.h).
 * The first byte picks the message type, the rest is the JSON header. Any
 * input must be refused or decoded without a crash; a decoded message must
 * encode (the codec accepts what it gave), and its encoding must decode to
 * a header that encodes to the same JSON again (a fixed point). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Big enough for any message struct; aligned for all of them. */
union any_msg {
	struct msg_hello hello;
	struct msg_lease lease;
	struct msg_error error;
	struct msg_result result;
	char bytes[1024];
};

static size_t msg_size(int type)
{
	switch (type) {
	case PROTO_HELLO: return sizeof(struct msg_hello);
	case PROTO_WELCOME: return sizeof(struct msg_welcome);
	case PROTO_CLAIM: return sizeof(struct msg_claim);
	case PROTO_LEASE: return sizeof(struct msg_lease);
	case PROTO_NOLEASE: return sizeof(struct msg_nolease);
	case PROTO_HEARTBEAT: return sizeof(struct msg_heartbeat);
	case PROTO_HB_ACK: return sizeof(struct msg_hb_ack);
	case PROTO_CHECKPOINT: return sizeof(struct msg_checkpoint);
	case PROTO_RESULT: return sizeof(struct msg_result);
	case PROTO_ACK: return sizeof(struct msg_ack);
	case PROTO_RELEASE: return sizeof(struct msg_release);
	case PROTO_FETCH: return sizeof(struct msg_fetch);
	case PROTO_BLOB: return sizeof(struct msg_blob);
	case PROTO_ERROR: return sizeof(struct msg_error);
	case PROTO_WITHDRAW: return sizeof(struct msg_withdraw);
	default: return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union any_msg m, m2;
	json_t *h, *h2 = NULL, *h3 = NULL;
	char err[200];
	int type;
	size_t n;

	if (size < 1)
		return 0;
	type = 1 + data[0] % PROTO_TYPE_MAX;
	n = msg_size(type);
	if (!n || !msg_known(type))
		return 0;
	/* As proto_frame_parse loads a header. */
	h = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES,
		       NULL);
	if (!h)
		return 0;
	if (msg_decode(type, h, &m, n, err, sizeof(err)) != 0) {
		json_decref(h);
		return 0;
	}
	if (msg_encode(type, &m, n, &h2) != 0)
		abort();
	if (msg_decode(type, h2, &m2, n, err, sizeof(err)) != 0)
		abort();
	if (msg_encode(type, &m2, n, &h3) != 0 || !json_equal(h2, h3))
		abort();
	json_decref(h3);
	json_decref(h2);
	json_decref(h);
	return 0;
}

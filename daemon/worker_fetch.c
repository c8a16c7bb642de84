/* worker_fetch.c - FETCH: a worker asks for a blob by its hash (a job's
 * input, an earlier lease's result); gpud reads it on the thread pool and
 * answers BLOB, or ERROR naming the hash. Loop thread, except fetch_work.
 */
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "conn.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "proto.h"
#include "worker_proto.h"

struct fetch_req {
	uv_work_t work;
	struct conn *c;
	char hash[BLOB_HASH_HEX];
	uint8_t *blob;
	size_t len;
	int rc;
};

static void fetch_work(uv_work_t *w)
{
	struct fetch_req *r = w->data;
	r->rc = blob_store_get(r->c->d->cfg.data_dir, r->hash, &r->blob, &r->len);
}

static void fetch_after(uv_work_t *w, int status)
{
	struct fetch_req *r = w->data;
	struct conn *c = r->c;
	json_t *h = NULL;

	if (!c->closing) {
		if (status == 0 && r->rc == 0) {
			struct msg_blob m = { .hash = r->hash };

			LOG_DEBUG(&c->d->log, "blob sent hash=%.16s bytes=%zu worker=%s",
				  r->hash, r->len, c->name);
			msg_blob_encode(&m, &h);
			conn_send(c, PROTO_BLOB, h, r->blob, r->len);
		} else {
			struct msg_error e = {
				.code = r->rc ? r->rc : GERR_IO,
				.message = r->rc == GERR_NOTFOUND ? "no such blob"
								  : gerr_str(r->rc),
				.hash = r->hash,
			};

			msg_error_encode(&e, &h);
			conn_send(c, PROTO_ERROR, h, NULL, 0);
		}
	}
	free(r->blob);
	free(r);
	conn_step_done(c);
}

int wp_fetch(struct conn *c, const json_t *msg)
{
	struct msg_fetch m;
	struct fetch_req *r;

	if (msg_fetch_decode(msg, &m, NULL, 0)) /* 64 lowercase hex digits */
		return GERR_PROTO;
	r = calloc(1, sizeof(*r));
	if (!r)
		return GERR_NOMEM;
	r->c = c;
	memcpy(r->hash, m.hash, BLOB_HASH_HEX);
	r->work.data = r;
	conn_ref(c);
	c->busy = 1;
	if (uv_queue_work(c->d->loop, &r->work, fetch_work, fetch_after)) {
		c->busy = 0;
		conn_unref(c);
		free(r);
		return GERR_STATE;
	}
	return 0;
}


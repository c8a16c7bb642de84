/* wfetch.c - gpuworker's blob fetch path: the run asks for a blob it does
 * not have (runner.h #5), the client sends FETCH and hands gpud's answer
 * (BLOB, or an ERROR naming the hash) back to the runner thread.
 *
 * Invariant (wlease.c #7): at most one FETCH is outstanding, the run's. It
 * is sent from wlease_pump() while the run goes on, again after every
 * reconnect, and forgotten when gpud answers or the run ends. An answer
 * for any other hash is late and dropped.
 *
 * Ownership: the fetched bytes are copied out of the read buffer and
 * handed to the runner (runner_fetch_done takes them); hashing and
 * inflating happen on the runner thread.
 *
 * Threads: loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "gerr.h"
#include "msg.h"

int wfetch_pump(struct client *cl)
{
	struct msg_fetch m = { .hash = cl->fetch_hash };
	json_t *h = NULL;

	/* The run blocks until the blob comes. */
	if (!cl->fetch_hash[0] || cl->fetch_sent || !cl->cur.run_id ||
	    !(cl->ls == WLEASE_RUNNING ||
	      (cl->ls == WLEASE_RELEASING && !cl->rel_sent)))
		return 0;
	cl->fetch_sent = 1;
	LOG_DEBUG(cl->log, "fetch request hash=%.16s " LFMT, cl->fetch_hash,
		  LARGS(cl));
	if (msg_fetch_encode(&m, &h) < 0) {
		json_decref(h);
		h = NULL; /* wconn_send closes the connection */
	}
	return wconn_send(&cl->conn, PROTO_FETCH, h, NULL, 0);
}

void wfetch_forget(struct client *cl)
{
	cl->fetch_hash[0] = '\0';
	cl->fetch_sent = 0;
}

/* Hand gpud's answer to the run's fetch over. bin is copied: it points
 * into the read buffer. */
static void fetch_answered(struct client *cl, int rc, const uint8_t *bin,
			   size_t len)
{
	uint8_t *copy = NULL;

	if (rc == 0) {
		copy = malloc(len ? len : 1);
		if (copy)
			memcpy(copy, bin, len);
		else
			rc = GERR_NOMEM;
	}
	if (!runner_fetch_done(&cl->runner, cl->fetch_hash, rc, copy, len))
		LOG_DEBUG(cl->log, "blob answer for a fetch no run waits for "
			  "hash=%.16s", cl->fetch_hash);
	wfetch_forget(cl);
}

int wfetch_on_blob(struct client *cl, const struct proto_frame *f)
{
	struct msg_blob m;

	if (msg_blob_decode(f->json, &m, NULL, 0) < 0)
		return GERR_PROTO;
	if (!cl->fetch_hash[0] || strcmp(m.hash, cl->fetch_hash) != 0) {
		/* Asked for by a run that has since been stopped. */
		LOG_DEBUG(cl->log, "late BLOB ignored hash=%.16s bytes=%zu",
			  m.hash, f->bin_len);
		return 0;
	}
	LOG_DEBUG(cl->log, "blob received hash=%.16s bytes=%zu", m.hash,
		  f->bin_len);
	fetch_answered(cl, 0, f->bin, f->bin_len);
	return 0;
}

/* The answer to a FETCH: gpud has no such blob (or cannot read it). Not
 * about the connection, which stays. */
void wfetch_on_error(struct client *cl, const struct msg_error *e)
{
	long long c = (long long)e->code;

	if (!cl->fetch_hash[0] || strcmp(e->hash, cl->fetch_hash) != 0) {
		LOG_DEBUG(cl->log, "late fetch error ignored hash=%.16s: %s",
			  e->hash, e->message);
		return;
	}
	LOG_WARN(cl->log, "gpud cannot serve blob hash=%.16s " LFMT
		 ": %s (%lld)", e->hash, LARGS(cl), e->message, c);
	/* Keep gpud's code when it is one of ours. */
	fetch_answered(cl, c < 0 && c >= GERR_UNSUPPORTED ? (int)c
						      : GERR_NOTFOUND,
		       NULL, 0);
}

/* spool.c - what connections hold (conn.h): an upload's attachment in a
 * file (struct conn_spool: conn.c writes it as it arrives, upload.c reads
 * it back), the bound conn.c holds an upload frame to from its header,
 * the memory budget's count and what holds a connection's reads back,
 * and the parked claims' counts. Calls
 * nothing in conn.c. Loop thread, but conn_spool_read and
 * conn_spool_free (any thread).
 */
#define _GNU_SOURCE /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "proto.h"
#include "workload.h"

/* ---- an upload's attachment in a file ---- */

int conn_spool_read(const struct conn_spool *sp, uint8_t **ret_buf, char *err,
		    size_t errlen)
{
	uint8_t *buf = malloc(sp->len ? sp->len : 1);
	uint64_t off = 0;

	if (!buf)
		return gerr_fail(GERR_NOMEM, err, errlen, "out of memory");
	while (off < sp->len) {
		ssize_t n = pread(sp->fd, buf + off, sp->len - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return gerr_fail(GERR_IO, err, errlen, "reading the upload's "
					 "file: %s", n < 0 ? strerror(errno)
					 : "shorter than written");
		}
		off += (uint64_t)n;
	}
	*ret_buf = buf;
	return 0;
}

void conn_spool_free(struct conn_spool *sp)
{
	if (!sp)
		return;
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp);
}

/* An unnamed file in the data directory: nothing is left of it after a
 * crash. */
static int spool_open(struct conn *c, uint64_t len, char *err, size_t errlen)
{
	struct conn_spool *sp = calloc(1, sizeof(*sp));
	char path[4200];

	if (!sp)
		return gerr_fail(GERR_NOMEM, err, errlen, "out of memory");
	snprintf(path, sizeof(path), "%s/.upload-XXXXXX", c->d->cfg.data_dir);
	sp->fd = mkostemp(path, O_CLOEXEC);
	/* A file gpud cannot make (a full disk) fails the upload, not the
	 * connection: its bytes are read and dropped, and the upload path
	 * answers with the storage error. */
	if (sp->fd < 0)
		sp->rc = gerr_from_errno(errno);
	else
		unlink(path);
	sp->len = len;
	c->spool = sp;
	return 0;
}

/* The largest upload c may send for a lease other than its current one:
 * its workloads' largest. */
uint64_t conn_workloads_upload_max(const struct conn *c)
{
	const struct workload *const *all = workload_all();
	uint64_t max = 0;
	char quoted[80];

	for (size_t i = 0; all[i]; i++) {
		snprintf(quoted, sizeof(quoted), "\"%s\"", all[i]->name);
		if (c->workloads_json && strstr(c->workloads_json, quoted)) {
			uint64_t b = workload_upload_bound(all[i], NULL, NULL);
			max = b > max ? b : max;
		}
	}
	return max;
}

/* A logged-in worker's upload frame, its JSON read: bound its attachment
 * and open its file. Returns 0 or GERR_TOOBIG with the reason in err. */
int conn_spool_begin(struct conn *c, const struct proto_frame *f, char *err,
		       size_t errlen)
{
	struct msg_checkpoint m;
	uint64_t max = 0;
	const char *what = "its workloads' largest upload";

	if (msg_checkpoint_decode(f->json, &m, NULL, 0) == 0 &&
	    (int64_t)m.lease == c->lease_id && m.epoch == c->epoch &&
	    c->lease_upload_max) {
		max = c->lease_upload_max;
		what = "what its lease can hold";
	} else {
		max = conn_workloads_upload_max(c);
	}
	if (max > PROTO_MAX_BIN)
		max = PROTO_MAX_BIN;
	if (f->bin_len > max)
		return gerr_fail(GERR_TOOBIG, err, errlen, "%s: attachment of %zu "
				 "bytes exceeds %s (%" PRIu64 " bytes)",
				 proto_type_name(f->type), f->bin_len, what, max);
	return spool_open(c, f->bin_len, err, errlen);
}

/* ---- the budget for what connections buffer ---- */

/* Budgeted: every TCP connection but an admin's remote gpuctl. */
int conn_budgeted(const struct conn *c)
{
	return !c->is_ctl && !(c->remote_ctl && c->state == CONN_READY &&
			       c->role == AUTH_ROLE_ADMIN);
}

int conn_replies_unread(const struct conn *c)
{
	return !c->is_ctl &&
	       uv_stream_get_write_queue_size(&c->u.s) > CONN_WRITE_QUEUE_MAX;
}

int conn_held_back(const struct conn *c)
{
	return conn_budgeted(c) && c->state == CONN_READY &&
	       (c->len >= CONN_WORKER_PLAIN || (c->busy && c->len >= CONN_READ_CHUNK) ||
		conn_replies_unread(c));
}

int conn_mem_update(struct conn *c)
{
	struct gpud *d = c->d;
	size_t now = c->is_ctl ? 0 : c->cap + c->scap + c->spool_inflight;
	int freed = now < c->mem;

	d->frame_mem = d->frame_mem - c->mem + now;
	c->mem = now;
	return freed;
}

void conn_mem_charge(struct gpud *d, int64_t n)
{
	d->frame_mem = (uint64_t)((int64_t)d->frame_mem + n);
}

int conn_mem_fits(const struct gpud *d, uint64_t n, unsigned eighths)
{
	return d->frame_mem + n <= d->cfg.frame_mem_max / 8 * eighths;
}

void conn_set_parked(struct conn *c, int on)
{
	struct gpud *d = c->d;

	on = on != 0;
	if (c->parked == on)
		return;
	c->parked = on;
	for (unsigned i = 0; i < GPUD_PARKED_WL; i++) {
		if (!(c->park_mask & (1u << i)))
			continue;
		if (on)
			d->parked[i]++;
		else if (d->parked[i])
			d->parked[i]--;
	}
}

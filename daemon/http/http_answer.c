/* http_answer.c - the answers gpud's HTTP server writes on
 * libmicrohttpd's thread from what the loop gathered (http_internal.h):
 * /api/status, /metrics and the pages. No reply key is spelled here: the
 * replies are read through ctlcmd.h (the typed reply, its lists as gpud
 * sent them). The keys this file writes ("plots", "workers", "now",
 * "version") are /api/status's own.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctlcmd.h"
#include "gpud_config.h"
#include "http_files.h"
#include "http_internal.h"
#include "log.h"
#include "page_render.h"
#include "procstat.h"

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned code,
				 const json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	if (!text)
		return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return http_send_buf(conn, code, "application/json", text, strlen(text),
			MHD_RESPMEM_MUST_FREE);
}

/* reply, an ok reply of command id, into *ret (ctlcmd_reply_clear frees
 * it; it borrows from reply). 0, or GERR_INVAL, logged: gpud's replies
 * always decode (ctlcmd_reply_encode wrote them), so this is a bug. */
static int decode_reply(const struct http *h, enum ctlcmd_id id,
			const json_t *reply, struct ctlcmd_reply *ret)
{
	char err[256];
	int rc = ctlcmd_reply_decode(&ctlcmd_table[id], reply, ret, err, sizeof(err));

	if (rc)
		LOG_WARN(h->log, "http: gpud's %s reply: %s", ctlcmd_table[id].name, err);
	return rc;
}

static enum MHD_Result send_undecoded(struct MHD_Connection *conn)
{
	return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			 "gpud's reply does not decode (see gpud's log)\n");
}

/* /api/status: the status reply, with the workers and each job's plots. */
enum MHD_Result http_answer_status(const struct http *h,
				   struct MHD_Connection *conn, struct http_req *r)
{
	struct ctlcmd_reply st;
	const json_t *jobs, *workers;
	const char *error;

	if (!ctlcmd_reply_ok(r->status, &error))
		return send_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->status);
	if (decode_reply(h, CTLCMD_STATUS, r->status, &st))
		return send_undecoded(conn);
	/* st.jobs[i] is the array's row i. */
	jobs = ctlcmd_reply_list(CTLCMD_STATUS, r->status);
	for (size_t i = 0; i < st.n_jobs; i++)
		json_object_set_new(json_array_get(jobs, i), "plots",
				    http_list_plots(h->results, st.jobs[i].id));
	ctlcmd_reply_clear(&st);
	workers = ctlcmd_reply_list(CTLCMD_WORKERS, r->workers);
	/* r owns both replies: the status takes a reference to the list. */
	json_object_set_new(r->status, "workers", json_is_array(workers) ?
			    json_incref((json_t *)workers) : json_array());
	json_object_set_new(r->status, "now", json_real(gclock_wall()));
	json_object_set_new(r->status, "version", json_string(GPUD_VERSION));
	return send_json(conn, MHD_HTTP_OK, r->status);
}

/* /metrics: the replies decoded, rendered (metrics.h). A workers reply
 * that is not ok counts no workers. */
enum MHD_Result http_answer_metrics(const struct http *h,
				    struct MHD_Connection *conn,
				    const struct http_req *r)
{
	struct ctlcmd_reply st, wk;
	struct procstat ps;
	const struct http_db *db = r->db;
	struct metrics_input in = {
		.status = &st,
		.workers = NULL,
		.commits = r->have_commits ? &r->commits : NULL,
		.verify_failures = r->verify_failures,
		.blobs_known = r->blobs_known,
		.blob_bytes = r->blob_bytes,
		.blob_files = r->blob_files,
		.http_late = r->http_late,
		.http_evicted = r->http_evicted,
		/* Counts from a read that failed would go back: left out. */
		.event_counts = db && db->rc == 0 ? db->tally.counts : NULL,
		.proc = procstat_read(&ps) == 0 ? &ps : NULL,
		.last_check = db ? db->check_at : 0,
		.last_backup = db ? db->backup_at : 0,
		.db_known = db && db->db_known,
		.db_bytes = db ? db->db_bytes : 0,
		.storage_error = r->storage_msg[0] != '\0',
		.now = gclock_wall(),
		.version = GPUD_VERSION,
	};
	const char *error;
	char *text;
	size_t len;
	int rc;

	if (!ctlcmd_reply_ok(r->status, &error))
		return send_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->status);
	if (decode_reply(h, CTLCMD_STATUS, r->status, &st))
		return send_undecoded(conn);
	if (r->workers && ctlcmd_reply_ok(r->workers, &error)) {
		if (decode_reply(h, CTLCMD_WORKERS, r->workers, &wk)) {
			ctlcmd_reply_clear(&st);
			return send_undecoded(conn);
		}
		in.workers = &wk;
	}
	rc = metrics_render(&in, &text, &len);
	ctlcmd_reply_clear(&st);
	if (in.workers)
		ctlcmd_reply_clear(&wk);
	if (rc)
		return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return http_send_buf(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			text, len, MHD_RESPMEM_MUST_FREE);
}

/* A page (main, a job's, the plots' list) rendered with its data
 * (page_render.h). */
enum MHD_Result http_answer_page(const struct http *h,
				 struct MHD_Connection *conn,
				 const struct http_req *r)
{
	struct ctlcmd_reply st, wk, res;
	struct procstat ps;
	const struct http_db *db = r->db;
	struct page_health health = {
		.start_time = procstat_read(&ps) == 0 ? ps.start_time : 0,
		.db_known = db && db->db_known,
		.db_bytes = db ? db->db_bytes : 0,
		.blobs_known = r->blobs_known,
		.blob_bytes = r->blob_bytes,
		.blob_files = r->blob_files,
		.check_at = db ? db->check_at : 0,
		.backup_at = db ? db->backup_at : 0,
		.check_detail = db ? db->check_detail : NULL,
		.backup_detail = db ? db->backup_detail : NULL,
		.storage_msg = r->storage_msg[0] ? r->storage_msg : NULL,
	};
	struct page_input in = {
		.kind = r->kind == REQ_JOB ? PAGE_JOB :
			r->kind == REQ_PLOTS ? PAGE_PLOTS : PAGE_MAIN,
		.status = &st,
		.status_json = r->status,
		.job = r->job,
		.events = db ? db->events : NULL,
		.n_events = db ? db->n_events : 0,
		.tally = db && db->rc == 0 && r->kind == REQ_PAGE ? &db->tally : NULL,
		.health = &health,
		.results_dir = h->results,
		.now = gclock_wall(),
		.version = GPUD_VERSION,
	};
	const char *error;
	char *text;
	size_t len;
	int rc, have_res = 0;

	if (!ctlcmd_reply_ok(r->status, &error)) {
		if (r->kind == REQ_JOB && error && strncmp(error, "no job", 6) == 0)
			return http_send_text(conn, MHD_HTTP_NOT_FOUND, "no such job\n");
		return send_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->status);
	}
	if (decode_reply(h, CTLCMD_STATUS, r->status, &st))
		return send_undecoded(conn);
	if (r->workers && ctlcmd_reply_ok(r->workers, &error) &&
	    decode_reply(h, CTLCMD_WORKERS, r->workers, &wk) == 0)
		in.workers = &wk;
	if (r->result && ctlcmd_reply_ok(r->result, &error)) {
		if (decode_reply(h, CTLCMD_RESULT, r->result, &res) == 0) {
			have_res = 1;
			in.answer = res.text;
			if (!in.answer)
				in.answer_error = "The answer has no text summary: "
						  "gpuctl result prints it.";
		}
	} else if (r->result) {
		in.answer_error = error;
	}
	rc = page_render(&in, (const char *)http_page, http_page_len, &text, &len);
	ctlcmd_reply_clear(&st);
	if (in.workers)
		ctlcmd_reply_clear(&wk);
	if (have_res)
		ctlcmd_reply_clear(&res);
	if (rc)
		return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "cannot render the page (out of memory)\n");
	return http_send_buf(conn, MHD_HTTP_OK, "text/html; charset=utf-8", text,
			len, MHD_RESPMEM_MUST_FREE);
}

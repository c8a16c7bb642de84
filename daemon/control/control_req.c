/* control_req.c - what every gpuctl request shares: its end (its reply
 * sent and its memory freed) and the error reply (control_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob_audit.h"
#include "control_internal.h"

json_t *ctl_error_reply(const char *msg)
{
	return ctlcmd_reply_error(msg);
}

struct ctlcmd_problem *ctl_problem_rows(const struct audit_problem *probs,
					size_t n, size_t max, size_t *ret_n)
{
	struct ctlcmd_problem *rows;

	n = n < max ? n : max;
	rows = calloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++) {
		const struct store_blob_ref *f = probs[i].ref;

		rows[i] = (struct ctlcmd_problem){ .job = f->job_id,
			.lease = f->lease_id, .where = f->where, .hash = f->hash,
			.problem = audit_problem_name(probs[i].rc) };
	}
	*ret_n = n;
	return rows;
}

void ctl_finish(struct ctl_req *r)
{
	json_t *reply = r->reply;

	if (!reply) {
		reply = ctl_error_reply(r->err[0] ? r->err : "internal error");
		free(r->out);
		r->out = NULL;
		r->out_len = 0;
	}
	r->done(r->opaque, reply, r->out, r->out_len);
	free(r->job_params);
	free(r->job_answer);
	job_parts_clear(&r->parts);
	store_job_clear(&r->jobrow);
	json_decref(r->req);
	free(r->input);
	free(r->params);
	if (r->token_text) {
		memset(r->token_text, 0, strlen(r->token_text));
		free(r->token_text);
	}
	free(r);
}

json_t *ctl_json_from_text(const char *text)
{
	json_t *j = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
	return j ? j : json_null();
}

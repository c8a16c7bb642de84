/* control_req.c - what every gpuctl request shares: its end (its reply
 * sent and its memory freed) and the error reply (control_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"

json_t *ctl_error_reply(const char *msg)
{
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
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

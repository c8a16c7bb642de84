/* ctl_check.c - `gpuctl check`'s report (ctl_check.h). */
#include "ctl_check.h"

void ctl_check_print(FILE *f, const json_t *reply)
{
	const json_t *db = json_object_get(reply, "database");
	const json_t *probs = json_object_get(reply, "problems");
	size_t i;
	json_t *v;

	if (json_array_size(db) == 0)
		fprintf(f, "database: ok (integrity_check)\n");
	json_array_foreach(db, i, v)
		fprintf(f, "database: %s\n", json_string_value(v));
	fprintf(f, "blobs: %" JSON_INTEGER_FORMAT " named by %" JSON_INTEGER_FORMAT
		" references, %" JSON_INTEGER_FORMAT " problem(s)%s\n",
		json_integer_value(json_object_get(reply, "blobs_checked")),
		json_integer_value(json_object_get(reply, "references")),
		json_integer_value(json_object_get(reply, "problems_total")),
		(size_t)json_integer_value(json_object_get(reply, "problems_total")) >
		json_array_size(probs) ? " (the first are listed)" : "");
	json_array_foreach(probs, i, v) {
		const json_t *lease = json_object_get(v, "lease");
		json_int_t job = json_integer_value(json_object_get(v, "job"));

		/* "where" names what the number is: "result of lease", "params of job". */
		fprintf(f, "  job %" JSON_INTEGER_FORMAT ": %s %" JSON_INTEGER_FORMAT
			": blob %s %s\n", job,
			json_string_value(json_object_get(v, "where")),
			json_is_integer(lease) ? json_integer_value(lease) : job,
			json_string_value(json_object_get(v, "hash")),
			json_string_value(json_object_get(v, "problem")));
	}
	if (json_array_size(json_object_get(reply, "damaged_jobs")))
		fprintf(f, "the jobs above show as damaged in gpuctl status; restore "
			"their blobs (DATA/blobs/XX/HASH) from a backup and run gpuctl "
			"check again to clear the mark\n");
	if (json_array_size(db))
		fprintf(f, "the database itself is damaged: stop gpud, which will "
			"then refuse to start and say how to recover it\n");
	fprintf(f, "%s\n", json_is_true(json_object_get(reply, "damaged"))
		? "DAMAGED" : "ok");
}

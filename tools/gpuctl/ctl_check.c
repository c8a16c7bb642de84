/* ctl_check.c - `gpuctl check`'s and `gpuctl backup`'s reports
 * (ctl_check.h). */
#include "ctl_check.h"

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* One named blob that is not as it should be. */
static void problem_print(FILE *f, const json_t *v)
{
	const json_t *lease = json_object_get(v, "lease");
	json_int_t job = num(v, "job");

	/* "where" names what the number is: "result of lease", "params of job". */
	fprintf(f, "  job %" JSON_INTEGER_FORMAT ": %s %" JSON_INTEGER_FORMAT
		": blob %s %s\n", job, json_string_value(json_object_get(v, "where")),
		json_is_integer(lease) ? json_integer_value(lease) : job,
		json_string_value(json_object_get(v, "hash")),
		json_string_value(json_object_get(v, "problem")));
}

void ctl_backup_print(FILE *f, const json_t *reply)
{
	const json_t *db = json_object_get(reply, "database");
	const json_t *probs = json_object_get(reply, "problems");
	size_t i;
	json_t *v;

	fprintf(f, "backup written to %s\n", json_string_value(json_object_get(reply, "path")));
	fprintf(f, "  %" JSON_INTEGER_FORMAT " bytes in %.1f s: database %"
		JSON_INTEGER_FORMAT " bytes, %" JSON_INTEGER_FORMAT " blob(s) of %"
		JSON_INTEGER_FORMAT " bytes (%" JSON_INTEGER_FORMAT " hard-linked, %"
		JSON_INTEGER_FORMAT " copied), %" JSON_INTEGER_FORMAT " identity file(s)\n",
		num(reply, "bytes"), json_number_value(json_object_get(reply, "seconds")),
		num(reply, "database_bytes"), num(reply, "blobs"), num(reply, "blob_bytes"),
		num(reply, "linked"), num(reply, "copied"), num(reply, "files"));
	fprintf(f, "  %" JSON_INTEGER_FORMAT " lease(s) granted at the snapshot: "
		"pending in the backup, granted again after a restore\n",
		num(reply, "leases_released"));
	if (json_array_size(db) == 0)
		fprintf(f, "  database copy: ok (integrity_check)\n");
	json_array_foreach(db, i, v)
		fprintf(f, "  database copy: %s\n", json_string_value(v));
	fprintf(f, "  blobs read back: %" JSON_INTEGER_FORMAT " problem(s)%s\n",
		num(reply, "problems_total"), (size_t)num(reply, "problems_total") >
		json_array_size(probs) ? " (the first are listed)" : "");
	json_array_foreach(probs, i, v)
		problem_print(f, v);
	if (json_is_true(json_object_get(reply, "verified")))
		fprintf(f, "verified: restore with gpud --data on a copy of it "
			"(cp -a DIR NEW)\n");
	else
		fprintf(f, "NOT SOUND: the live data has the same problems; run "
			"gpuctl check\n");
}

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
	json_array_foreach(probs, i, v)
		problem_print(f, v);
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

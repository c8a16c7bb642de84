/* ctl_check.c - `gpuctl check`'s and `gpuctl backup`'s reports
 * (ctl_check.h). */
#include "ctl_check.h"

#include <inttypes.h>

/* SQLite's verdict on the database (or on the backup's copy of it). */
static void database_print(FILE *f, const char *label,
			   const struct ctlcmd_reply *r)
{
	if (r->n_database == 0)
		fprintf(f, "%s: ok (integrity_check, digests)\n", label);
	for (size_t i = 0; i < r->n_database; i++)
		fprintf(f, "%s: %s\n", label, r->database[i]);
}

/* The named blobs that are not as they should be, the first of them. */
static void problems_print(FILE *f, const struct ctlcmd_reply *r)
{
	for (size_t i = 0; i < r->n_problems; i++) {
		const struct ctlcmd_problem *p = &r->problems[i];

		/* "where" names what the number is: "result of lease",
		 * "params of job". */
		fprintf(f, "  job %" PRId64 ": %s %" PRId64 ": blob %s %s\n",
			p->job, p->where, p->lease ? p->lease : p->job, p->hash,
			p->problem);
	}
}

static const char *first_listed(const struct ctlcmd_reply *r)
{
	return (uint64_t)r->problems_total > r->n_problems
	       ? " (the first are listed)" : "";
}

void ctl_backup_print(FILE *f, const struct ctlcmd_reply *r)
{
	fprintf(f, "backup written to %s\n", r->path);
	fprintf(f, "  %" PRId64 " bytes in %.1f s: database %" PRId64 " bytes, %"
		PRId64 " blob(s) of %" PRId64 " bytes (%" PRId64 " reflinked, %"
		PRId64 " copied), %" PRId64 " identity file(s)\n", r->bytes,
		r->seconds, r->database_bytes, r->blobs, r->blob_bytes,
		r->linked, r->copied, r->ident_files);
	fprintf(f, "  %" PRId64 " lease(s) granted at the snapshot: pending in "
		"the backup, granted again after a restore\n",
		r->leases_released);
	database_print(f, "  database copy", r);
	fprintf(f, "  blobs read back: %" PRId64 " problem(s)%s\n",
		r->problems_total, first_listed(r));
	problems_print(f, r);
	if (r->verified)
		fprintf(f, "verified: restore with gpud --data on a copy of it "
			"(cp -a DIR NEW)\n");
	else
		fprintf(f, "NOT SOUND: the live data has the same problems; run "
			"gpuctl check\n");
}

void ctl_check_print(FILE *f, const struct ctlcmd_reply *r)
{
	database_print(f, "database", r);
	fprintf(f, "blobs: %" PRId64 " named by %" PRId64 " references, %" PRId64
		" problem(s)%s\n", r->blobs_checked, r->references,
		r->problems_total, first_listed(r));
	problems_print(f, r);
	if (r->n_damaged_jobs)
		fprintf(f, "the jobs above show as damaged in gpuctl status; restore "
			"their blobs (DATA/blobs/XX/HASH) or the database from a backup and run gpuctl "
			"check again to clear the mark\n");
	if (r->n_database)
		fprintf(f, "the database itself is damaged: stop gpud, which will "
			"then refuse to start and say how to recover it\n");
	fprintf(f, "%s\n", r->damaged ? "DAMAGED" : "ok");
}

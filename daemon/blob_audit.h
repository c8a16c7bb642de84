/* blob_audit.h - the blob store (DATA/blobs) against the blobs the
 * database names (store_blob_refs): the start-up sweep of temporary files
 * and orphans, and `gpuctl check`'s pass over every named blob; and the
 * start-up check of the stored answers' and parts' digests.
 *
 * Plain files, no database, but for audit_digests: refs is the listing
 * store_blob_refs returned (sorted by hash), borrowed. Any thread; nothing
 * is kept between calls. The sweep must run while nothing else writes
 * blobs (gpud's start).
 */
#ifndef GPUD_BLOB_AUDIT_H
#define GPUD_BLOB_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "store.h"

struct audit_sweep {
	size_t temps;       /* .tmp-* files of writes a crash cut short */
	size_t orphans;     /* blobs no row names */
	size_t kept;        /* blobs a row names */
	uint64_t bytes;     /* removed */
};
/* Remove gpud's temporary files (DATA/blobs/xx/.tmp-*, DATA/gpud.addr.tmp,
 * DATA/local-worker.token.tmp-*, write probes) and every blob refs does
 * not name, logging each; any other name is left alone. *ret may be NULL. */
int audit_sweep(const char *data_dir, const struct store_blob_ref *refs,
		size_t n, const struct glog *log, struct audit_sweep *ret);

/* How many distinct blobs refs names are absent (a look, no reading): for
 * a warning at start, before gpuctl check. Refs without a job (the sweep's
 * "everywhere" guesses) are not counted. */
size_t audit_missing(const char *data_dir, const struct store_blob_ref *refs,
		     size_t n);

/* One named blob that is not as it should be. */
struct audit_problem {
	const struct store_blob_ref *ref; /* into refs */
	int rc;             /* GERR_NOTFOUND missing, GERR_CORRUPT wrong
			     * content, GERR_INVAL not a blob name, else
			     * unreadable (GERR_PERM, GERR_IO) */
};
/* Check every blob refs names (each once, hashing it whole): *ret
 * (malloc'ed, free()) lists one problem per reference to a bad blob, so
 * each job it touches is named. *ret_checked: distinct blobs read. */
int audit_blobs(const char *data_dir, const struct store_blob_ref *refs,
		size_t n, struct audit_problem **ret, size_t *ret_n,
		size_t *ret_checked);
/* The problem in words ("missing", "corrupt: ...", ...), static text. */
const char *audit_problem_name(int rc);

/* At start, on the store before the database thread takes it: every
 * stored answer and part recomputed against its digest (store_digest_audit)
 * and each damaged one logged as an error naming it, with what to do.
 * Nothing is changed: the answers stay refused (gpuctl result) until
 * restored. Returns how many are damaged (0 also when the check itself
 * failed, which is logged as a warning). */
size_t audit_digests(struct store *st, const struct glog *log);
/* One damaged answer or part in words ("job 3: part 0 (lease 7) does not
 * match its digest (damaged)"), into out. */
void audit_digest_text(const struct store_digest_bad *b, char *out, size_t n);
/* store_digest_audit's findings (bad, nbad of total) in words appended to
 * *lines (*n of them, malloc'ed strings, as store_integrity's), and a
 * line counting those not listed. 0 or GERR_NOMEM (*lines, *n then hold
 * what was appended so far). */
int audit_digest_lines(const struct store_digest_bad *bad, size_t nbad,
		       uint64_t total, char ***lines, size_t *n);

#endif

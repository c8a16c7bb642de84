/* backup.h - `gpuctl backup`'s work: a running gpud's data directory
 * written into a new directory that is itself a data directory, so that
 * `gpud --data DIR` (on a copy of it) resumes every job.
 *
 * What a backup holds, and why it is consistent:
 *  1. gpud.db: one snapshot of the database (store_snapshot), taken while
 *     gpud goes on writing.
 *  2. blobs/xx/HASH: every blob that snapshot's rows name, a file of the
 *     backup's own: a reflink (copy-on-write) where the filesystem can,
 *     else copied; never a hard link, which would share the live file,
 *     so that damage to a live blob would be the backup's too.
 *     gpud unlinks a checkpoint once a newer one is committed: a named
 *     blob found missing means the snapshot is older than the store, so
 *     a new snapshot is taken, until every blob a snapshot names is
 *     placed or the same ones stay missing (damage, reported).
 *  3. In the copy only, every lease granted at the snapshot goes back to
 *     pending (its holder is not coming to the restored gpud): the
 *     restored gpud grants it again, from its last checkpoint.
 *  4. gpud's identity files when present (gpud.key, local-worker.token).
 *  5. backup.json, written last: a directory without it is no complete
 *     backup. Everything is written under DIR/.partial, moved up, then the
 *     manifest; a failed backup removes what it wrote.
 * The copy is then checked as `gpuctl check` checks a live store: SQLite's
 * integrity_check, every answer and part against its digest, and every
 * named blob read back against its hash.
 *
 * Threads: any thread but the loop's (it takes seconds to minutes); no
 * state is kept between calls. Strings are borrowed.
 */
#ifndef GPUD_BACKUP_H
#define GPUD_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "blob_audit.h"
#include "store.h"

/* The longest backup path: room below PATH_MAX for what goes inside. */
#define BACKUP_PATH_MAX 3800

struct backup_opts {
	int copy;           /* copy every blob byte by byte, never reflink */
	double now;         /* time of the copy's lease releases (seconds) */
	/* Fault injection for tests (NULL in gpud): called after snapshot n
	 * (1, 2, ...) is taken, before its blobs are placed. */
	void (*after_snapshot)(void *arg, unsigned n);
	void *arg;
};

struct backup_report {
	uint64_t bytes;          /* everything written: database, blobs, files */
	uint64_t db_bytes;
	char db_hash[65];        /* BLAKE2b-256 hex of gpud.db, as in the manifest */
	size_t blobs;            /* distinct blobs in the backup */
	uint64_t blob_bytes;
	size_t linked, copied;   /* how they were placed: reflinked, copied */
	size_t files;            /* identity files copied */
	size_t released;         /* leases granted at the snapshot */
	unsigned snapshots;      /* taken (more than one: blobs moved on) */
	double seconds;
	/* The check of the copy: integrity_check's problems (or, when it
	 * has none, the answers and parts unlike their digests), and the named
	 * blobs that are not in the backup as they should be (probs point
	 * into refs). Both empty when the backup is sound. */
	char **integrity;
	size_t nintegrity;
	struct store_blob_ref *refs;
	size_t nrefs;
	struct audit_problem *probs;
	size_t nprobs;
};
void backup_report_clear(struct backup_report *r); /* NULL-safe */

/* Back up data_dir (gpud's, running or not) into dest: an absolute path,
 * at most BACKUP_PATH_MAX bytes, outside data_dir, that does not exist or
 * is an empty directory (made mode 0700: the backup holds token keys).
 * 0 when the backup is complete, even if its check found problems (*ret
 * lists them); else an error with err saying why (GERR_STATE: dest is not
 * empty or not a directory; GERR_INVAL: a bad path) and nothing left of
 * what it wrote. ret is written only on success. */
int backup_write(const char *data_dir, const char *dest,
		 const struct backup_opts *o, struct backup_report *ret,
		 char *err, size_t errlen);

#endif

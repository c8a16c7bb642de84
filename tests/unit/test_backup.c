/* test_backup.c - daemon/backup.c: a backup holds the database, every blob
 * its rows name (files of its own: reflinked where the filesystem can,
 * else copied; copied always with copy; never hard links, so damage to a
 * live blob stays out of the backup) and gpud's identity
 * files, with the leases granted at the snapshot pending in the copy only;
 * it is refused for a directory that is not new or empty, a relative path
 * or one inside the data directory, leaving nothing behind; a checkpoint
 * replaced between the snapshot and its blobs makes a second snapshot; a
 * failure on the way leaves nothing; a named blob missing from the live
 * store is reported, not fatal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "backup.h"
#include "blob.h"
#include "gerr.h"
#include "store_fx.h"

/* A job whose lease 1 is granted with a checkpoint, and lease 2 done with
 * its result; the local worker's token beside the database; and a backup's
 * options (now 40), report and error. */
struct world {
	struct store_lease held, done;
	char ckpt[BLOB_HASH_HEX], result[BLOB_HASH_HEX];
	char dest[200];
	struct backup_opts o;
	struct backup_report rep;
	char err[512];
};

static void world_make(struct fx *f, struct world *w)
{
	int64_t job = add_job(f->st, "graveler");
	int64_t wk = add_worker(f->st, "local");
	char path[200];
	FILE *tok;

	assert_int_equal(blob_store_put(f->dir, "checkpoint", 10, w->ckpt), 0);
	assert_int_equal(blob_store_put(f->dir, "result!", 7, w->result), 0);
	w->held = add_lease(f->st, job, wk, 10);
	assert_int_equal(store_lease_set_checkpoint(f->st, w->held.id, 1,
			 w->ckpt, 4, 30.0, NULL), 0);
	w->done = add_lease(f->st, job, wk, 10);
	assert_int_equal(store_lease_set_result(f->st, w->done.id, 1, w->result,
						10, 31.0), 0);
	snprintf(path, sizeof(path), "%s/local-worker.token", f->dir);
	assert_non_null(tok = fopen(path, "w"));
	fputs("local:00\n", tok);
	fclose(tok);
	snprintf(w->dest, sizeof(w->dest), "%s.backup", f->dir);
	w->o.now = 40.0;
}

/* A backup of the fixture's data directory into dest with w's options. */
static int world_backup(struct fx *f, struct world *w, const char *dest)
{
	return backup_write(f->dir, dest, &w->o, &w->rep, w->err,
			    sizeof(w->err));
}

static void world_clear(struct world *w)
{
	char cmd[300];

	store_lease_clear(&w->held);
	store_lease_clear(&w->done);
	backup_report_clear(&w->rep);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w->dest);
	assert_int_equal(system(cmd), 0);
}

static ino_t inode(const char *dir, const char *hash)
{
	char p[300];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", dir, hash, hash);
	assert_int_equal(stat(p, &sb), 0);
	return sb.st_ino;
}

static int present(const char *dir, const char *name)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void backup_whole(void **state)
{
	struct fx *f = *state;
	struct world w = {0};
	struct store *copy = NULL;
	struct store_lease l;
	char path[300];
	struct stat sb;
	json_t *m;

	world_make(f, &w);
	assert_int_equal(world_backup(f, &w, w.dest), 0);
	assert_int_equal(w.rep.blobs, 2);
	assert_int_equal(w.rep.linked + w.rep.copied, 2);
	assert_int_equal(w.rep.files, 0); /* local-worker.token stays */
	assert_int_equal(w.rep.released, 1);
	assert_int_equal(w.rep.snapshots, 1);
	assert_int_equal(w.rep.nintegrity, 0);
	assert_int_equal(w.rep.nprobs, 0);
	assert_int_equal(w.rep.bytes, w.rep.db_bytes + 10 + 7);
	/* Files of its own, never the live ones: damage to a live blob
	 * leaves the backup's as it was. */
	assert_true(inode(w.dest, w.ckpt) != inode(f->dir, w.ckpt));
	assert_true(inode(w.dest, w.result) != inode(f->dir, w.result));
	{
		char live[300];
		FILE *fp;

		snprintf(live, sizeof(live), "%s/blobs/%.2s/%s", f->dir,
			 w.result, w.result);
		assert_non_null(fp = fopen(live, "r+b"));
		assert_int_equal(fputc('!', fp), '!');
		assert_int_equal(fclose(fp), 0);
		assert_int_equal(blob_store_check(f->dir, w.result),
				 GERR_CORRUPT);
		assert_int_equal(blob_store_check(w.dest, w.result), 0);
	}
	assert_int_equal(stat(w.dest, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_false(present(w.dest, ".partial"));
	assert_false(present(w.dest, "local-worker.token")); /* a secret */

	snprintf(path, sizeof(path), "%s/backup.json", w.dest);
	assert_non_null(m = json_load_file(path, 0, NULL));
	assert_true(json_is_true(json_object_get(m, "verified")));
	assert_int_equal(json_integer_value(json_object_get(m, "blobs")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
			    m, "database"), "blake2b")), w.rep.db_hash);
	json_decref(m);

	/* In the copy the granted lease is pending, its checkpoint kept; the
	 * live one is untouched. */
	snprintf(path, sizeof(path), "%s/gpud.db", w.dest);
	assert_int_equal(store_open(path, &copy, w.err, sizeof(w.err)), 0);
	get_lease(copy, w.held.id, &l);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.worker_id, 0);
	assert_string_equal(l.checkpoint, w.ckpt);
	assert_non_null(strstr(l.last_error, "backup"));
	store_lease_clear(&l);
	get_lease(copy, w.done.id, &l);
	assert_int_equal(l.state, LEASE_DONE);
	assert_string_equal(l.result, w.result);
	store_lease_clear(&l);
	store_close(copy);
	get_lease(f->st, w.held.id, &l);
	assert_int_equal(l.state, LEASE_LEASED);
	store_lease_clear(&l);

	world_clear(&w);
}

static void backup_copied(void **state)
{
	struct fx *f = *state;
	struct world w = {0};

	world_make(f, &w);
	w.o.copy = 1;
	/* An empty directory is as good as a new one. */
	assert_int_equal(mkdir(w.dest, 0755), 0);
	assert_int_equal(world_backup(f, &w, w.dest), 0);
	assert_int_equal(w.rep.copied, 2);
	assert_int_equal(w.rep.linked, 0);
	assert_int_equal(w.rep.nprobs, 0);
	assert_true(inode(w.dest, w.ckpt) != inode(f->dir, w.ckpt));
	assert_int_equal(blob_store_check(w.dest, w.ckpt), 0);
	assert_int_equal(blob_store_check(w.dest, w.result), 0);
	world_clear(&w);
}

static void backup_refused(void **state)
{
	struct fx *f = *state;
	struct world w = {0};
	char path[300];
	int fd;

	world_make(f, &w);
	/* Not empty: refused, and what is there stays. */
	assert_int_equal(mkdir(w.dest, 0700), 0);
	snprintf(path, sizeof(path), "%s/keep", w.dest);
	assert_true((fd = open(path, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	assert_int_equal(world_backup(f, &w, w.dest), GERR_STATE);
	assert_non_null(strstr(w.err, "is not empty"));
	assert_true(present(w.dest, "keep"));
	assert_false(present(w.dest, "gpud.db"));
	/* A file. */
	assert_int_equal(world_backup(f, &w, path), GERR_STATE);
	assert_non_null(strstr(w.err, "not a directory"));
	/* Relative. */
	assert_int_equal(world_backup(f, &w, "relative/dir"), GERR_INVAL);
	assert_non_null(strstr(w.err, "absolute"));
	/* Inside the data directory: refused, the directory it made gone. */
	snprintf(path, sizeof(path), "%s/inside", f->dir);
	assert_int_equal(world_backup(f, &w, path), GERR_INVAL);
	assert_non_null(strstr(w.err, "inside the data directory"));
	assert_int_equal(access(path, F_OK), -1);
	/* Its parent missing. */
	snprintf(path, sizeof(path), "%s.none/sub", f->dir);
	assert_int_equal(world_backup(f, &w, path), GERR_NOTFOUND);
	assert_non_null(strstr(w.err, "cannot create"));
	world_clear(&w);
}

/* gpud replaces the granted lease's checkpoint between the first snapshot
 * and the placing of its blobs, and unlinks the old one: a second snapshot
 * names the new one, and the backup is whole. */
struct race {
	struct fx *f;
	struct world *w;
	char fresh[BLOB_HASH_HEX];
};

static void replace_checkpoint(void *arg, unsigned n)
{
	struct race *r = arg;
	char *old = NULL;

	if (n != 1)
		return;
	assert_int_equal(blob_store_put(r->f->dir, "checkpoint 2", 12,
					r->fresh), 0);
	assert_int_equal(store_lease_set_checkpoint(r->f->st, r->w->held.id, 1,
			 r->fresh, 6, 35.0, &old), 0);
	assert_string_equal(old, r->w->ckpt);
	assert_int_equal(blob_store_remove(r->f->dir, old), 0);
	free(old);
}

static void backup_checkpoint_race(void **state)
{
	struct fx *f = *state;
	struct world w = {0};
	struct race race = { .f = f, .w = &w };
	struct store *copy = NULL;
	struct store_lease l;
	char path[300];

	world_make(f, &w);
	w.o.after_snapshot = replace_checkpoint;
	w.o.arg = &race;
	assert_int_equal(world_backup(f, &w, w.dest), 0);
	assert_int_equal(w.rep.snapshots, 2);
	assert_int_equal(w.rep.nprobs, 0);
	assert_int_equal(w.rep.blobs, 2);
	assert_int_equal(blob_store_check(w.dest, race.fresh), 0);
	assert_int_equal(blob_store_check(w.dest, w.ckpt), GERR_NOTFOUND);
	snprintf(path, sizeof(path), "%s/gpud.db", w.dest);
	assert_int_equal(store_open(path, &copy, w.err, sizeof(w.err)), 0);
	get_lease(copy, w.held.id, &l);
	assert_string_equal(l.checkpoint, race.fresh);
	assert_int_equal(l.checkpoint_units, 6);
	assert_int_equal(l.state, LEASE_PENDING);
	store_lease_clear(&l);
	store_close(copy);
	world_clear(&w);
}

/* A failure after the blobs are placed (an identity file that cannot be
 * read) leaves nothing: dest gone when the backup made it, else empty. */
static void backup_failed_leaves_nothing(void **state)
{
	struct fx *f = *state;
	struct world w = {0};
	char path[300];
	DIR *d;
	struct dirent *e;
	int entries = 0;

	world_make(f, &w);
	snprintf(path, sizeof(path), "%s/gpud.key", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_not_equal(world_backup(f, &w, w.dest), 0);
	assert_non_null(strstr(w.err, "gpud.key"));
	assert_int_equal(access(w.dest, F_OK), -1);

	assert_int_equal(mkdir(w.dest, 0700), 0);
	assert_int_not_equal(world_backup(f, &w, w.dest), 0);
	assert_non_null(d = opendir(w.dest));
	while ((e = readdir(d)))
		entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	assert_int_equal(entries, 0);
	/* The live store keeps its blobs (the backup's were links). */
	assert_int_equal(blob_store_check(f->dir, w.ckpt), 0);
	assert_int_equal(blob_store_check(f->dir, w.result), 0);
	world_clear(&w);
}

/* A named blob gone from the live store (damage): still missing after a
 * second snapshot, so the backup completes and says so. */
static void backup_missing_blob(void **state)
{
	struct fx *f = *state;
	struct world w = {0};
	json_t *m;
	char path[300];

	world_make(f, &w);
	assert_int_equal(blob_store_remove(f->dir, w.result), 0);
	assert_int_equal(world_backup(f, &w, w.dest), 0);
	assert_int_equal(w.rep.snapshots, 2);
	assert_int_equal(w.rep.blobs, 1);
	assert_int_equal(w.rep.nprobs, 1);
	assert_int_equal(w.rep.probs[0].rc, GERR_NOTFOUND);
	assert_string_equal(w.rep.probs[0].ref->hash, w.result);
	assert_int_equal(w.rep.probs[0].ref->lease_id, w.done.id);
	snprintf(path, sizeof(path), "%s/backup.json", w.dest);
	assert_non_null(m = json_load_file(path, 0, NULL));
	assert_true(json_is_false(json_object_get(m, "verified")));
	assert_int_equal(json_integer_value(json_object_get(m, "blob_problems")), 1);
	json_decref(m);
	world_clear(&w);
}

FX_MAIN(T(backup_whole), T(backup_copied), T(backup_refused),
	T(backup_missing_blob), T(backup_checkpoint_race),
	T(backup_failed_leaves_nothing))

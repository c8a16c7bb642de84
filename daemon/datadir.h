/* datadir.h - the data directory at start: who may use it (one gpud, a
 * directory others cannot write), whether its database is the one its
 * blobs belong to, and the write probe that tells when it is writable
 * again.
 *
 * Plain C on files; errors are values with a message for the user in err.
 * Called from main.c and server.c on the loop thread before the loop runs,
 * except datadir_probe (any thread).
 */
#ifndef GPUD_DATADIR_H
#define GPUD_DATADIR_H

#include <stddef.h>

#include "log.h"

/* Refuse a directory that others may write (GERR_PERM): they could replace
 * the database, a blob or the lock. */
int datadir_check_mode(const char *dir, char *err, size_t errlen);

/* Lock DIR for this process: flock on the directory's own descriptor
 * (*ret_fd, held while it stays open), so that deleting DIR/gpud.lock
 * frees nothing; on a filesystem that cannot lock a directory, on
 * gpud.lock. DIR/gpud.lock says the holder's PID. GERR_STATE when another
 * gpud holds it, naming it. */
int datadir_lock(const char *dir, int *ret_fd, char *err, size_t errlen);

/* Before the database opens: a missing or empty DIR/gpud.db beside the
 * blobs or WAL of an earlier one, or beside gpud's identity key (made with
 * the database: tokens were lost even when no blob was stored), is refused
 * (GERR_STATE, saying how to go on) unless init, when blobs and WAL are
 * moved aside (logged), the key kept, and a fresh database starts. The
 * first start in an empty directory passes. */
int datadir_check_fresh(const char *dir, int init, const struct glog *log,
			char *err, size_t errlen);

/* Create, write, fsync and remove a small file in DIR and in DIR/blobs:
 * 0 when the places gpud writes take writes again. */
int datadir_probe(const char *dir);

#endif

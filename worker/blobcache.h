/* blobcache.h - the worker's cache of decoded blobs fetched from gpud.
 *
 * Jobs name their input blob in params, so every lease of a job fetches the
 * same blob: keeping the decoded bytes of recently fetched blobs saves the
 * transfer and the inflate. Blobs are content-addressed, so an entry can
 * never become stale; the cache only has to bound its memory.
 *
 * Invariants:
 *  1. The bytes held (the sum of entry lengths) never exceed the capacity;
 *     a blob larger than the capacity is not kept at all.
 *  2. Entries are ordered by last use; inserting evicts the least recently
 *     used entries until the new one fits.
 *  3. At most one entry per hash.
 *
 * Ownership: blobcache_put copies the bytes (the caller keeps its buffer);
 * blobcache_get returns a malloc'ed copy the caller frees. Hashes are
 * copied. ret_* outputs are written only on success.
 *
 * Threads: none of its own; get, put and the counts may be called from
 * any thread (one mutex inside: in the worker, the runner thread and the
 * thread that encodes a result beside a run ahead). New and free from one
 * thread while no other uses the cache.
 */
#ifndef GPUD_WORKER_BLOBCACHE_H
#define GPUD_WORKER_BLOBCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "blob.h"

#define BLOBCACHE_MAX_CAP ((uint64_t)1 << 30) /* 1 GiB */

struct blobcache;

/* The default capacity for a machine with mem_bytes of memory (0 when
 * unknown): a quarter of it, at most BLOBCACHE_MAX_CAP. */
size_t blobcache_default_cap(uint64_t mem_bytes);

/* A new empty cache holding at most cap bytes (0: keeps nothing).
 * Returns 0 or GERR_NOMEM. */
int blobcache_new(size_t cap, struct blobcache **ret);

/* NULL-safe. */
void blobcache_free(struct blobcache *c);

/* Copy of the bytes stored under hash, which becomes the most recently
 * used entry. Returns 0, GERR_NOTFOUND or GERR_NOMEM. */
int blobcache_get(struct blobcache *c, const char *hash, void **ret,
		  size_t *ret_len);

/* Keep a copy of bytes under hash (replacing an entry with that hash),
 * evicting the least recently used entries as needed. Returns 0,
 * GERR_TOOBIG (larger than the capacity: not kept), GERR_INVAL (hash longer
 * than 64 characters) or GERR_NOMEM. The cache is left consistent on every
 * error. */
int blobcache_put(struct blobcache *c, const char *hash, const void *bytes,
		  size_t len);

/* Bytes and entries held (for logs and tests). */
size_t blobcache_bytes(struct blobcache *c);
size_t blobcache_count(struct blobcache *c);

#endif

/* blobcache.c - an LRU of decoded blobs (see blobcache.h).
 *
 * A doubly linked list, most recently used first. Lookups are linear: the
 * cache holds a handful of blobs (job inputs, a few earlier results), and a
 * lookup is nothing next to a run.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "blobcache.h"
#include "gerr.h"

struct entry {
	struct entry *prev, *next;
	char hash[BLOB_HASH_HEX];
	void *bytes;
	size_t len;
};

struct blobcache {
	pthread_mutex_t mu;        /* guards everything below */
	struct entry *head, *tail; /* head: most recently used */
	size_t cap;
	size_t bytes;
	size_t count;
};

size_t blobcache_default_cap(uint64_t mem_bytes)
{
	uint64_t cap = mem_bytes / 4;

	if (mem_bytes == 0 || cap > BLOBCACHE_MAX_CAP)
		cap = BLOBCACHE_MAX_CAP;
	return (size_t)cap; /* <= 1 GiB: fits a 32-bit size_t too */
}

int blobcache_new(size_t cap, struct blobcache **ret)
{
	struct blobcache *c = calloc(1, sizeof(*c));

	if (!c)
		return GERR_NOMEM;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return GERR_NOMEM;
	}
	c->cap = cap;
	*ret = c;
	return 0;
}

static void unlink_entry(struct blobcache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct blobcache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	else
		c->tail = e;
	c->head = e;
}

static void drop_entry(struct blobcache *c, struct entry *e)
{
	unlink_entry(c, e);
	c->bytes -= e->len;
	c->count--;
	free(e->bytes);
	free(e);
}

static struct entry *find(const struct blobcache *c, const char *hash)
{
	for (struct entry *e = c->head; e; e = e->next)
		if (strcmp(e->hash, hash) == 0)
			return e;
	return NULL;
}

void blobcache_free(struct blobcache *c)
{
	if (!c)
		return;
	while (c->head)
		drop_entry(c, c->head);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int blobcache_get(struct blobcache *c, const char *hash, void **ret,
		  size_t *ret_len)
{
	struct entry *e;
	void *copy = NULL;
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	e = find(c, hash);
	if (!e)
		rc = GERR_NOTFOUND;
	else if (!(copy = big_alloc(e->len)))
		rc = GERR_NOMEM;
	if (rc == 0) {
		big_copy(copy, e->bytes, e->len);
		unlink_entry(c, e);
		push_front(c, e);
		*ret = copy;
		*ret_len = e->len;
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int blobcache_put(struct blobcache *c, const char *hash, const void *bytes,
		  size_t len)
{
	struct entry *e, *old;

	if (strlen(hash) >= BLOB_HASH_HEX)
		return GERR_INVAL;
	if (len > c->cap)
		return GERR_TOOBIG;
	/* Allocate before evicting anything: a failure leaves the cache as
	 * it was. */
	e = calloc(1, sizeof(*e));
	if (!e)
		return GERR_NOMEM;
	e->bytes = big_alloc(len);
	if (!e->bytes) {
		free(e);
		return GERR_NOMEM;
	}
	big_copy(e->bytes, bytes, len);
	e->len = len;
	strcpy(e->hash, hash);

	pthread_mutex_lock(&c->mu);
	old = find(c, hash);
	if (old)
		drop_entry(c, old);
	/* Invariant 1; terminates because len <= cap. */
	while (c->bytes + len > c->cap)
		drop_entry(c, c->tail);
	push_front(c, e);
	c->bytes += len;
	c->count++;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* One of c's counters, read under mu. */
static size_t counter(struct blobcache *c, const size_t *field)
{
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = *field;
	pthread_mutex_unlock(&c->mu);
	return n;
}

size_t blobcache_bytes(struct blobcache *c)
{
	return counter(c, &c->bytes);
}

size_t blobcache_count(struct blobcache *c)
{
	return counter(c, &c->count);
}

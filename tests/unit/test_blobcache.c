/* test_blobcache.c - the worker's LRU of fetched blobs: capacity is never
 * exceeded, the least recently used entry goes first, copies are
 * independent, and a too-big blob is refused without evicting anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blobcache.h"
#include "gerr.h"
#include "unit_main.h"

static const char *H(char c)
{
	static char h[4][BLOB_HASH_HEX];
	static int i;
	char *p = h[i++ & 3];

	memset(p, c, BLOB_HASH_HEX - 1);
	p[BLOB_HASH_HEX - 1] = '\0';
	return p;
}

static void put_n(struct blobcache *c, char name, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);

	assert_non_null(b);
	memset(b, name, n);
	assert_int_equal(blobcache_put(c, H(name), b, n), 0);
	free(b);
}

static int has(struct blobcache *c, char name)
{
	void *b = NULL;
	size_t n = 0;
	int rc = blobcache_get(c, H(name), &b, &n);

	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			assert_int_equal(((uint8_t *)b)[i], (uint8_t)name);
		free(b);
		return 1;
	}
	assert_int_equal(rc, GERR_NOTFOUND);
	return 0;
}

static void test_default_cap(void **state)
{
	(void)state;
	assert_int_equal(blobcache_default_cap(0), BLOBCACHE_MAX_CAP);
	assert_int_equal(blobcache_default_cap(1ull << 40), BLOBCACHE_MAX_CAP);
	assert_int_equal(blobcache_default_cap(2ull << 30), 512u << 20);
}

static void test_lru(void **state)
{
	struct blobcache *c;

	(void)state;
	assert_int_equal(blobcache_new(100, &c), 0);
	put_n(c, 'a', 40);
	put_n(c, 'b', 40);
	assert_true(has(c, 'a'));        /* a is now the most recent */
	put_n(c, 'c', 40);               /* evicts b, not a */
	assert_false(has(c, 'b'));
	assert_true(has(c, 'a'));
	assert_true(has(c, 'c'));
	assert_int_equal(blobcache_bytes(c), 80);
	assert_int_equal(blobcache_count(c), 2);
	put_n(c, 'd', 100);              /* exactly the capacity: evicts all */
	assert_int_equal(blobcache_count(c), 1);
	assert_int_equal(blobcache_bytes(c), 100);
	assert_true(has(c, 'd'));
	blobcache_free(c);
}

static void test_too_big_and_replace(void **state)
{
	struct blobcache *c;
	uint8_t big[101] = { 0 };

	(void)state;
	assert_int_equal(blobcache_new(100, &c), 0);
	put_n(c, 'a', 10);
	assert_int_equal(blobcache_put(c, H('z'), big, sizeof(big)),
			 GERR_TOOBIG);
	assert_true(has(c, 'a'));        /* nothing was evicted for it */
	put_n(c, 'a', 30);               /* same hash: replaced, not doubled */
	assert_int_equal(blobcache_count(c), 1);
	assert_int_equal(blobcache_bytes(c), 30);
	put_n(c, 'e', 0);                /* empty blobs are fine */
	assert_true(has(c, 'e'));
	assert_int_equal(blobcache_put(c, "0123456789012345678901234567890123"
					  "456789012345678901234567890123456789",
				       big, 1), GERR_INVAL);
	blobcache_free(c);
	blobcache_free(NULL);
}

static void test_copies(void **state)
{
	struct blobcache *c;
	uint8_t src[8] = "abcdefg";
	void *out = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(blobcache_new(64, &c), 0);
	assert_int_equal(blobcache_put(c, H('q'), src, sizeof(src)), 0);
	src[0] = 'X';                    /* the cache kept its own copy */
	assert_int_equal(blobcache_get(c, H('q'), &out, &n), 0);
	assert_int_equal(n, sizeof(src));
	assert_memory_equal(out, "abcdefg", 8);
	((uint8_t *)out)[1] = 'Y';       /* and hands out copies */
	free(out);
	assert_int_equal(blobcache_get(c, H('q'), &out, &n), 0);
	assert_memory_equal(out, "abcdefg", 8);
	free(out);
	blobcache_free(c);
}

/* Zero capacity keeps nothing. */
static void test_zero_cap(void **state)
{
	struct blobcache *c;
	uint8_t b = 1;

	(void)state;
	assert_int_equal(blobcache_new(0, &c), 0);
	assert_int_equal(blobcache_put(c, H('a'), &b, 1), GERR_TOOBIG);
	assert_int_equal(blobcache_put(c, H('b'), &b, 0), 0);
	assert_int_equal(blobcache_bytes(c), 0);
	blobcache_free(c);
}

UNIT_MAIN(cmocka_unit_test(test_default_cap),
	cmocka_unit_test(test_lru),
	cmocka_unit_test(test_too_big_and_replace),
	cmocka_unit_test(test_copies),
	cmocka_unit_test(test_zero_cap))

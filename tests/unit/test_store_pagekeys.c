/* test_store_pagekeys.c - unit tests of daemon/store/store_pagekeys.c
 * (the status page's keys, stored as hashes) and of pagekey.h, the hash
 * both gpuctl page-link's side and the page's side use (fixture:
 * store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gerr.h"
#include "pagekey.h"
#include "store_fx.h"

/* A key's text hashes as pagekey_new said; anything else is no key. */
static void test_hash(void **state)
{
	char text[PAGEKEY_HEX + 1], upper[PAGEKEY_HEX + 1];
	uint8_t made[PAGEKEY_HASH], again[PAGEKEY_HASH], other[PAGEKEY_HASH];

	(void)state;
	pagekey_new(text, made);
	assert_int_equal(strlen(text), PAGEKEY_HEX);
	assert_int_equal(pagekey_hash(text, strlen(text), again), 0);
	assert_memory_equal(made, again, PAGEKEY_HASH);
	pagekey_new(upper, other);
	assert_memory_not_equal(made, other, PAGEKEY_HASH);
	/* Not a key: short, long, upper case, not hex, NULL. Nothing written. */
	memset(other, 0x5a, sizeof(other));
	assert_int_equal(pagekey_hash(text, PAGEKEY_HEX - 1, other), -1);
	memcpy(upper, text, sizeof(upper));
	upper[0] = 'A';
	assert_int_equal(pagekey_hash(upper, PAGEKEY_HEX, other), -1);
	upper[0] = 'g';
	assert_int_equal(pagekey_hash(upper, PAGEKEY_HEX, other), -1);
	assert_int_equal(pagekey_hash(NULL, 0, other), -1);
	for (int i = 0; i < PAGEKEY_HASH; i++)
		assert_int_equal(other[i], 0x5a);
	/* The hash is no copy of the key. */
	assert_memory_not_equal(made, text, PAGEKEY_HASH);
}

static void test_keys(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint8_t a[PAGEKEY_HASH], b[PAGEKEY_HASH], c[PAGEKEY_HASH];
	char text[PAGEKEY_HEX + 1];
	double until = 0;
	int64_t n = -1;

	pagekey_new(text, a);
	pagekey_new(text, b);
	pagekey_new(text, c);
	assert_int_equal(store_pagekey_add(st, a, "admin", "root", 100.0, 200.0), 0);
	assert_int_equal(store_pagekey_add(st, b, "viewer", "ann", 100.0, 300.0), 0);
	/* Bad arguments: an owner that is no role, an end before now. */
	assert_int_equal(store_pagekey_add(st, c, "worker", NULL, 100.0, 300.0), GERR_INVAL);
	assert_int_equal(store_pagekey_add(st, c, "viewer", NULL, 100.0, 100.0), GERR_INVAL);
	/* The same hash twice is refused (UNIQUE). */
	assert_int_not_equal(store_pagekey_add(st, a, "admin", "root", 100.0, 200.0), 0);
	assert_int_equal(store_pagekey_find(st, a, 150.0, &until), 0);
	assert_true(until == 200.0);
	assert_int_equal(store_pagekey_find(st, c, 150.0, NULL), GERR_NOTFOUND);
	/* Expired: not found, then pruned by the next add. */
	assert_int_equal(store_pagekey_find(st, a, 200.0, NULL), GERR_NOTFOUND);
	assert_int_equal(store_pagekey_find(st, b, 200.0, NULL), 0);
	assert_int_equal(store_pagekey_count(st, 0.0, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_pagekey_add(st, c, "admin", "uid 1000", 250.0, 400.0), 0);
	assert_int_equal(store_pagekey_count(st, 0.0, &n), 0);
	assert_int_equal(n, 2);
	/* A viewer's revoke ends the viewers' keys, an admin's (NULL) all. */
	assert_int_equal(store_pagekey_revoke(st, "viewer", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_pagekey_find(st, b, 260.0, NULL), GERR_NOTFOUND);
	assert_int_equal(store_pagekey_find(st, c, 260.0, NULL), 0);
	assert_int_equal(store_pagekey_revoke(st, "worker", &n), GERR_INVAL);
	assert_int_equal(store_pagekey_revoke(st, NULL, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_pagekey_find(st, c, 260.0, NULL), GERR_NOTFOUND);
}

FX_MAIN(T(test_hash), T(test_keys))

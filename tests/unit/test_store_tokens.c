/* test_store_tokens.c - unit tests of daemon/store_tokens.c and its
 * migration 002 (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "auth.h"
#include "gerr.h"
#include "store_fx.h"

/* ---- tokens ---- */

static void test_tokens(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint8_t k1[32], k2[32], got[32];

	for (int i = 0; i < 32; i++) {
		k1[i] = (uint8_t)i;
		k2[i] = (uint8_t)(0xff - i);
	}
	assert_int_equal(store_token_add(st, "w1", k1, 1.0), 0);
	assert_int_equal(store_token_add(st, "w2", k2, 1.0), 0);
	assert_int_equal(store_token_add(st, "w1", k2, 2.0), GERR_STATE);
	assert_int_equal(store_token_get(st, "w1", got), 0);
	assert_memory_equal(got, k1, 32);
	assert_int_equal(store_token_get(st, "w2", got), 0);
	assert_memory_equal(got, k2, 32);
	assert_int_equal(store_token_get(st, "nobody", got), GERR_NOTFOUND);

	assert_int_equal(store_token_revoke(st, "w1"), 0);
	memset(got, 0xaa, sizeof(got));
	assert_int_equal(store_token_get(st, "w1", got), GERR_NOTFOUND);
	for (int i = 0; i < 32; i++)
		assert_int_equal(got[i], 0xaa);
	assert_int_equal(store_token_revoke(st, "w1"), 0);
	assert_int_equal(store_token_revoke(st, "nobody"), GERR_NOTFOUND);
	/* A revoked name stays taken. */
	assert_int_equal(store_token_add(st, "w1", k1, 3.0), GERR_STATE);
}

/* Migration 002: a database from before it holds client keys; opening it
 * replaces each with its stored key (auth.h), so old tokens still log in. */
static void test_token_migration(void **state)
{
	struct fx *f = *state;
	uint8_t client[32], want[32], got[32];

	for (int i = 0; i < 32; i++)
		client[i] = (uint8_t)(3 * i + 1);
	open_old(f, 1); /* only 001 applied */
	assert_int_equal(store_token_add(f->st, "old", client, 1.0), 0);
	reopen(f);
	auth_stored_key(client, want);
	assert_int_equal(store_token_get(f->st, "old", got), 0);
	assert_memory_equal(got, want, 32);
	/* Applied once: a later open leaves the key alone. */
	reopen(f);
	assert_int_equal(store_token_get(f->st, "old", got), 0);
	assert_memory_equal(got, want, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tokens),
		T(test_token_migration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

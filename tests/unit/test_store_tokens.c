/* test_store_tokens.c - unit tests of daemon/store/store_tokens.c and its
 * migrations 002 and 008 (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <sqlite3.h>

#include "auth.h"
#include "gerr.h"
#include "store_fx.h"

/* ---- tokens ---- */

static void test_tokens(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint8_t k1[32], k2[32], got[32];
	enum auth_role role = 0;

	for (int i = 0; i < 32; i++) {
		k1[i] = (uint8_t)i;
		k2[i] = (uint8_t)(0xff - i);
	}
	assert_int_equal(store_token_add(st, "w1", k1, AUTH_ROLE_WORKER, 1.0), 0);
	assert_int_equal(store_token_add(st, "w2", k2, AUTH_ROLE_ADMIN, 1.0), 0);
	assert_int_equal(store_token_add(st, "w1", k2, AUTH_ROLE_WORKER, 2.0),
			 GERR_STATE);
	assert_int_equal(store_token_add(st, "w3", k2, 0, 2.0), GERR_INVAL);
	assert_int_equal(store_token_get(st, "w1", got, &role), 0);
	assert_memory_equal(got, k1, 32);
	assert_int_equal(role, AUTH_ROLE_WORKER);
	assert_int_equal(store_token_get(st, "w2", got, &role), 0);
	assert_memory_equal(got, k2, 32);
	assert_int_equal(role, AUTH_ROLE_ADMIN);
	assert_int_equal(store_token_get(st, "nobody", got, NULL), GERR_NOTFOUND);

	assert_int_equal(store_token_revoke(st, "w1"), 0);
	memset(got, 0xaa, sizeof(got));
	assert_int_equal(store_token_get(st, "w1", got, NULL), GERR_NOTFOUND);
	for (int i = 0; i < 32; i++)
		assert_int_equal(got[i], 0xaa);
	assert_int_equal(store_token_revoke(st, "w1"), 0);
	assert_int_equal(store_token_revoke(st, "nobody"), GERR_NOTFOUND);
	/* A revoked name stays taken. */
	assert_int_equal(store_token_add(st, "w1", k1, AUTH_ROLE_VIEWER, 3.0),
			 GERR_STATE);
}

/* Migration 002: a database from before it holds client keys; opening it
 * replaces each with its stored key (auth.h), so old tokens still log in.
 * Migration 008: they are workers' tokens. */
static void test_token_migration(void **state)
{
	struct fx *f = *state;
	uint8_t client[32], want[32], got[32];
	enum auth_role role = 0;
	sqlite3 *db;
	sqlite3_stmt *s;

	for (int i = 0; i < 32; i++)
		client[i] = (uint8_t)(3 * i + 1);
	open_old(f, 1); /* only 001 applied: its own columns */
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO tokens (name, key, "
		"created_at) VALUES ('old', ?1, 1.0)", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_blob(s, 1, client, 32, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
	reopen(f);
	auth_stored_key(client, want);
	assert_int_equal(store_token_get(f->st, "old", got, &role), 0);
	assert_memory_equal(got, want, 32);
	assert_int_equal(role, AUTH_ROLE_WORKER);
	/* Applied once: a later open leaves the key alone. */
	reopen(f);
	assert_int_equal(store_token_get(f->st, "old", got, NULL), 0);
	assert_memory_equal(got, want, 32);
}

FX_MAIN(T(test_tokens), T(test_token_migration))

/* test_store_tokens.c - unit tests of daemon/store/store_tokens.c and its
 * migrations 002, 008 and 014 (fixture: store_fx.h). */
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
	uint8_t k1[32], k2[32], k3[32], got[32];
	char name[AUTH_NAME_MAX + 1];
	enum auth_role role = 0;
	int has_key = 0;

	for (int i = 0; i < 32; i++) {
		k1[i] = (uint8_t)i;
		k2[i] = (uint8_t)(0xff - i);
		k3[i] = (uint8_t)(0x40 + i);
	}
	assert_int_equal(store_token_add(st, "w1", k1, AUTH_ROLE_WORKER, 1.0), 0);
	assert_int_equal(store_token_add(st, "w2", k2, AUTH_ROLE_ADMIN, 1.0), 0);
	/* A name, or a key, is one credential's. */
	assert_int_equal(store_token_add(st, "w1", k3, AUTH_ROLE_WORKER, 2.0),
			 GERR_STATE);
	assert_int_equal(store_token_add(st, "w4", k2, AUTH_ROLE_WORKER, 2.0),
			 GERR_STATE);
	assert_int_equal(store_token_add(st, "w3", k3, 0, 2.0), GERR_INVAL);
	assert_int_equal(store_token_get(st, "w1", got, &has_key, &role), 0);
	assert_memory_equal(got, k1, 32);
	assert_true(has_key);
	assert_int_equal(role, AUTH_ROLE_WORKER);
	/* Found by its key, as a login finds it. */
	assert_int_equal(store_token_by_key(st, k2, name, &role), 0);
	assert_string_equal(name, "w2");
	assert_int_equal(role, AUTH_ROLE_ADMIN);
	assert_int_equal(store_token_by_key(st, k3, name, &role), GERR_NOTFOUND);
	assert_int_equal(store_token_get(st, "nobody", got, &has_key, NULL),
			 GERR_NOTFOUND);

	assert_int_equal(store_token_revoke(st, "w1"), 0);
	memset(got, 0xaa, sizeof(got));
	assert_int_equal(store_token_get(st, "w1", got, &has_key, NULL),
			 GERR_NOTFOUND);
	for (int i = 0; i < 32; i++)
		assert_int_equal(got[i], 0xaa);
	assert_int_equal(store_token_by_key(st, k1, name, &role), GERR_NOTFOUND);
	assert_int_equal(store_token_revoke(st, "w1"), 0);
	assert_int_equal(store_token_revoke(st, "nobody"), GERR_NOTFOUND);
	/* A revoked name stays taken. */
	assert_int_equal(store_token_add(st, "w1", k3, AUTH_ROLE_VIEWER, 3.0),
			 GERR_STATE);
	/* A new key for a live token (gpud's local credential made again):
	 * the old key finds nothing, the role stays; never for a revoked
	 * token, nor with another token's key. */
	assert_int_equal(store_token_rekey(st, "w2", k3, 4.0), 0);
	assert_int_equal(store_token_by_key(st, k2, name, &role), GERR_NOTFOUND);
	assert_int_equal(store_token_by_key(st, k3, name, &role), 0);
	assert_string_equal(name, "w2");
	assert_int_equal(role, AUTH_ROLE_ADMIN);
	assert_int_equal(store_token_rekey(st, "w1", k2, 4.0), GERR_NOTFOUND);
	assert_int_equal(store_token_rekey(st, "nobody", k2, 4.0), GERR_NOTFOUND);
	assert_int_not_equal(store_token_rekey(st, "w2", k1, 4.0), 0);
}

/* Migration 002 then 014: a database from before them holds a token's
 * client key; 014 drops every key of the old login, keeping the row (its
 * name, role, date) as a credential of the old kind: no key finds it, and
 * token add gives its name a key. Migration 008: it is a worker's. */
static void test_token_migration(void **state)
{
	struct fx *f = *state;
	uint8_t client[32], stored[32], got[32], k[32];
	char name[AUTH_NAME_MAX + 1];
	enum auth_role role = 0;
	int has_key = 1;
	struct store_token *ts = NULL;
	size_t n = 0;
	sqlite3 *db;
	sqlite3_stmt *s;

	for (int i = 0; i < 32; i++) {
		client[i] = (uint8_t)(3 * i + 1);
		k[i] = (uint8_t)(7 * i + 2);
	}
	auth_stored_key(client, stored);
	open_old(f, 1); /* only 001 applied: its own columns */
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO tokens (name, key, "
		"created_at) VALUES ('old', ?1, 1.0)", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_blob(s, 1, client, 32, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
	reopen(f);
	assert_int_equal(store_token_get(f->st, "old", got, &has_key, &role), 0);
	assert_false(has_key);
	assert_int_equal(role, AUTH_ROLE_WORKER);
	assert_int_equal(store_token_by_key(f->st, client, name, &role),
			 GERR_NOTFOUND);
	assert_int_equal(store_token_by_key(f->st, stored, name, &role),
			 GERR_NOTFOUND);
	assert_int_equal(store_token_list(f->st, &ts, &n), 0);
	assert_int_equal(n, 1);
	assert_true(ts[0].old_kind);
	store_token_free_array(ts, n);
	/* Nothing of the old key is left anywhere in the row. */
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_"
		"table_info('tokens') WHERE name = 'key'", -1, &s, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	/* token add gives the old name a key. */
	assert_int_equal(store_token_add(f->st, "old", k, AUTH_ROLE_VIEWER, 2.0),
			 0);
	assert_int_equal(store_token_by_key(f->st, k, name, &role), 0);
	assert_string_equal(name, "old");
	assert_int_equal(role, AUTH_ROLE_VIEWER);
	/* Applied once: a later open leaves the key alone. */
	reopen(f);
	assert_int_equal(store_token_get(f->st, "old", got, &has_key, NULL), 0);
	assert_true(has_key);
	assert_memory_equal(got, k, 32);
}

FX_MAIN(T(test_tokens), T(test_token_migration))

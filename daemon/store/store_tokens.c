/* store_tokens.c - the tokens table: tokens and their roles, stored as
 * the derived key only (never the secret).
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const sdb_token_sql[S_COUNT] = {
	[S_TOKEN_ADD] = "INSERT INTO tokens (name, key, created_at, role) "
			"VALUES (?1, ?2, ?3, ?4)",
	[S_TOKEN_GET] = "SELECT key, role FROM tokens WHERE name = ?1 AND "
			"revoked = 0",
	[S_TOKEN_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE name = ?1",
	[S_TOKEN_LIST] = "SELECT name, created_at, revoked, role FROM tokens "
			 "ORDER BY name",
};

int store_token_add(struct store *st, const char *name, const uint8_t key[32],
		    enum auth_role role, double now)
{
	static const char what[] = "store_token_add";
	int r;

	if (!name || !*name || !key || !auth_role_name(role))
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_TOKEN_ADD,
		     SDB_ARGS(sa_text(name), sa_blob(key, 32), sa_dbl(now),
			      sa_text(auth_role_name(role))), what);
	if (r == GERR_STATE)
		r = sdb_err(st, r, "%s: token %s exists", what, name);
	return sdb_op_end(st, r, what);
}

struct token_key {
	const char *name;
	int found;
	uint8_t key[32];
	enum auth_role role;
	const char *what;
};

static int token_key_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct token_key *t = ctx;

	if (sqlite3_column_bytes(s, 0) != 32)
		return sdb_err(st, GERR_CORRUPT, "%s: token %s: key is not "
			       "32 bytes", t->what, t->name);
	memcpy(t->key, sqlite3_column_blob(s, 0), 32);
	t->role = auth_role_parse((const char *)sqlite3_column_text(s, 1));
	t->found = 1;
	return 0;
}

int store_token_get(struct store *st, const char *name, uint8_t ret_key[32],
		    enum auth_role *ret_role)
{
	static const char what[] = "store_token_get";
	struct token_key t = {.name = name, .what = what};
	int r;

	if (!name || !ret_key)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	r = sdb_each(st, S_TOKEN_GET, SDB_ARGS(sa_text(name)), token_key_row,
		     &t, what);
	if (r)
		return r;
	if (!t.found)
		return sdb_err(st, GERR_NOTFOUND, "%s: no token %s", what,
			       name);
	if (!t.role)
		return sdb_err(st, GERR_CORRUPT, "%s: token %s: unknown role",
			       what, name);
	memcpy(ret_key, t.key, 32);
	if (ret_role)
		*ret_role = t.role;
	return 0;
}

/* Revoking a revoked token is not an error. GERR_NOTFOUND if absent. */
int store_token_revoke(struct store *st, const char *name)
{
	static const char what[] = "store_token_revoke";
	int r;

	if (!name)
		return sdb_err(st, GERR_INVAL, "%s: no name", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_TOKEN_REVOKE, SDB_ARGS(sa_text(name)), what);
	if (r == 0 && sdb_changes(st) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no token %s", what, name);
	return sdb_op_end(st, r, what);
}

static int token_row(sqlite3_stmt *s, void *elem)
{
	struct store_token *t = elem;
	const unsigned char *name = sqlite3_column_text(s, 0);

	t->name = strdup(name ? (const char *)name : "");
	if (!t->name)
		return GERR_NOMEM;
	t->created_at = sqlite3_column_double(s, 1);
	t->revoked = sqlite3_column_int(s, 2);
	t->role = auth_role_parse((const char *)sqlite3_column_text(s, 3));
	return 0;
}

static void token_clear_v(void *e)
{
	struct store_token *t = e;
	free(t->name);
	t->name = NULL;
}

int store_token_list(struct store *st, struct store_token **ret, size_t *ret_n)
{
	return sdb_get_all(st, S_TOKEN_LIST, NULL, sizeof(**ret), token_row,
			   token_clear_v, ret, ret_n, "store_token_list");
}

void store_token_free_array(struct store_token *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), token_clear_v);
}

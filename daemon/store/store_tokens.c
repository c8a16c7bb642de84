/* store_tokens.c - the tokens table: credentials, their roles and their
 * Ed25519 public keys (migration 014). gpud keeps nothing that lets anyone
 * log in: a login proves the secret key in the TLS handshake. A row
 * without a public key is a credential of the old kind, refused.
 */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sdb_token_sql[S_COUNT] = {
	/* A name whose row is of the old kind (no key) takes the new key. */
	[S_TOKEN_ADD] = "INSERT INTO tokens (name, public_key, created_at, role) "
			"VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE "
			"SET public_key = excluded.public_key, created_at = "
			"excluded.created_at, role = excluded.role, revoked = 0 "
			"WHERE tokens.public_key IS NULL",
	[S_TOKEN_GET] = "SELECT public_key, role FROM tokens WHERE name = ?1 "
			"AND revoked = 0",
	[S_TOKEN_BY_KEY] = "SELECT name, role FROM tokens WHERE public_key = ?1 "
			   "AND revoked = 0",
	[S_TOKEN_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE name = ?1",
	[S_TOKEN_REKEY] = "UPDATE tokens SET public_key = ?2, created_at = ?3 "
			  "WHERE name = ?1 AND revoked = 0",
	[S_TOKEN_LIST] = "SELECT name, created_at, revoked, role, public_key "
			 "IS NULL FROM tokens ORDER BY name",
};

int store_token_add(struct store *st, const char *name, const uint8_t pk[32],
		    enum auth_role role, double now)
{
	static const char what[] = "store_token_add";
	int r;

	if (!name || !*name || !pk || !auth_role_name(role))
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_TOKEN_ADD,
		     SDB_ARGS(sa_text(name), sa_blob(pk, 32), sa_dbl(now),
			      sa_text(auth_role_name(role))), what);
	if (r == 0 && sdb_changes(st) == 0)
		r = GERR_STATE;
	if (r == GERR_STATE)
		r = sdb_err(st, r, "%s: token %s (or its key) exists", what,
			    name);
	return sdb_op_end(st, r, what);
}

struct token_key {
	const char *name;
	int found, has_key;
	uint8_t pk[32];
	char got_name[AUTH_NAME_MAX + 1];
	enum auth_role role;
	const char *what;
};

static int token_key_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct token_key *t = ctx;
	int n = sqlite3_column_bytes(s, 0);

	if (sqlite3_column_type(s, 0) != SQLITE_NULL && n != 32)
		return sdb_err(st, GERR_CORRUPT, "%s: token %s: key is not "
			       "32 bytes", t->what, t->name);
	t->has_key = n == 32;
	if (t->has_key)
		memcpy(t->pk, sqlite3_column_blob(s, 0), 32);
	t->role = auth_role_parse((const char *)sqlite3_column_text(s, 1));
	t->found = 1;
	return 0;
}

int store_token_get(struct store *st, const char *name, uint8_t ret_pk[32],
		    int *ret_has_key, enum auth_role *ret_role)
{
	static const char what[] = "store_token_get";
	struct token_key t = {.name = name, .what = what};
	int r;

	if (!name || !ret_pk || !ret_has_key)
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
	memcpy(ret_pk, t.pk, 32);
	*ret_has_key = t.has_key;
	if (ret_role)
		*ret_role = t.role;
	return 0;
}

static int token_name_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct token_key *t = ctx;
	const unsigned char *name = sqlite3_column_text(s, 0);

	if (!name || auth_name_valid((const char *)name) < 0)
		return sdb_err(st, GERR_CORRUPT, "%s: a token's name is "
			       "invalid", t->what);
	snprintf(t->got_name, sizeof(t->got_name), "%s", name);
	t->role = auth_role_parse((const char *)sqlite3_column_text(s, 1));
	t->found = 1;
	return 0;
}

int store_token_by_key(struct store *st, const uint8_t pk[32],
		       char ret_name[AUTH_NAME_MAX + 1],
		       enum auth_role *ret_role)
{
	static const char what[] = "store_token_by_key";
	struct token_key t = {.name = "?", .what = what};
	int r;

	if (!pk || !ret_name || !ret_role)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	r = sdb_each(st, S_TOKEN_BY_KEY, SDB_ARGS(sa_blob(pk, 32)),
		     token_name_row, &t, what);
	if (r)
		return r;
	if (!t.found)
		return sdb_err(st, GERR_NOTFOUND, "%s: no token has this key",
			       what);
	if (!t.role)
		return sdb_err(st, GERR_CORRUPT, "%s: token %s: unknown role",
			       what, t.got_name);
	memcpy(ret_name, t.got_name, sizeof(t.got_name));
	*ret_role = t.role;
	return 0;
}

/* Revoking a revoked token is not an error. GERR_NOTFOUND if absent. */
int store_token_rekey(struct store *st, const char *name, const uint8_t pk[32],
		      double now)
{
	static const char what[] = "store_token_rekey";
	int r;

	if (!name || !pk)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_TOKEN_REKEY,
		     SDB_ARGS(sa_text(name), sa_blob(pk, 32), sa_dbl(now)), what);
	if (r == 0 && sdb_changes(st) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no live token %s", what,
			    name);
	return sdb_op_end(st, r, what);
}

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
	t->old_kind = sqlite3_column_int(s, 4);
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

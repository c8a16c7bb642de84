-- Tokens in the manner of SCRAM: gpud keeps stored_key = BLAKE2b-256(client
-- key) instead of the client key, so a copy of the database alone does not
-- let anyone log in. Rows written before this migration hold the client key;
-- token_stored_key() is registered by store.c (auth_stored_key).
UPDATE tokens SET key = token_stored_key(key);

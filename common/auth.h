/* auth.h - credentials: each worker and remote gpuctl holds its own
 * Ed25519 key pair; gpud keeps only public keys (store_tokens.c) and knows
 * who connected by the key the TLS handshake proved (chan.h). A credential
 * file, mode 0600:
 *     # gpud credential: keep it secret (mode 0600)
 *     name = NAME
 *     key = 64 hex digits (the Ed25519 secret key's seed)
 *     gpud-key = 64 hex digits (gpud's public key, pinned)
 * Nothing gpud holds lets anyone log in as a credential: the secret never
 * leaves its owner, and a login proves it without showing it.
 *
 * Credentials of the old kind ("token = NAME:SECRET", a shared secret of
 * the challenge login before TLS) are refused with GERR_UNSUPPORTED and a
 * message saying how to make a new one.
 *
 * All functions are thread-safe after auth_init() (sodium_init) succeeded.
 */
#ifndef GPUD_AUTH_H
#define GPUD_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_NAME_MAX 64
#define AUTH_KEY_LEN 32
/* The credential gpud writes for a worker on its own machine
 * (DATA/local-worker.token): it logs in from a loopback address only. */
#define AUTH_LOCAL_NAME "local"

struct auth_token {
	char name[AUTH_NAME_MAX + 1];
	uint8_t seed[AUTH_KEY_LEN];   /* the secret key's seed: never sent */
	uint8_t pk[AUTH_KEY_LEN];     /* its public key: what gpud keeps */
	/* gpud's public identity key that the credential pins (chan.h) */
	uint8_t gpud_key[AUTH_KEY_LEN];
	int has_gpud_key;
};

/* What a token may do (0 is none). The Unix socket has ADMIN's rights. */
enum auth_role {
	AUTH_ROLE_WORKER = 1,   /* leases work */
	AUTH_ROLE_VIEWER = 2,   /* reads, over remote gpuctl */
	AUTH_ROLE_ADMIN = 3,    /* reads and changes, over remote gpuctl */
};
/* "worker", "viewer", "admin"; NULL for anything else. */
const char *auth_role_name(enum auth_role role);
/* The role named, or 0. */
enum auth_role auth_role_parse(const char *name);

int auth_init(void);

/* Names: 1..AUTH_NAME_MAX of [A-Za-z0-9._-]. Returns 0 or GERR_INVAL. */
int auth_name_valid(const char *name);

/* A new key pair for name (ret_tok->pk is what gpud keeps). Returns 0
 * or GERR_INVAL (a bad name). */
int auth_token_new(const char *name, struct auth_token *ret_tok);

/* Parse a credential file's text (above). Unknown keys, repeated lines, a
 * missing name or key are GERR_INVAL; a credential of the old kind is
 * GERR_UNSUPPORTED. The gpud-key line is optional here. */
int auth_token_parse(const char *text, struct auth_token *ret_tok);

/* The text of tok's credential file, pinning gpud_key (no gpud-key line
 * when NULL): malloc'ed, the caller frees (and should wipe); NULL when
 * memory is short. */
char *auth_credential_text(const struct auth_token *tok,
			   const uint8_t *gpud_key);

/* What to tell the holder of an old-kind credential (from file what). */
void auth_old_kind_message(const char *what, char *err, size_t errlen);

/* Read a secret file of at most cap - 1 bytes into buf (NUL-terminated).
 * Refuses files readable by group or others with GERR_PERM, files larger
 * than that with GERR_TOOBIG; what names the file in messages. */
int auth_secret_read(const char *path, const char *what, char *buf,
		     size_t cap, char *err, size_t errlen);
/* Write len bytes to path with mode 0600 (temp + fsync + rename). */
int auth_secret_write(const char *path, const char *text, size_t len);

/* Read and parse a credential file (at most 4 KiB, auth_secret_read):
 * 0, or GERR_INVAL / GERR_UNSUPPORTED (old kind) / a read error, with a
 * message for people in err. */
int auth_token_read_file(const char *path, struct auth_token *ret_tok,
			 char *err, size_t errlen);

/* Write a credential (a text auth_token_parse accepts) to path, mode
 * 0600, atomically. */
int auth_token_write_file(const char *path, const char *text);

void auth_random(void *buf, size_t len);

/* BLAKE2b-256(client_key): how the old challenge login stored a token;
 * migration 002 still applies it to databases older than that. */
void auth_stored_key(const uint8_t client_key[AUTH_KEY_LEN],
		     uint8_t out[AUTH_KEY_LEN]);

/* Hex helpers: returns 0 or GERR_INVAL (wrong length / non-hex). */
void auth_hex(const uint8_t *bin, size_t len, char *out /* 2*len+1 */);
int auth_unhex(const char *hex, uint8_t *out, size_t len);

#endif

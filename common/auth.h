/* auth.h - worker tokens and the challenge (in the manner of SCRAM).
 *
 * A token is "NAME:SECRET" where SECRET is 64 hex digits (32 random bytes
 * from libsodium). The worker derives client_key = BLAKE2b-256(
 * "gpud-token-v1" || SECRET bytes); gpud stores only stored_key =
 * BLAKE2b-256(client_key), never the secret nor the client key.
 * Authentication: gpud sends a random 32-byte nonce; the worker answers
 * proof = client_key XOR HMAC-SHA256(stored_key, nonce || NAME); gpud
 * computes the same HMAC, recovers client_key from the proof and checks that
 * it hashes to stored_key (constant time). So neither the token nor anything
 * that lets one log in crosses the wire, and a copy of gpud's database alone
 * does not let anyone log in as a worker.
 *
 * All functions are thread-safe after auth_init() (sodium_init) succeeded.
 */
#ifndef GPUD_AUTH_H
#define GPUD_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_NAME_MAX 64
#define AUTH_KEY_LEN 32
#define AUTH_NONCE_LEN 32
#define AUTH_MAC_LEN 32

struct auth_token {
	char name[AUTH_NAME_MAX + 1];
	uint8_t key[AUTH_KEY_LEN];    /* client_key: the worker's, never stored */
	uint8_t stored[AUTH_KEY_LEN]; /* stored_key: what gpud keeps */
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

/* Create a new random token for name: the text "NAME:SECRET" (malloc'ed,
 * caller frees) and its keys (ret_tok->stored is what gpud keeps). */
int auth_token_new(const char *name, char **ret_text,
		   struct auth_token *ret_tok);

/* Parse a credential: either a bare "NAME:SECRET" (trailing whitespace
 * allowed) or the lines of a credential file:
 *     # comment
 *     token = NAME:SECRET
 *     gpud-key = 64 hex digits (gpud's public identity key, optional here)
 * Unknown keys, repeated lines and a missing token are GERR_INVAL. */
int auth_token_parse(const char *text, struct auth_token *ret_tok);

/* The text of a credential file for the token of text (a bare
 * "NAME:SECRET" or a credential) pinning gpud_key: malloc'ed, the caller
 * frees (and should wipe); NULL when text is malformed or memory short. */
char *auth_credential_text(const char *text,
			   const uint8_t gpud_key[AUTH_KEY_LEN]);

/* Read a secret file of at most cap - 1 bytes into buf (NUL-terminated).
 * Refuses files readable by group or others with GERR_PERM, files larger
 * than that with GERR_TOOBIG; what names the file in messages. */
int auth_secret_read(const char *path, const char *what, char *buf,
		     size_t cap, char *err, size_t errlen);
/* Write len bytes to path with mode 0600 (temp + fsync + rename). */
int auth_secret_write(const char *path, const char *text, size_t len);

/* Read and parse a credential file (at most 4 KiB, auth_secret_read). */
int auth_token_read_file(const char *path, struct auth_token *ret_tok,
			 char *err, size_t errlen);

/* Write a credential (a text auth_token_parse accepts) to path, mode
 * 0600, atomically. */
int auth_token_write_file(const char *path, const char *text);

void auth_random(void *buf, size_t len);

/* stored_key = BLAKE2b-256(client_key): what gpud keeps for a token. */
void auth_stored_key(const uint8_t client_key[AUTH_KEY_LEN],
		     uint8_t out[AUTH_KEY_LEN]);

/* The worker's answer to a challenge, from its client key. */
void auth_proof(const uint8_t client_key[AUTH_KEY_LEN],
		const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
		uint8_t out[AUTH_MAC_LEN]);

/* gpud's check of an answer against the stored key, in constant time.
 * Returns 0 or GERR_AUTH. */
int auth_proof_check(const uint8_t stored_key[AUTH_KEY_LEN],
		     const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
		     const uint8_t proof[AUTH_MAC_LEN]);

/* Hex helpers: returns 0 or GERR_INVAL (wrong length / non-hex). */
void auth_hex(const uint8_t *bin, size_t len, char *out /* 2*len+1 */);
int auth_unhex(const char *hex, uint8_t *out, size_t len);

#endif

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
};

int auth_init(void);

/* Names: 1..AUTH_NAME_MAX of [A-Za-z0-9._-]. Returns 0 or GERR_INVAL. */
int auth_name_valid(const char *name);

/* Create a new random token for name: the text "NAME:SECRET" (malloc'ed,
 * caller frees) and its keys (ret_tok->stored is what gpud keeps). */
int auth_token_new(const char *name, char **ret_text,
		   struct auth_token *ret_tok);

/* Parse "NAME:SECRET" (trailing whitespace allowed) into name + key. */
int auth_token_parse(const char *text, struct auth_token *ret_tok);

/* Read and parse a token file (at most 4 KiB). Refuses files readable by
 * group or others with GERR_PERM and a message. */
int auth_token_read_file(const char *path, struct auth_token *ret_tok,
			 char *err, size_t errlen);

/* Write "NAME:SECRET\n" to path with mode 0600 (temp + fsync + rename). */
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

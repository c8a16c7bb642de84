/* auth.h - worker tokens and the HMAC challenge.
 *
 * A token is "NAME:SECRET" where SECRET is 64 hex digits (32 random bytes
 * from libsodium). gpud stores only key = BLAKE2b-256("gpud-token-v1" ||
 * SECRET bytes), and never the secret; the worker derives the same key.
 * Authentication: gpud sends a random 32-byte nonce; the worker answers
 * HMAC-SHA256(key, nonce || NAME); gpud compares in constant time. The token
 * never crosses the wire.
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
	uint8_t key[AUTH_KEY_LEN]; /* derived key, not the secret */
};

int auth_init(void);

/* Names: 1..AUTH_NAME_MAX of [A-Za-z0-9._-]. Returns 0 or GERR_INVAL. */
int auth_name_valid(const char *name);

/* Create a new random token for name: the text "NAME:SECRET" (malloc'ed,
 * caller frees) and the derived key to store. */
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

void auth_mac(const uint8_t key[AUTH_KEY_LEN],
	      const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
	      uint8_t out[AUTH_MAC_LEN]);

/* Constant-time check of a MAC. Returns 0 or GERR_AUTH. */
int auth_mac_check(const uint8_t key[AUTH_KEY_LEN],
		   const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
		   const uint8_t mac[AUTH_MAC_LEN]);

/* Hex helpers: returns 0 or GERR_INVAL (wrong length / non-hex). */
void auth_hex(const uint8_t *bin, size_t len, char *out /* 2*len+1 */);
int auth_unhex(const char *hex, uint8_t *out, size_t len);

#endif

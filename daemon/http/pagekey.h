/* pagekey.h - the status page's keys (gpuctl page-link): 32 random bytes
 * written as 64 lowercase hex digits; gpud stores only their BLAKE2b-256
 * hash (store_pagekey_*), so its database and backups let nobody in.
 * control_page.c makes keys, http.c checks the ones browsers and
 * scrapers present; both hash through here, so the two agree.
 *
 * The key is the whole secret and has 256 bits: a plain hash is enough
 * (no salt, no slow hash), and its hash is the lookup key.
 *
 * Threads: pure functions over libsodium (set up by auth_init at start);
 * any thread.
 */
#ifndef GPUD_PAGEKEY_H
#define GPUD_PAGEKEY_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>

#define PAGEKEY_BYTES 32
#define PAGEKEY_HEX (2 * PAGEKEY_BYTES)
#define PAGEKEY_HASH 32

/* text[0..len) as a key's hash into out: 0, or -1 when it is not exactly
 * PAGEKEY_HEX lowercase hex digits (out untouched). */
static inline int pagekey_hash(const char *text, size_t len,
			       uint8_t out[PAGEKEY_HASH])
{
	uint8_t key[PAGEKEY_BYTES];

	if (!text || len != PAGEKEY_HEX)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (!((text[i] >= '0' && text[i] <= '9') ||
		      (text[i] >= 'a' && text[i] <= 'f')))
			return -1;
	if (sodium_hex2bin(key, sizeof(key), text, len, NULL, NULL, NULL))
		return -1;
	crypto_generichash(out, PAGEKEY_HASH, key, sizeof(key), NULL, 0);
	sodium_memzero(key, sizeof(key));
	return 0;
}

/* A new random key as text (NUL-terminated) and its hash. */
static inline void pagekey_new(char ret_text[PAGEKEY_HEX + 1],
			       uint8_t ret_hash[PAGEKEY_HASH])
{
	uint8_t key[PAGEKEY_BYTES];

	randombytes_buf(key, sizeof(key));
	sodium_bin2hex(ret_text, PAGEKEY_HEX + 1, key, sizeof(key));
	crypto_generichash(ret_hash, PAGEKEY_HASH, key, sizeof(key), NULL, 0);
	sodium_memzero(key, sizeof(key));
}

#endif

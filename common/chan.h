/* chan.h - the secure channel under every TCP connection (workers and
 * remote gpuctl): a Noise-style handshake on libsodium, then one
 * authenticated, encrypted record stream per direction.
 *
 * gpud has a static Ed25519 identity key (chan_identity, kept in
 * DATA/gpud.key); clients pin its public key, which their credential file
 * carries. The handshake, all on the raw socket:
 *
 *   client -> gpud  CLIENT_HELLO  "GPUDSEC1" || client ephemeral X25519 pk
 *   gpud -> client  SERVER_HELLO  "GPUDSEC1" || gpud ephemeral X25519 pk
 *                                 || gpud static Ed25519 pk
 *                                 || Ed25519 signature of the transcript
 *                                 || gpud's secretstream header
 *   client -> gpud  FINISH        the client's secretstream header
 *
 * The transcript hash T = BLAKE2b("gpud-chan-v1" || CLIENT_HELLO || gpud
 * ephemeral pk || gpud static pk) is signed by gpud's static key, so only
 * the holder of the pinned key can complete the handshake. Each direction's
 * key is crypto_kx's session key (X25519 of the two ephemeral keys) hashed
 * with T: fresh per connection (forward secrecy: the static key only signs),
 * so a recorded session decrypts and replays under no other connection.
 *
 * Records after the handshake, each direction one crypto_secretstream
 * (XChaCha20-Poly1305, messages numbered implicitly, so a record dropped,
 * repeated or reordered fails to open): a sealed 4-byte length (21 bytes),
 * then the sealed body of that length (length + 17 bytes). The length is
 * authenticated before any body is awaited, so a flipped byte anywhere is
 * found at the latest when its record is complete, and the connection
 * closes (GERR_AUTH) with nothing of the record delivered.
 *
 * The module transforms buffers only; sockets belong to the callers
 * (daemon/conn.c, worker/wconn.c, tools/gpuctl/ctl_client.c). A struct chan is
 * used by one thread at a time. Thread-safe otherwise (after auth_init).
 */
#ifndef GPUD_CHAN_H
#define GPUD_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define CHAN_PK_LEN 32                  /* a public identity key */
#define CHAN_CLIENT_HELLO_LEN 40
#define CHAN_SERVER_HELLO_LEN 160
#define CHAN_FINISH_LEN 24
#define CHAN_LEN_UNIT 21                /* sealed record length */
#define CHAN_ABYTES 17                  /* per sealed message */
#define CHAN_RECORD_MAX (256u << 10)    /* plaintext bytes per record */

/* gpud's static identity: an Ed25519 key pair. */
struct chan_identity {
	uint8_t pk[CHAN_PK_LEN];
	uint8_t sk[64];
};

enum chan_state {
	CHAN_NONE,
	CHAN_CLIENT_WAIT,     /* client: CLIENT_HELLO sent */
	CHAN_SERVER_WAIT,     /* gpud: SERVER_HELLO sent, FINISH expected */
	CHAN_OPEN,
	CHAN_FAILED,
};

struct chan {
	enum chan_state state;
	uint8_t eph_pk[32], eph_sk[32];
	uint8_t pin[CHAN_PK_LEN];       /* client: the key gpud must have */
	uint8_t hello[CHAN_CLIENT_HELLO_LEN];
	uint8_t rx_key[32], tx_key[32];
	crypto_secretstream_xchacha20poly1305_state tx, rx;
	size_t body;                    /* the body awaited (sealed size), 0 */
};

/* Make a new identity, or load/save one as a text file ("gpud-key-v1 HEX"
 * of the secret key, mode 0600, written atomically). Return 0 or a gerr
 * code with a message in err. */
void chan_identity_new(struct chan_identity *id);
int chan_identity_read(const char *path, struct chan_identity *id, char *err,
		       size_t errlen);
int chan_identity_write(const char *path, const struct chan_identity *id,
			char *err, size_t errlen);

/* Client: start a handshake that only the holder of pin can finish;
 * out is the CLIENT_HELLO to send. */
void chan_client_start(struct chan *ch, const uint8_t pin[CHAN_PK_LEN],
		       uint8_t out[CHAN_CLIENT_HELLO_LEN]);
/* Client: check gpud's SERVER_HELLO; out is the FINISH to send. Returns 0
 * (state OPEN) or GERR_AUTH with the reason in err (wrong key, bad
 * signature, malformed). */
int chan_client_finish(struct chan *ch, const uint8_t in[CHAN_SERVER_HELLO_LEN],
		       uint8_t out[CHAN_FINISH_LEN], char *err, size_t errlen);

/* gpud: answer a CLIENT_HELLO; out is the SERVER_HELLO to send. */
int chan_server_accept(struct chan *ch, const struct chan_identity *id,
		       const uint8_t in[CHAN_CLIENT_HELLO_LEN],
		       uint8_t out[CHAN_SERVER_HELLO_LEN], char *err,
		       size_t errlen);
/* gpud: take the client's FINISH; state OPEN. */
int chan_server_finish(struct chan *ch, const uint8_t in[CHAN_FINISH_LEN],
		       char *err, size_t errlen);

/* Seal len bytes (any size, split into records of CHAN_RECORD_MAX) into a
 * malloc'ed buffer the caller frees. Returns 0, GERR_STATE or GERR_NOMEM. */
int chan_seal(struct chan *ch, const void *plain, size_t len, uint8_t **ret,
	      size_t *ret_len);
/* Bytes that chan_seal makes of len plaintext bytes. */
size_t chan_sealed_size(size_t len);

/* Open the complete records at the start of in (len bytes), appending
 * their plaintext to *buf (*blen used of *bcap, grown with realloc, never
 * past max bytes). *ret_used is what was consumed; a partial record stays
 * for the next call. A record announcing more than max_record bytes is
 * refused before its body is read. Returns 0, GERR_AUTH (a record that does
 * not authenticate: the channel is dead), GERR_TOOBIG or GERR_NOMEM, with
 * the reason in err. */
int chan_open(struct chan *ch, const uint8_t *in, size_t len,
	      size_t *ret_used, uint8_t **buf, size_t *blen, size_t *bcap,
	      size_t max, size_t max_record, char *err, size_t errlen);

/* Forget every key (idempotent). */
void chan_clear(struct chan *ch);

#endif

/* chan.h - TLS 1.3 under every TCP connection (workers, remote gpuctl),
 * with GnuTLS, as a transform of memory buffers: the callers own the
 * sockets and pass the bytes they read in and write the bytes it gives
 * back out (daemon/conn.c, worker/wconn.c, tools/gpuctl/ctl_client.c).
 *
 * Keys, no certificate authority:
 *  - gpud's identity is an Ed25519 key pair kept in DATA/gpud.key. At start
 *    gpud makes a self-signed X.509 certificate for it in memory
 *    (chan_identity_cert). A client accepts gpud only when the certificate's
 *    Ed25519 public key equals the pin of its credential ("gpud-key = HEX");
 *    TLS 1.3's CertificateVerify proves that gpud holds the matching secret.
 *  - Each worker and remote gpuctl holds its own Ed25519 key (its
 *    credential) and presents a self-signed certificate for it. gpud asks
 *    for one but finishes the handshake without one (so any TLS client,
 *    openssl s_client say, sees gpud's certificate); chan_peer_key gives the
 *    key the handshake proved, and the login refuses a connection without
 *    a known one.
 *
 * Only TLS 1.3 is offered and accepted; no session tickets (no resumption:
 * every connection proves its key). A record is at most 16 KiB of plaintext
 * and GnuTLS checks a record header's length before it reads the body;
 * chan_open also refuses plaintext beyond the caller's bound before it is
 * appended, so a peer cannot make a caller buffer more than it allows. A
 * record that does not authenticate (a flipped byte, a replay, a cut)
 * kills the channel: nothing of it is delivered, and every later call
 * fails.
 *
 * States: NONE --start--> HANDSHAKE --handshake done--> OPEN; any error
 * --> FAILED (final); a close_notify from the peer --> CLOSED (final).
 *
 * A struct chan is used by one thread at a time. An identity with its
 * certificate may be shared by the sessions of one thread (gpud's loop).
 */
#ifndef GPUD_CHAN_H
#define GPUD_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#define CHAN_PK_LEN 32                  /* an Ed25519 public key */
#define CHAN_SEED_LEN 32                /* an Ed25519 secret key's seed */
#define CHAN_RECORD_MAX (16u << 10)     /* plaintext bytes per TLS record */
/* What one TLS record adds to its plaintext, at most (header, tag, type,
 * padding GnuTLS might add). */
#define CHAN_RECORD_OVERHEAD 256u
/* gpud: the largest handshake message it takes from a client (bytes). */
#define CHAN_HANDSHAKE_MAX (16u << 10)

/* An Ed25519 key pair and, after chan_identity_cert, its self-signed
 * certificate and GnuTLS credentials (owned; chan_identity_free). */
struct chan_identity {
	uint8_t pk[CHAN_PK_LEN];
	uint8_t sk[64];                 /* libsodium's: seed || pk */
	gnutls_x509_crt_t crt;
	gnutls_x509_privkey_t key;
	gnutls_certificate_credentials_t cred;
};

enum chan_state {
	CHAN_NONE,
	CHAN_HANDSHAKE,
	CHAN_OPEN,
	CHAN_FAILED,
	CHAN_CLOSED,
};

struct chan {
	enum chan_state state;
	int server;
	gnutls_session_t s;
	uint8_t pin[CHAN_PK_LEN];       /* client: the key gpud must have */
	uint8_t peer[CHAN_PK_LEN];      /* the key the peer proved */
	int has_peer;
	int peer_other;                 /* gpud: a certificate, not Ed25519 */
	int first;                      /* gpud: the peer's first byte, or -1 */
	const uint8_t *in;              /* during chan_open: the input */
	size_t in_len, in_used;
	uint8_t *out;                   /* bytes to send (push) */
	size_t out_len, out_cap;
	char why[240];                  /* the pin check's refusal */
};

/* Make a new key pair, or one from a 32-byte seed, or load/save one as a
 * text file ("gpud-key-v1 HEX" of the secret key, mode 0600, written
 * atomically). None makes the certificate. Return 0 or a gerr code with a
 * message in err. */
void chan_identity_new(struct chan_identity *id);
void chan_identity_from_seed(struct chan_identity *id,
			     const uint8_t seed[CHAN_SEED_LEN]);
int chan_identity_read(const char *path, struct chan_identity *id, char *err,
		       size_t errlen);
int chan_identity_write(const char *path, const struct chan_identity *id,
			char *err, size_t errlen);

/* Make id's self-signed certificate (subject CN=cn) and the credentials a
 * session uses. Returns 0, or GERR_INVAL/GERR_NOMEM with GnuTLS's reason
 * in err. */
int chan_identity_cert(struct chan_identity *id, const char *cn, char *err,
		       size_t errlen);
/* The certificate and its secret key in PEM (malloc'ed NUL-terminated
 * text the caller frees, wiping the key): for libmicrohttpd's HTTPS. */
int chan_identity_pem(const struct chan_identity *id, char **ret_cert,
		      char **ret_key);
/* Forget the secret and free the certificate (idempotent; NULL is fine). */
void chan_identity_free(struct chan_identity *id);

/* Client: start a handshake presenting mine (with its certificate) that
 * only the holder of pin can finish. The ClientHello waits in the output
 * (chan_take_output). Returns 0 or a gerr code with the reason in err. */
int chan_client_start(struct chan *ch, const struct chan_identity *mine,
		      const uint8_t pin[CHAN_PK_LEN], char *err, size_t errlen);
/* gpud: accept a handshake with id (with its certificate), asking for the
 * client's certificate. */
int chan_server_start(struct chan *ch, const struct chan_identity *id,
		      char *err, size_t errlen);

/* Feed the bytes at in (len): the handshake while it runs, then records,
 * whose plaintext is appended to *buf (*blen used of *bcap, grown with
 * realloc, never past max bytes). *ret_used is what was consumed (all of
 * it unless an error stops early: GnuTLS keeps a partial record). Bytes to
 * send may wait in the output afterwards (handshake messages, alerts).
 * Returns 0; GERR_AUTH (the handshake failed: wrong pin, not TLS 1.3; or
 * a record did not authenticate: the channel is dead); GERR_TOOBIG (more
 * plaintext than max); GERR_DONE (the peer closed the channel cleanly);
 * GERR_NOMEM; each with the reason in err. */
int chan_open(struct chan *ch, const uint8_t *in, size_t len,
	      size_t *ret_used, uint8_t **buf, size_t *blen, size_t *bcap,
	      size_t max, char *err, size_t errlen);

/* Seal len bytes (any size, split into records) into a malloc'ed buffer
 * the caller frees (with any output that waited). Returns 0, GERR_STATE
 * (not open) or GERR_NOMEM. */
int chan_seal(struct chan *ch, const void *plain, size_t len, uint8_t **ret,
	      size_t *ret_len);

/* The bytes waiting to be sent: *ret (malloc'ed, the caller's) and
 * *ret_len, or NULL and 0 when none wait. */
void chan_take_output(struct chan *ch, uint8_t **ret, size_t *ret_len);

/* 1 once the handshake finished. */
int chan_is_open(const struct chan *ch);

/* The Ed25519 public key the peer proved in the handshake: 0,
 * GERR_NOTFOUND when it showed no certificate, GERR_UNSUPPORTED when its
 * certificate's key is not an Ed25519 one. */
int chan_peer_key(const struct chan *ch, uint8_t ret_pk[CHAN_PK_LEN]);

/* End the session and forget its keys (idempotent; a zeroed struct is
 * fine). */
void chan_clear(struct chan *ch);

#endif

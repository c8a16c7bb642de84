/* chan.c - the secure channel's handshake and records (see chan.h).
 *
 * Invariants:
 *  1. Nothing is delivered from a record that did not authenticate, and a
 *     channel that saw one stays CHAN_FAILED: every later call fails.
 *  2. Ephemeral secrets and session keys are wiped once the handshake no
 *     longer needs them (chan_clear wipes the rest).
 *  3. Every record's length is checked against the caller's bound before
 *     its body is awaited, so a peer cannot make us buffer more.
 */
#include "chan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "gerr.h"

#define MAGIC "GPUDSEC1"
#define MAGIC_LEN 8
#define CONTEXT "gpud-chan-v1"
#define SS_HEADER crypto_secretstream_xchacha20poly1305_HEADERBYTES
#define SS_ABYTES crypto_secretstream_xchacha20poly1305_ABYTES
#define IDENTITY_TAG "gpud-key-v1 "

_Static_assert(SS_HEADER == CHAN_FINISH_LEN, "secretstream header size");
_Static_assert(SS_ABYTES == CHAN_ABYTES, "secretstream overhead");
_Static_assert(CHAN_SERVER_HELLO_LEN ==
	       MAGIC_LEN + 32 + CHAN_PK_LEN + crypto_sign_BYTES + SS_HEADER,
	       "server hello layout");

/* ---- identity ---- */

void chan_identity_new(struct chan_identity *id)
{
	crypto_sign_keypair(id->pk, id->sk);
}

int chan_identity_read(const char *path, struct chan_identity *id, char *err,
		       size_t errlen)
{
	char buf[256];
	size_t tag = strlen(IDENTITY_TAG);
	int r = auth_secret_read(path, "key file", buf, sizeof(buf), err,
				 errlen);

	if (r < 0)
		return r;
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, IDENTITY_TAG, tag) != 0 ||
	    auth_unhex(buf + tag, id->sk, sizeof(id->sk)) < 0 ||
	    crypto_sign_ed25519_sk_to_pk(id->pk, id->sk) != 0) {
		sodium_memzero(buf, sizeof(buf));
		return gerr_fail(GERR_INVAL, err, errlen,
				 "key file %s is malformed (want '%s' and "
				 "128 hex digits)", path, IDENTITY_TAG);
	}
	sodium_memzero(buf, sizeof(buf));
	return 0;
}

int chan_identity_write(const char *path, const struct chan_identity *id,
			char *err, size_t errlen)
{
	char buf[sizeof(IDENTITY_TAG) + 2 * sizeof(id->sk) + 1];
	size_t tag = strlen(IDENTITY_TAG);
	int r;

	memcpy(buf, IDENTITY_TAG, tag);
	auth_hex(id->sk, sizeof(id->sk), buf + tag);
	strcat(buf, "\n");
	r = auth_secret_write(path, buf, strlen(buf));
	sodium_memzero(buf, sizeof(buf));
	if (r < 0)
		return gerr_fail(r, err, errlen, "cannot write key file %s: %s",
				 path, gerr_str(r));
	return 0;
}

/* ---- handshake ---- */

/* T = BLAKE2b(CONTEXT || client hello || gpud ephemeral || gpud static) */
static void transcript(const uint8_t hello[CHAN_CLIENT_HELLO_LEN],
		       const uint8_t server_eph[32],
		       const uint8_t server_static[CHAN_PK_LEN], uint8_t t[32])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, (const uint8_t *)CONTEXT,
				  strlen(CONTEXT));
	crypto_generichash_update(&st, hello, CHAN_CLIENT_HELLO_LEN);
	crypto_generichash_update(&st, server_eph, 32);
	crypto_generichash_update(&st, server_static, CHAN_PK_LEN);
	crypto_generichash_final(&st, t, 32);
}

/* Bind both session keys to the transcript. */
static void bind_keys(struct chan *ch, const uint8_t t[32])
{
	uint8_t k[32];

	crypto_generichash(k, 32, t, 32, ch->rx_key, 32);
	memcpy(ch->rx_key, k, 32);
	crypto_generichash(k, 32, t, 32, ch->tx_key, 32);
	memcpy(ch->tx_key, k, 32);
	sodium_memzero(k, sizeof(k));
}

static void wipe_handshake(struct chan *ch)
{
	sodium_memzero(ch->eph_sk, sizeof(ch->eph_sk));
	sodium_memzero(ch->rx_key, sizeof(ch->rx_key));
	sodium_memzero(ch->tx_key, sizeof(ch->tx_key));
}

static int fail(struct chan *ch, char *err, size_t errlen, const char *why)
{
	chan_clear(ch);
	ch->state = CHAN_FAILED;
	return gerr_fail(GERR_AUTH, err, errlen, "%s", why);
}

void chan_client_start(struct chan *ch, const uint8_t pin[CHAN_PK_LEN],
		       uint8_t out[CHAN_CLIENT_HELLO_LEN])
{
	memset(ch, 0, sizeof(*ch));
	crypto_kx_keypair(ch->eph_pk, ch->eph_sk);
	memcpy(ch->pin, pin, CHAN_PK_LEN);
	memcpy(ch->hello, MAGIC, MAGIC_LEN);
	memcpy(ch->hello + MAGIC_LEN, ch->eph_pk, 32);
	memcpy(out, ch->hello, CHAN_CLIENT_HELLO_LEN);
	ch->state = CHAN_CLIENT_WAIT;
}

int chan_client_finish(struct chan *ch, const uint8_t in[CHAN_SERVER_HELLO_LEN],
		       uint8_t out[CHAN_FINISH_LEN], char *err, size_t errlen)
{
	const uint8_t *eph = in + MAGIC_LEN, *stat = eph + 32;
	const uint8_t *sig = stat + CHAN_PK_LEN, *hdr = sig + crypto_sign_BYTES;
	uint8_t t[32];

	if (ch->state != CHAN_CLIENT_WAIT)
		return fail(ch, err, errlen, "handshake out of order");
	if (memcmp(in, MAGIC, MAGIC_LEN) != 0)
		return fail(ch, err, errlen, "the peer does not speak gpud's "
			    "secure channel (wrong handshake magic)");
	if (sodium_memcmp(stat, ch->pin, CHAN_PK_LEN) != 0) {
		char got[2 * CHAN_PK_LEN + 1], want[2 * CHAN_PK_LEN + 1];
		char why[300];

		auth_hex(stat, CHAN_PK_LEN, got);
		auth_hex(ch->pin, CHAN_PK_LEN, want);
		snprintf(why, sizeof(why), "gpud's key %.16s... is not the "
			 "gpud-key %.16s... of the credential: refusing an "
			 "impostor (or a gpud whose key was replaced)", got,
			 want);
		return fail(ch, err, errlen, why);
	}
	transcript(ch->hello, eph, stat, t);
	if (crypto_sign_verify_detached(sig, t, sizeof(t), stat) != 0)
		return fail(ch, err, errlen, "gpud's handshake signature does "
			    "not verify");
	if (crypto_kx_client_session_keys(ch->rx_key, ch->tx_key, ch->eph_pk,
					  ch->eph_sk, eph) != 0)
		return fail(ch, err, errlen, "gpud's ephemeral key is invalid");
	bind_keys(ch, t);
	if (crypto_secretstream_xchacha20poly1305_init_pull(&ch->rx, hdr,
							    ch->rx_key) != 0)
		return fail(ch, err, errlen, "gpud's stream header is invalid");
	crypto_secretstream_xchacha20poly1305_init_push(&ch->tx, out,
							ch->tx_key);
	wipe_handshake(ch);
	ch->state = CHAN_OPEN;
	return 0;
}

int chan_server_accept(struct chan *ch, const struct chan_identity *id,
		       const uint8_t in[CHAN_CLIENT_HELLO_LEN],
		       uint8_t out[CHAN_SERVER_HELLO_LEN], char *err,
		       size_t errlen)
{
	uint8_t *eph = out + MAGIC_LEN, *stat = eph + 32;
	uint8_t *sig = stat + CHAN_PK_LEN, *hdr = sig + crypto_sign_BYTES;
	uint8_t t[32];

	memset(ch, 0, sizeof(*ch));
	if (memcmp(in, MAGIC, MAGIC_LEN) != 0)
		return fail(ch, err, errlen, "not gpud's secure channel (wrong "
			    "handshake magic: a client without encryption?)");
	crypto_kx_keypair(ch->eph_pk, ch->eph_sk);
	if (crypto_kx_server_session_keys(ch->rx_key, ch->tx_key, ch->eph_pk,
					  ch->eph_sk, in + MAGIC_LEN) != 0)
		return fail(ch, err, errlen, "the client's ephemeral key is "
			    "invalid");
	memcpy(out, MAGIC, MAGIC_LEN);
	memcpy(eph, ch->eph_pk, 32);
	memcpy(stat, id->pk, CHAN_PK_LEN);
	transcript(in, eph, stat, t);
	crypto_sign_detached(sig, NULL, t, sizeof(t), id->sk);
	bind_keys(ch, t);
	crypto_secretstream_xchacha20poly1305_init_push(&ch->tx, hdr,
							ch->tx_key);
	sodium_memzero(ch->eph_sk, sizeof(ch->eph_sk));
	ch->state = CHAN_SERVER_WAIT;
	return 0;
}

int chan_server_finish(struct chan *ch, const uint8_t in[CHAN_FINISH_LEN],
		       char *err, size_t errlen)
{
	if (ch->state != CHAN_SERVER_WAIT)
		return fail(ch, err, errlen, "handshake out of order");
	if (crypto_secretstream_xchacha20poly1305_init_pull(&ch->rx, in,
							    ch->rx_key) != 0)
		return fail(ch, err, errlen, "the client's stream header is "
			    "invalid");
	wipe_handshake(ch);
	ch->state = CHAN_OPEN;
	return 0;
}

/* ---- records ---- */

size_t chan_sealed_size(size_t len)
{
	size_t records = len == 0 ? 1 : (len + CHAN_RECORD_MAX - 1) /
					CHAN_RECORD_MAX;

	return len + records * (CHAN_LEN_UNIT + SS_ABYTES);
}

int chan_seal(struct chan *ch, const void *plain, size_t len, uint8_t **ret,
	      size_t *ret_len)
{
	const uint8_t *p = plain;
	size_t total = chan_sealed_size(len), off = 0;
	uint8_t *out;

	if (ch->state != CHAN_OPEN)
		return GERR_STATE;
	out = malloc(total);
	if (!out)
		return GERR_NOMEM;
	do {
		size_t n = len > CHAN_RECORD_MAX ? CHAN_RECORD_MAX : len;
		uint8_t be[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16),
				  (uint8_t)(n >> 8), (uint8_t)n };

		crypto_secretstream_xchacha20poly1305_push(&ch->tx, out + off,
			NULL, be, sizeof(be), NULL, 0, 0);
		off += CHAN_LEN_UNIT;
		crypto_secretstream_xchacha20poly1305_push(&ch->tx, out + off,
			NULL, p, n, NULL, 0, 0);
		off += n + SS_ABYTES;
		p += n;
		len -= n;
	} while (len > 0);
	*ret = out;
	*ret_len = off;
	return 0;
}

static int grow(uint8_t **buf, size_t *bcap, size_t need)
{
	size_t ncap = *bcap ? *bcap : 4096;
	uint8_t *nb;

	if (need <= *bcap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(*buf, ncap);
	if (!nb)
		return GERR_NOMEM;
	*buf = nb;
	*bcap = ncap;
	return 0;
}

int chan_open(struct chan *ch, const uint8_t *in, size_t len,
	      size_t *ret_used, uint8_t **buf, size_t *blen, size_t *bcap,
	      size_t max, size_t max_record, char *err, size_t errlen)
{
	size_t used = 0;
	int r = 0;

	*ret_used = 0;
	if (ch->state != CHAN_OPEN)
		return gerr_fail(GERR_STATE, err, errlen, "channel not open");
	for (;;) {
		unsigned char tag;

		if (ch->body == 0) {
			uint8_t be[4];
			size_t n;

			if (len - used < CHAN_LEN_UNIT)
				break;
			if (crypto_secretstream_xchacha20poly1305_pull(&ch->rx,
				be, NULL, &tag, in + used, CHAN_LEN_UNIT, NULL,
				0) != 0 || tag != 0) {
				r = fail(ch, err, errlen, "a record length did "
					 "not authenticate (altered, replayed "
					 "or out of order)");
				break;
			}
			used += CHAN_LEN_UNIT;
			n = (size_t)be[0] << 24 | (size_t)be[1] << 16 |
			    (size_t)be[2] << 8 | be[3];
			if (n > CHAN_RECORD_MAX || n > max_record) {
				r = gerr_fail(GERR_TOOBIG, err, errlen,
					"a record of %zu bytes (at most %zu "
					"here)", n, max_record < CHAN_RECORD_MAX
					? max_record : (size_t)CHAN_RECORD_MAX);
				ch->state = CHAN_FAILED;
				break;
			}
			ch->body = n + SS_ABYTES;
		}
		if (len - used < ch->body)
			break;
		if (*blen + ch->body - SS_ABYTES > max) {
			r = gerr_fail(GERR_TOOBIG, err, errlen, "the peer sent "
				      "more than %zu bytes unanswered", max);
			ch->state = CHAN_FAILED;
			break;
		}
		r = grow(buf, bcap, *blen + ch->body);
		if (r) {
			gerr_fail(r, err, errlen, "out of memory");
			break;
		}
		if (crypto_secretstream_xchacha20poly1305_pull(&ch->rx,
			*buf + *blen, NULL, &tag, in + used, ch->body, NULL, 0)
			    != 0 || tag != 0) {
			r = fail(ch, err, errlen, "a record did not "
				 "authenticate (altered, replayed or out of "
				 "order)");
			break;
		}
		*blen += ch->body - SS_ABYTES;
		used += ch->body;
		ch->body = 0;
	}
	*ret_used = used;
	return r;
}

void chan_clear(struct chan *ch)
{
	sodium_memzero(ch, sizeof(*ch));
}

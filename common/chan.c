/* chan.c - TLS 1.3 on memory buffers with GnuTLS (see chan.h).
 *
 * Invariants:
 *  1. Nothing is delivered from a record that did not authenticate, and a
 *     channel that saw one stays CHAN_FAILED: every later call fails.
 *  2. A client's handshake finishes only when gpud's certificate carries
 *     the pinned Ed25519 key (checked in the handshake by verify_pin, and
 *     again when it finishes); TLS 1.3's CertificateVerify proves the key.
 *  3. The transport functions touch only the buffers of this struct: GnuTLS
 *     never sees a socket (the pull functions say EAGAIN when the input is
 *     used up).
 *  4. Plaintext is appended only within the caller's bound.
 */
#include "chan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "auth.h"
#include "gerr.h"

#define IDENTITY_TAG "gpud-key-v1 "
/* TLS 1.3 only, GnuTLS's usual ciphers and signatures. */
#define PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3"

/* ---- identity ---- */

void chan_identity_new(struct chan_identity *id)
{
	memset(id, 0, sizeof(*id));
	crypto_sign_keypair(id->pk, id->sk);
}

void chan_identity_from_seed(struct chan_identity *id,
			     const uint8_t seed[CHAN_SEED_LEN])
{
	memset(id, 0, sizeof(*id));
	crypto_sign_seed_keypair(id->pk, id->sk, seed);
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
	memset(id, 0, sizeof(*id));
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, IDENTITY_TAG, tag) != 0 ||
	    auth_unhex(buf + tag, id->sk, sizeof(id->sk)) < 0 ||
	    crypto_sign_ed25519_sk_to_pk(id->pk, id->sk) != 0) {
		sodium_memzero(buf, sizeof(buf));
		sodium_memzero(id->sk, sizeof(id->sk));
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

static int tls_fail(int code, char *err, size_t errlen, const char *what,
		    int g)
{
	return gerr_fail(code, err, errlen, "%s: %s", what, gnutls_strerror(g));
}

/* The certificate's fields: X.509 v3, a random positive serial, valid from
 * a day ago (clock skew) with no well-defined expiry (the key is what is
 * trusted, not the dates), a leaf that signs only. */
static int cert_fields(gnutls_x509_crt_t crt, const char *cn)
{
	uint8_t serial[16];
	int g;

	randombytes_buf(serial, sizeof(serial));
	serial[0] &= 0x7f;
	serial[0] |= 0x01;
	if ((g = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (g = gnutls_x509_crt_set_serial(crt, serial, sizeof(serial))) < 0 ||
	    (g = gnutls_x509_crt_set_activation_time(crt, time(NULL) - 86400))
		    < 0 ||
	    (g = gnutls_x509_crt_set_expiration_time(crt, (time_t)-1)) < 0 ||
	    (g = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME,
					       0, cn, (unsigned)strlen(cn))) < 0 ||
	    (g = gnutls_x509_crt_set_issuer_dn_by_oid(crt,
		GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn))) < 0 ||
	    (g = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (g = gnutls_x509_crt_set_key_usage(crt,
		GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0)
		return g;
	return 0;
}

int chan_identity_cert(struct chan_identity *id, const char *cn, char *err,
		       size_t errlen)
{
	gnutls_datum_t x = { id->pk, CHAN_PK_LEN };
	gnutls_datum_t k = { id->sk, CHAN_SEED_LEN };
	int g;

	if (!cn || !*cn || strlen(cn) > 64)
		return gerr_fail(GERR_INVAL, err, errlen, "bad certificate name");
	if (id->cred)
		return 0;
	if ((g = gnutls_x509_privkey_init(&id->key)) < 0)
		goto fail;
	if ((g = gnutls_x509_privkey_import_ecc_raw(id->key,
		GNUTLS_ECC_CURVE_ED25519, &x, NULL, &k)) < 0)
		goto fail;
	if ((g = gnutls_x509_crt_init(&id->crt)) < 0 ||
	    (g = cert_fields(id->crt, cn)) < 0 ||
	    (g = gnutls_x509_crt_set_key(id->crt, id->key)) < 0 ||
	    (g = gnutls_x509_crt_sign2(id->crt, id->crt, id->key,
				       GNUTLS_DIG_SHA512, 0)) < 0)
		goto fail;
	if ((g = gnutls_certificate_allocate_credentials(&id->cred)) < 0)
		goto fail;
	/* The credentials keep copies of the certificate and key. */
	if ((g = gnutls_certificate_set_x509_key(id->cred, &id->crt, 1,
						 id->key)) < 0)
		goto fail;
	return 0;
fail:
	chan_identity_free(id);
	return tls_fail(g == GNUTLS_E_MEMORY_ERROR ? GERR_NOMEM : GERR_INVAL,
			err, errlen, "cannot make the TLS certificate", g);
}

static char *datum_text(gnutls_datum_t *d)
{
	char *s = malloc(d->size + 1);

	if (s) {
		memcpy(s, d->data, d->size);
		s[d->size] = '\0';
	}
	sodium_memzero(d->data, d->size);
	gnutls_free(d->data);
	return s;
}

int chan_identity_pem(const struct chan_identity *id, char **ret_cert,
		      char **ret_key)
{
	gnutls_datum_t c = { NULL, 0 }, k = { NULL, 0 };
	char *cs, *ks;

	if (!id->crt || !id->key)
		return GERR_STATE;
	if (gnutls_x509_crt_export2(id->crt, GNUTLS_X509_FMT_PEM, &c) < 0)
		return GERR_NOMEM;
	if (gnutls_x509_privkey_export2_pkcs8(id->key, GNUTLS_X509_FMT_PEM,
					      NULL, GNUTLS_PKCS_PLAIN, &k) < 0) {
		gnutls_free(c.data);
		return GERR_NOMEM;
	}
	cs = datum_text(&c);
	ks = datum_text(&k);
	if (!cs || !ks) {
		free(cs);
		free(ks);
		return GERR_NOMEM;
	}
	*ret_cert = cs;
	*ret_key = ks;
	return 0;
}

void chan_identity_free(struct chan_identity *id)
{
	if (!id)
		return;
	if (id->cred)
		gnutls_certificate_free_credentials(id->cred);
	if (id->crt)
		gnutls_x509_crt_deinit(id->crt);
	if (id->key)
		gnutls_x509_privkey_deinit(id->key);
	sodium_memzero(id, sizeof(*id));
}

/* ---- transport on memory ---- */

static ssize_t pull(gnutls_transport_ptr_t p, void *data, size_t size)
{
	struct chan *ch = p;
	size_t n = ch->in_len - ch->in_used;

	if (n == 0) {
		gnutls_transport_set_errno(ch->s, EAGAIN);
		return -1;
	}
	if (n > size)
		n = size;
	memcpy(data, ch->in + ch->in_used, n);
	ch->in_used += n;
	return (ssize_t)n;
}

/* Never wait: data is there or it is not (invariant 3). */
static int pull_timeout(gnutls_transport_ptr_t p, unsigned int ms)
{
	struct chan *ch = p;

	(void)ms;
	if (ch->in_len > ch->in_used)
		return 1;
	gnutls_transport_set_errno(ch->s, EAGAIN);
	return -1;
}

static ssize_t push(gnutls_transport_ptr_t p, const void *data, size_t size)
{
	struct chan *ch = p;

	if (ch->out_cap - ch->out_len < size) {
		size_t ncap = ch->out_cap ? ch->out_cap : 4096;
		uint8_t *nb;

		while (ncap - ch->out_len < size)
			ncap *= 2;
		nb = realloc(ch->out, ncap);
		if (!nb) {
			gnutls_transport_set_errno(ch->s, ENOMEM);
			return -1;
		}
		ch->out = nb;
		ch->out_cap = ncap;
	}
	memcpy(ch->out + ch->out_len, data, size);
	ch->out_len += size;
	return (ssize_t)size;
}

/* ---- handshake ---- */

static int fail(struct chan *ch, int code, char *err, size_t errlen,
		const char *why)
{
	ch->state = CHAN_FAILED;
	return gerr_fail(code, err, errlen, "%s", why);
}

/* The Ed25519 key of the peer's first certificate: 0 or GERR_NOTFOUND. */
static int peer_cert_key(gnutls_session_t s, uint8_t pk[CHAN_PK_LEN])
{
	const gnutls_datum_t *certs;
	unsigned int n = 0;
	gnutls_x509_crt_t crt;
	gnutls_ecc_curve_t curve;
	gnutls_datum_t x = { NULL, 0 }, y = { NULL, 0 };
	int r = GERR_NOTFOUND;

	if (gnutls_certificate_type_get(s) != GNUTLS_CRT_X509)
		return GERR_NOTFOUND;
	certs = gnutls_certificate_get_peers(s, &n);
	if (!certs || n == 0 || gnutls_x509_crt_init(&crt) < 0)
		return GERR_NOTFOUND;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0 &&
	    gnutls_x509_crt_get_pk_algorithm(crt, NULL) ==
		    GNUTLS_PK_EDDSA_ED25519 &&
	    gnutls_x509_crt_get_pk_ecc_raw(crt, &curve, &x, &y) >= 0 &&
	    curve == GNUTLS_ECC_CURVE_ED25519 && x.size == CHAN_PK_LEN) {
		memcpy(pk, x.data, CHAN_PK_LEN);
		r = 0;
	}
	gnutls_free(x.data);
	gnutls_free(y.data);
	gnutls_x509_crt_deinit(crt);
	return r;
}

/* The client's check of gpud's certificate, in the handshake (invariant
 * 2): nonzero refuses it. */
static int verify_pin(gnutls_session_t s)
{
	struct chan *ch = gnutls_session_get_ptr(s);
	uint8_t pk[CHAN_PK_LEN];

	if (peer_cert_key(s, pk) != 0) {
		snprintf(ch->why, sizeof(ch->why), "the peer shows no Ed25519 "
			 "certificate: not gpud");
		return -1;
	}
	if (sodium_memcmp(pk, ch->pin, CHAN_PK_LEN) != 0) {
		char got[2 * CHAN_PK_LEN + 1], want[2 * CHAN_PK_LEN + 1];

		auth_hex(pk, CHAN_PK_LEN, got);
		auth_hex(ch->pin, CHAN_PK_LEN, want);
		snprintf(ch->why, sizeof(ch->why), "gpud's key %.16s... is not "
			 "the gpud-key %.16s... of the credential: refusing an "
			 "impostor (or a gpud whose key was replaced)", got,
			 want);
		return -1;
	}
	memcpy(ch->peer, pk, CHAN_PK_LEN);
	ch->has_peer = 1;
	return 0;
}

static int session_new(struct chan *ch, const struct chan_identity *id,
		       int server, char *err, size_t errlen)
{
	unsigned flags = (server ? GNUTLS_SERVER : GNUTLS_CLIENT) |
			 GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS;
	int g;

	memset(ch, 0, sizeof(*ch));
	ch->server = server;
	if (!id || !id->cred)
		return fail(ch, GERR_STATE, err, errlen,
			    "no TLS certificate (chan_identity_cert)");
	if ((g = gnutls_init(&ch->s, flags)) < 0) {
		ch->s = NULL;
		return fail(ch, GERR_NOMEM, err, errlen, gnutls_strerror(g));
	}
	if ((g = gnutls_priority_set_direct(ch->s, PRIORITY, NULL)) < 0 ||
	    (g = gnutls_credentials_set(ch->s, GNUTLS_CRD_CERTIFICATE,
					id->cred)) < 0) {
		chan_clear(ch);
		return fail(ch, GERR_INVAL, err, errlen, gnutls_strerror(g));
	}
	gnutls_session_set_ptr(ch->s, ch);
	gnutls_transport_set_ptr(ch->s, ch);
	gnutls_transport_set_push_function(ch->s, push);
	gnutls_transport_set_pull_function(ch->s, pull);
	gnutls_transport_set_pull_timeout_function(ch->s, pull_timeout);
	gnutls_handshake_set_timeout(ch->s, 0); /* the callers' clocks */
	ch->state = CHAN_HANDSHAKE;
	return 0;
}

/* One step of the handshake: 0 (done or waiting for input) or an error. */
static int handshake(struct chan *ch, char *err, size_t errlen)
{
	int g;

	do {
		g = gnutls_handshake(ch->s);
	} while (g == GNUTLS_E_INTERRUPTED);
	if (g == GNUTLS_E_AGAIN)
		return 0;
	if (g < 0) {
		/* Tell the peer why, when TLS has words for it. */
		gnutls_alert_send_appropriate(ch->s, g);
		if (ch->why[0])
			return fail(ch, GERR_AUTH, err, errlen, ch->why);
		/* A TLS peer starts with a handshake record (type 22). */
		if (ch->server && ch->first >= 0 && ch->first != 22)
			return fail(ch, GERR_AUTH, err, errlen, "not TLS: the peer "
				    "does not speak TLS 1.3 (a client without "
				    "encryption?)");
		ch->state = CHAN_FAILED;
		if (g == GNUTLS_E_FATAL_ALERT_RECEIVED)
			return gerr_fail(GERR_AUTH, err, errlen, "TLS 1.3 "
					 "handshake refused by the peer (alert: "
					 "%s)", gnutls_alert_get_name(
						 gnutls_alert_get(ch->s)));
		return gerr_fail(GERR_AUTH, err, errlen, "TLS 1.3 handshake "
				 "failed: %s", gnutls_strerror(g));
	}
	if (ch->server) {
		unsigned int n = 0;

		ch->has_peer = peer_cert_key(ch->s, ch->peer) == 0;
		ch->peer_other = !ch->has_peer &&
				 gnutls_certificate_get_peers(ch->s, &n) && n > 0;
	} else {
		uint8_t pk[CHAN_PK_LEN];

		/* Invariant 2, once more on the finished handshake. */
		if (peer_cert_key(ch->s, pk) != 0 ||
		    sodium_memcmp(pk, ch->pin, CHAN_PK_LEN) != 0)
			return fail(ch, GERR_AUTH, err, errlen,
				    "gpud's certificate is not the pinned key");
	}
	ch->state = CHAN_OPEN;
	return 0;
}

int chan_client_start(struct chan *ch, const struct chan_identity *mine,
		      const uint8_t pin[CHAN_PK_LEN], char *err, size_t errlen)
{
	int r = session_new(ch, mine, 0, err, errlen);

	if (r)
		return r;
	memcpy(ch->pin, pin, CHAN_PK_LEN);
	gnutls_session_set_verify_function(ch->s, verify_pin);
	return handshake(ch, err, errlen);
}

int chan_server_start(struct chan *ch, const struct chan_identity *id,
		      char *err, size_t errlen)
{
	int r = session_new(ch, id, 1, err, errlen);

	if (r)
		return r;
	/* Asked for, not required: see chan.h. */
	gnutls_certificate_server_set_request(ch->s, GNUTLS_CERT_REQUEST);
	/* A client's handshake messages are small (a hello, one short
	 * certificate): bound what GnuTLS buffers for one before login. */
	gnutls_handshake_set_max_packet_length(ch->s, CHAN_HANDSHAKE_MAX);
	ch->first = -1;
	return 0;
}

/* ---- records ---- */

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
	      size_t max, char *err, size_t errlen)
{
	uint8_t rec[CHAN_RECORD_MAX];
	int r = 0;

	*ret_used = 0;
	if (ch->state != CHAN_HANDSHAKE && ch->state != CHAN_OPEN)
		return gerr_fail(ch->state == CHAN_CLOSED ? GERR_DONE
				 : GERR_STATE, err, errlen, "channel not open");
	ch->in = in;
	ch->in_len = len;
	ch->in_used = 0;
	if (ch->server && ch->first < 0 && len > 0)
		ch->first = in[0];
	if (ch->state == CHAN_HANDSHAKE)
		r = handshake(ch, err, errlen);
	while (r == 0 && ch->state == CHAN_OPEN) {
		ssize_t n;

		n = gnutls_record_recv(ch->s, rec, sizeof(rec));
		if (n == GNUTLS_E_AGAIN)
			break;
		if (n == GNUTLS_E_INTERRUPTED)
			continue;
		if (n == 0) {
			ch->state = CHAN_CLOSED;
			r = gerr_fail(GERR_DONE, err, errlen, "the peer closed "
				      "the channel");
			break;
		}
		if (n < 0) {
			ch->state = CHAN_FAILED;
			r = gerr_fail(GERR_AUTH, err, errlen, "%s",
				      n == GNUTLS_E_DECRYPTION_FAILED
				      ? "a record did not authenticate (altered, "
					"replayed or out of order)"
				      : gnutls_strerror((int)n));
			break;
		}
		if (*blen + (size_t)n > max) {
			sodium_memzero(rec, (size_t)n);
			ch->state = CHAN_FAILED;
			r = gerr_fail(GERR_TOOBIG, err, errlen, "the peer sent "
				      "more than %zu bytes unanswered", max);
			break;
		}
		if ((r = grow(buf, bcap, *blen + (size_t)n)) != 0) {
			gerr_fail(r, err, errlen, "out of memory");
			break;
		}
		memcpy(*buf + *blen, rec, (size_t)n);
		*blen += (size_t)n;
	}
	*ret_used = ch->in_used;
	ch->in = NULL;
	ch->in_len = ch->in_used = 0;
	sodium_memzero(rec, sizeof(rec));
	return r;
}

int chan_seal(struct chan *ch, const void *plain, size_t len, uint8_t **ret,
	      size_t *ret_len)
{
	const uint8_t *p = plain;

	if (ch->state != CHAN_OPEN)
		return GERR_STATE;
	while (len > 0) {
		size_t n = len > CHAN_RECORD_MAX ? CHAN_RECORD_MAX : len;
		ssize_t w = gnutls_record_send(ch->s, p, n);

		if (w == GNUTLS_E_INTERRUPTED || w == GNUTLS_E_AGAIN)
			continue; /* push never blocks: cannot loop */
		if (w < 0) {
			ch->state = CHAN_FAILED;
			return w == GNUTLS_E_MEMORY_ERROR ? GERR_NOMEM
							  : GERR_STATE;
		}
		p += w;
		len -= (size_t)w;
	}
	chan_take_output(ch, ret, ret_len);
	if (!*ret) {
		/* Nothing to send (len 0): an empty buffer, still the
		 * caller's. */
		*ret = malloc(1);
		*ret_len = 0;
		if (!*ret)
			return GERR_NOMEM;
	}
	return 0;
}

void chan_take_output(struct chan *ch, uint8_t **ret, size_t *ret_len)
{
	/* The caller may keep it long (a write queue a slow peer does not
	 * drain): no more memory than its bytes. */
	if (ch->out_len && ch->out_cap > ch->out_len) {
		uint8_t *nb = realloc(ch->out, ch->out_len);

		if (nb) {
			ch->out = nb;
			ch->out_cap = ch->out_len;
		}
	}
	*ret = ch->out_len ? ch->out : NULL;
	*ret_len = ch->out_len;
	if (ch->out_len) {
		ch->out = NULL;
		ch->out_len = ch->out_cap = 0;
	}
}

int chan_is_open(const struct chan *ch)
{
	return ch->state == CHAN_OPEN;
}

int chan_peer_key(const struct chan *ch, uint8_t ret_pk[CHAN_PK_LEN])
{
	if (ch->state != CHAN_OPEN || !ch->has_peer)
		return ch->state == CHAN_OPEN && ch->peer_other ? GERR_UNSUPPORTED
							       : GERR_NOTFOUND;
	memcpy(ret_pk, ch->peer, CHAN_PK_LEN);
	return 0;
}

void chan_clear(struct chan *ch)
{
	if (ch->s)
		gnutls_deinit(ch->s);
	if (ch->out) {
		sodium_memzero(ch->out, ch->out_cap);
		free(ch->out);
	}
	sodium_memzero(ch, sizeof(*ch));
}

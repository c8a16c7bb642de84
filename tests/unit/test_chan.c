/* test_chan.c - unit tests of common/chan.c: TLS 1.3 between two memory
 * buffers: the handshake both ways, the pin, the client's key, records
 * (tampering, replay, bounds) and the identity file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "chan.h"
#include "gerr.h"

struct pair {
	struct chan_identity gpud, worker;
	struct chan client, server;
};

/* Move what one side has to send into the other: the other's chan_open
 * code (its plaintext into *buf when given). */
static int pass(struct chan *from, struct chan *to, uint8_t **buf,
		size_t *blen, size_t *bcap, size_t max, char *err,
		size_t errlen)
{
	uint8_t *out = NULL, *tmp = NULL;
	size_t olen = 0, used = 0, tlen = 0, tcap = 0;
	int rc;

	chan_take_output(from, &out, &olen);
	if (!buf) {
		buf = &tmp;
		blen = &tlen;
		bcap = &tcap;
	}
	rc = chan_open(to, out ? out : (uint8_t *)"", olen, &used, buf, blen,
		       bcap, max, err, errlen);
	if (rc == 0)
		assert_int_equal(used, olen);
	free(out);
	free(tmp);
	return rc;
}

/* A handshake of a client with key mine pinning pin and gpud: 0, or the
 * first error (err says which side). */
static int handshake(struct pair *p, const struct chan_identity *mine,
		     const uint8_t pin[CHAN_PK_LEN], char *err, size_t errlen)
{
	int rc = chan_client_start(&p->client, mine, pin, err, errlen);

	if (rc == 0)
		rc = chan_server_start(&p->server, &p->gpud, err, errlen);
	/* ClientHello; ServerHello..Finished; client Certificate..Finished. */
	for (int i = 0; rc == 0 && i < 4 && !(chan_is_open(&p->client) &&
					      chan_is_open(&p->server)); i++)
		rc = i % 2 == 0
			? pass(&p->client, &p->server, NULL, NULL, NULL, 1 << 20,
			       err, errlen)
			: pass(&p->server, &p->client, NULL, NULL, NULL, 1 << 20,
			       err, errlen);
	if (rc == 0 && !(chan_is_open(&p->client) && chan_is_open(&p->server)))
		rc = GERR_STATE;
	return rc;
}

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	char err[300];

	assert_int_equal(auth_init(), 0);
	chan_identity_new(&p->gpud);
	chan_identity_new(&p->worker);
	assert_int_equal(chan_identity_cert(&p->gpud, "gpud", err,
					    sizeof(err)), 0);
	assert_int_equal(chan_identity_cert(&p->worker, "w1", err,
					    sizeof(err)), 0);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	chan_clear(&p->client);
	chan_clear(&p->server);
	chan_identity_free(&p->gpud);
	chan_identity_free(&p->worker);
	free(p);
	return 0;
}

/* Seal len bytes on from, open them on to: they arrive whole and equal. */
static void round_trip(struct chan *from, struct chan *to, size_t len)
{
	uint8_t *plain = malloc(len + 1), *sealed = NULL, *got = NULL;
	size_t slen = 0, used = 0, glen = 0, gcap = 0;
	char err[300];

	for (size_t i = 0; i < len; i++)
		plain[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(chan_seal(from, plain, len, &sealed, &slen), 0);
	assert_true(slen >= len);
	assert_int_equal(chan_open(to, sealed, slen, &used, &got, &glen, &gcap,
				   1u << 30, err, sizeof(err)), 0);
	assert_int_equal(used, slen);
	assert_int_equal(glen, len);
	if (len)
		assert_memory_equal(got, plain, len);
	free(plain);
	free(sealed);
	free(got);
}

static void test_round_trip(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	uint8_t pk[CHAN_PK_LEN];
	size_t sizes[] = { 0, 1, 100, CHAN_RECORD_MAX, CHAN_RECORD_MAX + 1,
			   3 * CHAN_RECORD_MAX + 7, 1u << 20 };

	assert_int_equal(handshake(p, &p->worker, p->gpud.pk, err,
				   sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		round_trip(&p->client, &p->server, sizes[i]);
		round_trip(&p->server, &p->client, sizes[i]);
	}
	/* gpud learns the key the worker proved, and only that one. */
	assert_int_equal(chan_peer_key(&p->server, pk), 0);
	assert_memory_equal(pk, p->worker.pk, CHAN_PK_LEN);
	assert_int_equal(chan_peer_key(&p->client, pk), 0);
	assert_memory_equal(pk, p->gpud.pk, CHAN_PK_LEN);
}

/* Bytes that arrive one at a time make the same handshake and records. */
static void test_partial(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	uint8_t *out = NULL, *got = NULL, *junk = NULL;
	size_t olen = 0, glen = 0, gcap = 0, jlen = 0, jcap = 0;
	const char msg[] = "one byte at a time";

	assert_int_equal(chan_client_start(&p->client, &p->worker, p->gpud.pk,
					   err, sizeof(err)), 0);
	assert_int_equal(chan_server_start(&p->server, &p->gpud, err,
					   sizeof(err)), 0);
	for (int round = 0; round < 4 && !(chan_is_open(&p->client) &&
					   chan_is_open(&p->server)); round++) {
		struct chan *from = round % 2 ? &p->server : &p->client;
		struct chan *to = round % 2 ? &p->client : &p->server;

		chan_take_output(from, &out, &olen);
		for (size_t i = 0; i < olen; i++) {
			size_t used = 0;

			assert_int_equal(chan_open(to, out + i, 1, &used, &junk,
						   &jlen, &jcap, 1 << 20, err,
						   sizeof(err)), 0);
			assert_int_equal(used, 1);
		}
		free(out);
	}
	assert_true(chan_is_open(&p->client) && chan_is_open(&p->server));
	assert_int_equal(chan_seal(&p->client, msg, sizeof(msg), &out, &olen),
			 0);
	for (size_t i = 0; i < olen; i++) {
		size_t used = 0;

		assert_int_equal(chan_open(&p->server, out + i, 1, &used, &got,
					   &glen, &gcap, 1 << 20, err,
					   sizeof(err)), 0);
		/* Nothing of the record before it is whole. */
		assert_int_equal(glen, i + 1 < olen ? 0 : sizeof(msg));
	}
	assert_memory_equal(got, msg, sizeof(msg));
	free(out);
	free(got);
	free(junk);
}

static void test_wrong_pin(void **state)
{
	struct pair *p = *state;
	uint8_t wrong[CHAN_PK_LEN];
	char err[300] = "";

	memcpy(wrong, p->gpud.pk, sizeof(wrong));
	wrong[5] ^= 1;
	assert_int_equal(handshake(p, &p->worker, wrong, err, sizeof(err)),
			 GERR_AUTH);
	assert_non_null(strstr(err, "is not the gpud-key"));
	assert_false(chan_is_open(&p->client));
	assert_int_equal(p->client.state, CHAN_FAILED);
}

/* A fake gpud with another key cannot pass as the pinned one, and a
 * client with another key is seen as that key (the login refuses it). */
static void test_other_keys(void **state)
{
	struct pair *p = *state;
	struct chan_identity other;
	uint8_t pk[CHAN_PK_LEN];
	char err[300] = "";

	chan_identity_new(&other);
	assert_int_equal(chan_identity_cert(&other, "intruder", err,
					    sizeof(err)), 0);
	assert_int_equal(handshake(p, &other, p->gpud.pk, err, sizeof(err)),
			 0);
	assert_int_equal(chan_peer_key(&p->server, pk), 0);
	assert_memory_equal(pk, other.pk, CHAN_PK_LEN);
	assert_memory_not_equal(pk, p->worker.pk, CHAN_PK_LEN);
	chan_clear(&p->client);
	chan_clear(&p->server);

	/* gpud's place taken by other's key: the client refuses it. */
	chan_identity_free(&p->gpud);
	p->gpud = other;
	assert_int_equal(handshake(p, &p->worker, p->worker.pk, err,
				   sizeof(err)), GERR_AUTH);
	assert_non_null(strstr(err, "refusing an impostor"));
}

/* A flipped byte anywhere in a record kills the channel: nothing of it is
 * delivered, and nothing after it either. */
static void test_records_tampered(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	const char msg[] = "a result worth protecting";

	assert_int_equal(handshake(p, &p->worker, p->gpud.pk, err,
				   sizeof(err)), 0);
	for (size_t at = 0;; at += 7) {
		uint8_t *sealed = NULL, *got = NULL;
		size_t slen = 0, used = 0, glen = 0, gcap = 0;
		int rc;

		chan_clear(&p->client);
		chan_clear(&p->server);
		assert_int_equal(handshake(p, &p->worker, p->gpud.pk, err,
					   sizeof(err)), 0);
		assert_int_equal(chan_seal(&p->client, msg, sizeof(msg),
					   &sealed, &slen), 0);
		if (at >= slen) {
			free(sealed);
			break;
		}
		sealed[at] ^= 0x20;
		rc = chan_open(&p->server, sealed, slen, &used, &got, &glen,
			       &gcap, 1 << 20, err, sizeof(err));
		assert_int_not_equal(rc, 0);
		assert_int_equal(glen, 0);
		assert_int_equal(p->server.state, CHAN_FAILED);
		/* Dead: the next record, intact, is refused too. */
		free(sealed);
		assert_int_equal(chan_seal(&p->client, msg, sizeof(msg),
					   &sealed, &slen), 0);
		assert_int_not_equal(chan_open(&p->server, sealed, slen, &used,
					       &got, &glen, &gcap, 1 << 20, err,
					       sizeof(err)), 0);
		assert_int_equal(glen, 0);
		free(sealed);
		free(got);
	}
}

/* A record sent twice (replayed) is refused the second time. */
static void test_replay(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	uint8_t *sealed = NULL, *got = NULL;
	size_t slen = 0, used = 0, glen = 0, gcap = 0;

	assert_int_equal(handshake(p, &p->worker, p->gpud.pk, err,
				   sizeof(err)), 0);
	assert_int_equal(chan_seal(&p->client, "claim", 5, &sealed, &slen), 0);
	assert_int_equal(chan_open(&p->server, sealed, slen, &used, &got, &glen,
				   &gcap, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(glen, 5);
	assert_int_equal(chan_open(&p->server, sealed, slen, &used, &got, &glen,
				   &gcap, 1 << 20, err, sizeof(err)), GERR_AUTH);
	assert_int_equal(glen, 5);
	free(sealed);
	free(got);
}

/* Plaintext beyond the caller's bound is refused, not appended. */
static void test_bound(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	uint8_t *sealed = NULL, *got = NULL, *big = calloc(1, 10000);
	size_t slen = 0, used = 0, glen = 0, gcap = 0;

	assert_int_equal(handshake(p, &p->worker, p->gpud.pk, err,
				   sizeof(err)), 0);
	assert_int_equal(chan_seal(&p->client, big, 10000, &sealed, &slen), 0);
	assert_int_equal(chan_open(&p->server, sealed, slen, &used, &got, &glen,
				   &gcap, 4096, err, sizeof(err)), GERR_TOOBIG);
	assert_true(glen <= 4096);
	assert_int_equal(p->server.state, CHAN_FAILED);
	free(sealed);
	free(got);
	free(big);
}

/* Bytes that are not TLS end the handshake with a reason. */
static void test_not_tls(void **state)
{
	struct pair *p = *state;
	char err[300] = "";
	uint8_t *got = NULL;
	size_t used = 0, glen = 0, gcap = 0;
	const char junk[] = "GET / HTTP/1.0\r\n\r\n";

	assert_int_equal(chan_server_start(&p->server, &p->gpud, err,
					   sizeof(err)), 0);
	assert_int_equal(chan_open(&p->server, (const uint8_t *)junk,
				   sizeof(junk) - 1, &used, &got, &glen, &gcap,
				   1 << 20, err, sizeof(err)), GERR_AUTH);
	assert_non_null(strstr(err, "not TLS"));
	assert_int_equal(glen, 0);
	free(got);
}

static void test_identity_file(void **state)
{
	struct pair *p = *state;
	struct chan_identity rd, seeded;
	char dir[] = "/tmp/test_chan.XXXXXX", path[64], err[300];
	char *cert = NULL, *key = NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gpud.key", dir);
	assert_int_equal(chan_identity_write(path, &p->gpud, err, sizeof(err)),
			 0);
	assert_int_equal(chan_identity_read(path, &rd, err, sizeof(err)), 0);
	assert_memory_equal(rd.pk, p->gpud.pk, CHAN_PK_LEN);
	assert_memory_equal(rd.sk, p->gpud.sk, sizeof(rd.sk));
	/* The seed alone gives the same key pair. */
	chan_identity_from_seed(&seeded, p->gpud.sk);
	assert_memory_equal(seeded.pk, p->gpud.pk, CHAN_PK_LEN);
	chan_identity_free(&seeded);
	/* The PEM of the certificate and key (for HTTPS). */
	assert_int_equal(chan_identity_pem(&p->gpud, &cert, &key), 0);
	assert_non_null(strstr(cert, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(key, "BEGIN PRIVATE KEY"));
	free(cert);
	free(key);
	/* Readable by others: refused. */
	chmod(path, 0644);
	assert_int_equal(chan_identity_read(path, &rd, err, sizeof(err)),
			 GERR_PERM);
	/* Malformed: refused. */
	f = fopen(path, "w");
	fputs("gpud-key-v1 00\n", f);
	fclose(f);
	chmod(path, 0600);
	assert_int_equal(chan_identity_read(path, &rd, err, sizeof(err)),
			 GERR_INVAL);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_round_trip),
		T(test_partial),
		T(test_wrong_pin),
		T(test_other_keys),
		T(test_records_tampered),
		T(test_replay),
		T(test_bound),
		T(test_not_tls),
		T(test_identity_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

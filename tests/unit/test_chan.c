/* test_chan.c - unit tests of common/chan.c: the handshake, the pin, the
 * records (tampering, replay, reordering, limits) and the identity file. */
#define _GNU_SOURCE /* memmem */
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
	struct chan_identity id;
	struct chan client, server;
};

/* A handshake between a client pinning pin and a gpud with p->id. */
static int handshake(struct pair *p, const uint8_t pin[CHAN_PK_LEN],
		     char *err, size_t errlen)
{
	uint8_t ch[CHAN_CLIENT_HELLO_LEN], sh[CHAN_SERVER_HELLO_LEN];
	uint8_t fin[CHAN_FINISH_LEN];
	int rc;

	chan_client_start(&p->client, pin, ch);
	rc = chan_server_accept(&p->server, &p->id, ch, sh, err, errlen);
	if (rc == 0)
		rc = chan_client_finish(&p->client, sh, fin, err, errlen);
	if (rc == 0)
		rc = chan_server_finish(&p->server, fin, err, errlen);
	return rc;
}

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	assert_int_equal(auth_init(), 0);
	chan_identity_new(&p->id);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Open everything sealed; returns the chan_open code, plaintext in *out. */
static int open_all(struct chan *ch, const uint8_t *in, size_t len,
		    uint8_t **out, size_t *olen, size_t max_record)
{
	size_t cap = 0, used = 0;
	char err[200];
	int rc;

	*out = NULL;
	*olen = 0;
	rc = chan_open(ch, in, len, &used, out, olen, &cap, 1u << 30,
		       max_record, err, sizeof(err));
	if (rc == 0)
		assert_int_equal(used, len);
	return rc;
}

static void test_round_trip(void **state)
{
	struct pair *p = *state;
	char err[300];
	size_t sizes[] = { 0, 1, 100, CHAN_RECORD_MAX, CHAN_RECORD_MAX + 1,
			   3 * CHAN_RECORD_MAX + 7 };

	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *msg = malloc(sizes[i] + 1), *sealed, *got;
		size_t slen, glen;

		for (size_t k = 0; k < sizes[i]; k++)
			msg[k] = (uint8_t)(k * 7 + i);
		/* Both ways. */
		assert_int_equal(chan_seal(&p->client, msg, sizes[i], &sealed,
					   &slen), 0);
		assert_int_equal(slen, chan_sealed_size(sizes[i]));
		/* No plaintext in the sealed bytes (for a long enough run). */
		if (sizes[i] >= 100)
			assert_null(memmem(sealed, slen, msg + 10, 32));
		assert_int_equal(open_all(&p->server, sealed, slen, &got, &glen,
					  CHAN_RECORD_MAX), 0);
		assert_int_equal(glen, sizes[i]);
		assert_memory_equal(got, msg, sizes[i]);
		free(sealed);
		free(got);
		assert_int_equal(chan_seal(&p->server, msg, sizes[i], &sealed,
					   &slen), 0);
		assert_int_equal(open_all(&p->client, sealed, slen, &got, &glen,
					  CHAN_RECORD_MAX), 0);
		assert_memory_equal(got, msg, sizes[i]);
		free(sealed);
		free(got);
		free(msg);
	}
}

/* Bytes arriving one at a time open the same. */
static void test_partial(void **state)
{
	struct pair *p = *state;
	uint8_t msg[1000], *sealed, *buf = NULL;
	size_t slen, blen = 0, cap = 0, start = 0;
	char err[300];

	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	memset(msg, 'x', sizeof(msg));
	assert_int_equal(chan_seal(&p->client, msg, sizeof(msg), &sealed,
				   &slen), 0);
	for (size_t end = 1; end <= slen; end++) {
		size_t used = 0;

		assert_int_equal(chan_open(&p->server, sealed + start,
			end - start, &used, &buf, &blen, &cap, 1 << 20,
			CHAN_RECORD_MAX, err, sizeof(err)), 0);
		start += used;
	}
	assert_int_equal(start, slen);
	assert_int_equal(blen, sizeof(msg));
	assert_memory_equal(buf, msg, sizeof(msg));
	free(sealed);
	free(buf);
}

/* Another key than the pinned one: refused, with the reason. */
static void test_impostor(void **state)
{
	struct pair *p = *state;
	uint8_t pin[CHAN_PK_LEN];
	char err[300] = "";

	memcpy(pin, p->id.pk, sizeof(pin));
	pin[5] ^= 0x20;
	assert_int_equal(handshake(p, pin, err, sizeof(err)), GERR_AUTH);
	assert_non_null(strstr(err, "impostor"));
	assert_int_equal(p->client.state, CHAN_FAILED);
}

/* A flipped bit anywhere in the server's hello: the handshake fails. */
static void test_hello_tampered(void **state)
{
	struct pair *p = *state;

	for (size_t at = 0; at < CHAN_SERVER_HELLO_LEN; at += 7) {
		uint8_t ch[CHAN_CLIENT_HELLO_LEN], sh[CHAN_SERVER_HELLO_LEN];
		uint8_t fin[CHAN_FINISH_LEN];
		char err[300];
		int rc;

		chan_client_start(&p->client, p->id.pk, ch);
		assert_int_equal(chan_server_accept(&p->server, &p->id, ch, sh,
						    err, sizeof(err)), 0);
		sh[at] ^= 1;
		rc = chan_client_finish(&p->client, sh, fin, err, sizeof(err));
		if (rc == 0) {
			/* Only the stream header may change unnoticed here;
			 * then the first record fails. */
			uint8_t *sealed, *got;
			size_t slen, glen;

			assert_true(at >= CHAN_SERVER_HELLO_LEN - CHAN_FINISH_LEN);
			assert_int_equal(chan_server_finish(&p->server, fin, err,
							    sizeof(err)), 0);
			assert_int_equal(chan_seal(&p->server, "abc", 3, &sealed,
						   &slen), 0);
			assert_int_equal(open_all(&p->client, sealed, slen, &got,
						  &glen, CHAN_RECORD_MAX),
					 GERR_AUTH);
			free(sealed);
			free(got);
		}
	}
}

/* A flipped bit in any byte of a sealed stream closes the channel, and
 * nothing of the damaged record is delivered. */
static void test_records_tampered(void **state)
{
	struct pair *p = *state;
	uint8_t msg[300], *sealed, *got;
	size_t slen, glen;
	char err[300];

	memset(msg, 'q', sizeof(msg));
	for (size_t at = 0; at < chan_sealed_size(sizeof(msg)); at += 5) {
		assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
		assert_int_equal(chan_seal(&p->client, msg, sizeof(msg),
					   &sealed, &slen), 0);
		sealed[at] ^= 0x80;
		assert_int_not_equal(open_all(&p->server, sealed, slen, &got,
					      &glen, CHAN_RECORD_MAX), 0);
		assert_int_equal(glen, 0);
		/* Dead for good: even a good record is refused now. */
		free(sealed);
		free(got);
		assert_int_equal(chan_seal(&p->client, msg, 1, &sealed, &slen), 0);
		assert_int_not_equal(open_all(&p->server, sealed, slen, &got,
					      &glen, CHAN_RECORD_MAX), 0);
		free(sealed);
		free(got);
	}
}

/* A record replayed, or two swapped, do not open. */
static void test_replay(void **state)
{
	struct pair *p = *state;
	uint8_t *a, *b, *got, *two;
	size_t alen, blen, glen;
	char err[300];

	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	assert_int_equal(chan_seal(&p->client, "first", 5, &a, &alen), 0);
	assert_int_equal(chan_seal(&p->client, "later", 5, &b, &blen), 0);
	assert_int_equal(open_all(&p->server, a, alen, &got, &glen,
				  CHAN_RECORD_MAX), 0);
	free(got);
	assert_int_equal(open_all(&p->server, a, alen, &got, &glen,
				  CHAN_RECORD_MAX), GERR_AUTH);
	free(got);

	/* Swapped: b before a. */
	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	free(a);
	free(b);
	assert_int_equal(chan_seal(&p->client, "first", 5, &a, &alen), 0);
	assert_int_equal(chan_seal(&p->client, "later", 5, &b, &blen), 0);
	two = malloc(alen + blen);
	memcpy(two, b, blen);
	memcpy(two + blen, a, alen);
	assert_int_equal(open_all(&p->server, two, alen + blen, &got, &glen,
				  CHAN_RECORD_MAX), GERR_AUTH);
	free(got);
	free(two);

	/* A whole recorded session against a new handshake: the keys differ. */
	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	assert_int_equal(open_all(&p->server, a, alen, &got, &glen,
				  CHAN_RECORD_MAX), GERR_AUTH);
	free(got);
	free(a);
	free(b);
}

/* A record longer than the receiver allows is refused from its length. */
static void test_record_limit(void **state)
{
	struct pair *p = *state;
	uint8_t msg[5000] = {0}, *sealed, *got;
	size_t slen, glen;
	char err[300];

	assert_int_equal(handshake(p, p->id.pk, err, sizeof(err)), 0);
	assert_int_equal(chan_seal(&p->client, msg, sizeof(msg), &sealed,
				   &slen), 0);
	/* Only the length unit: refused before the body arrives. */
	assert_int_equal(open_all(&p->server, sealed, CHAN_LEN_UNIT, &got,
				  &glen, 4096), GERR_TOOBIG);
	free(got);
	free(sealed);
}

static void test_identity_file(void **state)
{
	struct pair *p = *state;
	struct chan_identity rd;
	char dir[] = "/tmp/test_chan.XXXXXX", path[64], err[300];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gpud.key", dir);
	assert_int_equal(chan_identity_write(path, &p->id, err, sizeof(err)), 0);
	assert_int_equal(chan_identity_read(path, &rd, err, sizeof(err)), 0);
	assert_memory_equal(rd.pk, p->id.pk, CHAN_PK_LEN);
	assert_memory_equal(rd.sk, p->id.sk, sizeof(rd.sk));
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
		T(test_impostor),
		T(test_hello_tampered),
		T(test_records_tampered),
		T(test_replay),
		T(test_record_limit),
		T(test_identity_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

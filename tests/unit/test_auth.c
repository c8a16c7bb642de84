/* test_auth.c - tokens, HMAC challenge, token files; and log line format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "gerr.h"
#include "log.h"

#define SECRET_A                                                             \
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void test_name_valid(void **state)
{
	char name[AUTH_NAME_MAX + 2];

	(void)state;
	assert_int_equal(auth_name_valid("w1"), 0);
	assert_int_equal(auth_name_valid("gpu-node_3.rack.A"), 0);
	memset(name, 'a', AUTH_NAME_MAX);
	name[AUTH_NAME_MAX] = 0;
	assert_int_equal(auth_name_valid(name), 0);
	name[AUTH_NAME_MAX] = 'a';
	name[AUTH_NAME_MAX + 1] = 0;
	assert_int_equal(auth_name_valid(name), GERR_INVAL);
	assert_int_equal(auth_name_valid(""), GERR_INVAL);
	assert_int_equal(auth_name_valid(NULL), GERR_INVAL);
	assert_int_equal(auth_name_valid("a:b"), GERR_INVAL);
	assert_int_equal(auth_name_valid("a b"), GERR_INVAL);
	assert_int_equal(auth_name_valid("a/b"), GERR_INVAL);
	assert_int_equal(auth_name_valid("a\n"), GERR_INVAL);
	assert_int_equal(auth_name_valid("\xc3\xa9"), GERR_INVAL);
}

static void test_token_round_trip(void **state)
{
	struct auth_token tok, parsed;
	char *text = NULL, *text2 = NULL;
	const char *secret;

	(void)state;
	assert_int_equal(auth_token_new("worker-1", &text, &tok), 0);
	assert_string_equal(tok.name, "worker-1");
	assert_int_equal(strncmp(text, "worker-1:", 9), 0);
	secret = text + 9;
	assert_int_equal(strlen(secret), 64);
	for (int i = 0; i < 64; i++)
		assert_true((secret[i] >= '0' && secret[i] <= '9') ||
			    (secret[i] >= 'a' && secret[i] <= 'f'));

	assert_int_equal(auth_token_parse(text, &parsed), 0);
	assert_string_equal(parsed.name, "worker-1");
	assert_memory_equal(parsed.key, tok.key, AUTH_KEY_LEN);

	/* The key is BLAKE2b-256("gpud-token-v1" || secret bytes). */
	{
		uint8_t sec[32], key[32], in[13 + 32];

		assert_int_equal(auth_unhex(secret, sec, 32), 0);
		memcpy(in, "gpud-token-v1", 13);
		memcpy(in + 13, sec, 32);
		crypto_generichash(key, 32, in, sizeof(in), NULL, 0);
		assert_memory_equal(key, tok.key, 32);
	}

	/* Two tokens differ. */
	{
		struct auth_token tok2;

		assert_int_equal(auth_token_new("worker-1", &text2, &tok2), 0);
		assert_string_not_equal(text, text2);
		assert_memory_not_equal(tok.key, tok2.key, AUTH_KEY_LEN);
	}
	free(text);
	free(text2);

	assert_int_equal(auth_token_new("bad name", &text, &tok), GERR_INVAL);
	assert_int_equal(auth_token_new(NULL, &text, &tok), GERR_INVAL);
}

static void test_token_parse(void **state)
{
	struct auth_token t, u;
	char buf[256];

	(void)state;
	assert_int_equal(auth_token_parse("w:" SECRET_A, &t), 0);
	assert_string_equal(t.name, "w");
	assert_int_equal(auth_token_parse("w:" SECRET_A "\n", &u), 0);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);
	assert_int_equal(auth_token_parse("w:" SECRET_A " \t\r\n\n", &u), 0);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);

	/* The name is not part of the key; the secret is. */
	assert_int_equal(auth_token_parse("other:" SECRET_A, &u), 0);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);

	static const char *const bad[] = {
		"",
		":",
		"w",
		"w:",
		":" SECRET_A,
		"w " SECRET_A,
		"w:" SECRET_A "0",       /* 65 digits */
		"w:" SECRET_A "x",       /* junk after */
		"w:" SECRET_A " x",      /* junk after whitespace */
		"w::" SECRET_A,
		"w:x0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"w:0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"w/x:" SECRET_A,
	};
	memset(&u, 0x5a, sizeof(u));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(auth_token_parse(bad[i], &u), GERR_INVAL);
	/* ret_tok untouched on failure. */
	for (size_t i = 0; i < sizeof(u.name); i++)
		assert_int_equal((unsigned char)u.name[i], 0x5a);
	assert_int_equal(auth_token_parse(NULL, &u), GERR_INVAL);

	/* Name of exactly 64 characters is fine, 65 is not. */
	memset(buf, 'n', 64);
	snprintf(buf + 64, sizeof(buf) - 64, ":%s", SECRET_A);
	assert_int_equal(auth_token_parse(buf, &u), 0);
	assert_int_equal(strlen(u.name), 64);
	memset(buf, 'n', 65);
	snprintf(buf + 65, sizeof(buf) - 65, ":%s", SECRET_A);
	assert_int_equal(auth_token_parse(buf, &u), GERR_INVAL);
}

#define KEY_HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A credential file: the token, gpud's key, comments; and what is not. */
static void test_credential(void **state)
{
	struct auth_token t, u;
	uint8_t key[AUTH_KEY_LEN];
	char *text;

	(void)state;
	assert_int_equal(auth_token_parse("# gpud credential\n\n token = w:"
		SECRET_A "\ngpud-key=" KEY_HEX "\n", &t), 0);
	assert_string_equal(t.name, "w");
	assert_true(t.has_gpud_key);
	assert_int_equal(auth_unhex(KEY_HEX, key, sizeof(key)), 0);
	assert_memory_equal(t.gpud_key, key, AUTH_KEY_LEN);
	assert_int_equal(auth_token_parse("w:" SECRET_A, &u), 0);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);
	assert_false(u.has_gpud_key);

	static const char *const bad[] = {
		"gpud-key = " KEY_HEX "\n",                     /* no token */
		"token = w:" SECRET_A "\ntoken = w:" SECRET_A,  /* twice */
		"w:" SECRET_A "\nw:" SECRET_A,
		("token = w:" SECRET_A "\ngpud-key = " KEY_HEX "\ngpud-key = "
			KEY_HEX),
		"token = w:" SECRET_A "\ngpud-key = 00",          /* short key */
		"token = w:" SECRET_A "\nrole = admin",           /* unknown */
		"tokens = w:" SECRET_A,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(auth_token_parse(bad[i], &u), GERR_INVAL);

	/* The credential text of a token, or of a credential (rekeyed). */
	text = auth_credential_text("w:" SECRET_A "\n", key);
	assert_non_null(text);
	assert_int_equal(auth_token_parse(text, &u), 0);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);
	assert_memory_equal(u.gpud_key, key, AUTH_KEY_LEN);
	free(text);
	key[0] ^= 1;
	text = auth_credential_text("# c\ngpud-key = " KEY_HEX "\ntoken = w:"
				    SECRET_A "\n", key);
	assert_non_null(text);
	assert_int_equal(auth_token_parse(text, &u), 0);
	assert_memory_equal(u.gpud_key, key, AUTH_KEY_LEN);
	assert_memory_equal(t.key, u.key, AUTH_KEY_LEN);
	free(text);
	assert_null(auth_credential_text("w:", key));
}

static void test_roles(void **state)
{
	(void)state;
	for (int r = AUTH_ROLE_WORKER; r <= AUTH_ROLE_ADMIN; r++)
		assert_int_equal(auth_role_parse(auth_role_name(r)), r);
	assert_null(auth_role_name(0));
	assert_null(auth_role_name(AUTH_ROLE_ADMIN + 1));
	assert_int_equal(auth_role_parse("root"), 0);
	assert_int_equal(auth_role_parse(NULL), 0);
}

static void test_mac(void **state)
{
	struct auth_token t;
	uint8_t nonce[AUTH_NONCE_LEN], mac[AUTH_MAC_LEN], mac2[AUTH_MAC_LEN];

	(void)state;
	assert_int_equal(auth_token_parse("w1:" SECRET_A, &t), 0);
	auth_random(nonce, sizeof(nonce));
	auth_proof(t.key, nonce, "w1", mac);
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac), 0);

	/* stored = BLAKE2b(client key); proof = client key XOR
	 * HMAC-SHA256(stored, nonce || name). */
	{
		uint8_t msg[AUTH_NONCE_LEN + 2], h[32];

		crypto_generichash(h, 32, t.key, AUTH_KEY_LEN, NULL, 0);
		assert_memory_equal(h, t.stored, 32);
		memcpy(msg, nonce, AUTH_NONCE_LEN);
		memcpy(msg + AUTH_NONCE_LEN, "w1", 2);
		crypto_auth_hmacsha256(mac2, msg, sizeof(msg), t.stored);
		for (int i = 0; i < AUTH_MAC_LEN; i++)
			mac2[i] ^= t.key[i];
		assert_memory_equal(mac, mac2, AUTH_MAC_LEN);
	}
	/* What gpud stores does not log in: a proof made from the stored key
	 * (as a database thief would) is refused. */
	auth_proof(t.stored, nonce, "w1", mac2);
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac2), GERR_AUTH);

	/* Every single-bit change in the proof is refused. */
	for (int i = 0; i < AUTH_MAC_LEN * 8; i++) {
		memcpy(mac2, mac, AUTH_MAC_LEN);
		mac2[i / 8] ^= (uint8_t)(1u << (i % 8));
		assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac2),
				 GERR_AUTH);
	}
	/* Other name, nonce or key. */
	assert_int_equal(auth_proof_check(t.stored, nonce, "w2", mac), GERR_AUTH);
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1x", mac), GERR_AUTH);
	nonce[0] ^= 1;
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac), GERR_AUTH);
	nonce[0] ^= 1;
	t.stored[31] ^= 0x80;
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac), GERR_AUTH);
	t.stored[31] ^= 0x80;
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", mac), 0);
	/* Bad arguments are a failed check, not a crash. */
	assert_int_equal(auth_proof_check(t.stored, nonce, NULL, mac), GERR_AUTH);
	assert_int_equal(auth_proof_check(t.stored, nonce, "w1", NULL), GERR_AUTH);
	assert_int_equal(auth_proof_check(t.stored, nonce, "bad name", mac),
			 GERR_AUTH);
}

static void test_hex(void **state)
{
	uint8_t bin[4] = { 0x00, 0xab, 0xCD, 0xff }, back[4];
	char hex[9];

	(void)state;
	auth_hex(bin, 4, hex);
	assert_string_equal(hex, "00abcdff");
	assert_int_equal(auth_unhex(hex, back, 4), 0);
	assert_memory_equal(back, bin, 4);
	assert_int_equal(auth_unhex("00ABCDFF", back, 4), 0);
	assert_memory_equal(back, bin, 4);
	assert_int_equal(auth_unhex("00abcdf", back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex("00abcdff0", back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex("00abcdfg", back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex("00ab cdf", back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex("", back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex(NULL, back, 4), GERR_INVAL);
	assert_int_equal(auth_unhex("", back, 0), 0);
}

/* ---- token files ---- */

static int setup_dir(void **state)
{
	char *p = malloc(64);

	snprintf(p, 64, "/tmp/gpud-test-auth-XXXXXX");
	if (!mkdtemp(p))
		return -1;
	*state = p;
	return 0;
}

static int teardown_dir(void **state)
{
	char *p = *state, sub[512];
	DIR *d = opendir(p);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", p, e->d_name);
		unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(p);
	free(p);
	return 0;
}

static void write_raw(const char *path, const void *data, size_t len,
		      mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

static void test_file_round_trip(void **state)
{
	const char *dir = *state;
	char path[256], err[256], buf[256];
	struct auth_token tok, rd;
	struct stat st;
	char *text;
	FILE *f;

	snprintf(path, sizeof(path), "%s/token", dir);
	assert_int_equal(auth_token_new("node7", &text, &tok), 0);
	assert_int_equal(auth_token_write_file(path, text), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(count_entries(dir), 1); /* no temp left over */

	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(strlen(buf), strlen(text) + 1);
	assert_int_equal(strncmp(buf, text, strlen(text)), 0);
	assert_int_equal(buf[strlen(text)], '\n');

	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
	assert_string_equal(rd.name, "node7");
	assert_memory_equal(rd.key, tok.key, AUTH_KEY_LEN);

	/* Overwrite with a new token (trailing whitespace normalised). */
	free(text);
	assert_int_equal(auth_token_new("node7", &text, &tok), 0);
	text = realloc(text, strlen(text) + 4);
	strcat(text, " \n\n");
	assert_int_equal(auth_token_write_file(path, text), 0);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
	assert_memory_equal(rd.key, tok.key, AUTH_KEY_LEN);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 6 + 64 + 1);
	free(text);

	/* Malformed text is never written. */
	assert_int_equal(auth_token_write_file(path, "garbage"), GERR_INVAL);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
}

static void test_file_refusals(void **state)
{
	const char *dir = *state;
	char path[256], err[256];
	struct auth_token rd;
	static const char good[] = "w:" SECRET_A "\n";

	snprintf(path, sizeof(path), "%s/token", dir);

	/* Group- or world-accessible files are refused with advice. */
	static const mode_t modes[] = { 0640, 0604, 0660, 0644, 0601, 0610,
					0620, 0602, 0777 };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		write_raw(path, good, strlen(good), modes[i]);
		err[0] = 0;
		assert_int_equal(auth_token_read_file(path, &rd, err,
						      sizeof(err)),
				 GERR_PERM);
		assert_non_null(strstr(err, "chmod 600"));
	}
	write_raw(path, good, strlen(good), 0400);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
	write_raw(path, good, strlen(good), 0600);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);

	/* Missing. */
	unlink(path);
	err[0] = 0;
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)),
			 GERR_NOTFOUND);
	assert_non_null(strstr(err, path));

	/* Malformed. */
	write_raw(path, "w:nothex\n", 9, 0600);
	err[0] = 0;
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)),
			 GERR_INVAL);
	assert_non_null(strstr(err, "malformed"));
	write_raw(path, "", 0, 0600);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)),
			 GERR_INVAL);

	/* NUL byte hiding junk after a valid token. */
	{
		char nul[sizeof(good) + 4];

		memcpy(nul, good, sizeof(good) - 1);
		memcpy(nul + sizeof(good) - 1, "\0xyz", 4);
		write_raw(path, nul, sizeof(nul) - 1, 0600);
		assert_int_equal(auth_token_read_file(path, &rd, err,
						      sizeof(err)),
				 GERR_INVAL);
	}

	/* Size limit: 4096 bytes are read (then parsed), 4097 refused. */
	{
		char *big = malloc(4097);

		memcpy(big, good, strlen(good));
		memset(big + strlen(good), '\n', 4097 - strlen(good));
		write_raw(path, big, 4096, 0600);
		assert_int_equal(auth_token_read_file(path, &rd, err,
						      sizeof(err)),
				 0);
		write_raw(path, big, 4097, 0600);
		assert_int_equal(auth_token_read_file(path, &rd, err,
						      sizeof(err)),
				 GERR_TOOBIG);
		free(big);
	}

	/* A directory is not a token file. */
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)),
			 GERR_INVAL);
	rmdir(path);
	assert_int_equal(auth_token_read_file(NULL, &rd, err, sizeof(err)),
			 GERR_INVAL);
	/* err may be NULL. */
	assert_int_equal(auth_token_read_file(path, &rd, NULL, 0),
			 GERR_NOTFOUND);
}

/* ---- log line format (log.c has no test file of its own) ---- */

static void test_log_line(void **state)
{
	struct glog lgv = { .prog = "gpud", .level = GLOG_INFO };
	/* Through a pointer, as callers hold it (GLOG(&local) warns under
	 * -Waddress because the macro tests the pointer for NULL). */
	const struct glog *lg = &lgv;
	char tmpl[] = "/tmp/gpud-test-log-XXXXXX", buf[8192];
	int fd = mkstemp(tmpl), saved = dup(2);
	ssize_t n;
	char *nl, *second;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	unlink(tmpl);
	assert_true(dup2(fd, 2) >= 0);
	errno = 1234;
	LOG_INFO(lg, "lease claim job=%d lease=%d", 1, 4);
	assert_int_equal(errno, 1234);
	LOG_DEBUG(lg, "filtered %d", 1);
	LOG_ERROR(lg, "evil\ninjected line\r");
	{
		char *huge = malloc(10000);

		memset(huge, 'x', 9999);
		huge[9999] = 0;
		LOG_WARN(lg, "%s", huge);
		free(huge);
	}
	dup2(saved, 2);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = 0;

	/* 2026-11-21T10:00:00.123Z gpud info lease claim job=1 lease=4 */
	assert_true(strlen(buf) > 25);
	for (int i = 0; i < 24; i++) {
		const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";

		if (shape[i] == 'd')
			assert_true(buf[i] >= '0' && buf[i] <= '9');
		else
			assert_int_equal(buf[i], shape[i]);
	}
	nl = strchr(buf, '\n');
	assert_non_null(nl);
	*nl = 0;
	assert_string_equal(buf + 24, " gpud info lease claim job=1 lease=4");
	second = nl + 1;
	nl = strchr(second, '\n');
	assert_non_null(nl);
	*nl = 0;
	assert_string_equal(second + 24, " gpud error evil injected line ");
	second = nl + 1;
	nl = strchr(second, '\n');
	assert_non_null(nl);
	assert_non_null(strstr(second, " gpud warn xxxx"));
	assert_true(nl - second < 4096);
	assert_memory_equal(nl - 3, "...", 3);
	assert_int_equal(nl[1], 0); /* exactly three lines, debug filtered */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_token_round_trip),
		cmocka_unit_test(test_token_parse),
		cmocka_unit_test(test_credential),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_hex),
		cmocka_unit_test_setup_teardown(test_file_round_trip, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_file_refusals, setup_dir,
						teardown_dir),
		cmocka_unit_test(test_log_line),
	};

	if (auth_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

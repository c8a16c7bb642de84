/* test_auth.c - credentials (key pairs), their files, the old kind's
 * refusal, roles; and log line format. */
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

#define SEED_A                                                               \
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define KEY_HEX                                                              \
	"3f9c00112233445566778899aabbccddeeff00112233445566778899aabbccdd"
#define GOOD "name = w\nkey = " SEED_A "\ngpud-key = " KEY_HEX "\n"

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
	struct auth_token tok, tok2, parsed;
	uint8_t pin[AUTH_KEY_LEN], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	char *text;

	(void)state;
	memset(pin, 0x5a, sizeof(pin));
	assert_int_equal(auth_token_new("worker-1", &tok), 0);
	assert_string_equal(tok.name, "worker-1");
	/* pk is the seed's Ed25519 public key. */
	crypto_sign_seed_keypair(pk, sk, tok.seed);
	assert_memory_equal(pk, tok.pk, AUTH_KEY_LEN);
	/* Two key pairs differ. */
	assert_int_equal(auth_token_new("worker-1", &tok2), 0);
	assert_memory_not_equal(tok.seed, tok2.seed, AUTH_KEY_LEN);
	assert_memory_not_equal(tok.pk, tok2.pk, AUTH_KEY_LEN);

	/* The credential's text gives the same keys back. */
	text = auth_credential_text(&tok, pin);
	assert_non_null(text);
	assert_non_null(strstr(text, "name = worker-1\n"));
	assert_int_equal(auth_token_parse(text, &parsed), 0);
	assert_string_equal(parsed.name, "worker-1");
	assert_memory_equal(parsed.seed, tok.seed, AUTH_KEY_LEN);
	assert_memory_equal(parsed.pk, tok.pk, AUTH_KEY_LEN);
	assert_true(parsed.has_gpud_key);
	assert_memory_equal(parsed.gpud_key, pin, AUTH_KEY_LEN);
	free(text);
	/* Without a pin (token keygen): no gpud-key line. */
	text = auth_credential_text(&tok, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "gpud-key"));
	assert_int_equal(auth_token_parse(text, &parsed), 0);
	assert_false(parsed.has_gpud_key);
	free(text);

	assert_int_equal(auth_token_new("bad name", &tok), GERR_INVAL);
	assert_int_equal(auth_token_new(NULL, &tok), GERR_INVAL);
}

static void test_token_parse(void **state)
{
	struct auth_token tok;

	(void)state;
	assert_int_equal(auth_token_parse(GOOD, &tok), 0);
	assert_string_equal(tok.name, "w");
	assert_int_equal(auth_token_parse("# c\n  name=w \n\tkey =" SEED_A
					  "\r\n", &tok), 0);
	assert_false(tok.has_gpud_key);
	/* Missing or repeated parts, bad values, unknown keys. */
	assert_int_equal(auth_token_parse("", &tok), GERR_INVAL);
	assert_int_equal(auth_token_parse("name = w\n", &tok), GERR_INVAL);
	assert_int_equal(auth_token_parse("key = " SEED_A "\n", &tok),
			 GERR_INVAL);
	assert_int_equal(auth_token_parse(GOOD "name = v\n", &tok), GERR_INVAL);
	assert_int_equal(auth_token_parse(GOOD "key = " SEED_A "\n", &tok),
			 GERR_INVAL);
	assert_int_equal(auth_token_parse(GOOD "gpud-key = " KEY_HEX "\n",
					  &tok), GERR_INVAL);
	assert_int_equal(auth_token_parse("name = w\nkey = 00\n", &tok),
			 GERR_INVAL);
	assert_int_equal(auth_token_parse("name = a b\nkey = " SEED_A "\n",
					  &tok), GERR_INVAL);
	assert_int_equal(auth_token_parse(GOOD "color = red\n", &tok),
			 GERR_INVAL);
	assert_int_equal(auth_token_parse(NULL, &tok), GERR_INVAL);
	/* The old kind: a shared secret, bare or on a token line. */
	assert_int_equal(auth_token_parse("w:" SEED_A "\n", &tok),
			 GERR_UNSUPPORTED);
	assert_int_equal(auth_token_parse("token = w:" SEED_A "\ngpud-key = "
					  KEY_HEX "\n", &tok), GERR_UNSUPPORTED);
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
	char path[256], err[600], *text;
	struct auth_token tok, rd;
	struct stat st;

	snprintf(path, sizeof(path), "%s/token", dir);
	assert_int_equal(auth_token_new("node7", &tok), 0);
	text = auth_credential_text(&tok, tok.pk);
	assert_int_equal(auth_token_write_file(path, text), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(count_entries(dir), 1); /* no temp left over */
	assert_int_equal(st.st_size, (off_t)strlen(text));

	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
	assert_string_equal(rd.name, "node7");
	assert_memory_equal(rd.seed, tok.seed, AUTH_KEY_LEN);
	assert_memory_equal(rd.pk, tok.pk, AUTH_KEY_LEN);

	/* Trailing whitespace normalised to one newline. */
	text = realloc(text, strlen(text) + 4);
	strcat(text, " \n\n");
	assert_int_equal(auth_token_write_file(path, text), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, (off_t)strlen(text) - 3);
	free(text);

	/* Malformed text is never written. */
	assert_int_equal(auth_token_write_file(path, "garbage"), GERR_INVAL);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)), 0);
	/* The old kind is read as refused, saying how to make a new one. */
	write_raw(path, "token = w:" SEED_A "\n", 75, 0600);
	assert_int_equal(auth_token_read_file(path, &rd, err, sizeof(err)),
			 GERR_UNSUPPORTED);
	assert_non_null(strstr(err, "old kind"));
	assert_non_null(strstr(err, "gpuctl token add"));
}

static void test_file_refusals(void **state)
{
	const char *dir = *state;
	char path[256], err[600];
	struct auth_token rd;
	static const char good[] = GOOD;

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
	write_raw(path, "name = w\nkey = nothex\n", 22, 0600);
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
		cmocka_unit_test(test_roles),
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

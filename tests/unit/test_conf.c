/* test_conf.c - the settings table: values of every type, the file's
 * syntax and bounds, errors with their line, the command line over the
 * file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "gerr.h"
#include "log.h"
#include "unit_main.h"

struct pair {
	int a, b;
};

struct s {
	char path[16];
	double secs;
	uint64_t n;
	int on;
	enum glog_level level;
	struct pair pair;
	int once;
};

/* "A/B", two small integers. */
static int parse_pair(const char *s, void *field, char *err, size_t errlen)
{
	struct pair *p = field;
	int a, b, n = 0;

	gerr_printf(err, errlen, "A/B");
	if (sscanf(s, "%3d/%3d%n", &a, &b, &n) != 2 || s[n])
		return GERR_INVAL;
	p->a = a;
	p->b = b;
	return 0;
}

static void show_pair(const void *field, char *buf, size_t len)
{
	const struct pair *p = field;

	snprintf(buf, len, "%d/%d", p->a, p->b);
}

#define F(m) offsetof(struct s, m)
static const struct conf_key keys[] = {
	{ "path", CONF_STR, 0, F(path), 16, 0, 0, "PATH", "a path", NULL, NULL },
	{ "secs", CONF_DOUBLE, CONF_RUNTIME, F(secs), 0, 0.5, 10, "SECONDS", "s",
	  NULL, NULL },
	{ "n", CONF_INT, 0, F(n), 0, 1, 1000, "N", "n", NULL, NULL },
	{ "on", CONF_BOOL, 0, F(on), 0, 0, 0, NULL, "a switch", NULL, NULL },
	{ "level", CONF_LEVEL, 0, F(level), 0, 0, 0, "LEVEL", "l", NULL, NULL },
	{ "pair", CONF_CUSTOM, 0, F(pair), sizeof(struct pair), 0, 0, "A/B",
	  "p", parse_pair, show_pair },
	{ "once", CONF_BOOL, CONF_CLI_ONLY, F(once), 0, 0, 0, NULL, "an action",
	  NULL, NULL },
};
static const struct conf_table table = {
	.prog = "t", .usage = "usage: t", .default_path = "/nonexistent/t.conf",
	.keys = keys, .n = sizeof(keys) / sizeof(keys[0]),
};

static void defaults(struct s *s)
{
	memset(s, 0, sizeof(*s));
	s->secs = 1;
	s->n = 7;
	s->level = GLOG_INFO;
}

/* A file with text; the path is written to path (PATH_MAX-free size). */
static void write_file(char *path, size_t len, const char *text, size_t n)
{
	int fd;

	snprintf(path, len, "/tmp/test_conf_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

static int load_text(const char *text, struct s *s, char *err, size_t errlen)
{
	char path[64];
	int rc;

	write_file(path, sizeof(path), text, strlen(text));
	defaults(s);
	rc = conf_load_file(&table, path, s, err, errlen);
	unlink(path);
	return rc;
}

static void test_values_round_trip(void **state)
{
	struct s a, b;
	char v[CONF_SHOW_MAX], err[256];
	static const char *const text[] = { "/var/x", "0.75", "1000", "yes",
					    "debug", "3/-4" };

	(void)state;
	defaults(&a);
	defaults(&b);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(conf_set(&keys[i], &a, text[i], err, sizeof(err)), 0);
		conf_show(&keys[i], &a, v, sizeof(v));
		assert_string_equal(v, text[i]);
		assert_false(conf_same(&keys[i], &a, &b));
		conf_copy(&keys[i], &b, &a);
		assert_true(conf_same(&keys[i], &a, &b));
	}
	assert_string_equal(a.path, "/var/x");
	assert_true(a.secs == 0.75 && a.n == 1000 && a.on == 1);
	assert_int_equal(a.level, GLOG_DEBUG);
	assert_int_equal(a.pair.a, 3);
	assert_int_equal(a.pair.b, -4);
	/* A double that needs all its digits reads back the same. */
	assert_int_equal(conf_set(&keys[1], &a, "1.0000000000000002", err,
				  sizeof(err)), 0);
	conf_show(&keys[1], &a, v, sizeof(v));
	assert_true(strtod(v, NULL) == a.secs);
	assert_int_equal(conf_set(&keys[3], &a, "off", err, sizeof(err)), 0);
	assert_int_equal(a.on, 0);
}

static void test_bad_values(void **state)
{
	struct s a;
	char err[256];
	static const struct {
		int key;
		const char *val, *msg;
	} bad[] = {
		{ 0, "0123456789abcdef", "path wants PATH of at most 15 bytes" },
		{ 0, "a\tb", "path wants PATH" },
		{ 1, "0.25", "secs wants SECONDS in 0.5..10, got '0.25'" },
		{ 1, "11", "in 0.5..10" },
		{ 1, "-1", "in 0.5..10" },
		{ 1, "nan", "in 0.5..10" },
		{ 1, "1e999", "in 0.5..10" },
		{ 1, "2 s", "got '2 s'" },
		{ 2, "0", "n wants an integer in 1..1000" },
		{ 2, "1.5", "an integer" },
		{ 2, "99999999999999999999999", "an integer" },
		{ 2, "0x10", "an integer" },
		{ 3, "maybe", "on wants yes or no" },
		{ 4, "loud", "level wants error, warn, info or debug" },
		{ 5, "3", "pair wants A/B, got '3'" },
		{ 2, "", "n wants a value" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		defaults(&a);
		assert_int_equal(conf_set(&keys[bad[i].key], &a, bad[i].val, err,
					  sizeof(err)), GERR_INVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': got '%s', want '%s'", bad[i].val, err,
				 bad[i].msg);
		/* A refused value leaves the field as it was. */
		assert_true(a.secs == 1 && a.n == 7 && a.path[0] == '\0');
	}
}

static void test_file(void **state)
{
	struct s a;
	char err[256];

	(void)state;
	assert_int_equal(load_text("# a comment\n\n  path = /srv/d  \n"
				   "secs=2.5\r\n\t# indented comment\n"
				   "pair = 1/2\non = no\nlevel = warn", &a, err,
				   sizeof(err)), 0);
	assert_string_equal(a.path, "/srv/d");
	assert_true(a.secs == 2.5 && a.on == 0);
	assert_int_equal(a.level, GLOG_WARN);
	assert_int_equal(a.pair.b, 2);
	assert_true(a.n == 7); /* not in the file: the default stays */
	assert_int_equal(load_text("", &a, err, sizeof(err)), 0);
	/* A '#' after a value is part of the value. */
	assert_int_equal(load_text("path = a#b\n", &a, err, sizeof(err)), 0);
	assert_string_equal(a.path, "a#b");
}

static void test_file_errors(void **state)
{
	struct s a;
	char err[300], line[CONF_LINE_MAX + 40];
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "secs = 2\nbogus = 1\n", ":2: unknown key 'bogus'" },
		{ "\n\n\nsecs = 20\n", ":4: secs wants SECONDS in 0.5..10, got '20'" },
		{ "n = 5\nn = 6\n", ":2: n set again (first on line 1)" },
		{ "# c\npath /x\n", ":2: expected 'key = value'" },
		{ "once = yes\n", ":1: unknown key 'once' (a command-line option only)" },
		{ "path =\n", ":1: path wants a value" },
		{ " = 3\n", ":1: unknown key ''" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load_text(bad[i].text, &a, err, sizeof(err)),
				 GERR_INVAL);
		if (!strstr(err, bad[i].msg) || strncmp(err, "/tmp/test_conf_", 15))
			fail_msg("got '%s', want FILE%s", err, bad[i].msg);
	}
	/* The longest line passes, one byte more is refused by its number. */
	memset(line, ' ', sizeof(line));
	memcpy(line, "path = x", 8);
	line[CONF_LINE_MAX] = '\n';
	line[CONF_LINE_MAX + 1] = '\0';
	assert_int_equal(load_text(line, &a, err, sizeof(err)), 0);
	memset(line, ' ', sizeof(line));
	line[0] = '\n';
	memcpy(line + 2, "path = x", 8);
	line[CONF_LINE_MAX + 2] = '\n'; /* line 2 is CONF_LINE_MAX + 1 bytes */
	line[CONF_LINE_MAX + 3] = '\0';
	assert_int_equal(load_text(line, &a, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, ":2: line longer than 1024 bytes"));
}

static void test_file_bounds(void **state)
{
	struct s a;
	char path[64], err[300], *big;

	(void)state;
	/* A NUL byte: not text. */
	write_file(path, sizeof(path), "n = 5\n\0n = 6\n", 13);
	defaults(&a);
	assert_int_equal(conf_load_file(&table, path, &a, err, sizeof(err)),
			 GERR_INVAL);
	assert_non_null(strstr(err, "NUL byte"));
	unlink(path);
	/* Comments up to the bound are fine; a byte more is refused whole. */
	big = malloc(CONF_FILE_MAX + 1);
	assert_non_null(big);
	memset(big, '#', CONF_FILE_MAX + 1);
	for (size_t i = 1000; i < CONF_FILE_MAX; i += 1000)
		big[i] = '\n';
	write_file(path, sizeof(path), big, CONF_FILE_MAX);
	assert_int_equal(conf_load_file(&table, path, &a, err, sizeof(err)), 0);
	unlink(path);
	write_file(path, sizeof(path), big, CONF_FILE_MAX + 1);
	assert_int_equal(conf_load_file(&table, path, &a, err, sizeof(err)),
			 GERR_TOOBIG);
	assert_non_null(strstr(err, "larger than 65536 bytes"));
	unlink(path);
	free(big);
	/* Missing: GERR_NOTFOUND, with the path. */
	assert_int_equal(conf_load_file(&table, "/nonexistent/x.conf", &a, err,
					sizeof(err)), GERR_NOTFOUND);
	assert_non_null(strstr(err, "/nonexistent/x.conf"));
	/* A directory is not a configuration file. */
	assert_int_equal(conf_load_file(&table, "/tmp", &a, err, sizeof(err)),
			 GERR_INVAL);
	assert_non_null(strstr(err, "not a regular file (a directory)"));
	/* Nor a FIFO: refused at once, never waiting for a writer. */
	{
		char dir[40] = "/tmp/test_conf.XXXXXX";

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/fifo.conf", dir);
		assert_int_equal(mkfifo(path, 0600), 0);
		assert_int_equal(conf_load_file(&table, path, &a, err,
						sizeof(err)), GERR_INVAL);
		assert_non_null(strstr(err, "not a regular file (a FIFO)"));
		unlink(path);
		rmdir(dir);
	}
	/* /dev/null stands for no file; another device does not. */
	defaults(&a);
	assert_int_equal(conf_load_file(&table, "/dev/null", &a, err,
					sizeof(err)), 0);
	assert_int_equal(conf_load_file(&table, "/dev/zero", &a, err,
					sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "(a device)"));
}

static void test_args_over_file(void **state)
{
	struct s def, cli, out;
	struct conf_args args;
	char path[64], err[256], cfg[80];
	const char *text = "secs = 2\nn = 9\npath = /from/file\n";

	(void)state;
	write_file(path, sizeof(path), text, strlen(text));
	snprintf(cfg, sizeof(cfg), "--config=%s", path);
	char *argv[] = { "t", "--secs", "3", "--on", cfg, "--once", "--check-config",
			 NULL };
	defaults(&def);
	cli = def;
	assert_int_equal(conf_parse_args(&table, 7, argv, &cli, &args, err,
					 sizeof(err)), 0);
	assert_true(args.given[1] && args.given[3] && args.given[6]);
	assert_false(args.given[0] || args.given[2]);
	assert_true(args.check && !args.help && !args.version);
	assert_string_equal(args.config, path);
	assert_int_equal(conf_load(&table, &args, &def, &cli, &out, sizeof(out),
				   err, sizeof(err)), 1);
	assert_true(out.secs == 3); /* the flag wins */
	assert_true(out.n == 9);    /* the file's */
	assert_string_equal(out.path, "/from/file");
	assert_true(out.on == 1 && out.once == 1);
	assert_true(out.level == GLOG_INFO); /* the default */
	unlink(path);
	/* Now --config names a missing file: an error. */
	assert_int_equal(conf_load(&table, &args, &def, &cli, &out, sizeof(out),
				   err, sizeof(err)), GERR_NOTFOUND);
	/* Without --config the default path may be missing. */
	args.config = NULL;
	assert_int_equal(conf_load(&table, &args, &def, &cli, &out, sizeof(out),
				   err, sizeof(err)), 0);
	assert_true(out.secs == 3 && out.n == 7);
}

static void test_args_errors(void **state)
{
	struct s cli;
	struct conf_args args;
	char err[256];
	char *a1[] = { "t", "--secs", "99", NULL };
	char *a2[] = { "t", "--bogus", NULL };
	char *a3[] = { "t", "--n", NULL };
	char *a4[] = { "t", "stray", NULL };
	char *a5[] = { "t", "--on=yes", NULL };

	(void)state;
	defaults(&cli);
	assert_int_equal(conf_parse_args(&table, 3, a1, &cli, &args, err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(err, "--secs wants SECONDS in 0.5..10, got '99'");
	assert_int_equal(conf_parse_args(&table, 2, a2, &cli, &args, err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(conf_parse_args(&table, 2, a3, &cli, &args, err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(err, "option --n needs a value");
	assert_int_equal(conf_parse_args(&table, 2, a4, &cli, &args, err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(err, "unexpected argument 'stray'");
	assert_int_equal(conf_parse_args(&table, 2, a5, &cli, &args, err, sizeof(err)),
			 GERR_INVAL);
}

static void test_print_and_usage(void **state)
{
	struct s a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	defaults(&a);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	conf_print(&table, &a, f);
	fclose(f);
	assert_string_equal(buf, "path = \nsecs = 1\nn = 7\non = no\n"
			    "level = info\npair = 0/0\n");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	conf_usage(&table, f);
	fclose(f);
	for (size_t i = 0; i < table.n; i++) {
		char opt[40];
		snprintf(opt, sizeof(opt), "--%s", keys[i].name);
		assert_non_null(strstr(buf, opt));
	}
	assert_non_null(strstr(buf, "--secs SECONDS"));
	assert_non_null(strstr(buf, "/nonexistent/t.conf"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	struct conf_args args = { .config = "/etc/x.conf" };
	conf_print_source(&table, &args, 1, f);
	args.config = NULL;
	conf_print_source(&table, &args, 0, f);
	fclose(f);
	assert_string_equal(buf, "# t settings: the defaults, /etc/x.conf, then the "
			    "command line\n# t settings: the defaults, (no "
			    "/nonexistent/t.conf), then the command line\n");
	free(buf);
	assert_int_equal(conf_find(&table, "pair"), 5);
	assert_int_equal(conf_find(&table, "nope"), -1);
}

UNIT_MAIN(cmocka_unit_test(test_values_round_trip),
	cmocka_unit_test(test_bad_values),
	cmocka_unit_test(test_file),
	cmocka_unit_test(test_file_errors),
	cmocka_unit_test(test_file_bounds),
	cmocka_unit_test(test_args_over_file),
	cmocka_unit_test(test_args_errors),
	cmocka_unit_test(test_print_and_usage))

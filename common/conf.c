/* conf.c - settings from the command line and a configuration file, one
 * table for both (see conf.h). */
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gerr.h"
#include "log.h"

/* getopt_long values: the generic options, then key i as OPT_KEY + i. */
enum { OPT_CONFIG = 1, OPT_CHECK, OPT_HELP, OPT_VERSION, OPT_KEY = 0x100 };

static size_t field_size(const struct conf_key *k)
{
	switch (k->type) {
	case CONF_DOUBLE:
		return sizeof(double);
	case CONF_INT:
		return sizeof(uint64_t);
	case CONF_BOOL:
		return sizeof(int);
	case CONF_LEVEL:
		return sizeof(enum glog_level);
	case CONF_STR:
	case CONF_CUSTOM:
		return k->size;
	}
	return 0;
}

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* A bounded quote of the value for messages. */
static const char *quote(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);

	if (n < len) {
		memcpy(buf, s, n + 1);
	} else {
		memcpy(buf, s, len - 4);
		memcpy(buf + len - 4, "...", 4);
	}
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return buf;
}

static int parse_number(const struct conf_key *k, const char *s, double *ret)
{
	char *end;
	double v;

	/* No sign, no blanks, no hex or inf: digits first. */
	if (*s < '0' || *s > '9')
		return GERR_INVAL;
	errno = 0;
	if (k->type == CONF_INT) {
		unsigned long long u = strtoull(s, &end, 10);
		v = (double)u;
	} else {
		v = strtod(s, &end);
	}
	if (errno || *end || !isfinite(v) || v < k->min || v > k->max)
		return GERR_INVAL;
	*ret = v;
	return 0;
}

static int parse_bool(const char *s, int *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*ret = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*ret = 0;
			return 0;
		}
	}
	return GERR_INVAL;
}

int conf_set(const struct conf_key *k, void *settings, const char *s,
	     char *err, size_t errlen)
{
	char *field = (char *)settings + k->off;
	char q[80], want[160] = "";
	double v;
	int b;

	if (!*s)
		return gerr_fail(GERR_INVAL, err, errlen, "%s wants a value",
				 k->name);
	switch (k->type) {
	case CONF_STR:
		if (strlen(s) >= k->size || has_control(s)) {
			snprintf(want, sizeof(want), "%s of at most %zu bytes",
				 k->arg ? k->arg : "a string", k->size - 1);
			break;
		}
		memcpy(field, s, strlen(s) + 1);
		return 0;
	case CONF_DOUBLE:
		if (parse_number(k, s, &v)) {
			snprintf(want, sizeof(want), "%s in %g..%g",
				 k->arg ? k->arg : "a number", k->min, k->max);
			break;
		}
		memcpy(field, &v, sizeof(v));
		return 0;
	case CONF_INT: {
		if (parse_number(k, s, &v)) {
			snprintf(want, sizeof(want), "an integer in %.0f..%.0f",
				 k->min, k->max);
			break;
		}
		uint64_t u = (uint64_t)v;
		memcpy(field, &u, sizeof(u));
		return 0;
	}
	case CONF_BOOL:
		if (parse_bool(s, &b)) {
			snprintf(want, sizeof(want), "yes or no");
			break;
		}
		memcpy(field, &b, sizeof(b));
		return 0;
	case CONF_LEVEL: {
		enum glog_level lvl;
		if (glog_level_parse(s, &lvl)) {
			snprintf(want, sizeof(want), "error, warn, info or debug");
			break;
		}
		memcpy(field, &lvl, sizeof(lvl));
		return 0;
	}
	case CONF_CUSTOM:
		if (k->parse(s, field, want, sizeof(want)) == 0)
			return 0;
		break;
	}
	return gerr_fail(GERR_INVAL, err, errlen, "%s wants %s, got '%s'",
			 k->name, want[0] ? want : "another value",
			 quote(s, q, sizeof(q)));
}

void conf_show_double(double v, char *buf, size_t len)
{
	/* Shortest text that reads back to the same double. */
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
}

void conf_show(const struct conf_key *k, const void *settings, char *buf,
	       size_t len)
{
	const char *field = (const char *)settings + k->off;
	double v;
	uint64_t u;
	int b;
	enum glog_level lvl;

	if (!len)
		return;
	buf[0] = '\0';
	switch (k->type) {
	case CONF_STR:
		snprintf(buf, len, "%.*s", (int)(k->size - 1), field);
		break;
	case CONF_DOUBLE:
		if (k->show) {
			k->show(field, buf, len);
			break;
		}
		memcpy(&v, field, sizeof(v));
		conf_show_double(v, buf, len);
		break;
	case CONF_INT:
		memcpy(&u, field, sizeof(u));
		snprintf(buf, len, "%llu", (unsigned long long)u);
		break;
	case CONF_BOOL:
		memcpy(&b, field, sizeof(b));
		snprintf(buf, len, "%s", b ? "yes" : "no");
		break;
	case CONF_LEVEL:
		memcpy(&lvl, field, sizeof(lvl));
		snprintf(buf, len, "%s", glog_level_name(lvl));
		break;
	case CONF_CUSTOM:
		k->show(field, buf, len);
		break;
	}
}

int conf_find(const struct conf_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

int conf_parse_args(const struct conf_table *t, int argc, char **argv,
		    void *settings, struct conf_args *ret, char *err,
		    size_t errlen)
{
	struct option lo[CONF_KEYS_MAX + 5];
	size_t n = 0;
	int opt;

	if (t->n > CONF_KEYS_MAX)
		return gerr_fail(GERR_INVAL, err, errlen, "too many options");
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < t->n; i++)
		lo[n++] = (struct option){ t->keys[i].name,
			t->keys[i].type == CONF_BOOL ? no_argument : required_argument,
			NULL, OPT_KEY + (int)i };
	lo[n++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
	lo[n++] = (struct option){ "check-config", no_argument, NULL, OPT_CHECK };
	lo[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lo[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		if (opt >= OPT_KEY && opt < OPT_KEY + (int)t->n) {
			const struct conf_key *k = &t->keys[opt - OPT_KEY];
			char msg[300];
			int one = 1;

			if (k->type == CONF_BOOL) {
				memcpy((char *)settings + k->off, &one, sizeof(one));
			} else if (conf_set(k, settings, optarg, msg, sizeof(msg))) {
				return gerr_fail(GERR_INVAL, err, errlen, "--%s", msg);
			}
			ret->given[opt - OPT_KEY] = 1;
			continue;
		}
		switch (opt) {
		case OPT_CONFIG:
			if (!*optarg || strlen(optarg) >= 4096)
				return gerr_fail(GERR_INVAL, err, errlen,
						 "--config wants a file's path");
			ret->config = optarg;
			break;
		case OPT_CHECK:
			ret->check = 1;
			break;
		case OPT_HELP:
			ret->help = 1;
			break;
		case OPT_VERSION:
			ret->version = 1;
			break;
		case ':':
			return gerr_fail(GERR_INVAL, err, errlen,
					 "option %s needs a value", argv[optind - 1]);
		default:
			return gerr_fail(GERR_INVAL, err, errlen,
					 "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int is_dev_null(const struct stat *sb)
{
	struct stat null;

	return S_ISCHR(sb->st_mode) && stat("/dev/null", &null) == 0 &&
	       S_ISCHR(null.st_mode) && null.st_rdev == sb->st_rdev;
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a file";
}

/* The whole file, NUL-terminated, at most CONF_FILE_MAX bytes. */
static int read_bounded(const char *path, char **ret, size_t *ret_len,
			char *err, size_t errlen)
{
	struct stat sb;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = 0;

	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer,
	 * freezing gpud's loop at SIGHUP; the type is checked before any
	 * read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = gerr_from_errno(errno);
		gerr_printf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &sb) != 0) {
		rc = gerr_fail(gerr_from_errno(errno), err, errlen, "%s: %s",
			       path, strerror(errno));
		goto out;
	}
	/* Regular files only, and /dev/null standing for "no file": a
	 * FIFO, a socket, a terminal or another device could block a read
	 * or never end. */
	if (!S_ISREG(sb.st_mode) && !is_dev_null(&sb)) {
		rc = gerr_fail(GERR_INVAL, err, errlen, "%s: not a regular file "
			       "(%s)", path, file_kind(sb.st_mode));
		goto out;
	}
	buf = malloc(CONF_FILE_MAX + 2);
	if (!buf) {
		rc = gerr_fail(GERR_NOMEM, err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* One byte past the bound tells an oversized file. */
	while (len < CONF_FILE_MAX + 1) {
		ssize_t r = read(fd, buf + len, CONF_FILE_MAX + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = gerr_fail(GERR_IO, err, errlen, "%s: %s", path,
				       strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > CONF_FILE_MAX) {
		rc = gerr_fail(GERR_TOOBIG, err, errlen,
			       "%s: larger than %d bytes", path, CONF_FILE_MAX);
		goto out;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = '\0';
	return s;
}

/* One line (NUL-terminated, no newline) of the file. */
static int load_line(const struct conf_table *t, const char *path,
		     unsigned line, char *s, unsigned *seen, void *settings,
		     char *err, size_t errlen)
{
	char *end = s + strlen(s), *eq, *key, *val, msg[400];
	int i;

	s = trim(s, end);
	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "%s:%u: expected 'key = value'", path, line);
	key = trim(s, eq);
	val = trim(eq + 1, eq + 1 + strlen(eq + 1));
	i = conf_find(t, key);
	if (i < 0 || (t->keys[i].flags & CONF_CLI_ONLY)) {
		char q[80];
		return gerr_fail(GERR_INVAL, err, errlen,
				 "%s:%u: unknown key '%s'%s", path, line,
				 quote(key, q, sizeof(q)),
				 i < 0 ? "" : " (a command-line option only)");
	}
	if (seen[i])
		return gerr_fail(GERR_INVAL, err, errlen,
				 "%s:%u: %s set again (first on line %u)",
				 path, line, key, seen[i]);
	if (conf_set(&t->keys[i], settings, val, msg, sizeof(msg)))
		return gerr_fail(GERR_INVAL, err, errlen, "%s:%u: %s", path,
				 line, msg);
	seen[i] = line;
	return 0;
}

int conf_load_file(const struct conf_table *t, const char *path,
		   void *settings, char *err, size_t errlen)
{
	unsigned seen[CONF_KEYS_MAX] = { 0 };
	unsigned line = 0;
	char *buf = NULL, *p;
	size_t len = 0;
	int rc;

	if (t->n > CONF_KEYS_MAX)
		return gerr_fail(GERR_INVAL, err, errlen, "too many keys");
	rc = read_bounded(path, &buf, &len, err, errlen);
	if (rc)
		return rc;
	if (memchr(buf, '\0', len)) {
		free(buf);
		return gerr_fail(GERR_INVAL, err, errlen,
				 "%s: a NUL byte: not a text file", path);
	}
	for (p = buf; *p && rc == 0;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		line++;
		if (n > CONF_LINE_MAX) {
			rc = gerr_fail(GERR_INVAL, err, errlen,
				       "%s:%u: line longer than %d bytes",
				       path, line, CONF_LINE_MAX);
			break;
		}
		p[n] = '\0';
		rc = load_line(t, path, line, p, seen, settings, err, errlen);
		p += n + (nl ? 1 : 0);
	}
	free(buf);
	return rc;
}

int conf_load(const struct conf_table *t, const struct conf_args *a,
	      const void *defaults, const void *cli, void *ret_settings,
	      size_t settings_size, char *err, size_t errlen)
{
	const char *path = a->config ? a->config : t->default_path;
	int rc;

	memcpy(ret_settings, defaults, settings_size);
	if (path) {
		rc = conf_load_file(t, path, ret_settings, err, errlen);
		/* Only the default file may be missing. */
		if (rc == GERR_NOTFOUND && !a->config)
			rc = 0;
		else if (rc == 0)
			rc = 1;
		if (rc < 0)
			return rc;
	} else {
		rc = 0;
	}
	conf_overlay(t, ret_settings, cli, a->given);
	return rc;
}

void conf_copy(const struct conf_key *k, void *dst, const void *src)
{
	memcpy((char *)dst + k->off, (const char *)src + k->off, field_size(k));
}

void conf_overlay(const struct conf_table *t, void *dst, const void *src,
		  const unsigned char *given)
{
	for (size_t i = 0; i < t->n && i < CONF_KEYS_MAX; i++)
		if (given[i])
			conf_copy(&t->keys[i], dst, src);
}

int conf_same(const struct conf_key *k, const void *a, const void *b)
{
	char va[CONF_SHOW_MAX], vb[CONF_SHOW_MAX];

	conf_show(k, a, va, sizeof(va));
	conf_show(k, b, vb, sizeof(vb));
	return strcmp(va, vb) == 0;
}

void conf_print_source(const struct conf_table *t, const struct conf_args *a,
		       int loaded, FILE *f)
{
	const char *path = a->config ? a->config : t->default_path;
	char q[CONF_SHOW_MAX];

	fprintf(f, "# %s settings: the defaults, %s%s%s, then the command line\n",
		t->prog, loaded ? "" : "(no ", path ? quote(path, q, sizeof(q)) : "file",
		loaded ? "" : ")");
}

void conf_print(const struct conf_table *t, const void *settings, FILE *f)
{
	char v[CONF_SHOW_MAX];

	for (size_t i = 0; i < t->n; i++) {
		if (t->keys[i].flags & CONF_CLI_ONLY)
			continue;
		conf_show(&t->keys[i], settings, v, sizeof(v));
		fprintf(f, "%s = %s\n", t->keys[i].name, v);
	}
}

void conf_usage(const struct conf_table *t, FILE *f)
{
	unsigned reload = 0;

	fprintf(f, "%s\n", t->usage);
	for (size_t i = 0; i < t->n; i++) {
		const struct conf_key *k = &t->keys[i];
		char head[80];
		const char *h = k->help ? k->help : "";

		snprintf(head, sizeof(head), "--%s%s%s", k->name,
			 k->type == CONF_BOOL ? "" : " ",
			 k->type == CONF_BOOL ? "" : (k->arg ? k->arg : "VALUE"));
		/* The help's lines, the first beside the option when it fits. */
		if (strlen(head) > 25)
			fprintf(f, "  %s\n%28s", head, "");
		else
			fprintf(f, "  %-26s", head);
		for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n%28s", (int)(nl - h), h, "");
		fprintf(f, "%s%s\n", h, k->flags & CONF_RUNTIME ? " [reload]" : "");
		reload |= k->flags & CONF_RUNTIME;
	}
	fprintf(f, "  --config FILE             KEY = VALUE lines, each KEY an option's name\n"
		"%28s(default %s, if it exists);\n"
		"%28soptions given here win over the file\n", "", t->default_path, "");
	fprintf(f, "  --check-config            print the effective settings "
		"and exit\n  --help, --version\n");
	if (reload)
		fprintf(f, "[reload]: SIGHUP reads the file again and changes this "
			"one at run time;\nother keys need a restart.\n");
}

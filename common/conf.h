/* conf.h - a program's settings from its command line and its
 * configuration file, both driven by one table.
 *
 * Each entry of a program's table is a long option and the file key of the
 * same name, with one parser for its value, so a flag and its key cannot
 * drift apart. Values live in a settings struct the program defines; an
 * entry names its field by offset.
 *
 * Layers, lowest first: the program's defaults, the file (conf_load_file),
 * then the command line (conf_parse_args into a struct of its own, copied
 * over with conf_overlay): flags win over the file.
 *
 * The file: `key = value` lines, `#` comment lines, blank lines; the value
 * is the rest of the line with surrounding blanks removed (a `#` after a
 * value is part of it). Bounded: CONF_FILE_MAX bytes, CONF_LINE_MAX bytes
 * a line, keys from the table only, each at most once. Errors name the
 * place: "FILE:LINE: message".
 *
 * Ownership: tables are static and borrowed; settings structs, argv and
 * every buffer belong to the caller; nothing is kept between calls, except
 * that conf_args.config points into argv. Threads: any; no shared state
 * (conf_parse_args uses getopt_long, so one thread at a time there).
 */
#ifndef GPUD_CONF_H
#define GPUD_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_KEYS_MAX 64
#define CONF_FILE_MAX (64 * 1024)
#define CONF_LINE_MAX 1024
/* Longest value conf_show writes (paths included). */
#define CONF_SHOW_MAX 4200

enum conf_type {
	CONF_STR,    /* char[size]: at most size - 1 bytes, no control bytes */
	CONF_DOUBLE, /* double in [min, max] */
	CONF_INT,    /* uint64_t, a decimal integer in [min, max] */
	CONF_BOOL,   /* int: a switch on the command line; yes|no in a file */
	CONF_LEVEL,  /* enum glog_level: error|warn|info|debug */
	CONF_CUSTOM, /* parse and show below; the field is size bytes */
};

enum conf_flags {
	CONF_RUNTIME = 1 << 0,  /* a reload may change it in a running program */
	CONF_CLI_ONLY = 1 << 1, /* an action (gpud --init): no key in the file */
};

struct conf_key {
	const char *name;  /* long option and file key */
	enum conf_type type;
	unsigned flags;    /* enum conf_flags */
	size_t off;        /* offsetof the field in the settings struct */
	size_t size;       /* CONF_STR, CONF_CUSTOM: sizeof the field */
	double min, max;   /* CONF_DOUBLE, CONF_INT */
	const char *arg;   /* the value's name in --help ("SECONDS") */
	const char *help;  /* --help text; '\n' starts another line */
	/* CONF_CUSTOM: store s into field, or return GERR_INVAL with what it
	 * wants in err ("HOST:PORT"); show writes the value back so that
	 * parse reads it again to the same field. A CONF_DOUBLE may have a
	 * show too, for a value that means something other than its number
	 * (0: the peer's). */
	int (*parse)(const char *s, void *field, char *err, size_t errlen);
	void (*show)(const void *field, char *buf, size_t len);
};

struct conf_table {
	const char *prog;         /* "gpud", for messages */
	const char *usage;        /* the first line of --help */
	const char *default_path; /* read when it exists and no --config */
	const struct conf_key *keys;
	size_t n;                 /* at most CONF_KEYS_MAX */
};

/* What the command line said besides the values. */
struct conf_args {
	unsigned char given[CONF_KEYS_MAX]; /* key i was on the command line */
	const char *config; /* --config FILE (points into argv), or NULL */
	int check;          /* --check-config */
	int help, version;
};

/* Store s as key k's value in settings. Returns 0, or GERR_INVAL with
 * "KEY wants ..., got 'S'" in err; the field is not written on failure. */
int conf_set(const struct conf_key *k, void *settings, const char *s,
	     char *err, size_t errlen);

/* Write key k's value from settings into buf (always terminated). */
/* v as the shortest text that reads back to it. Any thread. */
void conf_show_double(double v, char *buf, size_t len);
void conf_show(const struct conf_key *k, const void *settings, char *buf,
	       size_t len);

/* Index of the key named name, or -1. */
int conf_find(const struct conf_table *t, const char *name);

/* Parse argv with getopt_long: each table key's long option (a switch for
 * CONF_BOOL, a value otherwise) is stored in settings and marked in
 * ret->given, plus --config FILE, --check-config, --help and --version.
 * Returns 0, or GERR_INVAL with the reason in err (an unknown option, a
 * bad value, a stray argument). */
int conf_parse_args(const struct conf_table *t, int argc, char **argv,
		    void *settings, struct conf_args *ret, char *err,
		    size_t errlen);

/* Read path into settings (whose defaults the caller has set). A missing
 * file is GERR_NOTFOUND (the caller decides whether that is fine); any
 * other failure GERR_INVAL or GERR_IO with "PATH:LINE: message" or
 * "PATH: message" in err. On failure settings may hold some of the file's
 * values: load into a scratch copy when the old values must survive. */
int conf_load_file(const struct conf_table *t, const char *path,
		   void *settings, char *err, size_t errlen);

/* Defaults, then the file (a.config, else t->default_path when it
 * exists), then the keys given on the command line (from cli). The one
 * sequence both start-up and a reload use. Returns 1 when a file was
 * read, 0 when none was (the default one is missing), or a negative code
 * with the reason in err. */
int conf_load(const struct conf_table *t, const struct conf_args *a,
	      const void *defaults, const void *cli, void *ret_settings,
	      size_t settings_size, char *err, size_t errlen);

/* Copy the keys marked in given from src over dst. */
void conf_overlay(const struct conf_table *t, void *dst, const void *src,
		  const unsigned char *given);

/* Whether key k has the same value in a and b (as conf_show writes it). */
int conf_same(const struct conf_key *k, const void *a, const void *b);

/* Copy key k's field from src to dst. */
void conf_copy(const struct conf_key *k, void *dst, const void *src);

/* A comment line saying where the settings come from, for conf_print's
 * output (itself a configuration file); loaded is conf_load's 0 or 1. */
void conf_print_source(const struct conf_table *t, const struct conf_args *a,
		       int loaded, FILE *f);

/* `key = value` for every key with a file key, in table order. */
void conf_print(const struct conf_table *t, const void *settings, FILE *f);

/* --help: the usage line, then each option with its value and help. */
void conf_usage(const struct conf_table *t, FILE *f);

#endif

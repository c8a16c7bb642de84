/* ctl_admin.c - gpuctl's commands on gpud itself: token add/list/revoke
 * (and keygen, which needs no gpud), check and backup (ctl_cmd.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "ctl_check.h"
#include "ctl_cmd.h"
#include "ctl_help.h"

static int token_list(const struct ctl_target *to)
{
	struct ctl_reply reply;
	int ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_LIST }, 1, &reply);

	if (ex)
		return ex;
	for (size_t i = 0; i < reply.f.n_tokens; i++) {
		const struct ctlcmd_token *t = &reply.f.tokens[i];
		time_t when = (time_t)t->created_at;
		char date[32];
		struct tm tm;
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M", localtime_r(&when, &tm));
		printf("%-24s %-7s %s%s\n", t->name, t->role, date, t->revoked ? "  revoked" : "");
	}
	ctl_reply_free(&reply);
	return 0;
}

/* Print tok's credential, pinning gpud_key (hex) when not NULL. */
static int print_credential(const struct auth_token *tok, const char *gpud_hex)
{
	uint8_t pin[AUTH_KEY_LEN];
	char *cred;

	if (gpud_hex && auth_unhex(gpud_hex, pin, sizeof(pin))) {
		fprintf(stderr, "gpuctl: gpud sent a malformed key\n");
		return EXIT_FAIL;
	}
	cred = auth_credential_text(tok, gpud_hex ? pin : NULL);
	if (!cred) {
		fprintf(stderr, "gpuctl: out of memory\n");
		return EXIT_FAIL;
	}
	fputs(cred, stdout);
	sodium_memzero(cred, strlen(cred));
	free(cred);
	return fflush(stdout) ? EXIT_FAIL : 0;
}

/* A new key pair for name; 0, or a message and nonzero (a bad name). */
static int new_pair(const char *name, struct auth_token *tok)
{
	if (auth_init() < 0 || auth_token_new(name, tok)) {
		fprintf(stderr, "gpuctl: token names are 1..%d characters of A-Z a-z "
			"0-9 . _ -\n", AUTH_NAME_MAX);
		return -1;
	}
	return 0;
}

/* token add: the key pair is made here (or was elsewhere: public_hex);
 * gpud gets only the public key, and the secret never leaves this
 * process but in the credential printed. */
static int token_add(const struct ctl_target *to, const char *name, const char *role,
		     const char *public_hex)
{
	struct auth_token tok;
	struct ctl_reply reply;
	char pk[2 * AUTH_KEY_LEN + 1];
	int ex;

	if (new_pair(name, &tok))
		return EXIT_FAIL;
	if (public_hex && auth_unhex(public_hex, tok.pk, sizeof(tok.pk))) {
		fprintf(stderr, "gpuctl: --public-key wants 64 hex digits\n");
		sodium_memzero(&tok, sizeof(tok));
		return EXIT_USAGE;
	}
	auth_hex(tok.pk, sizeof(tok.pk), pk);
	ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_ADD, .name = name,
		.role = auth_role_parse(role), .public_key = pk }, 0, &reply);
	if (ex) {
		sodium_memzero(&tok, sizeof(tok));
		return ex;
	}
	if (public_hex) {
		/* The secret is elsewhere: its holder adds the pin. */
		printf("gpud-key = %s\n", reply.f.gpud_key);
		fprintf(stderr, "gpuctl: %s is a %s credential now; add the line above "
			"to its credential file (gpuctl token keygen made it)\n", name, role);
	} else {
		ex = print_credential(&tok, reply.f.gpud_key);
		if (!ex)
			fprintf(stderr, "gpuctl: a %s credential pinning gpud-key %s\n"
				"gpuctl: save the lines above in a file readable only by "
				"its user (chmod 600) and pass it with %s\n", role,
				reply.f.gpud_key, strcmp(role, "worker") == 0
				? "gpuworker --token-file" : "gpuctl --credential");
	}
	sodium_memzero(&tok, sizeof(tok));
	ctl_reply_free(&reply);
	return ex;
}

/* token keygen: a key pair made where it will be used; gpud's admin
 * registers its public key (token add --public-key). Needs no gpud. */
static int token_keygen(const char *name)
{
	struct auth_token tok;
	char pk[2 * AUTH_KEY_LEN + 1];
	int ex;

	if (new_pair(name, &tok))
		return EXIT_FAIL;
	auth_hex(tok.pk, sizeof(tok.pk), pk);
	ex = print_credential(&tok, NULL);
	sodium_memzero(&tok, sizeof(tok));
	if (!ex)
		fprintf(stderr, "gpuctl: save the lines above (chmod 600); on gpud's "
			"machine run: gpuctl token add %s --role ROLE --public-key %s\n"
			"gpuctl: then add the 'gpud-key = ' line it prints to the file\n",
			name, pk);
	return ex;
}

int cmd_token(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "public-key", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *role = "worker", *public_hex = NULL;
	int c, ex;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'r')
			role = optarg;
		else if (c == 'p')
			public_hex = optarg;
		else if (c == 'h')
			return ctl_help_cmd(stdout, "token"), 0;
		else
			return ctl_usage_error("token");
	}
	int n = argc - optind;
	char **a = argv + optind;
	int plain = strcmp(role, "worker") == 0 && !public_hex;
	if (n == 1 && strcmp(a[0], "list") == 0 && plain)
		return token_list(to);
	if (n == 2 && strcmp(a[0], "keygen") == 0 && plain)
		return token_keygen(a[1]);
	if (n == 2 && strcmp(a[0], "add") == 0) {
		if (strcmp(role, "worker") && strcmp(role, "viewer") && strcmp(role, "admin")) {
			fprintf(stderr, "gpuctl: --role is worker, viewer or admin\n");
			return ctl_usage_error("token");
		}
		return token_add(to, a[1], role, public_hex);
	}
	if (n == 2 && strcmp(a[0], "revoke") == 0 && plain) {
		struct ctl_reply reply;
		ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_TOKEN_REVOKE, .name = a[1] },
			     0, &reply);
		if (ex)
			return ex;
		printf("revoked %s\n", a[1]);
		ctl_reply_free(&reply);
		return 0;
	}
	fprintf(stderr, "gpuctl: usage: gpuctl token add NAME [--role worker|viewer|admin] "
		"[--public-key HEX], gpuctl token keygen NAME, gpuctl token revoke NAME, "
		"gpuctl token list\n");
	return ctl_usage_error("token");
}

/* The database's integrity and every blob it names; exit 1 when damaged. */
int cmd_check(const struct ctl_target *to, int argc, char **argv)
{
	int as_json, ex;
	struct ctl_reply reply;

	if (ctl_json_only_request(to, CTLCMD_CHECK, 0, argc, argv, &as_json, &reply, &ex))
		return ex;
	ex = reply.f.damaged ? EXIT_FAIL : 0;
	if (as_json)
		ctl_print_json(ctlcmd_reply_body(reply.json));
	else
		ctl_check_print(stdout, &reply.f);
	ctl_reply_free(&reply);
	return ex;
}

/* gpud writes the backup: a relative DIR is made absolute here, where the
 * user meant it. */
int cmd_backup(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "copy", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int as_json = 0, copy = 0, c, ex;
	char path[CTL_ARG_MAX + 1], cwd[CTL_ARG_MAX];
	const char *dir;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			as_json = 1;
		else if (c == 'c')
			copy = 1;
		else if (c == 'h')
			return ctl_help_cmd(stdout, "backup"), 0;
		else
			return ctl_usage_error("backup");
	}
	if (optind + 1 != argc || !*argv[optind])
		return ctl_usage_error("backup");
	dir = argv[optind];
	if (dir[0] != '/' && to->host) {
		fprintf(stderr, "gpuctl: with --connect, DIR is on gpud's host: give an "
			"absolute path\n");
		return EXIT_USAGE;
	}
	if (dir[0] == '/') {
		if (strlen(dir) >= sizeof(path)) {
			fprintf(stderr, "gpuctl: the backup path is too long\n");
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "%s", dir);
	} else if (!getcwd(cwd, sizeof(cwd)) ||
		   snprintf(path, sizeof(path), "%s/%s", cwd, dir) >= (int)sizeof(path)) {
		fprintf(stderr, "gpuctl: cannot make %s an absolute path\n", dir);
		return EXIT_USAGE;
	}
	struct ctl_reply reply;
	ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_BACKUP, .dir = path, .copy = copy },
		     !as_json, &reply);
	if (ex)
		return ex;
	ex = reply.f.verified ? 0 : EXIT_FAIL;
	if (as_json)
		ctl_print_json(ctlcmd_reply_body(reply.json));
	else
		ctl_backup_print(stdout, &reply.f);
	ctl_reply_free(&reply);
	return ex;
}

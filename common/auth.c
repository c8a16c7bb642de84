/* auth.c - credentials: key pairs, their files, roles (see auth.h).
 *
 * Invariants:
 *  1. Text that held a secret key is wiped (sodium_memzero) before it is
 *     freed or goes out of scope.
 *  2. A credential file is read only if no one but its owner can read it,
 *     and is bounded (4 KiB) before it is parsed.
 */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "fileio.h"
#include "gerr.h"

#define AUTH_FILE_MAX 4096
#define AUTH_CRED_MAX 512

int auth_init(void)
{
	return sodium_init() < 0 ? GERR_IO : 0;
}

static const char *const role_names[] = {
	[AUTH_ROLE_WORKER] = "worker",
	[AUTH_ROLE_VIEWER] = "viewer",
	[AUTH_ROLE_ADMIN] = "admin",
};

const char *auth_role_name(enum auth_role role)
{
	return role >= AUTH_ROLE_WORKER && role <= AUTH_ROLE_ADMIN
		? role_names[role] : NULL;
}

enum auth_role auth_role_parse(const char *name)
{
	for (int r = AUTH_ROLE_WORKER; name && r <= AUTH_ROLE_ADMIN; r++)
		if (strcmp(name, role_names[r]) == 0)
			return (enum auth_role)r;
	return 0;
}

static int name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* Length of the valid name at the start of s, ending at stop (or NUL), or
 * 0 if there is none. */
static size_t name_span(const char *s, char stop)
{
	size_t n = 0;

	while (n <= AUTH_NAME_MAX && s[n] != '\0' && s[n] != stop) {
		if (!name_char(s[n]))
			return 0;
		n++;
	}
	return n > AUTH_NAME_MAX ? 0 : n;
}

int auth_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return GERR_INVAL;
	n = name_span(name, '\0');
	return n > 0 && name[n] == '\0' ? 0 : GERR_INVAL;
}

int auth_token_new(const char *name, struct auth_token *ret_tok)
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	struct auth_token tok;

	if (auth_name_valid(name) < 0 || !ret_tok)
		return GERR_INVAL;
	memset(&tok, 0, sizeof(tok));
	snprintf(tok.name, sizeof(tok.name), "%s", name);
	randombytes_buf(tok.seed, sizeof(tok.seed));
	crypto_sign_seed_keypair(tok.pk, sk, tok.seed);
	sodium_memzero(sk, sizeof(sk));
	*ret_tok = tok;
	sodium_memzero(&tok, sizeof(tok));
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* The value after "KEY" and "=" on a credential line, or NULL. */
static const char *line_value(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) != 0)
		return NULL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '=')
		return NULL;
	line++;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* A 64-hex-digit key into out, once (*seen): 0 or GERR_INVAL. */
static int key_line(const char *v, uint8_t out[AUTH_KEY_LEN], int *seen)
{
	int r = *seen || auth_unhex(v, out, AUTH_KEY_LEN) < 0 ? GERR_INVAL : 0;

	*seen = 1;
	return r;
}

int auth_token_parse(const char *text, struct auth_token *ret_tok)
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	struct auth_token tok;
	char line[AUTH_FILE_MAX + 1];
	int have_name = 0, have_key = 0, old = 0, r = 0;

	if (!text || !ret_tok)
		return GERR_INVAL;
	memset(&tok, 0, sizeof(tok));
	while (*text && r == 0) {
		size_t n = strcspn(text, "\n");
		const char *v;
		char *l = line;

		if (n >= sizeof(line))
			return GERR_INVAL;
		memcpy(line, text, n);
		line[n] = '\0';
		text += n + (text[n] == '\n');
		while (is_space(*l))
			l++;
		for (size_t e = strlen(l); e > 0 && is_space(l[e - 1]); e--)
			l[e - 1] = '\0';
		if (*l == '\0' || *l == '#')
			continue;
		if ((v = line_value(l, "gpud-key")))
			r = key_line(v, tok.gpud_key, &tok.has_gpud_key);
		else if ((v = line_value(l, "key")))
			r = key_line(v, tok.seed, &have_key);
		else if ((v = line_value(l, "name"))) {
			if (have_name || auth_name_valid(v) < 0)
				r = GERR_INVAL;
			else
				snprintf(tok.name, sizeof(tok.name), "%s", v);
			have_name = 1;
		} else if (line_value(l, "token") ||
			   (!strchr(l, '=') && strchr(l, ':')))
			old = 1; /* "token = NAME:SECRET" or a bare one */
		else
			r = GERR_INVAL; /* an unknown key */
	}
	sodium_memzero(line, sizeof(line));
	if (old)
		r = GERR_UNSUPPORTED;
	else if (r == 0 && (!have_name || !have_key))
		r = GERR_INVAL;
	if (r == 0) {
		crypto_sign_seed_keypair(tok.pk, sk, tok.seed);
		sodium_memzero(sk, sizeof(sk));
		*ret_tok = tok;
	}
	sodium_memzero(&tok, sizeof(tok));
	return r;
}

char *auth_credential_text(const struct auth_token *tok,
			   const uint8_t *gpud_key)
{
	char seed[2 * AUTH_KEY_LEN + 1], pin[2 * AUTH_KEY_LEN + 1] = "";
	char *out;

	if (!tok || auth_name_valid(tok->name) < 0)
		return NULL;
	auth_hex(tok->seed, AUTH_KEY_LEN, seed);
	if (gpud_key)
		auth_hex(gpud_key, AUTH_KEY_LEN, pin);
	out = malloc(AUTH_CRED_MAX);
	if (out && snprintf(out, AUTH_CRED_MAX,
			    "# gpud credential: keep it secret (mode 0600)\n"
			    "name = %s\nkey = %s\n%s%s%s", tok->name, seed,
			    gpud_key ? "gpud-key = " : "", pin,
			    gpud_key ? "\n" : "") >= AUTH_CRED_MAX) {
		sodium_memzero(out, AUTH_CRED_MAX);
		free(out); /* cannot happen: the name is bounded */
		out = NULL;
	}
	sodium_memzero(seed, sizeof(seed));
	return out;
}

void auth_old_kind_message(const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s is a credential of the old kind (token = "
		 "NAME:SECRET, from before gpud spoke TLS 1.3), which gpud "
		 "refuses: make a new one with 'gpuctl token add NAME --role "
		 "ROLE' (or 'gpuctl token keygen NAME' here and 'gpuctl token "
		 "add NAME --public-key HEX' on gpud's machine)", what);
}

int auth_secret_read(const char *path, const char *what, char *buf,
		     size_t cap, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	int fd;

	if (!path || !buf || cap < 2)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;

		return gerr_fail(gerr_from_errno(e), err, errlen,
			    "cannot open %s %s: %s", what, path, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return gerr_fail(gerr_from_errno(e), err, errlen,
			    "cannot stat %s %s: %s", what, path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return gerr_fail(GERR_INVAL, err, errlen,
			    "%s %s is not a regular file", what, path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return gerr_fail(GERR_PERM, err, errlen,
			    "%s %s is accessible by group or others "
			    "(mode %04o); run: chmod 600 %s", what,
			    path, (unsigned)(st.st_mode & 07777), path);
	}
	/* Read one byte past the limit to tell "exactly cap-1" from "more". */
	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			sodium_memzero(buf, cap);
			return gerr_fail(gerr_from_errno(e), err, errlen,
				    "cannot read %s %s: %s", what, path,
				    strerror(e));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got > cap - 1) {
		sodium_memzero(buf, cap);
		return gerr_fail(GERR_TOOBIG, err, errlen,
			    "%s %s is larger than %zu bytes", what, path,
			    cap - 1);
	}
	if (memchr(buf, '\0', got)) {
		sodium_memzero(buf, cap);
		return gerr_fail(GERR_INVAL, err, errlen,
			    "%s %s contains NUL bytes", what, path);
	}
	buf[got] = '\0';
	return 0;
}

int auth_token_read_file(const char *path, struct auth_token *ret_tok,
			 char *err, size_t errlen)
{
	char buf[AUTH_FILE_MAX + 1];
	int r;

	if (!path || !ret_tok)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	r = auth_secret_read(path, "credential file", buf, sizeof(buf), err,
			     errlen);
	if (r < 0)
		return r;
	r = auth_token_parse(buf, ret_tok);
	sodium_memzero(buf, sizeof(buf));
	if (r == GERR_UNSUPPORTED) {
		auth_old_kind_message(path, err, errlen);
		return r;
	}
	if (r < 0)
		return gerr_fail(r, err, errlen,
			    "credential file %s is malformed (want 'name = "
			    "NAME', 'key = ' 64 hex digits and 'gpud-key = ' "
			    "64 hex digits)", path);
	return 0;
}

int auth_secret_write(const char *path, const char *text, size_t len)
{
	if (!path || !*path || !text)
		return GERR_INVAL;
	return fileio_write_atomic(path, text, len, 0600);
}

int auth_token_write_file(const char *path, const char *text)
{
	struct auth_token tok;

	if (!path || !*path || !text)
		return GERR_INVAL;
	char buf[AUTH_FILE_MAX + 1];
	size_t len = strlen(text);
	int r;

	/* Only a well-formed credential is written, ending in exactly one
	 * newline. */
	if (auth_token_parse(text, &tok) < 0)
		return GERR_INVAL;
	sodium_memzero(&tok, sizeof(tok));
	while (len > 0 && is_space(text[len - 1]))
		len--;
	if (len + 1 > AUTH_FILE_MAX)
		return GERR_TOOBIG;
	memcpy(buf, text, len);
	buf[len] = '\n';
	r = auth_secret_write(path, buf, len + 1);
	sodium_memzero(buf, sizeof(buf));
	return r;
}

void auth_random(void *buf, size_t len)
{
	if (buf && len)
		randombytes_buf(buf, len);
}

void auth_stored_key(const uint8_t client_key[AUTH_KEY_LEN],
		     uint8_t out[AUTH_KEY_LEN])
{
	crypto_generichash(out, AUTH_KEY_LEN, client_key, AUTH_KEY_LEN, NULL, 0);
}

void auth_hex(const uint8_t *bin, size_t len, char *out)
{
	sodium_bin2hex(out, 2 * len + 1, bin, len);
}

int auth_unhex(const char *hex, uint8_t *out, size_t len)
{
	const char *end = NULL;
	size_t got = 0;

	if (!hex || (!out && len > 0) || len > SIZE_MAX / 2)
		return GERR_INVAL;
	if (strnlen(hex, 2 * len + 1) != 2 * len)
		return GERR_INVAL;
	if (sodium_hex2bin(out, len, hex, 2 * len, NULL, &got, &end) != 0 ||
	    got != len || end != hex + 2 * len)
		return GERR_INVAL;
	return 0;
}

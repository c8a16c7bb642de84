/* auth.c - worker tokens and the HMAC challenge (see auth.h).
 *
 * Invariants:
 *  1. The secret exists in memory only while a token is created or parsed,
 *     and is wiped (sodium_memzero) before returning; only the derived key
 *     leaves these functions.
 *  2. MACs are compared in constant time.
 *  3. A token file is read only if no one but its owner can read it, and is
 *     bounded (4 KiB) before it is parsed.
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

#define AUTH_SECRET_LEN 32
#define AUTH_SECRET_HEX (2 * AUTH_SECRET_LEN)
#define AUTH_FILE_MAX 4096
#define AUTH_CRED_MAX 512
#define AUTH_KEY_CONTEXT "gpud-token-v1"

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

static void derive_key(const uint8_t secret[AUTH_SECRET_LEN],
		       uint8_t key[AUTH_KEY_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, AUTH_KEY_LEN);
	crypto_generichash_update(&st, (const uint8_t *)AUTH_KEY_CONTEXT,
				  strlen(AUTH_KEY_CONTEXT));
	crypto_generichash_update(&st, secret, AUTH_SECRET_LEN);
	crypto_generichash_final(&st, key, AUTH_KEY_LEN);
	sodium_memzero(&st, sizeof(st));
}

int auth_token_new(const char *name, char **ret_text,
		   struct auth_token *ret_tok)
{
	uint8_t secret[AUTH_SECRET_LEN];
	struct auth_token tok;
	size_t nlen;
	char *text;

	if (auth_name_valid(name) < 0 || !ret_text || !ret_tok)
		return GERR_INVAL;
	nlen = strlen(name);
	text = malloc(nlen + 1 + AUTH_SECRET_HEX + 1);
	if (!text)
		return GERR_NOMEM;

	randombytes_buf(secret, sizeof(secret));
	memcpy(text, name, nlen);
	text[nlen] = ':';
	sodium_bin2hex(text + nlen + 1, AUTH_SECRET_HEX + 1, secret,
		       sizeof(secret));
	memset(&tok, 0, sizeof(tok));
	memcpy(tok.name, name, nlen + 1);
	derive_key(secret, tok.key);
	auth_stored_key(tok.key, tok.stored);
	sodium_memzero(secret, sizeof(secret));

	*ret_text = text;
	*ret_tok = tok;
	sodium_memzero(&tok, sizeof(tok));
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* One "NAME:SECRET" value (trailing whitespace allowed). */
static int parse_token_value(const char *text, struct auth_token *ret_tok)
{
	uint8_t secret[AUTH_SECRET_LEN];
	struct auth_token tok;
	const char *p;
	size_t nlen;
	int r;

	if (!text || !ret_tok)
		return GERR_INVAL;
	nlen = name_span(text, ':');
	if (nlen == 0 || text[nlen] != ':')
		return GERR_INVAL;
	p = text + nlen + 1;
	/* Exactly 64 hex digits: strnlen keeps us inside the string. */
	if (strnlen(p, AUTH_SECRET_HEX) != AUTH_SECRET_HEX)
		return GERR_INVAL;
	for (const char *q = p + AUTH_SECRET_HEX; *q; q++)
		if (!is_space(*q))
			return GERR_INVAL;

	{
		char hex[AUTH_SECRET_HEX + 1];

		memcpy(hex, p, AUTH_SECRET_HEX);
		hex[AUTH_SECRET_HEX] = '\0';
		r = auth_unhex(hex, secret, sizeof(secret));
		sodium_memzero(hex, sizeof(hex));
	}
	if (r < 0) {
		sodium_memzero(secret, sizeof(secret));
		return GERR_INVAL;
	}
	memset(&tok, 0, sizeof(tok));
	memcpy(tok.name, text, nlen);
	tok.name[nlen] = '\0';
	derive_key(secret, tok.key);
	auth_stored_key(tok.key, tok.stored);
	sodium_memzero(secret, sizeof(secret));
	*ret_tok = tok;
	sodium_memzero(&tok, sizeof(tok));
	return 0;
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

int auth_token_parse(const char *text, struct auth_token *ret_tok)
{
	struct auth_token tok;
	char line[AUTH_FILE_MAX + 1];
	int have_token = 0, r = 0;

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
		if ((v = line_value(l, "gpud-key"))) {
			if (tok.has_gpud_key ||
			    auth_unhex(v, tok.gpud_key, AUTH_KEY_LEN) < 0)
				r = GERR_INVAL;
			tok.has_gpud_key = 1;
			continue;
		}
		v = line_value(l, "token");
		if (!v && strchr(l, '='))
			r = GERR_INVAL; /* an unknown key */
		else if (have_token)
			r = GERR_INVAL;
		else
			r = parse_token_value(v ? v : l, &tok);
		have_token = 1;
	}
	sodium_memzero(line, sizeof(line));
	if (r == 0 && !have_token)
		r = GERR_INVAL;
	if (r == 0)
		*ret_tok = tok;
	sodium_memzero(&tok, sizeof(tok));
	return r;
}

char *auth_credential_text(const char *text,
			   const uint8_t gpud_key[AUTH_KEY_LEN])
{
	char hex[2 * AUTH_KEY_LEN + 1], *out;
	struct auth_token tok;
	const char *t = NULL;
	size_t n = 0;

	if (!text || !gpud_key || auth_token_parse(text, &tok) < 0)
		return NULL;
	sodium_memzero(&tok, sizeof(tok));
	/* The token's line, bare or "token = ", parsed fine above. */
	for (const char *l = text; *l; l += n + (l[n] == '\n')) {
		const char *v;

		n = strcspn(l, "\n");
		while (is_space(*l) && *l != '\n') {
			l++;
			n--;
		}
		if (*l == '#' || n == 0 || line_value(l, "gpud-key"))
			continue;
		v = line_value(l, "token");
		t = v ? v : l;
		break;
	}
	if (!t)
		return NULL; /* cannot happen after a successful parse */
	n = strcspn(t, " \t\r\n");
	auth_hex(gpud_key, AUTH_KEY_LEN, hex);
	out = malloc(AUTH_CRED_MAX);
	if (out && snprintf(out, AUTH_CRED_MAX,
			    "# gpud credential: keep it secret (mode 0600)\n"
			    "token = %.*s\ngpud-key = %s\n", (int)n, t,
			    hex) >= AUTH_CRED_MAX) {
		free(out); /* cannot happen: the name is bounded */
		out = NULL;
	}
	return out;
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
	r = auth_secret_read(path, "token file", buf, sizeof(buf), err, errlen);
	if (r < 0)
		return r;
	r = auth_token_parse(buf, ret_tok);
	sodium_memzero(buf, sizeof(buf));
	if (r < 0)
		return gerr_fail(r, err, errlen,
			    "token file %s is malformed (want 'token = "
			    "NAME:SECRET' with a 64-hex-digit secret, and "
			    "'gpud-key = ' 64 hex digits)", path);
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

/* HMAC-SHA256(stored_key, nonce || name). */
static void client_signature(const uint8_t stored[AUTH_KEY_LEN],
			     const uint8_t nonce[AUTH_NONCE_LEN],
			     const char *name, uint8_t out[AUTH_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, stored, AUTH_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, nonce, AUTH_NONCE_LEN);
	if (name)
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)name,
					      strnlen(name, AUTH_NAME_MAX + 1));
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

void auth_proof(const uint8_t client_key[AUTH_KEY_LEN],
		const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
		uint8_t out[AUTH_MAC_LEN])
{
	uint8_t stored[AUTH_KEY_LEN], sig[AUTH_MAC_LEN];

	auth_stored_key(client_key, stored);
	client_signature(stored, nonce, name, sig);
	for (size_t i = 0; i < AUTH_MAC_LEN; i++)
		out[i] = client_key[i] ^ sig[i];
	sodium_memzero(sig, sizeof(sig));
}

int auth_proof_check(const uint8_t stored_key[AUTH_KEY_LEN],
		     const uint8_t nonce[AUTH_NONCE_LEN], const char *name,
		     const uint8_t proof[AUTH_MAC_LEN])
{
	uint8_t sig[AUTH_MAC_LEN], client_key[AUTH_KEY_LEN], h[AUTH_KEY_LEN];
	int r;

	if (!stored_key || !nonce || !proof || auth_name_valid(name) < 0)
		return GERR_AUTH;
	client_signature(stored_key, nonce, name, sig);
	for (size_t i = 0; i < AUTH_MAC_LEN; i++)
		client_key[i] = proof[i] ^ sig[i];
	auth_stored_key(client_key, h);
	r = sodium_memcmp(h, stored_key, AUTH_KEY_LEN) == 0 ? 0 : GERR_AUTH;
	sodium_memzero(client_key, sizeof(client_key));
	sodium_memzero(sig, sizeof(sig));
	return r;
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

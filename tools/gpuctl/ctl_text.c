/* ctl_text.c - escaping for what gpuctl prints (ctl_text.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_text.h"

/* Length of the UTF-8 sequence at p (1..4) and its code point, or 0 when
 * the bytes are no valid, shortest-form sequence. */
static size_t utf8_next(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static int shown_as_escape(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

char *ctl_text_escape(const char *s, int keep_newlines)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), o = 0;
	/* At most 4 characters per byte (\xNN); \uNNNN covers 2..3 bytes. */
	char *out = malloc(4 * len + 1);

	if (!out)
		return NULL;
	while (*p) {
		uint32_t c;
		size_t n = utf8_next(p, &c);

		if (n == 0) {
			o += (size_t)sprintf(out + o, "\\x%02x", p[0]);
			p++;
		} else if (n == 1 && (c < 0x20 || c == 0x7f) &&
			   !(keep_newlines && (c == '\n' || c == '\t'))) {
			o += (size_t)sprintf(out + o, "\\x%02x", (unsigned)c);
			p++;
		} else if (shown_as_escape(c)) {
			o += (size_t)sprintf(out + o, "\\u%04x", (unsigned)c);
			p += n;
		} else {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		}
	}
	out[o] = '\0';
	return out;
}

static int escape_string(json_t *v, int keep_newlines)
{
	char *e = ctl_text_escape(json_string_value(v), keep_newlines);
	int r;

	if (!e)
		return -1;
	r = strcmp(e, json_string_value(v)) == 0 ? 0 : json_string_set(v, e);
	free(e);
	return r;
}

static int escape_in(json_t *v, int keep_newlines)
{
	const char *key;
	json_t *x;
	size_t i;
	int r = 0;

	if (json_is_string(v))
		return escape_string(v, keep_newlines);
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (escape_in(x, 0))
				r = -1;
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			if (escape_in(x, strcmp(key, "text") == 0))
				r = -1;
	}
	return r;
}

int ctl_text_escape_json(json_t *v)
{
	return escape_in(v, 0);
}

/* ctl_text.h - what gpuctl prints of text that came from workers or gpud
 * (device names, errors, reasons, rendered answers): control characters
 * shown as escapes, so no such string can move the cursor, retitle the
 * terminal or forge a line of output.
 *
 * Escaped: C0 controls and DEL as \xNN (newline and tab kept only where
 * multi-line text is expected), C1 controls (U+0080..U+009F) and the
 * bidirectional overrides and isolates (U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) as \uNNNN, and bytes that are not UTF-8 as \xNN.
 * Everything else is kept as it is.
 *
 * Any thread; keeps nothing.
 */
#ifndef GPUD_CTL_TEXT_H
#define GPUD_CTL_TEXT_H

#include <jansson.h>

/* A malloc'ed escaped copy of s (NULL when out of memory). */
char *ctl_text_escape(const char *s, int keep_newlines);

/* Escape every string value in v, in place. Strings under the key "text"
 * (a rendered answer) keep their newlines and tabs. 0 or -1 (out of
 * memory: some strings are left as they were). */
int ctl_text_escape_json(json_t *v);

#endif

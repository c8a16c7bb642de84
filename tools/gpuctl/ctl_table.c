/* ctl_table.c - aligned tables (ctl_table.h). */
#include <stdlib.h>
#include <string.h>

#include "ctl_human.h"
#include "ctl_table.h"

void ctl_table_init(struct ctl_table *t, size_t ncols, const char *const *head,
		    const int *right)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols < CTL_TABLE_MAX_COLS ? ncols : CTL_TABLE_MAX_COLS;
	for (size_t i = 0; i < t->ncols; i++) {
		t->head[i] = head[i];
		t->right[i] = right ? right[i] : 0;
	}
}

void ctl_table_row(struct ctl_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 16;
		char **nc = realloc(t->cells, ncap * t->ncols * sizeof(*nc));
		if (!nc) {
			t->oom = 1;
			return;
		}
		t->cells = nc;
		t->cap = ncap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		char *c = strdup(cells[i] ? cells[i] : "-");
		if (!c)
			t->oom = 1;
		t->cells[t->nrows * t->ncols + i] = c;
	}
	t->nrows++;
}

/* Terminal columns of s: one per UTF-8 character. */
static size_t width_of(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* Append s padded to w columns into line (capacity cap). */
static size_t put_cell(char *line, size_t used, size_t cap, const char *s,
		       size_t w, int right, int last)
{
	size_t sw = width_of(s), pad = sw < w ? w - sw : 0, len = strlen(s);

	if (right)
		for (; pad && used + 1 < cap; pad--)
			line[used++] = ' ';
	if (used + len + 1 > cap)
		len = cap - used - 1;
	memcpy(line + used, s, len);
	used += len;
	if (!last)
		for (; pad && used + 1 < cap; pad--)
			line[used++] = ' ';
	line[used] = '\0';
	return used;
}

static void put_line(FILE *f, const char *line, size_t cols)
{
	size_t n = cols ? human_fit(line, cols) : strlen(line);

	/* No trailing blanks: a cut may end inside padding. */
	while (n && line[n - 1] == ' ')
		n--;
	fprintf(f, "%.*s\n", (int)n, line);
}

size_t ctl_table_print(const struct ctl_table *t, FILE *f, int no_header,
		       size_t max_rows, size_t cols)
{
	size_t w[CTL_TABLE_MAX_COLS] = {0}, cap = 2, lines = 0;
	size_t shown = t->nrows;
	char *line;

	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = no_header ? 0 : width_of(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			const char *s = t->cells[r * t->ncols + c];
			if (width_of(s) > w[c])
				w[c] = width_of(s);
		}
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			cap += w[c] + 2 + strlen(t->cells[r * t->ncols + c] ?
						 t->cells[r * t->ncols + c] : "");
	for (size_t c = 0; c < t->ncols; c++)
		cap += w[c] + 2;
	line = malloc(cap);
	if (!line)
		return 0;
	if (max_rows && shown > max_rows)
		shown = max_rows > 1 ? max_rows - 1 : 0;
	for (size_t r = no_header ? 1 : 0; r <= shown; r++) {
		size_t used = 0;
		line[0] = '\0';
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r == 0 ? t->head[c]
					       : t->cells[(r - 1) * t->ncols + c];
			if (c)
				used = put_cell(line, used, cap, "  ", 0, 0, 0);
			used = put_cell(line, used, cap, s ? s : "", w[c],
					t->right[c], c + 1 == t->ncols);
		}
		put_line(f, line, cols);
		lines++;
	}
	if (shown < t->nrows) {
		fprintf(f, "+%zu more\n", t->nrows - shown);
		lines++;
	}
	free(line);
	return lines;
}

void ctl_table_free(struct ctl_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* ctl_table.h - gpuctl's aligned tables: cells added row by row, printed
 * with each column as wide as its widest cell (so any number of rows
 * lines up), numbers right-aligned, the last column never padded. Lines
 * can be cut to a terminal's width and the rows to a height, with a
 * "+N more" line for those left out.
 *
 * A table is owned by its caller (ctl_table_free); single-threaded.
 */
#ifndef GPUD_CTL_TABLE_H
#define GPUD_CTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define CTL_TABLE_MAX_COLS 24

struct ctl_table {
	size_t ncols;
	const char *head[CTL_TABLE_MAX_COLS];
	int right[CTL_TABLE_MAX_COLS];  /* right-aligned */
	char **cells;                   /* nrows * ncols, malloc'ed */
	size_t nrows, cap;
	int oom;                        /* a cell was lost to memory */
};

/* Columns: heads borrowed for the table's life; right[i] aligns column i
 * to the right. */
void ctl_table_init(struct ctl_table *t, size_t ncols, const char *const *head,
		    const int *right);
/* Append a row: ncols strings (copied; NULL shows as "-"). */
void ctl_table_row(struct ctl_table *t, const char *const *cells);
/* Print: a header unless no_header, then the rows in at most max_rows
 * lines (0: no limit; when they do not fit, the last of those lines says
 * "+N more"), every line cut to cols columns (0: not cut). Returns the
 * lines printed. */
size_t ctl_table_print(const struct ctl_table *t, FILE *f, int no_header,
		       size_t max_rows, size_t cols);
void ctl_table_free(struct ctl_table *t);

#endif

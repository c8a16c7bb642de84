/* first_ckpt.h - a wl_run_io for the split tests (test_sudoku_split.c,
 * test_othello_cut.c): a checkpoint is always due, and the first one a run
 * hands over is kept (malloc'ed: the test frees ck). Include after
 * cmocka.h. */
#ifndef GPUD_FIRST_CKPT_H
#define GPUD_FIRST_CKPT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

struct first_ckpt {
	void *ck;
	size_t len;
	uint64_t units;
};

static inline int first_ckpt_due(void *o)
{
	(void)o;
	return 1;
}

static inline int first_ckpt_keep(void *o, const void *b, size_t n,
				  uint64_t u)
{
	struct first_ckpt *c = o;

	if (c->ck)
		return 0;
	c->ck = malloc(n);
	assert_non_null(c->ck);
	memcpy(c->ck, b, n);
	c->len = n;
	c->units = u;
	return 0;
}

/* The io of a run that keeps its first checkpoint in *c; it never has to
 * stop. */
#define FIRST_CKPT_IO(C)                                                      \
	{ (C), wl_io_quiet_progress, first_ckpt_due, first_ckpt_keep,         \
	  wl_io_quiet_never, NULL }

#endif

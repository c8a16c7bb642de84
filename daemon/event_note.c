/* event_note.c - gpud's own events, written on the database thread (see
 * event_note.h). */
#include "event_note.h"

#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "dbq.h"
#include "gerr.h"
#include "store.h"

struct note {
	double at;
	char kind[32], detail[256];
};

static void note_work(struct store *st, void *arg)
{
	struct note *n = arg;

	(void)store_event(st, n->at, 0, 0, 0, 0, n->kind, n->detail);
}

static void note_after(void *arg)
{
	free(arg);
}

int event_note(struct dbq *q, const char *kind, const char *detail)
{
	struct note *n = calloc(1, sizeof(*n));
	int rc;

	if (!n)
		return GERR_NOMEM;
	n->at = gclock_wall();
	snprintf(n->kind, sizeof(n->kind), "%s", kind);
	snprintf(n->detail, sizeof(n->detail), "%s", detail ? detail : "");
	rc = dbq_submit(q, note_work, note_after, n);
	if (rc)
		free(n);
	return rc;
}

/* parts_list.h - a job's verified leases kept in memory, as struct
 * wl_parts: for running a job without gpud (gpurun) and for tests, which
 * carve, run, verify and merge in one process.
 *
 * Ownership: the list owns copies of what is added. What get returns is
 * borrowed until the list is cleared. One thread at a time.
 */
#ifndef GPUD_PARTS_LIST_H
#define GPUD_PARTS_LIST_H

#include "workload.h"

struct parts_list {
	struct wl_parts pub;   /* pass &list->pub to hooks */
	struct wl_part *v;
	uint64_t cap;
};

void parts_list_init(struct parts_list *pl);
/* Append one merged lease: spec and note are referenced (note may be
 * NULL), hash copied. Returns 0 or GERR_NOMEM. */
int parts_list_add(struct parts_list *pl, const json_t *spec, uint64_t units,
		   const char *result_hash, const json_t *note);
void parts_list_clear(struct parts_list *pl);

#endif

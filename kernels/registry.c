/* registry.c - the table of workloads. Adding a workload is one line here
 * and one folder under kernels/. */
#include <string.h>

#include "workload.h"

extern const struct workload graveler_workload;
extern const struct workload officers_workload;
extern const struct workload othello_workload;
extern const struct workload sudoku_workload;

static const struct workload *const registry[] = {
	&graveler_workload,
	&officers_workload,
	&othello_workload,
	&sudoku_workload,
	NULL,
};

const struct workload *const *workload_all(void)
{
	return registry;
}

const struct workload *workload_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; registry[i]; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

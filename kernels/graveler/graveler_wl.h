/* graveler_wl.h - private to the Graveler workload's files: the hooks
 * that live outside graveler_workload.c (which puts them into struct
 * workload). */
#ifndef GPUD_GRAVELER_WL_H
#define GPUD_GRAVELER_WL_H

#include <stddef.h>
#include <jansson.h>

#include "workload.h"

/* render_plot (workload.h): the histogram of paralysed turns beside the
 * Binomial(231, 1/4) expectation scaled to the battles merged. */
int graveler_wl_render_plot(void *ctx, const json_t *params,
			    const json_t *answer, const struct wl_parts *parts,
			    const struct wl_blob_reader *rd, char **ret_svg,
			    size_t *ret_len, char *err, size_t errlen);

#endif

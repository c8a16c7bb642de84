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
wl_render_plot_fn graveler_wl_render_plot;

#endif

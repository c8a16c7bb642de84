/* control_workloads.c - `gpuctl workloads`: every registered workload with
 * its unit, description, parameters and exports, from the registry's
 * tables (workload.h), so gpuctl shows what this gpud runs. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "control_internal.h"
#include "workload.h"

/* A workload's parameters as rows; NULL when out of memory. */
static struct ctlcmd_wl_param *params_rows(const struct workload *wl, size_t *ret_n)
{
	size_t n = 0;
	struct ctlcmd_wl_param *rows;

	for (const struct wl_param_doc *p = wl->params_doc; p && p->name; p++)
		n++;
	rows = calloc(n ? n : 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++) {
		const struct wl_param_doc *p = &wl->params_doc[i];

		rows[i] = (struct ctlcmd_wl_param){ .name = p->name,
			.type = p->type ? p->type : "string", .def = p->def,
			.help = p->help ? p->help : "" };
	}
	*ret_n = n;
	return rows;
}

/* Every name in exports, with its help where the table has one; NULL
 * when out of memory. */
static struct ctlcmd_wl_export *exports_rows(const struct workload *wl, size_t *ret_n)
{
	size_t n = 0;
	struct ctlcmd_wl_export *rows;

	while (wl->exports && wl->exports[n])
		n++;
	rows = calloc(n + 1, sizeof(*rows));
	for (size_t i = 0; rows && i < n; i++) {
		rows[i] = (struct ctlcmd_wl_export){ .name = wl->exports[i], .help = "" };
		for (const struct wl_export_doc *e = wl->exports_doc; e && e->name; e++)
			if (strcmp(e->name, wl->exports[i]) == 0)
				rows[i].help = e->help;
	}
	/* gpud draws every workload's plot that has one (results.c). */
	if (rows && wl->render_plot)
		rows[n++] = (struct ctlcmd_wl_export){ .name = "plot",
			.help = "the job's plot as SVG, as it stands" };
	*ret_n = n;
	return rows;
}

json_t *ctl_workloads_reply(void)
{
	const struct workload *const *all = workload_all();
	struct ctlcmd_workload *rows;
	size_t n = 0, i;
	json_t *reply = NULL;

	while (all[n])
		n++;
	rows = calloc(n ? n : 1, sizeof(*rows));
	for (i = 0; rows && i < n; i++) {
		rows[i] = (struct ctlcmd_workload){ .name = all[i]->name,
			.unit_name = all[i]->unit_name,
			.description = all[i]->description ? all[i]->description : "",
			.extend = all[i]->extend != NULL };
		rows[i].params = params_rows(all[i], &rows[i].n_params);
		rows[i].exports = exports_rows(all[i], &rows[i].n_exports);
		if (!rows[i].params || !rows[i].exports)
			break;
	}
	if (rows && i == n)
		reply = ctlcmd_reply_encode(CTLCMD_WORKLOADS, &(struct ctlcmd_reply){
			.workloads = rows, .n_workloads = n });
	for (size_t k = 0; rows && k < n; k++) {
		free(rows[k].params);
		free(rows[k].exports);
	}
	free(rows);
	return reply;
}

/* control_workloads.c - `gpuctl workloads`: every registered workload with
 * its unit, description, parameters and exports, from the registry's
 * tables (workload.h), so gpuctl shows what this gpud runs. */
#include <string.h>

#include <jansson.h>

#include "control_internal.h"
#include "workload.h"

static json_t *params_json(const struct workload *wl)
{
	json_t *arr = json_array();

	for (const struct wl_param_doc *p = wl->params_doc; p && p->name; p++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:s}",
			"name", p->name, "type", p->type ? p->type : "string",
			"default", p->def, "help", p->help ? p->help : ""));
	return arr;
}

/* Every name in exports, with its help where the table has one. */
static json_t *exports_json(const struct workload *wl)
{
	json_t *arr = json_array();

	for (size_t i = 0; wl->exports && wl->exports[i]; i++) {
		const char *help = "";
		for (const struct wl_export_doc *e = wl->exports_doc; e && e->name; e++)
			if (strcmp(e->name, wl->exports[i]) == 0)
				help = e->help;
		json_array_append_new(arr, json_pack("{s:s, s:s}", "name",
			wl->exports[i], "help", help));
	}
	/* gpud draws every workload's plot that has one (results.c). */
	if (wl->render_plot)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "name", "plot",
			"help", "the job's plot as SVG, as it stands"));
	return arr;
}

json_t *ctl_workloads_reply(void)
{
	const struct workload *const *all = workload_all();
	json_t *arr = json_array();

	for (size_t i = 0; all[i]; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:o, s:o, s:b}",
			"name", all[i]->name, "unit_name", all[i]->unit_name,
			"description", all[i]->description ? all[i]->description : "",
			"params", params_json(all[i]), "exports", exports_json(all[i]),
			"extend", all[i]->extend != NULL));
	return json_pack("{s:b, s:o}", "ok", 1, "workloads", arr);
}

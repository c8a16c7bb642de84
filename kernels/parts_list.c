/* parts_list.c - verified leases in memory (parts_list.h). */
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "parts_list.h"

static int get(void *opaque, uint64_t k, struct wl_part *ret)
{
	struct parts_list *pl = opaque;

	if (k >= pl->pub.n)
		return GERR_NOTFOUND;
	*ret = pl->v[k];
	return 0;
}

void parts_list_init(struct parts_list *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->pub.opaque = pl;
	pl->pub.get = get;
}

int parts_list_add(struct parts_list *pl, const json_t *spec, uint64_t units,
		   const char *result_hash, const json_t *note)
{
	char *hash = strdup(result_hash ? result_hash : "");

	if (!hash)
		return GERR_NOMEM;
	if (pl->pub.n == pl->cap) {
		uint64_t cap = pl->cap ? 2 * pl->cap : 16;
		struct wl_part *v = realloc(pl->v, cap * sizeof(*v));
		if (!v) {
			free(hash);
			return GERR_NOMEM;
		}
		pl->v = v;
		pl->cap = cap;
	}
	pl->v[pl->pub.n++] = (struct wl_part){
		.spec = json_incref((json_t *)spec),
		.units = units,
		.result_hash = hash,
		.note = note ? json_incref((json_t *)note) : NULL,
	};
	return 0;
}

void parts_list_clear(struct parts_list *pl)
{
	for (uint64_t k = 0; k < pl->pub.n; k++) {
		json_decref((json_t *)pl->v[k].spec);
		json_decref((json_t *)pl->v[k].note);
		free((char *)pl->v[k].result_hash);
	}
	free(pl->v);
	parts_list_init(pl);
}

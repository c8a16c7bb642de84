/* job_parts.c - a job's verified leases as struct wl_parts (job_parts.h). */
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "job_parts.h"

static int parse_part(struct job_parts *jp, const struct store_part *p,
		      struct wl_part *ret)
{
	json_decref(jp->spec);
	json_decref(jp->note);
	jp->note = NULL;
	jp->spec = json_loads(p->spec, 0, NULL);
	if (p->note)
		jp->note = json_loads(p->note, JSON_DECODE_ANY, NULL);
	if (!jp->spec || (p->note && !jp->note))
		return GERR_CORRUPT;
	ret->spec = jp->spec;
	ret->units = p->units;
	ret->result_hash = p->result;
	ret->note = jp->note;
	return 0;
}

static int get_live(void *opaque, uint64_t k, struct wl_part *ret)
{
	struct job_parts *jp = opaque;
	int rc;

	if (k >= jp->pub.n)
		return GERR_NOTFOUND;
	store_part_clear(&jp->cur);
	rc = store_part_get(jp->st, jp->job_id, k, &jp->cur);
	return rc ? rc : parse_part(jp, &jp->cur, ret);
}

static int get_loaded(void *opaque, uint64_t k, struct wl_part *ret)
{
	struct job_parts *jp = opaque;

	if (k >= jp->pub.n)
		return GERR_NOTFOUND;
	return parse_part(jp, &jp->loaded[k], ret);
}

int job_parts_open(struct job_parts *jp, struct store *st, int64_t job_id)
{
	memset(jp, 0, sizeof(*jp));
	jp->st = st;
	jp->job_id = job_id;
	jp->pub.opaque = jp;
	jp->pub.get = get_live;
	return store_part_count(st, job_id, &jp->pub.n);
}

int job_parts_load(struct job_parts *jp, struct store *st, int64_t job_id)
{
	uint64_t n = 0;
	int rc;

	memset(jp, 0, sizeof(*jp));
	jp->job_id = job_id;
	jp->pub.opaque = jp;
	jp->pub.get = get_loaded;
	rc = store_part_count(st, job_id, &n);
	if (rc || n == 0)
		return rc;
	jp->loaded = calloc(n, sizeof(*jp->loaded));
	if (!jp->loaded)
		return GERR_NOMEM;
	for (uint64_t k = 0; k < n; k++) {
		rc = store_part_get(st, job_id, k, &jp->loaded[k]);
		if (rc) {
			jp->pub.n = k;
			job_parts_clear(jp);
			return rc;
		}
		jp->pub.n = k + 1;
	}
	return 0;
}

void job_parts_clear(struct job_parts *jp)
{
	for (uint64_t k = 0; jp->loaded && k < jp->pub.n; k++)
		store_part_clear(&jp->loaded[k]);
	free(jp->loaded);
	store_part_clear(&jp->cur);
	json_decref(jp->spec);
	json_decref(jp->note);
	memset(jp, 0, sizeof(*jp));
}

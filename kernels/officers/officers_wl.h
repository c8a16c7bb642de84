/* officers_wl.h - what the files of the Officers workload share: params,
 * specs and notes parsed, the job's stored ranges read from its parts, and
 * the hooks officers_workload.c puts in struct workload. Private to
 * kernels/officers/ (and its unit test).
 *
 * The files, one concern each:
 *   officers_workload.c  the format of params, cursor, spec, result, answer
 *                        and note; run; the struct
 *   officers_plan.c      params, specs, carve, next_lease, extend
 *   officers_verify.c    check_checkpoint, verify (sampled recomputation)
 *   officers_answer.c    merge, the stored ranges, finish
 *   officers_render.c    render_text, render_plot, export_data
 */
#ifndef GPUD_OFFICERS_WL_H
#define GPUD_OFFICERS_WL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "workload.h"

#define OFFICERS_LEASE_DEFAULT (1ull << 24)
#define OFFICERS_LEASE_MAX (1ull << 26)
/* Positions of a lease that verify recomputes at random (see
 * officers_verify.c for the detection probability it gives). */
#define OFFICERS_VERIFY_SAMPLES 2048u

/* A lease's spec, parsed (officers_workload.c describes the JSON). */
struct officers_spec {
	uint64_t from, to, digest;
	const char *state; /* borrowed from the spec; NULL for from == 0 */
	int check;         /* an older gpud's check lease (stepped over) */
};

/* params' "to", checked (1..OFFICERS_MAX_N). 0 or GERR_INVAL. */
int officers_wl_to(const json_t *params, uint64_t *to, char *err,
		   size_t errlen);
/* Parse and bound-check a spec against params. 0 or GERR_INVAL. */
int officers_wl_spec(const json_t *params, const json_t *spec,
		     struct officers_spec *sp, char *err, size_t errlen);
/* 16 hex digits <-> uint64 (digests, checksums). */
int officers_wl_hex(const json_t *j, uint64_t *v);
json_t *officers_wl_json_hex(uint64_t v);
/* The answer's integer field key (0 when absent or not an integer). */
uint64_t officers_wl_answer_u64(const json_t *answer, const char *key);
/* A part's note ({"digest": end digest}): 0, or GERR_CORRUPT with a
 * message naming part k when it has none or it is malformed. */
int officers_wl_note_digest(const struct wl_part *p, uint64_t k,
			    uint64_t *digest, char *err, size_t errlen);

/* A job's stored ranges (its extension leases), rebuilt from its parts. */
struct officers_range {
	uint64_t from, to;
	uint64_t digest_in, digest_out; /* states at from and at to */
	char hash[65];                  /* the result blob: the state at to */
};

struct officers_ranges {
	struct officers_range *v;
	size_t n;
};

/* Read every part of a job in merge order: extension parts must cover
 * [0, end) in order, each starting from the state (hash and digest) the
 * range before it ended in (check parts of older gpuds are stepped
 * over). Linear in the parts.
 * 0, GERR_VERIFY (a broken chain), GERR_CORRUPT (a part without a note or
 * unreadable) or GERR_NOMEM, with a message. */
int officers_ranges_load(const json_t *params, const struct wl_parts *parts,
			 struct officers_ranges *rs, char *err, size_t errlen);
void officers_ranges_free(struct officers_ranges *rs);

/* The hooks, by file. */
wl_parse_params_fn officers_wl_parse_params;
wl_carve_fn officers_wl_carve;
wl_next_lease_fn officers_wl_next_lease;
wl_extend_fn officers_wl_extend;

wl_check_checkpoint_fn officers_wl_check_checkpoint;
wl_verify_fn officers_wl_verify;

wl_merge_fn officers_wl_merge;
/* Two results of one lease agree: the same range, values and end state
 * (its digest); how much history each kept (vbase) may differ. */
wl_results_agree_fn officers_wl_results_agree;
wl_finish_fn officers_wl_finish;

wl_render_text_fn officers_wl_render_text;
wl_render_plot_fn officers_wl_render_plot;
wl_export_data_fn officers_wl_export;

#endif

/* sudoku_plan.c - the Sudoku workload's parameters and lease plan:
 * parse_params, the checks of a spec every hook shares, and carve.
 *
 * params  {"box": "4x3", "rows": R, "cols": C} (box oriented, sudoku.h)
 * units   gangsters (144,578 for 4x3, 355 for 5x2, 44 for 3x3)
 * cursor  {"next": g}: gangsters [0, g) are leased
 * spec    {"set": s, "from": a, "to": b}: gangsters [a, b) of GangSet s
 *         (a lease never crosses a set and, for C == 3 when it can, ends
 *         on a boundary of a c2 group so a lease reuses its band lines).
 *         Every shape is leased so: a 5x2 job (355 gangsters of 1.7 s of
 *         one core each) is shared by the fleet and verified by sampling.
 *         Jobs carved before, with one lease {"set": -1, "from": 0, "to":
 *         G} of 1 unit for the shapes other than 4x3, still run.
 * split   a lease [a, b) cuts at any gangster a + at (0 < at < b - a):
 *         head [a, a + at), tail [a + at, b), same set; a checkpoint of
 *         [a, b) with done <= at is resumed by the head (sudoku_workload.c)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_internal.h"
#include "workload.h"

#define LEASE_DEFAULT 64u   /* gangsters: ~2 s on an H100 at 25 ms each */
#define LEASE_MAX SUDOKU_LEASE_MAX
#define GROUP_CHUNK 16u     /* the kernel's gangsters per block */

int sudoku_wl_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

int sudoku_wl_params(const json_t *params, int *R, int *C, char *err,
		     size_t errlen)
{
	const char *box;

	if (!json_is_object(params) ||
	    !json_is_string(json_object_get(params, "box"))) {
		gerr_printf(err, errlen, "sudoku: params need a 'box'");
		return GERR_INVAL;
	}
	box = json_string_value(json_object_get(params, "box"));
	return sudoku_parse_box(box, R, C, err, errlen);
}

int sudoku_wl_spec(void *ctx, const json_t *params, const json_t *spec,
		   int *R, int *C, const struct sudoku_setup **S, unsigned what,
		   uint32_t *from, uint32_t *to, char *err, size_t errlen)
{
	uint64_t a, b;
	json_int_t set;
	int legacy, rc = sudoku_wl_params(params, R, C, err, errlen);

	if (rc)
		return rc;
	if (!json_is_object(spec) ||
	    !json_is_integer(json_object_get(spec, "set"))) {
		gerr_printf(err, errlen, "sudoku: spec must be an object with 'set'");
		return GERR_INVAL;
	}
	set = json_integer_value(json_object_get(spec, "set"));
	rc = wl_json_u64(spec, "from", 1, 0, &a, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, "to", 1, 0, &b, err, errlen);
	if (rc)
		return rc;
	rc = sudoku_ctx_setup(ctx, *R, *C, *C == 3 ? what : 0,
			      sudoku_wl_threads(), S, err, errlen);
	if (rc)
		return rc;
	if (a >= b || b > (*S)->ngang) {
		gerr_printf(err, errlen, "sudoku: bad lease [%" PRIu64 ", %" PRIu64
		       ") of %u gangsters", a, b, (*S)->ngang);
		return GERR_INVAL;
	}
	legacy = set == -1 && !sudoku_big_shape(*R, *C) && a == 0 &&
		 b == (*S)->ngang; /* the old one-lease form */
	if (!legacy && (set < 0 || (uint64_t)set >= (*S)->nnodes ||
			a < (*S)->set_start[set] ||
			b > (*S)->set_start[set + 1])) {
		gerr_printf(err, errlen, "sudoku: lease [%" PRIu64 ", %" PRIu64
		       ") is not inside set %" JSON_INTEGER_FORMAT, a, b, set);
		return GERR_INVAL;
	}
	*from = (uint32_t)a;
	*to = (uint32_t)b;
	return 0;
}

int sudoku_wl_parse_params(void *ctx, const json_t *args, json_t **ret_params,
			   uint64_t *ret_total_units, char *err, size_t errlen)
{
	static const char *const keys[] = {"box", NULL};
	const struct sudoku_setup *S;
	json_t *val, *p;
	int R, C, rc;
	char box[16];

	rc = wl_args_check(args, keys, "sudoku", "box, e.g. --box 4x3", err,
			   errlen);
	if (rc)
		return rc;
	val = json_object_get(args, "box");
	if (!json_is_string(val)) {
		gerr_printf(err, errlen, "sudoku: missing parameter 'box' (e.g. 4x3)");
		return GERR_INVAL;
	}
	rc = sudoku_parse_box(json_string_value(val), &R, &C, err, errlen);
	if (rc)
		return rc;
	/* Enumerate the gangsters now (gpud calls this on its thread pool),
	 * so carve, which runs on gpud's database thread, finds them in the
	 * context and stays cheap (1.7 s for 4x3, 0.03 s for 5x2). */
	rc = sudoku_ctx_setup(ctx, R, C, 0, sudoku_wl_threads(), &S, err,
			      errlen);
	if (rc)
		return rc;
	snprintf(box, sizeof(box), "%dx%d", R, C);
	p = json_pack("{s:s, s:i, s:i}", "box", box, "rows", R, "cols", C);
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	*ret_total_units = S->ngang;
	return 0;
}

static uint32_t c2_of(const struct sudoku_setup *S, uint32_t g)
{
	return S->gang_tuple[(size_t)g * (S->R - 1) + 1];
}

int sudoku_wl_carve(void *ctx, const json_t *params, const json_t *cursor,
		    const json_t *answer, const struct wl_parts *parts,
		    uint64_t want_units, json_t **ret_spec, uint64_t *ret_units,
		    json_t **ret_cursor, int *ret_last)
{
	char err[WL_ERRLEN];
	const struct sudoku_setup *S;
	uint64_t next = 0;
	uint32_t a, b, set, send, want;
	json_t *spec, *cur;
	int R, C;

	(void)answer; /* the plan is the cursor alone */
	(void)parts;
	if (sudoku_wl_params(params, &R, &C, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err, sizeof(err)))
		return GERR_INVAL;
	if (sudoku_ctx_setup(ctx, R, C, 0, sudoku_wl_threads(), &S, err,
			     sizeof(err)))
		return GERR_NOMEM;
	if (next >= S->ngang)
		return GERR_DONE;
	a = (uint32_t)next;
	want = want_units ? (uint32_t)(want_units > LEASE_MAX ? LEASE_MAX
							       : want_units)
			  : LEASE_DEFAULT;
	set = sudoku_set_of(S, a);
	send = S->set_start[set + 1];
	b = send - a <= want ? send : a + want;
	if (C == 3 && b < send && c2_of(S, b) == c2_of(S, b - 1)) {
		/* inside a c2 group: end at its start, its end (if at most
		 * 2x the wish), or a multiple of the kernel's chunk in it */
		uint32_t gs = b, ge = b;
		while (gs > a && c2_of(S, gs - 1) == c2_of(S, b))
			gs--;
		while (ge < send && c2_of(S, ge) == c2_of(S, b))
			ge++;
		if (gs > a)
			b = gs;
		else if (ge - a <= 2 * want)
			b = ge;
		else
			b = a + ((b - a + GROUP_CHUNK - 1) / GROUP_CHUNK) * GROUP_CHUNK;
		if (b > send)
			b = send;
	}
	spec = json_pack("{s:I, s:I, s:I}", "set", (json_int_t)set, "from",
			 (json_int_t)a, "to", (json_int_t)b);
	cur = json_pack("{s:I}", "next", (json_int_t)b);
	if (!spec || !cur)
		goto nomem;
	*ret_spec = spec;
	*ret_units = b - a;
	*ret_cursor = cur;
	*ret_last = b == S->ngang;
	return 0;
nomem:
	json_decref(spec);
	json_decref(cur);
	return GERR_NOMEM;
}

int sudoku_wl_split(void *ctx, const json_t *params, const json_t *spec,
		    uint64_t at, json_t **ret_head, uint64_t *ret_head_units,
		    json_t **ret_tail, uint64_t *ret_tail_units)
{
	char err[WL_ERRLEN];
	const struct sudoku_setup *S;
	uint32_t from, to, cut;
	json_t *head, *tail, *set;
	int R, C;

	if (sudoku_wl_spec(ctx, params, spec, &R, &C, &S, 0, &from, &to, err,
			   sizeof(err)))
		return GERR_INVAL;
	set = json_object_get(spec, "set");
	if (json_integer_value(set) < 0 || at == 0 || at >= to - from)
		return GERR_AGAIN; /* the old one-unit form, or no cut inside */
	cut = from + (uint32_t)at;
	head = json_pack("{s:O, s:I, s:I}", "set", set, "from",
			 (json_int_t)from, "to", (json_int_t)cut);
	tail = json_pack("{s:O, s:I, s:I}", "set", set, "from",
			 (json_int_t)cut, "to", (json_int_t)to);
	if (!head || !tail) {
		json_decref(head);
		json_decref(tail);
		return GERR_NOMEM;
	}
	*ret_head = head;
	*ret_head_units = cut - from;
	*ret_tail = tail;
	*ret_tail_units = to - cut;
	return 0;
}

int sudoku_wl_match_ckpt(const struct sudoku_res *r, int R, int C,
			 uint32_t from, uint32_t to, char *err, size_t errlen)
{
	if (r->R != R || r->C != C || r->from != from || r->to < to ||
	    r->done > to - from) {
		gerr_printf(err, errlen, "sudoku: checkpoint is for %ux%u [%u, "
			    "%u) with %u done, lease is %dx%d [%u, %u)", r->R,
			    r->C, r->from, r->to, r->done, R, C, from, to);
		return GERR_VERIFY;
	}
	return 0;
}

int sudoku_wl_match(const struct sudoku_res *r, int R, int C, uint32_t from,
		    uint32_t to, const char *what, char *err, size_t errlen)
{
	if (r->R != R || r->C != C || r->from != from || r->to != to) {
		gerr_printf(err, errlen, "sudoku: %s is for %ux%u [%u, %u), lease "
		       "is %dx%d [%u, %u)", what, r->R, r->C, r->from, r->to,
		       R, C, from, to);
		return GERR_VERIFY;
	}
	return 0;
}


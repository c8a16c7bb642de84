/* sudoku_internal.h - what the Sudoku workload's C files share and nothing
 * outside kernels/sudoku uses: the steps of a setup build (sudoku_setup.c
 * calls them in order), the parallel loop, and the workload's own helpers
 * (parameters, specs, the context's setups) for its hook files. */
#ifndef GPUD_SUDOKU_INTERNAL_H
#define GPUD_SUDOKU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sudoku.h"
#include "sudoku_format.h"
#include "workload.h"

/* ---- setup steps (each fills its fields of S; S is freed by the caller on
 * failure, so a step leaves what it allocated in S) ---------------------- */

void sudoku_perm_id(struct sudoku_perm *p);
void sudoku_otab_free(struct sudoku_otab *t, uint32_t K);
/* sigma0, the orbit tables, the reduced entries and the nodes (needs the
 * codes). */
int sudoku_orbits_build(struct sudoku_setup *S);
/* Gangsters, members and sets (needs the orbit tables). */
int sudoku_gangsters_find(struct sudoku_setup *S);
/* cnt of every gangster, have_cnt, max_cnt. */
int sudoku_cnt_fill(struct sudoku_setup *S, int threads, char *err,
		    size_t errlen);
/* T (C == 3; needs cnt and Kp). */
int sudoku_T_fill(struct sudoku_setup *S, int threads);

/* ---- the workload's hooks ------------------------------------------------ */

/* CPU threads for setups and recounts on gpud (the cores, at most 16). */
int sudoku_wl_threads(void);
/* 4x3: its run may use the GPU, its verification samples pieces. Every
 * shape is leased in gangster ranges. */
static inline int sudoku_big_shape(int R, int C)
{
	return R == 4 && C == 3;
}
/* What a run, verify or merge needs built: T for C == 3; for C == 2 only
 * the enumeration, since a lease counts its own gangsters' bands
 * (sudoku_cnt_range): a 5x2 setup with every band count is the whole
 * job's work (355 gangsters at 1.7 s). */
static inline unsigned sudoku_wl_what(int C)
{
	return C == 3 ? SUDOKU_BUILD_T : 0;
}
/* Band counts of gangsters [from, to) into v[i] = (cnt, 0), on threads
 * threads; needs only the enumeration. GERR_UNSUPPORTED when one exceeds
 * 32 bits, GERR_INVAL for a bad range. */
int sudoku_cnt_range(const struct sudoku_setup *S, uint32_t from, uint32_t to,
		     int threads, uint64_t (*v)[2]);
/* 5x2 verification recounts one gangster in this many of a lease (at
 * least one), 3x3's one (gangster, piece) unit in this many, drawn with
 * gpud's seed: ~3% of the lease's CPU time. The smaller C == 2 shapes
 * recount every gangster (microseconds each). */
#define SUDOKU_VERIFY_CNT_EVERY 32u
/* The oriented shape of canonical params. */
int sudoku_wl_params(const json_t *params, int *R, int *C, char *err,
		     size_t errlen);
/* Shape, setup (from the context, built with `what` for C == 3, with
 * the enumeration alone for C == 2: sudoku_wl_what) and gangster range
 * of a lease's spec, checked against the setup's sets. */
/* (A spec of the old one-lease form {"set": -1, "from": 0, "to": G} of
 * the smaller shapes is still accepted: jobs carved before.) */
int sudoku_wl_spec(void *ctx, const json_t *params, const json_t *spec,
		   int *R, int *C, const struct sudoku_setup **S, unsigned what,
		   uint32_t *from, uint32_t *to, char *err, size_t errlen);
/* GERR_VERIFY unless r is for shape R x C and gangsters [from, to). */
int sudoku_wl_match(const struct sudoku_res *r, int R, int C, uint32_t from,
		    uint32_t to, const char *what, char *err, size_t errlen);

/* GERR_VERIFY unless checkpoint r is one of a lease of shape R x C from
 * gangster from that ends at or after to, with at most to - from done:
 * the checkpoint of a lease cut later by split (sudoku_wl_split) at or
 * after its done is the head's. */
int sudoku_wl_match_ckpt(const struct sudoku_res *r, int R, int C,
			 uint32_t from, uint32_t to, char *err, size_t errlen);

/* Units (gangster, piece) a 4x3 verification recounts (sudoku_verify.c
 * gives the detection formula): the cost of one gangster. */
#define SUDOKU_VERIFY_UNITS SUDOKU_PIECES
/* Recount k units of r (a whole result of shape S, C == 3, with pieces)
 * drawn from all of them with seed, or every unit when k == 0: 0 when each
 * matches, GERR_VERIFY with the first that does not, GERR_NOMEM. */
int sudoku_verify_units(const struct sudoku_setup *S,
			const struct sudoku_res *r, uint64_t seed, uint32_t k,
			char *err, size_t errlen);

/* Hooks of struct workload defined outside sudoku_workload.c. */
wl_parse_params_fn sudoku_wl_parse_params;
wl_carve_fn sudoku_wl_carve;
wl_split_fn sudoku_wl_split;
wl_verify_fn sudoku_wl_verify;
wl_merge_fn sudoku_wl_merge;
wl_finish_fn sudoku_wl_finish;
wl_render_text_fn sudoku_wl_render_text;
wl_export_data_fn sudoku_wl_export;
extern const char *const sudoku_wl_exports[];
wl_render_plot_fn sudoku_wl_render_plot;

/* The per-gangster values of a job, read from its leases' result blobs:
 * v[g] (128 bits, v[g][0] low) is W(g) for the 3-band shapes (C == 3)
 * and the band count cnt(g) for the others, where seen[g]. */
struct sudoku_counts {
	int rows, cols;
	uint32_t ngang, done;   /* gangsters, and how many are seen */
	uint64_t (*v)[2];       /* [ngang], owned */
	uint8_t *seen;          /* [ngang], owned */
};
/* GERR_NOTFOUND before the first merge; GERR_CORRUPT when the leases
 * overlap or a blob does not match its lease. */
int sudoku_wl_counts(const json_t *params, const json_t *answer,
		     const struct wl_parts *parts,
		     const struct wl_blob_reader *rd, struct sudoku_counts *ret,
		     char *err, size_t errlen);
void sudoku_counts_clear(struct sudoku_counts *c);
/* Up to this many gangsters (every shape but 4x3) the plot has a bar for
 * each; above, a histogram of the counts' sizes (sudoku_plot.c). */
#define SUDOKU_PLOT_BY_INDEX 400
/* The plot of c (the render_plot hook's output). */
int sudoku_counts_plot(const struct sudoku_counts *c, char **ret_svg,
		       size_t *ret_len, char *err, size_t errlen);


#endif

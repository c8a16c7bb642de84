/* workload.h - the interface every workload implements (one struct of
 * function pointers), and the registry that lists them.
 *
 * A workload is one folder under kernels/ and one line in registry.c.
 * daemon/ and worker/ only ever talk to a workload through this struct, so a
 * fifth workload touches neither.
 *
 * Vocabulary
 *   params  canonical job parameters (JSON object), produced by parse_params
 *           from what gpuctl sent; stored with the job; immutable.
 *   units   the workload's unit of work (battles, values, positions,
 *           gangsters). Progress, rates and lease sizes are in units.
 *   cursor  the planner's position in the job (JSON, owned by the workload;
 *           NULL before the first lease). Stored with the job.
 *   spec    one lease's description (JSON object, e.g. {"begin":..,"end":..}).
 *   result  the bytes a worker produces for a lease (workload's own binary
 *           format, wrapped in a blob by the caller).
 *   answer  the job's merged state (JSON object, owned by the workload);
 *           NULL before the first merge.
 *   input   an optional file given at submission (gpuctl submit W --file F),
 *           validated and canonicalised by parse_input, stored by gpud as a
 *           blob; gpud adds its hash to params as "input".
 *   blobs   results and inputs are content-addressed blobs in gpud; a spec
 *           or params may name them by hash, and a run reads them with
 *           io->fetch (the worker asks gpud for them).
 *
 * Context: a workload may keep tables that are expensive to build (Sudoku's
 * band tables) in a context that its open hook builds; the registry opens
 * every workload once per process (workload_open_all, from main) and hands
 * the context back as the first argument of every hook (NULL for a workload
 * without open). The context is shared by every thread: what a hook changes
 * in it (a cache filled on demand) it changes under the context's own lock.
 * There is no other mutable state in a workload.
 *
 * Answers stay small: merge keeps in the answer only what does not grow with
 * the number of leases (sums, histograms, the last lease's state). What
 * belongs to one lease (its result hash, a digest, a per-item table) stays
 * with that lease: gpud keeps each verified lease's spec, result hash and
 * the small note merge returns for it, and hands them to the hooks that need
 * them as struct wl_parts, in merge order. So a merge costs the same for the
 * first lease and the ten-thousandth.
 *
 * Threads (gpud): parse_params, parse_input, check_checkpoint, verify,
 * render_text, render_plot and export_data run on gpud's thread pool;
 * carve, merge, finish, blame and extend run on its database thread (keep
 * them cheap: every lease operation waits for that thread; blame runs only
 * when finish failed). gpuworker: cuda_open
 * and cuda_close on its main thread, run and next_lease on its runner
 * thread. Any hook may run on several threads at once for different jobs.
 *
 * Ownership: json_t arguments are borrowed unless a parameter is named ret_*,
 * in which case the caller receives a new reference. Byte buffers passed in
 * are borrowed. ret_* outputs are written only on success.
 *
 * Errors: 0 or a negative GERR_* code; where an err buffer is given, a one
 * line human-readable reason is written into it on failure.
 */
#ifndef GPUD_WORKLOAD_H
#define GPUD_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define WL_ERRLEN 256

/* verify's one positive answer: every check it made passed, and the lease
 * holds items too costly to recompute on gpud, one of which was drawn with
 * gpud's secret seed: gpud asks another worker for its result of the lease
 * and merges only once the two agree (replica.h), unless no worker of
 * another credential could ever answer (then it merges and says so in an
 * event, "spot_skipped"). A workload returns it with the probability its
 * own detection formula states, never instead of a failure. */
#define WL_VERIFY_SPOT 1

/* One parameter parse_params takes (gpuctl submit W --NAME VALUE), as
 * gpuctl workloads and gpuctl submit W --help show it. */
struct wl_param_doc {
	const char *name;  /* "battles" */
	const char *type;  /* "integer", "string" or "file" */
	const char *def;   /* the default, as text; NULL when required or
			      when it depends on other parameters */
	const char *help;  /* one line: meaning and range */
};

/* One of exports[], with the options export_data reads. */
struct wl_export_doc {
	const char *name;  /* "values" */
	const char *help;  /* one line: format and options */
};

/* What a run reports back while it works. Implemented by the worker (and by
 * tests). All callbacks are called from the runner thread. */
struct wl_run_io {
	void *opaque;
	/* Units done so far in this lease (absolute, not a delta). */
	void (*progress)(void *opaque, uint64_t units_done);
	/* Non-zero when the runner should emit a checkpoint now (time cadence or
	 * SIGTERM). */
	int (*checkpoint_due)(void *opaque);
	/* Hand over a checkpoint; the bytes are copied. Returns 0 or GERR_*. */
	int (*checkpoint)(void *opaque, const void *bytes, size_t len,
			  uint64_t units_done);
	/* Non-zero when the run must stop now (lease lost, cancel, shutdown):
	 * the run returns GERR_CANCELLED after emitting nothing more. */
	int (*should_stop)(void *opaque);
	/* Read a blob of gpud's by its hash (64 hex digits): the decoded
	 * bytes, malloc'ed, caller frees. Blocks until they arrive; returns
	 * GERR_NOTFOUND, GERR_CANCELLED (lease lost) or GERR_IO. May be NULL
	 * where no coordinator is reachable (then runs needing blobs fail). */
	int (*fetch)(void *opaque, const char *hash, void **ret, size_t *ret_len);
};

/* wl_run_io callbacks for a run that no worker watches (tests, tools):
 * progress is dropped, no checkpoint is ever due and one handed over is
 * dropped, the run never has to stop. Any thread. */
void wl_io_quiet_progress(void *opaque, uint64_t units_done);
int wl_io_quiet_never(void *opaque);
int wl_io_quiet_checkpoint(void *opaque, const void *bytes, size_t len,
			   uint64_t units_done);
/* A struct wl_run_io with those callbacks, OPAQUE and FETCH. */
#define WL_RUN_IO_QUIET(OPAQUE, FETCH)                                        \
	{ (OPAQUE), wl_io_quiet_progress, wl_io_quiet_never,                  \
	  wl_io_quiet_checkpoint, wl_io_quiet_never, (FETCH) }

/* Read access to gpud's stored blobs, for export_data on the coordinator:
 * same contract as wl_run_io.fetch. */
struct wl_blob_reader {
	void *opaque;
	int (*fetch)(void *opaque, const char *hash, void **ret, size_t *ret_len);
};

/* Where a run executes. */
enum wl_device_kind { WL_DEVICE_CPU = 0, WL_DEVICE_CUDA = 1 };

struct wl_device {
	enum wl_device_kind kind;
	int index;   /* CUDA device ordinal, or 0 for cpu */
	int threads; /* CPU threads to use (>= 1) */
	void *cuda_ctx; /* workload-private device context, created by
			   cuda_open; NULL on CPU */
};

/* What a run hook reads of dev (NULL: the CPU): the CPU threads to use
 * (dev's, at least 1; 1 without dev) in *ret_threads where it is not NULL,
 * and the CUDA context in *ret_cuda (NULL on the CPU). GERR_INVAL, "WHO:
 * CUDA device without a context", for a CUDA device that has none. Any
 * thread. */
int wl_device_get(const struct wl_device *dev, const char *who,
		  int *ret_threads, void **ret_cuda, char *err,
		  size_t errlen);

/* One verified lease of a job as gpud keeps it (see "Answers stay small").
 * Pointers are borrowed and valid until the next get on the same wl_parts
 * or the end of the hook that received it. */
struct wl_part {
	const json_t *spec;
	uint64_t units;
	const char *result_hash;  /* the stored result blob (64 hex digits) */
	const json_t *note;       /* what merge returned for it, or NULL */
};

/* A job's verified leases in merge order, index 0 first; n of them. get
 * returns 0, GERR_NOTFOUND past the end, or GERR_IO / GERR_CORRUPT /
 * GERR_NOMEM. One get costs one indexed lookup. */
struct wl_parts {
	void *opaque;
	uint64_t n;
	int (*get)(void *opaque, uint64_t k, struct wl_part *ret);
};

/* The hooks' types, one a hook of struct workload (which documents each):
 * a workload declares its hooks through them (wl_verify_fn NAME_wl_verify;)
 * so the compiler checks each definition against the struct. */
typedef int wl_open_fn(void **ret_ctx, char *err, size_t errlen);
typedef void wl_close_fn(void *ctx);
typedef int wl_parse_params_fn(void *ctx, const json_t *args,
			       json_t **ret_params, uint64_t *ret_total_units,
			       char *err, size_t errlen);
typedef int wl_parse_input_fn(void *ctx, const json_t *params,
			      const void *input, size_t len,
			      json_t **ret_params, void **ret_input,
			      size_t *ret_input_len,
			      uint64_t *ret_total_units, char *err,
			      size_t errlen);
typedef int wl_carve_fn(void *ctx, const json_t *params, const json_t *cursor,
			const json_t *answer, const struct wl_parts *parts,
			uint64_t want_units, json_t **ret_spec,
			uint64_t *ret_units, json_t **ret_cursor,
			int *ret_last);
typedef int wl_split_fn(void *ctx, const json_t *params, const json_t *spec,
			uint64_t at, json_t **ret_head,
			uint64_t *ret_head_units, json_t **ret_tail,
			uint64_t *ret_tail_units);
typedef int wl_run_fn(void *ctx, const json_t *params, const json_t *spec,
		      const void *checkpoint, size_t checkpoint_len,
		      const struct wl_device *dev, const struct wl_run_io *io,
		      void **ret_result, size_t *ret_result_len, char *err,
		      size_t errlen);
typedef int wl_next_lease_fn(void *ctx, const json_t *params,
			     const json_t *spec, const void *result,
			     size_t len, const char *result_hash,
			     json_t **ret_spec);
typedef int wl_blob_max_fn(void *ctx, const json_t *params,
			   const json_t *spec, int is_result,
			   uint64_t *ret_max, char *err, size_t errlen);
typedef int wl_check_checkpoint_fn(void *ctx, const json_t *params,
				   const json_t *spec, const void *bytes,
				   size_t len, char *err, size_t errlen);
typedef int wl_verify_fn(void *ctx, const json_t *params, const json_t *spec,
			 const void *result, size_t len, uint64_t seed,
			 char *err, size_t errlen);
typedef int wl_results_agree_fn(void *ctx, const json_t *params,
				const json_t *spec, const void *a,
				size_t alen, const void *b, size_t blen);
typedef int wl_merge_fn(void *ctx, const json_t *params, const json_t *answer,
			const json_t *spec, const void *result, size_t len,
			const char *result_hash, json_t **ret_answer,
			json_t **ret_note);
typedef int wl_finish_fn(void *ctx, const json_t *params,
			 const json_t *answer, const struct wl_parts *parts,
			 char *err, size_t errlen);
typedef int wl_blame_fn(void *ctx, const json_t *params,
			const json_t *answer, const struct wl_parts *parts,
			const struct wl_blob_reader *rd, uint64_t *ret_index,
			json_t **ret_answer, char *err, size_t errlen);
typedef char *wl_render_text_fn(void *ctx, const json_t *params,
				const json_t *answer,
				const struct wl_parts *parts);
typedef int wl_render_plot_fn(void *ctx, const json_t *params,
			      const json_t *answer,
			      const struct wl_parts *parts,
			      const struct wl_blob_reader *rd, char **ret_svg,
			      size_t *ret_len, char *err, size_t errlen);
typedef int wl_export_data_fn(void *ctx, const json_t *params,
			      const json_t *answer,
			      const struct wl_parts *parts, const char *what,
			      const json_t *args,
			      const struct wl_blob_reader *rd, void **ret,
			      size_t *ret_len, char *err, size_t errlen);
typedef int wl_extend_fn(void *ctx, const json_t *params,
			 const json_t *answer, const json_t *args,
			 json_t **ret_params, uint64_t *ret_total_units,
			 char *err, size_t errlen);
typedef int wl_cuda_open_fn(void *ctx, int device_index, void **ret_cuda,
			    char *err, size_t errlen);
typedef void wl_cuda_close_fn(void *cuda);

struct workload {
	const char *name;        /* "graveler" */
	const char *unit_name;   /* "battles" */

	/* Optional: build the shared context (see "Context"), once per
	 * process, before any other hook; close it at exit (NULL-safe). */
	wl_open_fn *open;
	wl_close_fn *close;

	/* Validate gpuctl's arguments (a JSON object of strings and numbers)
	 * and return canonical params plus the job's total units (0 when not
	 * known in advance). */
	wl_parse_params_fn *parse_params;

	/* Optional: validate and canonicalise a submitted input file (bounded
	 * by PROTO_MAX_BIN). May update params (*ret_params, e.g. with a count
	 * of items) and the job's total units; *ret_input is the canonical
	 * bytes gpud stores as the job's input blob. NULL: the workload takes
	 * no input file. Bad lines are refused with their line numbers. */
	wl_parse_input_fn *parse_input;

	/* Carve the next lease of about want_units units after *cursor.
	 * answer is the job's merged summary so far (NULL before the first
	 * merge) and parts its verified leases, for planners whose next lease
	 * depends on earlier results. On success *ret_spec is the new lease,
	 * *ret_units its size, *ret_cursor the cursor after it, and *ret_last
	 * 1 when nothing will ever be carved after it (for these params), so
	 * gpud knows when the last lease has been handed out. Returns GERR_DONE
	 * when the job has nothing more to lease, GERR_AGAIN when nothing can
	 * be leased until more results are merged. */
	wl_carve_fn *carve;

	/* Optional: cut an unfinished lease in two, so that idle workers can
	 * take over part of a straggler's work (gpud's tail). at is where gpud
	 * would like the cut, in units from the spec's start; the hook moves
	 * it up to the next place a lease may end (a chunk, a block) and
	 * returns *ret_head (starting where spec starts, *ret_head_units
	 * units) and *ret_tail (the rest, a lease of its own), the two adding
	 * up to spec's units. GERR_AGAIN when no such place lies inside the
	 * spec (at 0 is refused too: the head would be empty). The contract
	 * gpud relies on: a checkpoint of spec whose units_done is at most at
	 * is a checkpoint of head, and a run of head resumed from it gives
	 * head's result; the results of head and tail merge to what spec's
	 * would have. Database thread; cheap. NULL: never cut. */
	wl_split_fn *split;

	/* Run a lease. checkpoint may be NULL (fresh start) or the bytes of the
	 * last accepted checkpoint. On success *ret_result is a malloc'ed
	 * result the caller frees. */
	wl_run_fn *run;

	/* Optional: the lease the planner will carve next once the result of
	 * spec (this run's output, stored by gpud as blob result_hash) is
	 * merged, for chained jobs whose next lease starts from this result
	 * (an Officers extension). The worker starts that run at once, while
	 * the result is uploaded and verified, and keeps it only if gpud then
	 * grants a lease of the same job with equal params and spec: a wrong
	 * guess costs time, never correctness. result_hash is used as an
	 * opaque name (the worker first calls with a placeholder while the
	 * blob is still being encoded, then with the real hash). Returns 0
	 * with *ret_spec, or GERR_DONE when no such lease follows. NULL: runs
	 * do not chain. */
	wl_next_lease_fn *next_lease;

	/* The most decoded bytes a result (is_result 1) or a checkpoint
	 * (is_result 0) of the lease spec can hold. gpud refuses an upload
	 * whose blob declares more before inflating a byte of it, so no
	 * worker can make gpud allocate what no honest run produces. Called
	 * for every upload: cheap, no tables. GERR_INVAL (with a reason) for
	 * a spec it cannot bound; the upload is then refused. */
	wl_blob_max_fn *blob_max;

	/* The most decoded bytes a blob of any lease of this workload can
	 * hold (blob_max's largest answer), at most BLOB_MAX_RAW: gpud holds
	 * every upload's frame to its compressed bound
	 * (workload_upload_bound) from the frame's header, before a byte of
	 * its attachment is read. */
	uint64_t blob_raw_max;

	/* Check a checkpoint before it replaces the previous one (structure,
	 * bounds, consistency with the spec). */
	wl_check_checkpoint_fn *check_checkpoint;

	/* Verify a result on the coordinator. seed drives the random sample
	 * (injected so tests are deterministic). GERR_UNSUPPORTED: a result
	 * of a format this build no longer reads (made before an upgrade):
	 * gpud has the lease computed again, charging no one. WL_VERIFY_SPOT
	 * (positive): passed, and another worker's result of the lease is
	 * wanted (above). */
	wl_verify_fn *verify;

	/* Optional: 1 when two results of the same lease (params, spec) say
	 * the same, else 0; gpud's replication compares results with it.
	 * NULL: the decoded bytes must be equal, for results that are a pure
	 * function of (params, spec). A workload whose results also record
	 * how they were computed (search effort, time) or a choice among
	 * equals compares only what they answer. Thread pool. */
	wl_results_agree_fn *results_agree;

	/* Merge a verified result into the answer, in work that does not grow
	 * with the number of leases merged before. answer may be NULL (first
	 * merge). result_hash names the stored result blob. *ret_note (may be
	 * left NULL) is a small JSON value gpud keeps with this lease and
	 * gives back in wl_parts. Merges of independent leases must commute:
	 * leases finish in any order. */
	wl_merge_fn *merge;

	/* Check the finished answer as a whole (e.g. histogram sums to the
	 * job's units, statistics). Called once when every lease is merged. */
	wl_finish_fn *finish;

	/* Optional: finish failed; name the verified lease at fault, so
	 * that gpud returns only that lease to pending (dropping its
	 * checkpoint), counts the failure against the worker that computed
	 * it (quarantine as for a failed verification) and has it computed
	 * again, instead of failing the job. The hook judges each part on its
	 * own, from the note merge kept or its stored result read through rd
	 * (Graveler: each lease's histogram against its own expectation, a
	 * score merge notes; only the blamed lease's result is read). Returns
	 * 0 with *ret_index
	 * (the part's index in parts) and *ret_answer, the answer merged from
	 * every other part, as if that lease had never been merged; err says
	 * why it was blamed. GERR_NOTFOUND (err says why) when no part alone
	 * is at fault: the job then fails. Database thread, in the
	 * transaction that would have ended the job; it runs only when finish
	 * failed, and may read every part's result. NULL: a failed finish
	 * fails the job. */
	wl_blame_fn *blame;

	/* Human-readable answer (malloc'ed, caller frees). answer may be
	 * NULL (nothing merged yet). */
	wl_render_text_fn *render_text;

	/* Optional: the job's plot from its answer and parts so far, a
	 * standalone SVG document drawn with plot.h (malloc'ed into
	 * *ret_svg, *ret_len bytes). gpud writes it into the results
	 * directory as plot_name when the job finishes and serves it as the
	 * export "plot". rd reads stored blobs, for what stays with the
	 * leases (Sudoku's per-gangster counts). GERR_NOTFOUND when there is
	 * nothing to plot yet. NULL: the workload has no plot. */
	wl_render_plot_fn *render_plot;
	const char *plot_name; /* "graveler-histogram.svg" */

	/* Optional: bulk output of a job, built on the coordinator from its
	 * answer, its verified leases and stored blobs (e.g. Officers values,
	 * Othello scored positions, Sudoku per-gangster counts). what is one
	 * of exports[]; args are its options (a JSON object of strings, e.g.
	 * {"range":"0:1000"}). *ret is malloc'ed, at most PROTO_MAX_BIN
	 * bytes. */
	wl_export_data_fn *export_data;
	/* What export_data can produce (NULL-terminated), or NULL. "result"
	 * means: `gpuctl result JOB` writes this instead of the text. */
	const char *const *exports;

	/* Optional: take a finished or running job further (gpuctl extend JOB
	 * --KEY VALUE, e.g. Officers --to M): new params and total units from
	 * the old params and args. The job becomes active and is planned
	 * again from its cursor and answer. */
	wl_extend_fn *extend;

	/* Optional CUDA support: open/close a device context. NULL when the
	 * workload has no CUDA path. cuda_open returns GERR_UNSUPPORTED when
	 * built without CUDA or no device is present. */
	wl_cuda_open_fn *cuda_open;
	wl_cuda_close_fn *cuda_close;

	/* Non-zero: result blobs are stored, not deflated (BLOB_PACK_STORE),
	 * for results of dense near-random bytes that deflate barely shrinks
	 * while costing the worker and gpud tens of ms per MB. 0: deflated. */
	int result_store_raw;

	/* For people (gpuctl workloads, submit W --help): what a job of this
	 * workload computes, in one sentence; its parameters (a table ended
	 * by a NULL name, one row per key parse_params accepts); and its
	 * exports (the same, one row per name in exports). */
	const char *description;
	const struct wl_param_doc *params_doc;
	const struct wl_export_doc *exports_doc;
};

/* The cuda_open and cuda_close hooks (NAME_wl_cuda_open, NAME_wl_cuda_close)
 * of a workload whose CUDA interface is NAME_cuda_open(int device, struct
 * NAME_cuda **ret, char *err, size_t errlen) and NAME_cuda_close(struct
 * NAME_cuda *). */
#define WL_CUDA_HOOKS(NAME)                                                   \
	static int NAME##_wl_cuda_open(void *wl_ctx, int device,              \
				       void **ret_cuda, char *err,            \
				       size_t errlen)                         \
	{                                                                     \
		struct NAME##_cuda *cuda;                                     \
		int rc = NAME##_cuda_open(device, &cuda, err, errlen);        \
		(void)wl_ctx;                                                 \
		if (rc == 0)                                                  \
			*ret_cuda = cuda;                                     \
		return rc;                                                    \
	}                                                                     \
	static void NAME##_wl_cuda_close(void *cuda)                          \
	{                                                                     \
		NAME##_cuda_close(cuda);                                      \
	}

/* The hooks every workload has, named NAME_wl_HOOK (parse_params, carve,
 * verify, merge, finish, render_text, render_plot, cuda_open and
 * cuda_close, the last two often from WL_CUDA_HOOKS), for its struct
 * workload's initializer; the others it names itself. */
#define WL_NAMED_HOOKS(NAME)                                                  \
	.parse_params = NAME##_wl_parse_params, .carve = NAME##_wl_carve,     \
	.verify = NAME##_wl_verify, .merge = NAME##_wl_merge,                 \
	.finish = NAME##_wl_finish, .render_text = NAME##_wl_render_text,     \
	.render_plot = NAME##_wl_render_plot,                                 \
	.cuda_open = NAME##_wl_cuda_open, .cuda_close = NAME##_wl_cuda_close

/* The registry: a NULL-terminated static table. Any thread. */
const struct workload *const *workload_all(void);
/* NULL when no workload has that name. Any thread. */
const struct workload *workload_find(const char *name);
/* Open every workload's context (main, once, before any hook runs). On
 * failure nothing stays open and err says which workload failed. */
int workload_open_all(char *err, size_t errlen);
/* Close them (main, at exit, when no hook runs any more). */
void workload_close_all(void);
/* The context workload_open_all built for wl (NULL for a workload without
 * open, or before workload_open_all). Any thread. */
void *workload_ctx(const struct workload *wl);

/* The most bytes a blob (header and zlib stream, either version of
 * blob.h) holding raw_len decoded bytes can take: zlib's bound for the
 * stream, the chunk index and a sync flush per 64 KiB chunk. A longer blob
 * is padded, whatever it inflates to. Any thread. */
uint64_t workload_comp_bound(uint64_t raw_len);
/* The most bytes one upload (checkpoint or result) of a lease can take:
 * workload_comp_bound of wl->blob_max for (params, spec), or, with params
 * or spec NULL, of wl->blob_raw_max. 0 when the lease cannot be bounded
 * (its params or spec do not parse or blob_max refuses them). Any
 * thread. */
uint64_t workload_upload_bound(const struct workload *wl, const char *params,
			       const char *spec);

/* wl->blob_max for params and spec given as JSON text (as gpud stores
 * them): GERR_CORRUPT when either does not parse. Any thread. */
int workload_blob_max(const struct workload *wl, const char *params,
		      const char *spec, int is_result, uint64_t *ret_max,
		      char *err, size_t errlen);

/* Helpers for workloads: 0 when parse_params' args is an object whose
 * every key is one of keys (a NULL-ended list); else GERR_INVAL with
 * "WHO: arguments must be an object" or "WHO: unknown parameter 'K' (takes
 * TAKES)". Any thread. */
int wl_args_check(const json_t *args, const char *const *keys,
		  const char *who, const char *takes, char *err,
		  size_t errlen);

/* A lease's spec that holds two required integers, k1 and k2 (e.g. begin
 * and end) in *ret1 and *ret2; GERR_INVAL, "WHO: spec must be an object"
 * or wl_json_u64's message, when it does not. Any thread. */
int wl_spec_u64s(const json_t *spec, const char *who, const char *k1,
		 uint64_t *ret1, const char *k2, uint64_t *ret2, char *err,
		 size_t errlen);

/* Read a non-negative integer field that may be a
 * JSON integer or a decimal string (gpuctl sends strings). Returns 0 or
 * GERR_INVAL with a message. */
int wl_json_u64(const json_t *obj, const char *key, int required,
		uint64_t def, uint64_t *ret, char *err, size_t errlen);

#endif

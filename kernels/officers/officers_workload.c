/* officers_workload.c - the Officers workload behind struct workload: the
 * formats its files share, and run (CPU or CUDA). officers_wl.h says which
 * file holds which hook.
 *
 * params  {"to": N}: compute G(0..N-1) (jobs of older gpuds may also
 *          hold "check"; gpud's --check full now replicates every lease)
 * cursor  {"next": n}: values [0, n) are leased (older cursors may hold
 *          "checks" and "at" too, which carve ignores)
 * spec    {"kind": "extend", "from": F, "to": T, "state": HASH | null,
 *          "digest": "16 hex"}: continue from the state at F, which is the
 *          result blob HASH of the lease that ended at F (null for F = 0);
 *          digest is that state's digest (officers_seq_digest), so run
 *          and verify can check they start from it.
 *          {"kind": "check", ...}: a range again, as older gpuds carved
 *          for --check full; only their parts remain, stepped over.
 * result  officers.h's result format: values G(vbase..T-1) as uint16 LE,
 *          the prefix, the rare table and the running statistics at T. It
 *          is also the next lease's state.
 * answer  {"n": values merged (exact), "leases": extension leases merged
 *          (the stored ranges), "fnv":
 *          "16 hex", "digest": "16 hex" and "state": HASH (the last
 *          range's end), "rares": [[pos, value]...] (every rare position:
 *          bounded by the game), "zeros": [pos...] (the first
 *          OFFICERS_MAX_ZEROS), "max": {"value": v, "first": pos},
 *          "counts": [...], "first": [...] (per value, -1 when not seen;
 *          up to the max)}: nothing in it grows with the leases.
 * note    {"digest": "16 hex"}: every merged lease's, the digest of the
 *          state its result ends in. A job's parts are its leases in merge
 *          order: the extension parts are the stored ranges [from, to)
 *          (spec) with their result blobs (hash) and end digests (note).
 *
 * Extension leases run one after another: carve answers GERR_AGAIN while
 * the last one is not merged. A new rare value found at p inside a lease is
 * recorded by the run, which recomputes everything after p with the larger
 * rare table before it returns, so nothing past p is ever merged from the
 * smaller table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "gerr.h"
#include "officers.h"
#include "officers_cuda.h"
#include "officers_wl.h"
#include "workload.h"

#define STEP_CPU (1ull << 20)
#define STEP_CUDA OFFICERS_LEASE_MAX /* one call per lease: no pipeline
					restarts */

/* The state of lease [from, cap_to) from a result (its checkpoint, or the
 * previous lease's result): the values from the lease's own vbase on. */
static int ofw_seq_from_blob(const void *bytes, size_t len, uint64_t from,
			     uint64_t cap_to, struct officers_seq *s,
			     struct officers_result *r, char *err,
			     size_t errlen)
{
	int rc = officers_result_parse(bytes, len, r, err, errlen);

	if (rc)
		return rc;
	rc = officers_seq_from_result(
		s, r, from - (from < OFFICERS_TAIL ? from : OFFICERS_TAIL),
		cap_to);
	if (rc)
		gerr_printf(err, errlen, "officers: out of memory for the state");
	return rc;
}

static int ofw_run_steps(struct officers_seq *s,
			 const struct officers_spec *sp, uint64_t fnv_in,
			 uint32_t nrare_in, int threads, void *cuda,
			 const struct wl_run_io *io, char *err, size_t errlen)
{
	uint64_t step = cuda ? STEP_CUDA : STEP_CPU * (uint64_t)threads;

	while (s->n < sp->to) {
		uint64_t to = sp->to - s->n < step ? sp->to : s->n + step;
		int rc;

		if (io && io->should_stop && io->should_stop(io->opaque))
			return GERR_CANCELLED;
		if (cuda)
			rc = officers_cuda_extend(cuda, s, to, threads, io,
						  sp->from, NULL, err, errlen);
		else
			rc = officers_cpu_extend(s, to, threads, io, sp->from,
						 err, errlen);
		if (rc)
			return rc;
		if (io && io->progress)
			io->progress(io->opaque, s->n - sp->from);
		if (s->n < sp->to && s->n > sp->from && io && io->checkpoint &&
		    io->checkpoint_due && io->checkpoint_due(io->opaque)) {
			void *buf;
			size_t len;
			rc = officers_result_encode(s, sp->from, fnv_in,
						    nrare_in, &buf, &len);
			if (rc == 0) {
				rc = io->checkpoint(io->opaque, buf, len,
						    s->n - sp->from);
				free(buf);
			}
			if (rc) {
				gerr_printf(err, errlen, "officers: checkpoint: %s",
				       gerr_str(rc));
				return rc;
			}
		}
	}
	if (io && io->should_stop && io->should_stop(io->opaque))
		return GERR_CANCELLED;
	return 0;
}

static int ofw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	struct officers_seq *s;
	struct officers_result r;
	struct officers_spec sp;
	uint64_t fnv_in = OFFICERS_FNV_BASIS;
	uint32_t nrare_in = 0;
	void *cuda;
	int threads, rc;

	rc = officers_wl_spec(params, spec, &sp, err, errlen);
	if (rc == 0)
		rc = wl_device_get(dev, "officers", &threads, &cuda, err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return GERR_NOMEM;
	if (checkpoint) {
		rc = ofw_seq_from_blob(checkpoint, checkpoint_len, sp.from,
				       sp.to, s, &r, err, errlen);
		if (rc == 0 && (r.from != sp.from || r.to >= sp.to)) {
			gerr_printf(err, errlen, "officers: checkpoint is for "
			       "another lease");
			rc = GERR_VERIFY;
		}
		if (rc)
			goto out;
		fnv_in = r.fnv_in;
		nrare_in = r.nrare_in;
	} else if (sp.from == 0) {
		rc = officers_seq_init(s, sp.to);
		if (rc)
			goto out;
	} else {
		void *st = NULL;
		size_t st_len = 0;
		if (!io || !io->fetch) {
			gerr_printf(err, errlen, "officers: this run cannot fetch "
			       "its state blob");
			rc = GERR_UNSUPPORTED;
			goto out;
		}
		rc = io->fetch(io->opaque, sp.state, &st, &st_len);
		if (rc) {
			gerr_printf(err, errlen, "officers: fetch state %.16s: %s",
			       sp.state, gerr_str(rc));
			goto out;
		}
		rc = ofw_seq_from_blob(st, st_len, sp.from, sp.to, s, &r,
				       err, errlen);
		if (rc == 0 && (r.to != sp.from ||
				officers_seq_digest(s) != sp.digest)) {
			gerr_printf(err, errlen, "officers: state blob %.16s does "
			       "not match the lease (ends at %" PRIu64 ")",
			       sp.state, r.to);
			rc = GERR_VERIFY;
		}
		free(st);
		if (rc)
			goto out;
		/* The result's tail starts at vbase of this lease. */
		fnv_in = s->st.fnv;
		nrare_in = s->nrare;
	}
	rc = ofw_run_steps(s, &sp, fnv_in, nrare_in, threads, cuda, io, err,
			   errlen);
	if (rc == 0) {
		rc = officers_result_encode(s, sp.from, fnv_in, nrare_in,
					    ret_result, ret_result_len);
		if (rc)
			gerr_printf(err, errlen, "officers: encode: %s",
			       gerr_str(rc));
	}
out:
	officers_seq_free(s);
	free(s);
	return rc;
}

WL_CUDA_HOOKS(officers)

/* A result or checkpoint of [from, to) holds at most officers.h's layout
 * with every rare slot used: the header, the rare table, the prefix and
 * the values from vbase (a checkpoint stops before to, so it is smaller). */
static int ofw_blob_max(void *ctx, const json_t *params, const json_t *spec,
			int is_result, uint64_t *ret_max, char *err,
			size_t errlen)
{
	struct officers_spec sp;
	uint64_t vbase, prefix;
	int rc = officers_wl_spec(params, spec, &sp, err, errlen);

	(void)ctx, (void)is_result;
	if (rc)
		return rc;
	vbase = sp.from - (sp.from < OFFICERS_TAIL ? sp.from : OFFICERS_TAIL);
	prefix = sp.to < OFFICERS_PREFIX ? sp.to : OFFICERS_PREFIX;
	*ret_max = OFFICERS_HDR_LEN + 12ull * OFFICERS_MAX_RARE + 2 * prefix +
		   2 * (sp.to - vbase);
	return 0;
}

static const char *const ofw_exports[] = {"values", NULL};

static const struct wl_param_doc ofw_params_doc[] = {
	{ "to", "integer", NULL, "compute G(0..N-1), 1..2^48; gpuctl extend "
	  "JOB --to M takes a job further" },
	{ 0 }, /* the end */
};

static const struct wl_export_doc ofw_exports_doc[] = {
	{ "values", "G(FROM..TO-1) as little-endian 16-bit values; --range "
	  "FROM:TO (required)" },
	{ 0 }, /* the end */
};

const struct workload officers_workload = {
	.name = "officers",
	WL_NAMED_HOOKS(officers),
	.export_data = officers_wl_export,
	.unit_name = "values",
	.run = ofw_run,
	.next_lease = officers_wl_next_lease,
	.blob_max = ofw_blob_max,
	/* A lease's values grow with its range: only the format bounds it. */
	.blob_raw_max = BLOB_MAX_RAW,
	.check_checkpoint = officers_wl_check_checkpoint,
	.results_agree = officers_wl_results_agree,
	.plot_name = "officers-values.svg",
	.exports = ofw_exports,
	.extend = officers_wl_extend,
	.description = "Officers' Grundy values G(0..N-1) (OEIS A046695), "
		       "with their frequencies, rare values and zeros",
	.params_doc = ofw_params_doc,
	.exports_doc = ofw_exports_doc,
};

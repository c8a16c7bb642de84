/* officers_cuda.h - C interface to the Officers CUDA kernels.
 *
 * One opaque context per device: officers_cuda_open allocates everything up
 * front (the value window of one chunk, the prefix, statuses, a stream,
 * events), so a chunk allocates nothing.
 *
 * Two kernels:
 *   candidates  sequential in n, parallel inside the chip: a window of K
 *               positions after the frontier is recomputed every round by
 *               all SMs from the current guesses (frontier iteration, see
 *               officers.cu); positions before the first value that changed
 *               in a round are final.
 *   exact       one warp per position, independent positions: recompute the
 *               rare part of the options, then scan pairs a = 0, 1, ... until
 *               every rare value below the candidate is hit. A position whose
 *               scan does not finish within what is held is flagged for the
 *               host, which decides it on the CPU (a new rare value or the
 *               documented limit).
 *
 * officers_cuda_extend advances a sequence exactly like officers_cpu_extend
 * (bit-identical values): the CPU takes the dense-rare start (n < 65536) and
 * the position of any new rare value, the GPU the rest in chunks.
 *
 * Any CUDA error is translated to GERR_DEVICE and poisons the context: every
 * later call returns GERR_DEVICE until it is closed; the sequence is left at
 * the last position that was complete and exact.
 *
 * Built without CUDA (officers_nocuda.c) every function returns
 * GERR_UNSUPPORTED. Threads: one context is used by one thread at a time.
 * Ownership: the caller owns the sequence; the context keeps no pointer.
 */
#ifndef GPUD_OFFICERS_CUDA_H
#define GPUD_OFFICERS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "officers.h"

#ifdef __cplusplus
extern "C" {
#endif

struct officers_cuda;
struct wl_run_io;

/* Largest chunk one pair of launches takes (positions). */
#define OFFICERS_CUDA_CHUNK (1u << 22)
/* Below this position the CPU computes (rare values are dense there). */
#define OFFICERS_CUDA_MIN_N 65536u

/* Kernel times of the last extend/candidates/exact call (ms). */
struct officers_cuda_times {
	double cand_ms, exact_ms, host_ms;
	uint64_t rounds, values;
	uint64_t adopted; /* extend: chunks taken over from the last call */
};

int officers_cuda_device_count(void);
int officers_cuda_open(int index, struct officers_cuda **ret, char *err,
		       size_t errlen);
/* Accepts NULL. */
void officers_cuda_close(struct officers_cuda *ctx);
int officers_cuda_device_name(struct officers_cuda *ctx, char *buf,
			      size_t len);
/* Positions per chunk of officers_cuda_extend (1..OFFICERS_CUDA_CHUNK, 0 for
 * OFFICERS_CUDA_CHUNK); values do not depend on it. GERR_INVAL. */
int officers_cuda_set_chunk(struct officers_cuda *ctx, unsigned chunk);

/* Advance s to `to` (GPU chunks, CPU where said above, `threads` CPU
 * threads). Progress, stop and checkpoint-free like officers_cpu_extend.
 * times may be NULL. After its last chunk it launches one more, past `to`,
 * and returns while the GPU computes it: the next call takes it over when
 * it continues the same sequence (same length, same checksum of all
 * values), so a lease's turnaround on the host overlaps GPU work; any
 * other call waits for it and drops it. */
int officers_cuda_extend(struct officers_cuda *ctx, struct officers_seq *s,
			 uint64_t to, int threads, const struct wl_run_io *io,
			 uint64_t units_base, struct officers_cuda_times *times,
			 char *err, size_t errlen);

/* The candidate kernel alone: candidates of [s->n, s->n + len) (len <=
 * OFFICERS_CUDA_CHUNK, s->n >= OFFICERS_CUDA_MIN_N) into out, as
 * officers_cpu_candidates computes them. */
int officers_cuda_candidates(struct officers_cuda *ctx,
			     const struct officers_seq *s, uint64_t len,
			     uint16_t *out, struct officers_cuda_times *times,
			     char *err, size_t errlen);

/* The exact kernel alone: positions [s->n, s->n + len) whose candidates are
 * in s->vals; status[i] = 0 when the candidate is exact, 1 when the host
 * must decide. */
int officers_cuda_exact(struct officers_cuda *ctx,
			const struct officers_seq *s, uint64_t len,
			uint8_t *status, struct officers_cuda_times *times,
			char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

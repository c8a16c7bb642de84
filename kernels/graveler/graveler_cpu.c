/* graveler_cpu.c - the fast multi-threaded CPU path and the range runner
 * shared by the CPU and CUDA paths.
 *
 * A step [next, to) is split into contiguous runs of whole chunks, one per
 * thread; each thread keeps its own histogram, max/first and the max,
 * count sum and sketch of every chunk (for the segment records), and the calling
 * thread folds them in order, so the result does not depend on the number
 * of threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "gerr.h"
#include "graveler.h"
#include "graveler_cuda.h"
#include "workload.h"

struct part {
	const struct graveler_acc *acc;
	uint64_t from, to;     /* battle range of the step */
	uint64_t c_lo, c_hi;   /* this part's chunks [c_lo, c_hi) */
	uint64_t c_step;       /* first chunk of the step (cmax index base) */
	uint8_t *cmax;
	uint32_t *csum, *csk;
	uint32_t word[GRAVELER_BINS]; /* graveler_sketch_word */
	uint64_t hist[GRAVELER_BINS];
	uint32_t max;
	uint64_t first;
};

static inline unsigned battle(uint32_t *x, uint32_t *c)
{
	uint32_t o[GRAVELER_WORDS];
	unsigned n;

	for (unsigned k = 0; k < GRAVELER_WORDS; k++)
		o[k] = graveler_mwc_next(x, c);
	n = (unsigned)__builtin_popcount(o[0] & o[1]) +
	    (unsigned)__builtin_popcount(o[2] & o[3]) +
	    (unsigned)__builtin_popcount(o[4] & o[5]) +
	    (unsigned)__builtin_popcount(o[6] & o[7]) +
	    (unsigned)__builtin_popcount(o[8] & o[9]) +
	    (unsigned)__builtin_popcount(o[10] & o[11]) +
	    (unsigned)__builtin_popcount(o[12] & o[13]) +
	    (unsigned)__builtin_popcount(o[14] & (o[14] >> 16) & 0x7fu);
	return n;
}

/* A POPCNT clone where the CPU has it (baseline x86-64 lacks it). */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("popcnt", "default")))
#endif
static void *part_main(void *arg)
{
	struct part *p = arg;
	uint64_t seed = p->acc->seed;

	memset(p->hist, 0, sizeof(p->hist));
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		p->word[b] = graveler_sketch_word(b);
	p->max = 0;
	p->first = GRAVELER_NONE;
	for (uint64_t ch = p->c_lo; ch < p->c_hi; ch++) {
		uint64_t base = ch * GRAVELER_CHUNK;
		uint32_t x, c, cs = 0, ck = 0;
		unsigned cm = 0;
		graveler_chunk_seed(seed, ch, &x, &c);
		if (base >= p->from && base + GRAVELER_CHUNK <= p->to) {
			/* Whole chunk: no bounds checks. */
			for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
				unsigned n = battle(&x, &c);
				p->hist[n]++;
				cs += n;
				ck += p->word[n];
				if (n > cm) {
					cm = n;
					if (n > p->max ||
					    p->first == GRAVELER_NONE) {
						p->max = n;
						p->first = base + j;
					}
				}
			}
			if (p->first == GRAVELER_NONE) { /* all zero counts */
				p->max = 0;
				p->first = base;
			}
		} else {
			int any = 0;
			for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
				uint64_t i = base + j;
				unsigned n;
				if (i >= p->to)
					break;
				n = battle(&x, &c);
				if (i < p->from)
					continue;
				p->hist[n]++;
				cs += n;
				ck += p->word[n];
				if (!any || n > cm)
					cm = n;
				any = 1;
				if (p->first == GRAVELER_NONE || n > p->max) {
					p->max = n;
					p->first = i;
				}
			}
		}
		p->cmax[ch - p->c_step] = (uint8_t)cm;
		p->csum[ch - p->c_step] = cs;
		p->csk[ch - p->c_step] = ck;
	}
	return NULL;
}

int graveler_cpu_step(struct graveler_acc *acc, uint64_t to, int threads)
{
	uint64_t from = acc->next;
	uint64_t c_lo = from / GRAVELER_CHUNK;
	uint64_t c_hi = (to - 1) / GRAVELER_CHUNK + 1;
	uint64_t nc = c_hi - c_lo;
	struct part *parts;
	pthread_t *tids;
	uint8_t *cmax;
	uint32_t *csum, *csk;
	int rc = 0, started = 0;

	if (to <= from)
		return 0;
	if (threads < 1)
		threads = 1;
	if ((uint64_t)threads > nc)
		threads = (int)nc;
	parts = calloc((size_t)threads, sizeof(*parts));
	tids = calloc((size_t)threads, sizeof(*tids));
	cmax = malloc(nc);
	csum = malloc(nc * sizeof(*csum));
	csk = malloc(nc * sizeof(*csk));
	if (!parts || !tids || !cmax || !csum || !csk) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (int t = 0; t < threads; t++) {
		struct part *p = &parts[t];
		p->acc = acc;
		p->from = from;
		p->to = to;
		p->c_step = c_lo;
		p->c_lo = c_lo + nc * (uint64_t)t / (uint64_t)threads;
		p->c_hi = c_lo + nc * (uint64_t)(t + 1) / (uint64_t)threads;
		p->cmax = cmax;
		p->csum = csum;
		p->csk = csk;
	}
	/* Part 0 runs on the calling thread. */
	for (int t = 1; t < threads; t++) {
		if (pthread_create(&tids[t], NULL, part_main, &parts[t]) != 0) {
			/* Run the rest inline rather than fail. */
			for (int u = t; u < threads; u++)
				part_main(&parts[u]);
			break;
		}
		started = t;
	}
	part_main(&parts[0]);
	for (int t = 1; t <= started; t++)
		pthread_join(tids[t], NULL);
	for (int t = 0; t < threads; t++) {
		for (unsigned b = 0; b < GRAVELER_BINS; b++)
			acc->hist[b] += parts[t].hist[b];
		graveler_acc_take_max(acc, parts[t].max, parts[t].first);
	}
	graveler_acc_fold_chunks(acc, c_lo, nc, cmax, csum, csk);
	acc->next = to;
out:
	free(parts);
	free(tids);
	free(cmax);
	free(csum);
	free(csk);
	return rc;
}

int graveler_run(struct graveler_acc *acc, int threads, void *cuda,
		 const struct wl_run_io *io, char *err, size_t errlen)
{
	/* Steps of about 2^20 battles per CPU thread (tens of ms) or 2^31 on
	 * a GPU (a few ms): short enough to honour stop and checkpoint
	 * requests promptly, long enough to amortise the fold. */
	uint64_t want = cuda ? (1ull << 31)
			     : (uint64_t)(threads < 1 ? 1 : threads) << 20;

	while (acc->next < acc->end) {
		uint64_t to;
		int rc;

		if (io && io->should_stop && io->should_stop(io->opaque))
			return GERR_CANCELLED;
		to = graveler_step_end(acc, want);
		if (cuda) {
			rc = graveler_cuda_step(cuda, acc, to, NULL, err,
						errlen);
		} else {
			rc = graveler_cpu_step(acc, to, threads);
			if (rc)
				snprintf(err, errlen, "graveler: cpu step: %s",
					 gerr_str(rc));
		}
		if (rc)
			return rc;
		if (io && io->progress)
			io->progress(io->opaque, acc->next - acc->begin);
		if (acc->next < acc->end && io && io->checkpoint &&
		    io->checkpoint_due && io->checkpoint_due(io->opaque)) {
			void *buf;
			size_t len;
			rc = graveler_ckpt_encode(acc, &buf, &len);
			if (rc == 0) {
				rc = io->checkpoint(io->opaque, buf, len,
						    acc->next - acc->begin);
				free(buf);
			}
			if (rc) {
				snprintf(err, errlen,
					 "graveler: checkpoint: %s",
					 gerr_str(rc));
				return rc;
			}
		}
	}
	if (io && io->should_stop && io->should_stop(io->opaque))
		return GERR_CANCELLED;
	return 0;
}

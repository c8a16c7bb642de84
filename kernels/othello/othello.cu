/* othello.cu - the Othello CUDA batch solver behind othello_cuda.h.
 *
 * Mapping. One thread solves one position at a time with
 * oth_search_shallow (othello_search.h, the code the CPU reference runs),
 * its explicit stack in local memory (at most OTHELLO_CUDA_MAX_EMPTIES + 1
 * frames of 32 bytes; the few frames a 10-empty search touches stay in
 * L1). Threads are persistent: when a thread finishes a position it takes
 * the next index from a global counter, so a warp is not held back by its
 * slowest position more than once per position, and the grid is exactly
 * as many blocks as fit on the device at once.
 *
 * Stepped variants (4 and up, othello_step.h): the same search cut into
 * leaf steps and frame steps; each round a warp votes (__ballot_sync) which
 * kind its lanes run, so the leaf solver runs with many lanes at once and
 * the lanes waiting for a frame step skip that round, instead of every
 * round running both branches one after the other. A lane that finishes a
 * position takes the next one at the top of the round. With sorted keys
 * (OTH_STEP_KEYSORT, the default variant) the fastest-first keys of the
 * nodes that lanes expanded in a round are computed after it by the whole
 * warp, one move per thread (oth_warp_keys): computed by each lane alone
 * they took 22% of the kernel's instruction slots at 1.3 active threads
 * (bench/othello.md, round 5).
 *
 * Flat variants (16 and up, othello_flat.h): the same search cut into
 * steps of one flip each (or one move generation at a node of 7 or more
 * empties); every live lane takes one step per round, so the flip, most of
 * a step, runs with the whole warp. Measured even with variant 12 on
 * 1.1 M positions and 1.8% faster on 2.2 M (round 6). Variants 19 and 20
 * add the tail's jobs (idle lanes search moves of positions still being
 * solved in their warp; 11% more nodes, no gain) and, 20, scans of fewer
 * squares; variant 21 scans fewer squares without the tail: 4-5% faster
 * than variant 12 (round 7). From variant 24 on, lanes waiting for their
 * keys wait until several do (or one has waited long enough), so one sort
 * serves them together; variant 36, the default, waits for 6 lanes or 32
 * rounds (round 8).
 *
 * Random jobs generate their positions on the device, by their own kernel
 * before the search (oth_gen_kernel, one thread per position), so a
 * --random lease moves no positions over PCIe, only 2 bytes back per
 * position. Generated inside the search, a lane's playout held its warp:
 * 18% of the kernel time (round 8).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"

#define OTH_STACK (OTHELLO_CUDA_MAX_EMPTIES + 1)
#include "othello_search.h"
#include "othello_step.h"
#include "othello_flat.h"

#define BLOCK 128

/* Kernel variants (othello_cuda_set_variant): the search (0: the first one,
 * oth_search_v0; else oth_search_leaf with that leaf size, or from 4 on
 * oth_lane steps with options opt and vote), the fewest resident blocks
 * per SM asked of the register allocator (0: none). vote: a leaf round
 * when at least that many lanes of the warp want a leaf step or none wants
 * a frame step (0: no vote, every lane runs its leaf step then its frame
 * step each round, the structure of oth_search_leaf). From 16 on the flat
 * search (othello_flat.h), whose search is leaf 2's with the same keys. */
#define NVAR 39
struct oth_variant {
	int leaf, minb, opt, vote;
	const char *name;
};
#define FG OTH_STEP_FASTGEN
#define FF OTH_STEP_FFONCE
#define KS OTH_STEP_KEYSORT
static const struct oth_variant variants[NVAR] = {
	{0, 0, 0, 0, "v0: first search (frames down to 1 empty, old root rule)"},
	{2, 0, 0, 0, "leaf 2: solve2 + last1 leaves, cheaper root rule"},
	{3, 0, 0, 0, "leaf 3: solve3/solve2/last1 leaves, cheaper root rule"},
	{3, 8, 0, 0, "leaf 3, capped at 64 registers (8 blocks/SM)"},
	{2, 0, 0, 16, "steps, leaf 2, warp vote 16"},
	{2, 0, FG | FF, 0, "steps, leaf 2, no vote, fast movegen + keys once"},
	{2, 0, FG | FF, 16, "steps, leaf 2, vote 16, fast movegen + keys once"},
	{2, 0, FG | FF, 8, "steps, leaf 2, vote 8, fast movegen + keys once"},
	{3, 0, FG | FF, 16, "steps, leaf 3, vote 16, fast movegen + keys once"},
	{3, 8, FG | FF, 16, "steps, leaf 3, vote 16, fast movegen + keys once, "
			    "64 registers"},
	{3, 8, FG | FF, 24, "steps, leaf 3, vote 24, fast movegen + keys once, "
			    "64 registers"},
	{2, 0, FG | FF, 24, "steps, leaf 2, vote 24, fast movegen + keys once"},
	{2, 0, FG | KS, 24, "steps, leaf 2, vote 24, fast movegen + keys sorted "
			    "by the warp"},
	{2, 0, FG | KS, 16, "steps, leaf 2, vote 16, fast movegen + keys sorted "
			    "by the warp"},
	{2, 0, FG | KS, 28, "steps, leaf 2, vote 28, fast movegen + keys sorted "
			    "by the warp"},
	{2, 0, FG | KS, 32, "steps, leaf 2, vote 32, fast movegen + keys sorted "
			    "by the warp"},
	{2, 0, FG | KS, 0, "flat: one flip per lane per round, one return and "
			   "one pick, keys sorted by the warp"},
	{2, 7, FG | KS, 0, "flat, capped at 72 registers (7 blocks/SM)"},
	{2, 7, FG | KS, 0, "flat, two returns and picks per round, 7 blocks/SM"},
	{2, 7, FG | KS, 0, "flat, two returns and picks, 7 blocks/SM, idle lanes "
			   "take moves of unfinished positions in the tail"},
	{2, 7, FG | KS, 0, "flat, tail, scans only squares next to an opponent "
			   "disc"},
	{2, 7, FG | KS, 0, "flat, two returns and picks, 7 blocks/SM, scans "
			   "only squares next to an opponent disc (no tail)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, tail splitting "
			   "only positions past 8000 nodes"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, tail splitting "
			   "only positions past 24000 nodes"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 2 lanes wait (or one for 1 round)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 3 lanes wait (or one for 3 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, three returns "
			   "and picks per step"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys and move "
			   "generations once 2 lanes wait (or one for 1 round)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys and move "
			   "generations once 3 lanes wait (or one for 3 "
			   "rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 3 lanes wait (or one for 6 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 4 lanes wait (or one for 4 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 4 lanes wait (or one for 8 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 6 lanes wait (or one for 8 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 4 lanes wait (or one for 16 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 6 lanes wait (or one for 16 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 8 lanes wait (or one for 16 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 6 lanes wait (or one for 32 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 8 lanes wait (or one for 32 rounds)"},
	{2, 7, FG | KS, 0, "flat, scans next to opponent discs, keys sorted "
			   "once 12 lanes wait (or one for 32 rounds)"},
};
#define DEFAULT_VAR OTHELLO_CUDA_VARIANT

struct othello_cuda {
	int device;
	int poisoned;
	int sms, blocks;      /* blocks per SM asked for, 0: as many as fit */
	int variant;          /* index into variants[] */
	int max_per_sm[NVAR]; /* resident blocks per SM of each variant */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	uint64_t *d_P, *d_O;
	uint8_t *d_out;      /* 2 bytes per position: score + 64, move */
	unsigned long long *d_ctr; /* [0] next index, [1] nodes */
	uint64_t *h_P, *h_O; /* pinned */
	uint8_t *h_out;
	unsigned long long *h_ctr;
	char name[256];
};

/* LEAF: 0 the first search (oth_search_v0, the benchmark's baseline),
 * else oth_search_leaf with that leaf; MINB: resident blocks per SM the
 * register allocation must allow (0: no bound). */
template <int LEAF, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB)
oth_kernel(const uint64_t *__restrict__ gP, const uint64_t *__restrict__ gO,
	   unsigned n, uint8_t *__restrict__ out, unsigned long long *ctr)
{
	uint64_t nodes = 0;

	for (;;) {
		unsigned i = atomicAdd((unsigned *)ctr, 1u);
		if (i >= n)
			break;
		uint64_t P = gP[i], O = gO[i];
		int mv;
		int v = LEAF == 0 ? oth_search_v0(P, O, &mv, &nodes)
				  : oth_search_leaf(P, O, &mv, &nodes, LEAF);
		out[2 * i] = (uint8_t)(v + 64);
		out[2 * i + 1] = (uint8_t)mv;
	}
	/* One atomic per warp for the node count. */
	for (int o = 16; o; o >>= 1)
		nodes += __shfl_down_sync(0xffffffffu, nodes, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(ctr + 1, (unsigned long long)nodes);
}

/* Up to OTH_WK_CAP moves of a warp's lanes in state KEYS at once, in
 * shared memory: each move's square and lane, its key, and the squares in
 * each lane's order. A lane has at most OTHELLO_CUDA_MAX_EMPTIES moves, so
 * the first waiting lane always fits. */
#define OTH_WK_CAP 64
struct oth_wk {
	uint16_t key[OTH_WK_CAP];
	uint8_t sq[OTH_WK_CAP], lane[OTH_WK_CAP], sorted[OTH_WK_CAP];
};

/* The frame a lane in state KEYS waits with, and what it does once its
 * row is sorted: descend to its first move. */
__device__ __forceinline__ struct oth_sframe *
oth_keys_frame(struct oth_lane *L, struct oth_stack *S)
{
	return &S->st[L->sp];
}

__device__ __forceinline__ struct oth_fframe *
oth_keys_frame(struct oth_flat *F, struct oth_fstack *S)
{
	(void)S;
	return &F->top;
}

__device__ __forceinline__ void oth_keys_done(struct oth_lane *L,
					      struct oth_stack *S, int opt)
{
	oth_lane_descend(L, S, L->sp, opt);
}

__device__ __forceinline__ void oth_keys_done(struct oth_flat *F,
					      struct oth_fstack *S, int opt)
{
	(void)opt;
	oth_flat_resume(F, S);
}

/* oth_lane_keys for the lanes of `waiting` (a ballot of state KEYS) at
 * once: the lanes' moves are laid out one after the other (an exclusive
 * prefix sum of their counts), each thread computes one move's key from
 * its lane's frame (shuffled over), and finds its rank among that lane's
 * keys; each lane then copies its sorted squares to its row and descends.
 * Called by every lane of the warp, for stepped (oth_lane) and flat
 * (oth_flat) lanes. */
template <int OPT, class Lane, class Stack>
__device__ __forceinline__ void oth_warp_keys(Lane *L, Stack *S,
					      unsigned waiting,
					      struct oth_wk *w)
{
	const unsigned all = 0xffffffffu;
	const int me = threadIdx.x & 31;
	uint64_t P = 0, O = 0, m = 0;

	if ((waiting >> me) & 1) {
		const auto *f = oth_keys_frame(L, S);
		P = f->P;
		O = f->O;
		m = f->moves;
	}
	const int count = oth_popcount(m);
	while (waiting) {
		int c = (waiting >> me) & 1 ? count : 0, end = c;
		for (int d = 1; d < 32; d <<= 1) {
			int t = __shfl_up_sync(all, end, d);
			if (me >= d)
				end += t;
		}
		const int base = end - c;
		const bool in = c && end <= OTH_WK_CAP;
		const unsigned batch = __ballot_sync(all, in);
		const int total = __shfl_sync(all, end, 31 - __clz(batch));
		if (in) {
			int r = base;
			for (uint64_t mm = m; mm; mm &= mm - 1, r++) {
				w->sq[r] = (uint8_t)oth_ctz(mm);
				w->lane[r] = (uint8_t)me;
			}
		}
		__syncwarp();
		for (int j = me; j - me < total; j += 32) {
			int owner = j < total ? w->lane[j] : 0;
			uint64_t oP = __shfl_sync(all, P, owner);
			uint64_t oO = __shfl_sync(all, O, owner);
			if (j < total)
				w->key[j] = (uint16_t)oth_ff_key(oP, oO, w->sq[j],
								 OPT);
		}
		__syncwarp();
		for (int j = me; j - me < total; j += 32) {
			int owner = j < total ? w->lane[j] : 0;
			int ob = __shfl_sync(all, base, owner);
			int on = __shfl_sync(all, c, owner);
			if (j < total) {
				unsigned k = w->key[j], rank = 0;
				for (int t = ob; t < ob + on; t++)
					rank += w->key[t] < k;
				w->sorted[ob + rank] = w->sq[j];
			}
		}
		__syncwarp();
		if (in) {
			const auto *f = oth_keys_frame(L, S);
			uint16_t *row = OTH_FF_ROW(S, f);
			for (int r = 0; r < c; r++)
				row[r] = w->sorted[base + r];
			oth_keys_done(L, S, OPT);
		}
		__syncwarp();
		waiting &= ~batch;
	}
}

/* The stepped search (othello_step.h), variants 4 and up: LEAF the leaf
 * size, OPT its options, VOTE the vote (0: none), MINB as above. Every
 * lane of a warp stays in the loop until all are idle, for the votes' full
 * masks. */
template <int LEAF, int OPT, int VOTE, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB)
oth_step_kernel(const uint64_t *__restrict__ gP,
		const uint64_t *__restrict__ gO, unsigned n,
		uint8_t *__restrict__ out, unsigned long long *ctr)
{
	__shared__ struct oth_wk wk[OPT & OTH_STEP_KEYSORT ? BLOCK / 32 : 1];
	struct oth_lane L;
	struct oth_stack S;
	uint64_t nodes = 0;
	unsigned i = 0;
	bool have = false;

	L.n = 0;
	L.state = OTH_LANE_DONE;
	for (;;) {
		if (L.state == OTH_LANE_DONE) {
			if (have) {
				out[2 * i] = (uint8_t)(L.v + 64);
				out[2 * i + 1] = (uint8_t)L.mv;
				nodes += L.n;
				L.n = 0;
			}
			i = atomicAdd((unsigned *)ctr, 1u);
			have = i < n;
			if (have) {
				oth_lane_start(&L, gP[i], gO[i]);
			} else {
				L.state = OTH_LANE_IDLE;
			}
		}
		if (VOTE == 0) {
			if (L.state == OTH_LANE_IDLE)
				break;
			if (oth_lane_wants_leaf(&L, LEAF))
				oth_lane_leaf(&L);
			oth_lane_frame(&L, &S, OPT);
			if (L.state == OTH_LANE_KEYS)
				oth_lane_keys(&L, &S, OPT);
			continue;
		}
		bool live = L.state != OTH_LANE_IDLE;
		bool wl = oth_lane_wants_leaf(&L, LEAF);
		unsigned act = __ballot_sync(0xffffffffu, live);
		if (!act)
			break;
		unsigned lm = __ballot_sync(0xffffffffu, wl);
		if (oth_vote_leaf(__popc(lm), __popc(act & ~lm), VOTE)) {
			if (wl)
				oth_lane_leaf(&L);
		} else if (live && !wl) {
			oth_lane_frame(&L, &S, OPT);
		}
		if (OPT & OTH_STEP_KEYSORT) {
			unsigned km = __ballot_sync(0xffffffffu,
						    L.state == OTH_LANE_KEYS);
			if (km)
				oth_warp_keys<OPT>(&L, &S, km,
						   &wk[threadIdx.x >> 5]);
		}
	}
	for (int o = 16; o; o >>= 1)
		nodes += __shfl_down_sync(0xffffffffu, nodes, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(ctr + 1, (unsigned long long)nodes);
}

/* The flat search (othello_flat.h), variants 16 and up: each round every
 * live lane takes one step (a flip, or a move generation at a node of
 * OTH_FF_MIN or more empties), then the lanes waiting for keys get them
 * from the whole warp. PARTS: returns and picks per step. FOPT: the
 * bookkeeping's options (othello_flat.h); with OTH_FLAT_TAIL lanes out of
 * positions take moves of their warp's unfinished positions (the tail),
 * the board touched only in rounds where a lane is idle or a job is out,
 * and only positions (or jobs) of TMIN nodes or more are split. KMIN: the
 * warp sorts keys once KMIN lanes wait for them, or one has waited KWAIT
 * rounds, or every live lane waits (a sort costs the warp about the same
 * for one lane as for several); EMIN and EWAIT the same for the move
 * generation of a node to expand, which the warp runs apart from the
 * flips of the others. */
template <int PARTS, int FOPT, int MINB, unsigned TMIN = 0,
	  int KMIN = 1, int KWAIT = 0, int EMIN = 1, int EWAIT = 0>
__global__ void __launch_bounds__(BLOCK, MINB)
oth_flat_kernel(const uint64_t *__restrict__ gP,
		const uint64_t *__restrict__ gO, unsigned n,
		uint8_t *__restrict__ out, unsigned long long *ctr)
{
	const unsigned all = 0xffffffffu;
	const bool TAIL = FOPT & OTH_FLAT_TAIL;
	__shared__ struct oth_wk wk[BLOCK / 32];
	__shared__ struct oth_jobs jobs[TAIL ? BLOCK / 32 : 1];
	struct oth_jobs *J = &jobs[TAIL ? threadIdx.x >> 5 : 0];
	struct oth_flat F;
	struct oth_fstack S;
	uint64_t nodes = 0;
	unsigned i = 0;
	int kw = 0, ew = 0; /* rounds waited for keys, for a move generation */
	bool have = false;

	F.n = 0;
	F.mine = F.jdm = 0;
	F.job = -1;
	F.op = OTH_FLAT_DONE;
	if (TAIL) {
		if ((threadIdx.x & 31) == 0)
			J->posted = J->taken = J->done = 0;
		__syncwarp();
	}
	for (;;) {
		unsigned jdone = 0;
		if (TAIL && F.op == OTH_FLAT_DONE && F.job >= 0) {
			nodes += F.n;
			F.n = 0;
			jdone = oth_tail_job_done(J, &F);
		} else if (F.op == OTH_FLAT_DONE) {
			if (have) {
				out[2 * i] = (uint8_t)(F.v + 64);
				out[2 * i + 1] = (uint8_t)F.mv;
				nodes += F.n;
				F.n = 0;
			}
			i = atomicAdd((unsigned *)ctr, 1u);
			have = i < n;
			if (have) {
				oth_flat_start(&F, gP[i], gO[i]);
			} else {
				F.op = OTH_FLAT_IDLE;
			}
		}
		if (TAIL) {
			unsigned idle = __ballot_sync(all, F.op == OTH_FLAT_IDLE);
			jdone = __reduce_or_sync(all, jdone);
			if (idle | J->posted) {
				struct oth_tail_round R;
				unsigned freed = 0, posters;
				const int lane = threadIdx.x & 31;
				if (lane == 0)
					J->done |= jdone;
				__syncwarp();
				if (F.op == OTH_FLAT_WAIT)
					freed = oth_tail_merge(J, &F);
				freed = __reduce_or_sync(all, freed);
				posters = __ballot_sync(
					all,
					oth_tail_post_depth(&F, &S, TMIN) >= 0);
				if (lane == 0) {
					J->posted &= ~freed;
					J->taken &= ~freed;
					J->done &= ~freed;
				}
				__syncwarp();
				oth_tail_plan(&R, J, idle, posters);
				oth_tail_lane(&R, J, &F, &S, lane);
				__syncwarp();
				if (lane == 0)
					oth_tail_masks(&R, J);
				__syncwarp();
			}
		}
		bool live = F.op != OTH_FLAT_IDLE;
		if (!__ballot_sync(all, live))
			break;
		bool step = TAIL ? F.op <= OTH_FLAT_NEXT
				 : live && F.op != OTH_FLAT_KEYS;
		if (EMIN > 1) {
			ew = F.op == OTH_FLAT_EXPAND ? ew + 1 : 0;
			unsigned em = __ballot_sync(all, F.op == OTH_FLAT_EXPAND);
			if (em && __popc(em) < EMIN &&
			    em != __ballot_sync(all, step) &&
			    !__ballot_sync(all, ew > EWAIT))
				step = step && F.op != OTH_FLAT_EXPAND;
		}
		if (step)
			oth_flat_after(&F, &S, oth_flat_compute(&F), PARTS,
				       FOPT);
		unsigned km = __ballot_sync(all, F.op == OTH_FLAT_KEYS);
		if (KMIN > 1)
			kw = F.op == OTH_FLAT_KEYS ? kw + 1 : 0;
		if (KMIN > 1 && km && __popc(km) < KMIN &&
		    km != __ballot_sync(all, live) &&
		    !__ballot_sync(all, kw > KWAIT))
			km = 0; /* wait for more lanes (km is warp-uniform) */
		if (km)
			oth_warp_keys<FG>(&F, &S, km, &wk[threadIdx.x >> 5]);
	}
	for (int o = 16; o; o >>= 1)
		nodes += __shfl_down_sync(all, nodes, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(ctr + 1, (unsigned long long)nodes);
}

/* Positions [begin, begin + n) of a --random job, one thread each, into
 * P and O for the search kernels. Apart from the search: generated inside
 * it, a lane's playout of some 50 moves held its whole warp. */
__global__ void __launch_bounds__(256)
oth_gen_kernel(uint64_t seed, int empties, uint64_t begin, unsigned n,
	       uint64_t *__restrict__ P, uint64_t *__restrict__ O)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	int black;

	if (i < n)
		oth_generate(seed, begin + i, empties, &P[i], &O[i], &black);
}

/* ---- host side -------------------------------------------------------- */

typedef void (*oth_kernel_fn)(const uint64_t *, const uint64_t *, unsigned,
			      uint8_t *, unsigned long long *);

static oth_kernel_fn kernel_of(int var)
{
	/* In the order of variants[]. */
	static const oth_kernel_fn k[NVAR] = {
		oth_kernel<0, 0>, oth_kernel<2, 0>, oth_kernel<3, 0>,
		oth_kernel<3, 8>,
		oth_step_kernel<2, 0, 16, 0>,
		oth_step_kernel<2, FG | FF, 0, 0>,
		oth_step_kernel<2, FG | FF, 16, 0>,
		oth_step_kernel<2, FG | FF, 8, 0>,
		oth_step_kernel<3, FG | FF, 16, 0>,
		oth_step_kernel<3, FG | FF, 16, 8>,
		oth_step_kernel<3, FG | FF, 24, 8>,
		oth_step_kernel<2, FG | FF, 24, 0>,
		oth_step_kernel<2, FG | KS, 24, 0>,
		oth_step_kernel<2, FG | KS, 16, 0>,
		oth_step_kernel<2, FG | KS, 28, 0>,
		oth_step_kernel<2, FG | KS, 32, 0>,
		oth_flat_kernel<1, 0, 0>,
		oth_flat_kernel<1, 0, 7>,
		oth_flat_kernel<2, 0, 7>,
		oth_flat_kernel<2, OTH_FLAT_TAIL, 7>,
		oth_flat_kernel<2, OTH_FLAT_TAIL | OTH_FLAT_ADJ, 7>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7>,
		oth_flat_kernel<2, OTH_FLAT_TAIL | OTH_FLAT_ADJ, 7, 8000>,
		oth_flat_kernel<2, OTH_FLAT_TAIL | OTH_FLAT_ADJ, 7, 24000>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 2, 1>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 3, 3>,
		oth_flat_kernel<3, OTH_FLAT_ADJ, 7>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 2, 1, 2, 1>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 3, 3, 3, 3>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 3, 6>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 4, 4>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 4, 8>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 6, 8>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 4, 16>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 6, 16>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 8, 16>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 6, 32>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 8, 32>,
		oth_flat_kernel<2, OTH_FLAT_ADJ, 7, 0, 12, 32>,
	};

	return k[var];
}

#define CK(call, what) CUDA_CK("othello", call, what)

extern "C" int othello_cuda_device_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

extern "C" void othello_cuda_close(struct othello_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	cudaFree(ctx->d_P);
	cudaFree(ctx->d_O);
	cudaFree(ctx->d_out);
	cudaFree(ctx->d_ctr);
	cudaFreeHost(ctx->h_P);
	cudaFreeHost(ctx->h_O);
	cudaFreeHost(ctx->h_out);
	cudaFreeHost(ctx->h_ctr);
	if (ctx->ev0)
		cudaEventDestroy(ctx->ev0);
	if (ctx->ev1)
		cudaEventDestroy(ctx->ev1);
	if (ctx->stream)
		cudaStreamDestroy(ctx->stream);
	free(ctx);
}

static int open_ctx(struct othello_cuda *ctx, int index, char *err,
		    size_t errlen)
{
	const size_t n = OTHELLO_CUDA_MAX_BATCH;
	cudaDeviceProp prop;
	int per_sm = 0;

	CK(cudaSetDevice(index), "set device");
	CK(cudaGetDeviceProperties(&prop, index), "device properties");
	snprintf(ctx->name, sizeof(ctx->name), "%s", prop.name);
	CK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking),
	   "stream");
	CK(cudaEventCreate(&ctx->ev0), "event");
	CK(cudaEventCreate(&ctx->ev1), "event");
	CK(cudaMalloc(&ctx->d_P, n * 8), "device memory");
	CK(cudaMalloc(&ctx->d_O, n * 8), "device memory");
	CK(cudaMalloc(&ctx->d_out, n * 2), "device memory");
	CK(cudaMalloc(&ctx->d_ctr, 2 * sizeof(unsigned long long)),
	   "device memory");
	CK(cudaMallocHost(&ctx->h_P, n * 8), "pinned memory");
	CK(cudaMallocHost(&ctx->h_O, n * 8), "pinned memory");
	CK(cudaMallocHost(&ctx->h_out, n * 2), "pinned memory");
	CK(cudaMallocHost(&ctx->h_ctr, 2 * sizeof(unsigned long long)),
	   "pinned memory");
	/* Local memory is the stack: prefer L1 over shared memory, leaving
	 * shared memory (OTH_STEP_KEYSORT's) for as many blocks as the
	 * registers allow; a carveout of 0 held those kernels to 3. */
	for (int v = 0; v < NVAR; v++) {
		cudaFuncAttributes fa;
		CK(cudaFuncGetAttributes(&fa, kernel_of(v)),
		   "kernel attributes");
		size_t blocks = (size_t)prop.regsPerMultiprocessor /
				((size_t)(fa.numRegs ? fa.numRegs : 1) * BLOCK);
		size_t need = fa.sharedSizeBytes
				      ? blocks * (fa.sharedSizeBytes +
						  prop.reservedSharedMemPerBlock)
				      : 0;
		int carve = (int)((need * 100 +
				   prop.sharedMemPerMultiprocessor - 1) /
				  prop.sharedMemPerMultiprocessor);
		CK(cudaFuncSetAttribute(
			   kernel_of(v),
			   cudaFuncAttributePreferredSharedMemoryCarveout,
			   carve), "carveout");
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			   &per_sm, kernel_of(v), BLOCK, 0), "occupancy");
		ctx->max_per_sm[v] = per_sm < 1 ? 1 : per_sm;
	}
	ctx->sms = prop.multiProcessorCount;
	ctx->variant = DEFAULT_VAR;
	return 0;
}

static int run(struct othello_cuda *ctx, int gen, uint64_t seed,
	       int empties, uint64_t begin, size_t n, int8_t *ret_score,
	       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
	       char *err, size_t errlen);

/* One small solve, so that loading the kernels (CUDA loads a kernel at
 * its first launch) is part of opening, not of the first job. */
static int warm_up(struct othello_cuda *ctx, char *err, size_t errlen)
{
	int8_t score[64];
	uint8_t move[64];

	return run(ctx, 1, 0, 8, 0, 64, score, move, NULL, NULL, err, errlen);
}

extern "C" int othello_cuda_open(int index, struct othello_cuda **ret,
				 char *err, size_t errlen)
{
	struct othello_cuda *ctx;
	int ndev = othello_cuda_device_count(), rc;

	if (index < 0 || index >= ndev) {
		snprintf(err, errlen, "othello cuda: no device %d (%d present)",
			 index, ndev);
		return GERR_UNSUPPORTED;
	}
	ctx = (struct othello_cuda *)calloc(1, sizeof(*ctx));
	if (!ctx)
		return GERR_NOMEM;
	ctx->device = index;
	rc = open_ctx(ctx, index, err, errlen);
	if (rc == 0)
		rc = warm_up(ctx, err, errlen);
	if (rc) {
		othello_cuda_close(ctx);
		return rc;
	}
	*ret = ctx;
	return 0;
}

extern "C" int othello_cuda_device_name(struct othello_cuda *ctx, char *buf,
					size_t len)
{
	snprintf(buf, len, "%s", ctx->name);
	return 0;
}

static int blocks_per_sm(const struct othello_cuda *ctx)
{
	int max = ctx->max_per_sm[ctx->variant];

	return ctx->blocks < 1 || ctx->blocks > max ? max : ctx->blocks;
}

extern "C" int othello_cuda_set_blocks_per_sm(struct othello_cuda *ctx,
					     int blocks)
{
	ctx->blocks = blocks < 1 ? 0 : blocks;
	return blocks_per_sm(ctx);
}

extern "C" int othello_cuda_set_variant(struct othello_cuda *ctx,
				       int variant)
{
	if (variant < 0)
		ctx->variant = DEFAULT_VAR;
	else if (variant < NVAR)
		ctx->variant = variant;
	return ctx->variant;
}

extern "C" const char *othello_cuda_variant_name(int variant)
{
	return variant >= 0 && variant < NVAR ? variants[variant].name : NULL;
}

static int run(struct othello_cuda *ctx, int gen, uint64_t seed,
	       int empties, uint64_t begin, size_t n, int8_t *ret_score,
	       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
	       char *err, size_t errlen)
{
	float ms = 0;

	if (ctx->poisoned) {
		snprintf(err, errlen, "othello cuda: context poisoned by an "
			 "earlier device error");
		return GERR_DEVICE;
	}
	if (n > OTHELLO_CUDA_MAX_BATCH) {
		snprintf(err, errlen, "othello cuda: batch of %zu over %u", n,
			 OTHELLO_CUDA_MAX_BATCH);
		return GERR_INVAL;
	}
	if (n == 0) {
		if (ret_nodes)
			*ret_nodes = 0;
		if (ret_ms)
			*ret_ms = 0;
		return 0;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	if (!gen) {
		CK(cudaMemcpyAsync(ctx->d_P, ctx->h_P, n * 8,
				   cudaMemcpyHostToDevice, ctx->stream), "copy");
		CK(cudaMemcpyAsync(ctx->d_O, ctx->h_O, n * 8,
				   cudaMemcpyHostToDevice, ctx->stream), "copy");
	}
	CK(cudaMemsetAsync(ctx->d_ctr, 0, 2 * sizeof(unsigned long long),
			   ctx->stream), "memset");
	CK(cudaEventRecord(ctx->ev0, ctx->stream), "event");
	if (gen)
		oth_gen_kernel<<<(unsigned)((n + 255) / 256), 256, 0,
				 ctx->stream>>>(seed, empties, begin,
						(unsigned)n, ctx->d_P,
						ctx->d_O);
	kernel_of(ctx->variant)<<<blocks_per_sm(ctx) * ctx->sms, BLOCK, 0,
				  ctx->stream>>>(ctx->d_P, ctx->d_O, (unsigned)n,
						 ctx->d_out, ctx->d_ctr);
	CK(cudaGetLastError(), "launch");
	CK(cudaEventRecord(ctx->ev1, ctx->stream), "event");
	CK(cudaMemcpyAsync(ctx->h_out, ctx->d_out, n * 2,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaMemcpyAsync(ctx->h_ctr, ctx->d_ctr,
			   2 * sizeof(unsigned long long),
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaStreamSynchronize(ctx->stream), "kernel");
	CK(cudaEventElapsedTime(&ms, ctx->ev0, ctx->ev1), "timing");
	for (size_t i = 0; i < n; i++) {
		int v = (int)ctx->h_out[2 * i] - 64;
		uint8_t mv = ctx->h_out[2 * i + 1];
		if (v < -64 || v > 64 || (v & 1) || mv > OTHELLO_MOVE_NONE) {
			ctx->poisoned = 1;
			snprintf(err, errlen, "othello cuda: position %zu came "
				 "back with score %d move %u", i, v, mv);
			return GERR_DEVICE;
		}
	}
	for (size_t i = 0; i < n; i++) {
		ret_score[i] = (int8_t)((int)ctx->h_out[2 * i] - 64);
		ret_move[i] = ctx->h_out[2 * i + 1];
	}
	if (ret_nodes)
		*ret_nodes = ctx->h_ctr[1];
	if (ret_ms)
		*ret_ms = ms;
	return 0;
}

extern "C" int othello_cuda_solve(struct othello_cuda *ctx, const uint64_t *P,
				  const uint64_t *O, size_t n,
				  int8_t *ret_score, uint8_t *ret_move,
				  uint64_t *ret_nodes, float *ret_ms,
				  char *err, size_t errlen)
{
	if (n > OTHELLO_CUDA_MAX_BATCH) {
		snprintf(err, errlen, "othello cuda: batch of %zu over %u", n,
			 OTHELLO_CUDA_MAX_BATCH);
		return GERR_INVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (oth_popcount(~(P[i] | O[i])) > OTHELLO_CUDA_MAX_EMPTIES ||
		    (P[i] & O[i])) {
			snprintf(err, errlen, "othello cuda: position %zu has "
				 "more than %d empties or overlapping discs",
				 i, OTHELLO_CUDA_MAX_EMPTIES);
			return GERR_INVAL;
		}
		ctx->h_P[i] = P[i];
		ctx->h_O[i] = O[i];
	}
	return run(ctx, 0, 0, 0, 0, n, ret_score, ret_move, ret_nodes, ret_ms,
		   err, errlen);
}

extern "C" int othello_cuda_solve_random(struct othello_cuda *ctx,
					 uint64_t seed, int empties,
					 uint64_t begin, size_t n,
					 int8_t *ret_score, uint8_t *ret_move,
					 uint64_t *ret_nodes, float *ret_ms,
					 char *err, size_t errlen)
{
	if (empties < 1 || empties > OTHELLO_CUDA_MAX_EMPTIES) {
		snprintf(err, errlen, "othello cuda: empties %d outside 1..%d",
			 empties, OTHELLO_CUDA_MAX_EMPTIES);
		return GERR_INVAL;
	}
	return run(ctx, 1, seed, empties, begin, n, ret_score, ret_move,
		   ret_nodes, ret_ms, err, errlen);
}

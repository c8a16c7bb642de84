/* sudoku.h - exact Sudoku grid counts by the band-gangster method: the
 * plain-C core (setup, band counts, per-gangster counts, totals, formats).
 *
 * Shapes
 *   Boxes of R rows x C columns, N = R*C <= 12 symbols. A band is R rows
 *   (R boxes side by side), the grid has C bands. The box "RxC" is oriented
 *   so that C (the number of bands) is 2 or 3; "3x4" is counted as 4x3 (a
 *   transposed grid is a grid). Supported: 2x2, 3x2/2x3, 4x2/2x4, 3x3,
 *   5x2/2x5, 4x3/3x4 (6x2 is refused: too many band configurations).
 *
 * Method (the definitions every number below depends on)
 *   1. Box code: the column sets of a box as an unordered partition of the N
 *      symbols into C sets of R. Codes are numbered in the lexicographic
 *      order of their restricted-growth strings (label of each symbol, sets
 *      labelled by first appearance); code 0 = {0..R-1}, {R..2R-1}, ...
 *      K codes (5,775 for 4x3). A code's columns are ordered by smallest
 *      symbol.
 *   2. Compatible boxes below a code A = (A0..A{C-1}) (C == 3): ordered
 *      (B0,B1,B2), each of R symbols, partitioning the symbols, Bk and Ak
 *      disjoint; the third box of the stack is Dk = complement of Ak u Bk.
 *      sum_x C(R,x)^3 of them (346 for R = 4). For C == 2 the box below is
 *      the same code (columns swapped).
 *   3. Band count cnt(c0..c{R-1}): the number of R x N bands whose box j has
 *      column sets c_j, with column 0 (box 0's first column) in a fixed
 *      order (= all fillings / R!). Counted as ordered decompositions of the
 *      R-regular bipartite graph (column sets x symbols) into R perfect
 *      matchings (rows); the last two rows by 2^(cycles-1).
 *   4. Nodes: orbits of codes under Stab(code 0) (the symbol permutations
 *      preserving code 0; order (R!)^C C!). Node rep = smallest code of the
 *      orbit. 9 nodes for 4x3.
 *   5. Entries: tuples (code 0, c1, ..., c{R-1}) with c1 a node rep. The
 *      reduced entry of a tuple is its lexicographically least image under
 *      symbol permutations that keep box 0 = code 0 and box 1 a node rep,
 *      computed through a chain of orbit tables (Stab(0), then the
 *      stabiliser of the node, then of the first reduced code, ...).
 *   6. Gangsters: orbits of reduced entries under box permutations (adjacent
 *      transpositions followed by reduction), found by union-find; each
 *      gangster is named by its least reduced entry and the gangsters are
 *      sorted by it, so a GangSet (same node c1) is a contiguous range and
 *      within a set gangsters sharing box 2 ("c2 groups") are contiguous.
 *      members(g) = the number of tuples (code 0, c1..c{R-1}), c1 any code,
 *      in g (sum over gangsters = K^(R-1)).
 *   7. Per-gangster count (C == 3): W(g) = sum over the compatible boxes
 *      below each of the R boxes of cnt(band 1) * cnt(band 2). Computed as
 *      2 * the sum over the outer pairs (b0, b1) with b0 < swap(b0) (band 1
 *      and band 2 exchanged gives the same term), so W is even.
 *   8. Totals: C == 2: N = 2^R K (R!)^2 sum_g members(g) cnt(g)^2;
 *      C == 3: N = 6^R K (R!)^3 sum_g members(g) cnt(g) W(g).
 *
 * Tables for C == 3: T[entry] = cnt of the entry's gangster, for every
 * entry (node, x2..x{R-1}) with x any code; rows are padded to Kp = K+1
 * rounded up to 4 with T[.. K] = 0 (a sentinel for padded loops). For 4x3
 * T is 9 x 5775 x 5776 u32 = 1.2 GB.
 *
 * Threads: every function is reentrant; a setup is immutable once built and
 * may be shared by threads. Nothing here has global state: setups kept for
 * a process's lifetime live in a context (struct sudoku_ctx) its owner
 * opens and closes.
 * Ownership: sudoku_setup_build returns a setup the caller frees with
 * sudoku_setup_free (NULL accepted); nothing keeps pointers to arguments.
 */
#ifndef GPUD_SUDOKU_H
#define GPUD_SUDOKU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SUDOKU_HD __host__ __device__ __forceinline__
#else
#define SUDOKU_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SUDOKU_MAXN 12
#define SUDOKU_MAXR 5
#define SUDOKU_MAXC 3

struct sudoku_perm {
	uint8_t p[SUDOKU_MAXN]; /* symbol s -> p[s] */
};

/* A permutation as two 64-entry tables on the low and high 6 bits of a
 * symbol mask: map(m) = lo[m & 63] | hi[m >> 6]. */
struct sudoku_pmap {
	uint16_t lo[64], hi[64];
};

/* One level of the chain of orbit tables (see 5. above). */
struct sudoku_otab {
	uint64_t order;              /* |H| */
	uint16_t *omin;              /* [K] orbit min (non-last levels) */
	uint32_t *osize;             /* [K] orbit size of reps (non-last) */
	struct sudoku_perm *trans;   /* [K] maps a code to its orbit min */
	struct sudoku_otab **child;  /* [K] next level, for reps */
	uint32_t *red;               /* [K] reduced entry id (last level) */
};

/* The outer pairs of one GangSet (C == 3): band 1 and band 2's first two
 * boxes, reduced: node ordinals and the permutations to apply to their
 * other boxes' codes. */
struct sudoku_outer {
	uint16_t n1, n2;
	struct sudoku_perm p1, p2;
};

struct sudoku_setup {
	int R, C, N;
	uint32_t K;
	uint16_t (*masks)[SUDOKU_MAXC]; /* [K] column sets, by smallest symbol */
	uint16_t *rgs2code;             /* [C^N] */
	uint32_t pw[1u << SUDOKU_MAXN]; /* sum of C^s over the mask's symbols */
	struct sudoku_perm *sigma0;     /* [K] maps code x to code 0 */
	struct sudoku_otab *root;       /* orbits of Stab(code 0) */
	uint64_t stab0_order;

	uint32_t nnodes;
	uint16_t *node_code;            /* [nnodes] rep code of a node */
	uint16_t *node_of;              /* [K] node ordinal of a code */
	uint32_t *node_size;            /* [nnodes] */

	uint32_t nred;                  /* reduced entries */
	uint16_t *red_tuple;            /* [nred][R-1]: c1..c{R-1} */
	uint64_t *red_weight;           /* [nred] tuples it stands for */
	uint32_t *red_gang;             /* [nred] gangster index */

	uint32_t ngang;
	uint16_t *gang_tuple;           /* [ngang][R-1] */
	uint64_t *members;              /* [ngang] */
	uint32_t *cnt;                  /* [ngang] band counts (0 if skipped) */
	int have_cnt;
	uint32_t max_cnt;
	uint32_t *set_start;            /* [nnodes + 1]: set s = node s */

	/* C == 3 */
	uint32_t ncompat;
	uint16_t *cb, *cd;              /* [K][ncompat] codes of B and D */
	uint16_t *swap0;                /* [ncompat] for code 0: B <-> D */
	uint32_t Kp;                    /* padded row length of T */
	uint64_t Tlen;
	uint32_t *T;                    /* see above; NULL if not built */
};

/* What to build. */
#define SUDOKU_BUILD_CNT 1u  /* band counts of every gangster */
#define SUDOKU_BUILD_T 2u    /* T (C == 3; implies CNT) */

/* Parse "RxC" (also "R x C"), orient so that C is 2 or 3. Returns 0 or
 * GERR_INVAL / GERR_UNSUPPORTED with a message. */
int sudoku_parse_box(const char *s, int *ret_R, int *ret_C, char *err,
		     size_t errlen);

int sudoku_setup_build(int R, int C, unsigned what, int threads,
		       struct sudoku_setup **ret, char *err, size_t errlen);
void sudoku_setup_free(struct sudoku_setup *S);

/* The workload's context (sudoku_workload.open builds one per process):
 * per shape, an enumeration-only setup (what == 0: codes, gangsters,
 * members, sets; 1.7 s and ~100 MB for 4x3, used by carve) and a full one
 * (what != 0: band counts and T; about 1.3 GB and a minute of 16 cores for
 * 4x3, used by run, verify, merge and finish), each built on first use and
 * kept until the context is closed, so setup is paid once per process, not
 * per lease. A full setup also answers what == 0. Any thread: a setup is built
 * outside the context's lock by the first thread that asks, while others
 * asking for the same one wait and others asking for another go on. The
 * returned setup is immutable, valid until sudoku_ctx_close, not freed by
 * the caller. */
struct sudoku_ctx;

int sudoku_ctx_open(struct sudoku_ctx **ret);
/* Frees every setup (NULL accepted); no other thread may use ctx then. */
void sudoku_ctx_close(struct sudoku_ctx *ctx);
int sudoku_ctx_setup(struct sudoku_ctx *ctx, int R, int C, unsigned what,
		     int threads, const struct sudoku_setup **ret, char *err,
		     size_t errlen);

/* ---- codes ---------------------------------------------------------- */

SUDOKU_HD uint16_t sudoku_pmap_mask(const struct sudoku_pmap *m, uint32_t x)
{
	return (uint16_t)(m->lo[x & 63] | m->hi[x >> 6]);
}

void sudoku_pmap_of(const struct sudoku_perm *p, int N,
		    struct sudoku_pmap *ret);

/* Code index of C masks (any order). */
SUDOKU_HD uint32_t sudoku_code_of_masks(const uint32_t *pw,
					const uint16_t *rgs2code, int C,
					uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t key;
	if (C == 2) {
		key = ((a & -a) > (b & -b)) ? pw[a] : pw[b];
	} else {
		uint32_t la = a & -a, lb = b & -b, lc = c & -c;
		uint32_t ra = (la > lb) + (la > lc), rb = (lb > la) + (lb > lc),
			 rc = (lc > la) + (lc > lb);
		key = ra * pw[a] + rb * pw[b] + rc * pw[c];
	}
	return rgs2code[key];
}

/* The code of p(x). */
SUDOKU_HD uint32_t sudoku_code_apply(const uint16_t (*masks)[SUDOKU_MAXC],
				     const uint32_t *pw,
				     const uint16_t *rgs2code, int C,
				     const struct sudoku_pmap *m, uint32_t x)
{
	uint32_t a = sudoku_pmap_mask(m, masks[x][0]);
	uint32_t b = sudoku_pmap_mask(m, masks[x][1]);
	uint32_t c = C == 3 ? sudoku_pmap_mask(m, masks[x][2]) : 0;
	return sudoku_code_of_masks(pw, rgs2code, C, a, b, c);
}

uint32_t sudoku_apply(const struct sudoku_setup *S,
		      const struct sudoku_perm *p, uint32_t code);

/* Reduced entry id of a band given as R codes (any codes). */
uint32_t sudoku_reduce(const struct sudoku_setup *S, const uint16_t *codes);

/* Band count of R codes (reference; slow for 4x3: about a millisecond). */
uint64_t sudoku_band_count(const struct sudoku_setup *S,
			   const uint16_t *codes);

/* ---- per-gangster counts (C == 3) ------------------------------------ */

/* The outer pairs of set s (node ordinal): *ret malloc'ed, *ret_n of them
 * ((ncompat / 2) * ncompat). */
int sudoku_outer_build(const struct sudoku_setup *S, uint32_t set,
		       struct sudoku_outer **ret, uint32_t *ret_n);

/* W of gangsters [from, to) (same set, any c2) on the CPU with `threads`
 * threads; w[i] gets W of gangster from + i as (lo, hi). Needs T.
 * outer may be NULL (built here). Returns 0 or GERR_NOMEM / GERR_INVAL. */
int sudoku_w_cpu(const struct sudoku_setup *S, const struct sudoku_outer *outer,
		 uint32_t nouter, uint32_t from, uint32_t to, int threads,
		 uint64_t (*w)[2]);

/* Pieces of W: the set's outer pairs cut into npieces ranges, piece p
 * holding pairs [p * nouter / npieces, (p + 1) * nouter / npieces), so W =
 * the sum of its pieces (each one 2 * its half sum, as W). Pieces [p0, p1)
 * of gangsters [from, to) (same set): pieces[i * (p1 - p0) + p - p0] for
 * gangster from + i, as (lo, hi). sudoku_w_cpu is the one piece of 1.
 * Returns 0 or GERR_NOMEM / GERR_INVAL. */
int sudoku_w_pieces_cpu(const struct sudoku_setup *S,
			const struct sudoku_outer *outer, uint32_t nouter,
			uint32_t from, uint32_t to, uint32_t npieces,
			uint32_t p0, uint32_t p1, int threads,
			uint64_t (*pieces)[2]);

/* The set of gangster g. */
uint32_t sudoku_set_of(const struct sudoku_setup *S, uint32_t g);

/* Upper bound of W for any gangster: 2 * nouter * ncompat^(R-2) * max_cnt^2
 * as 128 bits; 0 if it does not fit. */
int sudoku_w_bound(const struct sudoku_setup *S, uint64_t ret[2]);

#ifdef __cplusplus
}
#endif

#endif

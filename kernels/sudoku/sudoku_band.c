/* sudoku_band.c - band counts (sudoku.h 3.): the reference count of one
 * band, the count of every gangster, and the table T built from them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "par.h"
#include "sudoku.h"
#include "sudoku_internal.h"

/* ---- band counts --------------------------------------------------------- */

struct bc {
	int N, R;
	uint16_t rem[SUDOKU_MAXN];
	uint16_t pick[SUDOKU_MAXR][SUDOKU_MAXN];
};

static uint64_t bc_rows(struct bc *b, int row);

static uint64_t bc_match(struct bc *b, int row, int i, uint32_t used)
{
	uint64_t total = 0;
	uint32_t avail;

	if (i == b->N) {
		for (int j = 0; j < b->N; j++)
			b->rem[j] &= (uint16_t)~b->pick[row][j];
		total = bc_rows(b, row + 1);
		for (int j = 0; j < b->N; j++)
			b->rem[j] |= b->pick[row][j];
		return total;
	}
	avail = b->rem[i] & ~used;
	while (avail) {
		uint32_t bit = avail & -avail;
		avail &= avail - 1;
		b->pick[row][i] = (uint16_t)bit;
		total += bc_match(b, row, i + 1, used | bit);
	}
	return total;
}

static uint64_t bc_rows(struct bc *b, int row)
{
	if (b->R - row == 2) {
		/* 2-regular: components of sets joined by shared symbols. */
		int par[SUDOKU_MAXN], first[SUDOKU_MAXN], comps = b->N;
		for (int i = 0; i < b->N; i++) {
			par[i] = i;
			first[i] = -1;
		}
		for (int i = 0; i < b->N; i++) {
			uint32_t m = b->rem[i];
			while (m) {
				int s = __builtin_ctz(m);
				m &= m - 1;
				if (first[s] < 0) {
					first[s] = i;
				} else {
					int x = first[s], y = i;
					while (par[x] != x)
						x = par[x];
					while (par[y] != y)
						y = par[y];
					if (x != y) {
						par[x] = y;
						comps--;
					}
				}
			}
		}
		return 1ull << (comps - 1);
	}
	/* Set 0 (box 0, column 0) takes its smallest remaining symbol. */
	b->pick[row][0] = (uint16_t)(b->rem[0] & -b->rem[0]);
	return bc_match(b, row, 1, b->pick[row][0]);
}

uint64_t sudoku_band_count(const struct sudoku_setup *S, const uint16_t *codes)
{
	struct bc b;

	b.N = S->N;
	b.R = S->R;
	for (int j = 0; j < S->R; j++)
		for (int k = 0; k < S->C; k++)
			b.rem[j * S->C + k] = S->masks[codes[j]][k];
	return bc_rows(&b, 0);
}

/* ---- every gangster's band count ------------------------------------------ */

struct cnt_ctx {
	struct sudoku_setup *S;
	_Atomic int overflow;
};

static void cnt_one(void *arg, size_t g)
{
	struct cnt_ctx *c = arg;
	struct sudoku_setup *S = c->S;
	uint16_t codes[SUDOKU_MAXR];
	uint64_t v;

	codes[0] = 0;
	memcpy(codes + 1, S->gang_tuple + g * (S->R - 1),
	       (S->R - 1) * sizeof(uint16_t));
	v = sudoku_band_count(S, codes);
	if (v > UINT32_MAX) {
		atomic_store(&c->overflow, 1);
		v = 0;
	}
	S->cnt[g] = (uint32_t)v;
}

/* ---- the band counts of a range of gangsters (a lease's, C == 2) ----------- */

struct cnt_range_ctx {
	const struct sudoku_setup *S;
	uint32_t from;
	uint64_t (*v)[2];
};

static void cnt_range_one(void *arg, size_t i)
{
	struct cnt_range_ctx *c = arg;
	const struct sudoku_setup *S = c->S;
	uint16_t codes[SUDOKU_MAXR];

	codes[0] = 0;
	memcpy(codes + 1, S->gang_tuple + (c->from + i) * (S->R - 1),
	       (S->R - 1) * sizeof(uint16_t));
	c->v[i][0] = sudoku_band_count(S, codes);
	c->v[i][1] = 0;
}

int sudoku_cnt_range(const struct sudoku_setup *S, uint32_t from, uint32_t to,
		     int threads, uint64_t (*v)[2])
{
	struct cnt_range_ctx cc = { S, from, v };

	if (from > to || to > S->ngang)
		return GERR_INVAL;
	par_run(cnt_range_one, &cc, to - from, (size_t)(threads < 1 ? 1 : threads));
	for (uint32_t i = 0; i < to - from; i++)
		if (v[i][0] > UINT32_MAX)
			return GERR_UNSUPPORTED;
	return 0;
}

int sudoku_cnt_fill(struct sudoku_setup *S, int threads, char *err,
		    size_t errlen)
{
	struct cnt_ctx cc = { S, 0 };

	par_run(cnt_one, &cc, S->ngang, (size_t)threads);
	if (atomic_load(&cc.overflow)) {
		snprintf(err, errlen, "sudoku: a band count exceeds 32 bits");
		return GERR_UNSUPPORTED;
	}
	S->have_cnt = 1;
	for (uint32_t g = 0; g < S->ngang; g++)
		if (S->cnt[g] > S->max_cnt)
			S->max_cnt = S->cnt[g];
	return 0;
}

/* ---- T --------------------------------------------------------------------- */

/* T fill in parallel over (node, x) for R == 4, nodes otherwise. */
struct tfill {
	struct sudoku_setup *S;
};

static void tfill_last(const struct sudoku_setup *S,
		       const struct sudoku_otab *t, const struct sudoku_perm *P,
		       uint32_t *row)
{
	struct sudoku_pmap pm;
	sudoku_pmap_of(P, S->N, &pm);
	for (uint32_t x = 0; x < S->K; x++) {
		uint32_t y = sudoku_code_apply(
			(const uint16_t(*)[SUDOKU_MAXC])S->masks, S->pw,
			S->rgs2code, S->C, &pm, x);
		row[x] = S->cnt[S->red_gang[t->red[y]]];
	}
	for (uint32_t x = S->K; x < S->Kp; x++)
		row[x] = 0;
}

static void tfill_one(void *arg, size_t i)
{
	struct tfill *f = arg;
	const struct sudoku_setup *S = f->S;
	uint32_t K = S->K;

	if (S->R == 3) {
		uint16_t r = S->node_code[i];
		struct sudoku_perm id;
		sudoku_perm_id(&id);
		tfill_last(S, S->root->child[r], &id, S->T + i * S->Kp);
	} else { /* R == 4: i = node * K + x */
		uint32_t n = (uint32_t)(i / K), x = (uint32_t)(i % K);
		const struct sudoku_otab *t1 = S->root->child[S->node_code[n]];
		uint32_t m = t1->omin[x];
		tfill_last(S, t1->child[m], &t1->trans[x], S->T + i * S->Kp);
	}
}

int sudoku_T_fill(struct sudoku_setup *S, int threads)
{
	struct tfill f = { S };
	int R = S->R;

	if (R == 2)
		S->Tlen = S->nnodes;
	else if (R == 3)
		S->Tlen = (uint64_t)S->nnodes * S->Kp;
	else
		S->Tlen = (uint64_t)S->nnodes * S->K * S->Kp;
	S->T = malloc(S->Tlen * sizeof(uint32_t));
	if (!S->T)
		return GERR_NOMEM;
	if (R == 2) {
		for (uint32_t n = 0; n < S->nnodes; n++)
			S->T[n] = S->cnt[S->red_gang[S->root->red[S->node_code[n]]]];
	} else {
		par_run(tfill_one, &f,
			R == 3 ? S->nnodes : (size_t)S->nnodes * S->K,
			(size_t)threads);
	}
	return 0;
}

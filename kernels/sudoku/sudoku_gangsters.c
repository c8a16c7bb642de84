/* sudoku_gangsters.c - gangsters (sudoku.h 6.): orbits of reduced entries
 * under box permutations, named by their least entry and sorted, with their
 * member counts and GangSets. */
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_internal.h"

/* union-find */
static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static int tuple_cmp(const uint16_t *a, const uint16_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* A class to sort by its least tuple: R - 1 <= 4 codes of 16 bits packed
 * first-most-significant, so the keys compare as the tuples do. */
_Static_assert(SUDOKU_MAXR - 1 <= 4, "a gangster's tuple fits 64 bits");

struct keyed {
	uint64_t key;
	uint32_t cls;
};

static int keyed_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct keyed *)a)->key,
		 y = ((const struct keyed *)b)->key;
	return (x > y) - (x < y);
}

int sudoku_gangsters_find(struct sudoku_setup *S)
{
	uint32_t nred = S->nred, *par, *cls = NULL, nc = 0;
	struct keyed *order = NULL;
	int R1 = S->R - 1, rc = GERR_NOMEM;
	uint16_t *rep = NULL;

	par = malloc(nred * sizeof(*par));
	if (!par)
		return GERR_NOMEM;
	for (uint32_t i = 0; i < nred; i++)
		par[i] = i;
	for (uint32_t i = 0; i < nred; i++) {
		uint16_t t[SUDOKU_MAXR];
		t[0] = 0;
		memcpy(t + 1, S->red_tuple + (size_t)i * R1, R1 * sizeof(uint16_t));
		for (int a = 0; a < S->R - 1; a++) {
			uint16_t u[SUDOKU_MAXR];
			memcpy(u, t, sizeof(u));
			u[a] = t[a + 1];
			u[a + 1] = t[a];
			uint32_t j = sudoku_reduce(S, u);
			uint32_t x = uf_find(par, i), y = uf_find(par, j);
			if (x != y) {
				if (x < y)
					par[y] = x;
				else
					par[x] = y;
			}
		}
	}
	/* classes: the root of each is its least index; reduced entries are
	 * not created in tuple order, so name each class by its least tuple */
	cls = malloc(nred * sizeof(*cls));
	if (!cls)
		goto out;
	for (uint32_t i = 0; i < nred; i++) {
		uint32_t r = uf_find(par, i);
		cls[i] = r == i ? nc++ : cls[r];
	}
	rep = malloc((size_t)nc * R1 * sizeof(*rep));
	order = malloc(nc * sizeof(*order));
	S->members = calloc(nc, sizeof(*S->members));
	S->gang_tuple = malloc((size_t)nc * R1 * sizeof(uint16_t));
	S->cnt = calloc(nc, sizeof(*S->cnt));
	S->red_gang = malloc(nred * sizeof(*S->red_gang));
	if (!rep || !order || !S->members || !S->gang_tuple || !S->cnt ||
	    !S->red_gang)
		goto out;
	memset(rep, 0xff, (size_t)nc * R1 * sizeof(*rep));
	for (uint32_t i = 0; i < nred; i++) {
		const uint16_t *t = S->red_tuple + (size_t)i * R1;
		uint16_t *r = rep + (size_t)cls[i] * R1;
		if (tuple_cmp(t, r, R1) < 0)
			memcpy(r, t, R1 * sizeof(*r));
	}
	for (uint32_t c = 0; c < nc; c++) {
		uint64_t key = 0;
		for (int i = 0; i < R1; i++)
			key |= (uint64_t)rep[(size_t)c * R1 + i] << (16 * (3 - i));
		order[c] = (struct keyed){ key, c };
	}
	qsort(order, nc, sizeof(*order), keyed_cmp);
	/* rank[class] -> gangster index; reuse par as rank */
	for (uint32_t g = 0; g < nc; g++) {
		par[order[g].cls] = g;
		memcpy(S->gang_tuple + (size_t)g * R1, rep + (size_t)order[g].cls * R1,
		       R1 * sizeof(uint16_t));
	}
	for (uint32_t i = 0; i < nred; i++) {
		uint32_t g = par[cls[i]];
		S->red_gang[i] = g;
		S->members[g] += S->red_weight[i];
	}
	S->ngang = nc;
	S->set_start = calloc(S->nnodes + 1, sizeof(*S->set_start));
	if (!S->set_start)
		goto out;
	for (uint32_t g = 0; g < nc; g++)
		S->set_start[S->node_of[S->gang_tuple[(size_t)g * R1]] + 1]++;
	for (uint32_t s = 0; s < S->nnodes; s++)
		S->set_start[s + 1] += S->set_start[s];
	rc = 0;
out:
	free(par);
	free(cls);
	free(rep);
	free(order);
	return rc;
}

/* othello_frontier.c - does the GPU pay at the shallow end of a deep
 * search? (issue 24; an experiment, built only with -Dbench=true.)
 *
 * usage: othello_frontier [-e empties] [-n positions] [-s seed]
 *                         [-t threads] [-g gpu_empties] [-d device]
 *
 * Two ways to solve the same n random-play positions of `empties` empties
 * exactly:
 *   cpu:      othello_solve_batch on `threads` threads (the product's
 *             CPU solver, alpha-beta with its table and ordering);
 *   frontier: the CPU expands every position full-width down to positions
 *             of `gpu_empties` empties (passes are plies, finished games
 *             are leaves), the GPU solves that frontier in one batch, and
 *             the CPU backs the scores up by negamax.
 * Both must give the same scores (checked). Printed: the frontier's size,
 * each way's wall time and positions/s, and the GPU's kernel time.
 * Full-width expansion gives up alpha-beta above the frontier: every
 * ply multiplies the frontier by the mobility (~8), where alpha-beta with
 * good ordering multiplies the work by about its square root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_cuda.h"

/* A node: kind 0 = frontier leaf (value: its index in fp/fo), 1 = game
 * over (value: the score), 2 = inner (children kids[first, first + count)). */
struct node {
	int8_t kind;
	int32_t value, first, count;
};

struct tree {
	struct node *node;
	int32_t *kids;
	uint64_t *fp, *fo;
	size_t n, cap, nk, capk, nf, capf, capo;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return GERR_NOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int node_new(struct tree *t, int32_t *ret)
{
	if (grow((void **)&t->node, &t->cap, t->n + 1, sizeof(*t->node)))
		return GERR_NOMEM;
	*ret = (int32_t)t->n++;
	return 0;
}

/* Expand (P, O) into t; the node's index in *ret. */
static int expand(struct tree *t, uint64_t P, uint64_t O, int gpu_e,
		  int passed, int32_t *ret)
{
	int32_t me;
	int rc = node_new(t, &me);

	if (rc)
		return rc;
	*ret = me;
	uint64_t m = oth_moves(P, O);
	if (oth_popcount(~(P | O)) <= gpu_e && (m || oth_moves(O, P))) {
		if (grow((void **)&t->fp, &t->capf, t->nf + 1, 8) ||
		    grow((void **)&t->fo, &t->capo, t->nf + 1, 8))
			return GERR_NOMEM;
		t->fp[t->nf] = P;
		t->fo[t->nf] = O;
		t->node[me].kind = 0;
		t->node[me].value = (int32_t)t->nf++;
		return 0;
	}
	if (!m) {
		if (passed || !oth_moves(O, P)) {
			t->node[me].kind = 1;
			t->node[me].value = oth_final_score(P, O);
			return 0;
		}
		m = 0; /* a pass: one child, the opponent to move */
	}
	int k = m ? oth_popcount(m) : 1;
	int32_t kids[32], j = 0;
	if (!m) {
		rc = expand(t, O, P, gpu_e, 1, &kids[j++]);
		if (rc)
			return rc;
	}
	for (; m; m &= m - 1) {
		int sq = oth_ctz(m);
		uint64_t f = oth_flips(P, O, sq);
		rc = expand(t, O & ~f, P | f | (1ull << sq), gpu_e, 0,
			    &kids[j++]);
		if (rc)
			return rc;
	}
	if (grow((void **)&t->kids, &t->capk, t->nk + (size_t)k, 4))
		return GERR_NOMEM;
	memcpy(t->kids + t->nk, kids, (size_t)k * 4);
	t->node[me] = (struct node){2, 0, (int32_t)t->nk, k};
	t->nk += (size_t)k;
	return 0;
}

static int backup(const struct tree *t, const int8_t *fscore, int32_t i)
{
	const struct node *x = &t->node[i];

	if (x->kind == 0)
		return fscore[x->value];
	if (x->kind == 1)
		return x->value;
	int best = -65;
	for (int32_t c = 0; c < x->count; c++) {
		int v = -backup(t, fscore, t->kids[x->first + c]);
		best = v > best ? v : best;
	}
	return best;
}

int main(int argc, char **argv)
{
	int empties = 18, gpu_e = 14, device = 0, opt;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 64;
	uint64_t seed = 1;
	char err[256];

	while ((opt = getopt(argc, argv, "e:n:s:t:g:d:")) != -1) {
		switch (opt) {
		case 'e': empties = atoi(optarg); break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 't': threads = atoi(optarg); break;
		case 'g': gpu_e = atoi(optarg); break;
		case 'd': device = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: othello_frontier [-e empties] "
				"[-n positions] [-s seed] [-t threads] "
				"[-g gpu_empties] [-d device]\n");
			return 2;
		}
	}
	if (empties < 1 || empties > 40 || gpu_e < 1 ||
	    gpu_e > OTHELLO_CUDA_MAX_EMPTIES || n < 1 || n > 1000000 ||
	    threads < 1) {
		fprintf(stderr, "othello_frontier: bad arguments\n");
		return 2;
	}
	uint64_t *P = malloc(n * 8), *O = malloc(n * 8);
	int8_t *cs = malloc(n);
	uint8_t *cm = malloc(n);
	int32_t *root = malloc(n * 4);
	struct tree t = {0};
	if (!P || !O || !cs || !cm || !root)
		return 1;
	for (size_t i = 0; i < n; i++) {
		int black;
		oth_generate(seed, i, empties, &P[i], &O[i], &black);
	}

	uint64_t nodes = 0;
	double t0 = gclock_mono();
	if (othello_solve_batch(P, O, n, threads, cs, cm, &nodes, NULL, NULL))
		return 1;
	double cpu_s = gclock_mono() - t0;

	struct othello_cuda *cu;
	if (othello_cuda_open(device, &cu, err, sizeof(err))) {
		fprintf(stderr, "othello_frontier: %s\n", err);
		return 77;
	}
	t0 = gclock_mono();
	for (size_t i = 0; i < n; i++)
		if (expand(&t, P[i], O[i], gpu_e, 0, &root[i]))
			return 1;
	double exp_s = gclock_mono() - t0;
	int8_t *fs = malloc(t.nf ? t.nf : 1);
	uint8_t *fm = malloc(t.nf ? t.nf : 1);
	float ms = 0, part;
	uint64_t gnodes = 0, gn;
	if (!fs || !fm)
		return 1;
	for (size_t at = 0; at < t.nf; at += OTHELLO_CUDA_MAX_BATCH) {
		size_t k = t.nf - at < OTHELLO_CUDA_MAX_BATCH ? t.nf - at
							    : OTHELLO_CUDA_MAX_BATCH;
		if (othello_cuda_solve(cu, t.fp + at, t.fo + at, k, fs + at,
				       fm + at, &gn, &part, err, sizeof(err))) {
			fprintf(stderr, "othello_frontier: %s\n", err);
			return 1;
		}
		ms += part;
		gnodes += gn;
	}
	double gpu_s = gclock_mono() - t0 - exp_s;
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += backup(&t, fs, root[i]) != cs[i];
	double all_s = gclock_mono() - t0;

	printf("othello_frontier: %zu random positions of %d empties "
	       "(seed %llu), frontier at %d empties, %d CPU threads\n",
	       n, empties, (unsigned long long)seed, gpu_e, threads);
	printf("frontier: %zu positions (%.1f per root), %zu tree nodes\n",
	       t.nf, (double)t.nf / (double)n, t.n);
	printf("cpu:      %.4f s = %.1f positions/s, %.3g nodes\n", cpu_s,
	       (double)n / cpu_s, (double)nodes);
	printf("frontier: %.4f s = %.1f positions/s (expand %.4f s, GPU "
	       "%.4f s of which kernel %.4f s, %.3g nodes)\n",
	       all_s, (double)n / all_s, exp_s, gpu_s, ms / 1e3,
	       (double)gnodes);
	printf("frontier / cpu time: %.2f; scores differing: %zu\n",
	       all_s / cpu_s, bad);
	othello_cuda_close(cu);
	return bad ? 1 : 0;
}

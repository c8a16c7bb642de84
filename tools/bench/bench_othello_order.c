/* bench_othello_order - how well an evaluation orders moves: on the
 * held-out positions of a training data file (every 10th position, those
 * tools/othello_train.py only measures), how often the move whose child
 * the evaluation likes least for the opponent is an exact best move, and
 * where the first exact best move falls in the evaluation's order; for the
 * pattern evaluation (othello_eval), the square-weight + mobility one it
 * replaced, fewest opponent moves first, and a random pick (expected).
 * Also the pattern evaluation's mean absolute error against the scores of
 * all held-out positions (as othello_train.py prints it for its weights).
 *   bench_othello_order DATA.obf [MAX_POSITIONS]   (default 2000 ordered)
 * With --published FILE (tests/data/ffo.obf), every position's listed best
 * moves (those of the highest listed score) are the exact best ones, and
 * nothing is solved: the figures then cover deep positions too.
 * Children are solved exactly by the fast CPU solver, on one thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_eval.h"

#define ORDER_KINDS 3

/* The evaluation before the pattern one: square weights and mobility. */
static int order_squares(uint64_t P, uint64_t O)
{
	static const int8_t sw[64] = {
		80, -20, 10, 5, 5, 10, -20, 80, -20, -40, -4, -2, -2, -4, -40, -20,
		10, -4, 2, 1, 1, 2, -4, 10, 5, -2, 1, 0, 0, 1, -2, 5,
		5, -2, 1, 0, 0, 1, -2, 5, 10, -4, 2, 1, 1, 2, -4, 10,
		-20, -40, -4, -2, -2, -4, -40, -20, 80, -20, 10, 5, 5, 10, -20, 80,
	};
	int v = 0;

	for (uint64_t b = P; b; b &= b - 1)
		v += sw[oth_ctz(b)];
	for (uint64_t b = O; b; b &= b - 1)
		v -= sw[oth_ctz(b)];
	return v + 8 * (oth_popcount(oth_moves(P, O)) - oth_popcount(oth_moves(O, P)));
}

static int order_mobility(uint64_t P, uint64_t O)
{
	return oth_popcount(oth_moves(P, O));
}

static int (*const order_fn[ORDER_KINDS])(uint64_t, uint64_t) = {
	othello_eval, order_squares, order_mobility,
};
static const char *const order_name[ORDER_KINDS] = {
	"pattern evaluation (othello_eval)", "square weights + mobility (before)",
	"fewest opponent moves",
};

struct order_tally {
	uint64_t top1[ORDER_KINDS], rank_sum[ORDER_KINDS];
	double random_top1;
	uint64_t positions, moves, children, held;
	double abs_err; /* over every held-out position */
};

/* Each order's rank of the first move in `best` (the moves reaching the
 * score): how many children it puts before every best one, ties broken by
 * square as a stable sort would. */
static void order_rank(uint64_t P, uint64_t O, uint64_t best,
		       struct order_tally *t)
{
	int sq[32], n = 0, nbest = oth_popcount(best);

	for (uint64_t m = oth_moves(P, O); m && n < 32; m &= m - 1)
		sq[n++] = oth_ctz(m);
	t->positions++;
	t->moves += (uint64_t)n;
	t->children += (uint64_t)nbest;
	t->random_top1 += (double)nbest / n;
	for (int k = 0; k < ORDER_KINDS; k++) {
		int v[32], rank = n;
		for (int i = 0; i < n; i++) {
			uint64_t f = oth_flips(P, O, sq[i]);
			v[i] = order_fn[k](O & ~f, P | f | (1ull << sq[i]));
		}
		for (int i = 0; i < n; i++) {
			if (!(best >> sq[i] & 1))
				continue;
			int before = 0;
			for (int j = 0; j < n; j++)
				before += v[j] < v[i] || (v[j] == v[i] && j < i);
			if (before < rank)
				rank = before;
		}
		t->top1[k] += rank == 0;
		t->rank_sum[k] += (uint64_t)rank;
	}
}

/* The best moves of a position by solving each child exactly. */
static int order_solve(struct othello_solver *s, uint64_t P, uint64_t O,
		       int score, uint64_t *ret_best)
{
	int child[64], best = -65;
	uint64_t moves = oth_moves(P, O), nodes, mask = 0;

	for (uint64_t m = moves; m; m &= m - 1) {
		int q = oth_ctz(m), mv;
		uint64_t f = oth_flips(P, O, q);
		child[q] = -othello_solver_solve(s, O & ~f, P | f | (1ull << q), &mv, &nodes);
		if (child[q] > best)
			best = child[q];
	}
	if (best != score) {
		fprintf(stderr, "bench_othello_order: the children's best %d differs "
			"from the file's score %d\n", best, score);
		return GERR_CORRUPT;
	}
	for (uint64_t m = moves; m; m &= m - 1)
		if (child[oth_ctz(m)] == best)
			mask |= 1ull << oth_ctz(m);
	*ret_best = mask;
	return 0;
}

/* The published best moves of a line ("MV:+SC;" pairs after the side to
 * move, up to a '%' comment): those with the highest score. */
static uint64_t order_published(const char *line)
{
	const char *end = strchr(line, '%'), *c = strchr(line, ';');
	uint64_t mask = 0;
	int best = -65;

	if (!end)
		end = line + strlen(line);
	for (; c && c < end; c = strchr(c + 1, ';')) {
		int sc;
		const char *m = c + 1;
		while (*m == ' ')
			m++;
		if (m + 3 >= end || m[0] < 'A' || m[0] > 'H' || m[1] < '1' || m[1] > '8' ||
		    m[2] != ':' || sscanf(m + 3, "%d", &sc) != 1)
			continue;
		int q = (m[1] - '1') * 8 + (m[0] - 'A');
		if (sc > best)
			mask = 0, best = sc;
		if (sc == best)
			mask |= 1ull << q;
	}
	return mask;
}

static void order_print(const struct order_tally *t)
{
	printf("%" PRIu64 " positions with 2+ moves (%.2f moves, %.2f best moves each):\n",
	       t->positions, (double)t->moves / t->positions,
	       (double)t->children / t->positions);
	printf("%-36s %10s %14s\n", "order", "best first", "mean rank");
	for (int k = 0; k < ORDER_KINDS; k++)
		printf("%-36s %9.1f%% %14.2f\n", order_name[k],
		       100.0 * t->top1[k] / t->positions, (double)t->rank_sum[k] / t->positions);
	printf("%-36s %9.1f%%\n", "random pick (expected)", 100.0 * t->random_top1 / t->positions);
}

/* Nanoseconds per call of each order's function, on 4096 random
 * positions with 10..41 empties evaluated 256 times each. */
static void order_timing(void)
{
	enum { N = 4096, R = 256 };
	static uint64_t P[N], O[N];
	int black;

	for (int i = 0; i < N; i++)
		oth_generate(7, (uint64_t)i, 10 + i % 32, &P[i], &O[i], &black);
	for (int k = 0; k < ORDER_KINDS; k++) {
		volatile int sink = 0;
		double t0 = gclock_mono();
		for (int r = 0; r < R; r++)
			for (int i = 0; i < N; i++)
				sink += order_fn[k](P[i], O[i]);
		printf("%-36s %6.1f ns a call\n", order_name[k],
		       (gclock_mono() - t0) * 1e9 / ((double)N * R));
		(void)sink;
	}
}

int main(int argc, char **argv)
{
	struct order_tally t, deep;
	struct othello_solver *s;
	char line[512], err[200];
	uint64_t no = 0, max = 2000;
	int published = argc == 3 && strcmp(argv[1], "--published") == 0;
	FILE *f;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && !published && sscanf(argv[2], "%" SCNu64, &max) != 1)) {
		fprintf(stderr, "usage: bench_othello_order DATA.obf [MAX_POSITIONS]\n"
			"       bench_othello_order --published FFO.obf\n");
		return 2;
	}
	f = fopen(argv[1 + published], "r");
	if (!f) {
		perror(argv[1 + published]);
		return 1;
	}
	if (othello_solver_new(&s)) {
		fclose(f);
		return 1;
	}
	memset(&t, 0, sizeof(t));
	memset(&deep, 0, sizeof(deep));
	while (fgets(line, sizeof(line), f)) {
		struct othello_pos p;
		uint64_t P, O;
		size_t len = strcspn(line, "\r\n");
		int rc = othello_parse_line(line, len, &p, err, sizeof(err));
		if (rc == 1)
			continue;
		if (rc || p.expected == OTHELLO_NO_SCORE) {
			fprintf(stderr, "bench_othello_order: %s: position %" PRIu64
				": %s\n", argv[1], no, rc ? err : "no score");
			return 1;
		}
		if (!published && no++ % 10 != 9)
			continue;
		othello_pos_pov(&p, &P, &O);
		t.held += !published;
		t.abs_err += abs(othello_eval(P, O) - p.expected * OTHELLO_EVAL_SCALE) /
			     (double)OTHELLO_EVAL_SCALE;
		if ((!published && t.positions >= max) || oth_popcount(oth_moves(P, O)) < 2)
			continue;
		if (published) {
			uint64_t best = order_published(line) & oth_moves(P, O);
			if (best)
				order_rank(P, O, best, 64 - oth_popcount(P | O) >= 20 ? &deep : &t);
			continue;
		}
		uint64_t best;
		if (order_solve(s, P, O, p.expected, &best))
			return 1;
		order_rank(P, O, best, &t);
	}
	fclose(f);
	othello_solver_free(s);
	if (published) {
		printf("published best moves, under 20 empties: ");
		order_print(&t);
		printf("published best moves, 20 or more empties: ");
		order_print(&deep);
	} else if (t.positions) {
		printf("%" PRIu64 " held-out positions: the pattern evaluation's mean |error| "
		       "%.2f discs\n", t.held, t.abs_err / t.held);
		order_print(&t);
	}
	if (!t.positions) {
		fprintf(stderr, "bench_othello_order: no position with 2 or more moves\n");
		return 1;
	}
	order_timing();
	return 0;
}

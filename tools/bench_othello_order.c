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
 * Children are solved exactly by the fast CPU solver, on one thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* One position: the children's exact scores, then each order's rank of
 * the first best move. */
static int order_position(struct othello_solver *s, uint64_t P, uint64_t O,
			  int score, struct order_tally *t)
{
	int sq[32], child[32], n = 0, best = -65, nbest = 0;
	uint64_t m = oth_moves(P, O), nodes;

	for (; m && n < 32; m &= m - 1) {
		int q = oth_ctz(m), mv;
		uint64_t f = oth_flips(P, O, q);
		uint64_t nP = O & ~f, nO = P | f | (1ull << q);
		sq[n] = q;
		child[n] = -othello_solver_solve(s, nP, nO, &mv, &nodes);
		if (child[n] > best)
			best = child[n];
		n++;
	}
	if (best != score) {
		fprintf(stderr, "bench_othello_order: the children's best %d differs "
			"from the file's score %d\n", best, score);
		return GERR_CORRUPT;
	}
	for (int i = 0; i < n; i++)
		nbest += child[i] == best;
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
		/* Rank of the first best move: children the order puts before
		 * every best one (ties broken by square, as a stable sort). */
		for (int i = 0; i < n; i++) {
			if (child[i] != best)
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
	return 0;
}

static double order_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
		double t0 = order_now();
		for (int r = 0; r < R; r++)
			for (int i = 0; i < N; i++)
				sink += order_fn[k](P[i], O[i]);
		printf("%-36s %6.1f ns a call\n", order_name[k],
		       (order_now() - t0) * 1e9 / ((double)N * R));
		(void)sink;
	}
}

int main(int argc, char **argv)
{
	struct order_tally t;
	struct othello_solver *s;
	char line[512], err[200];
	uint64_t no = 0, max = 2000;
	FILE *f;

	if (argc < 2 || argc > 3 || (argc == 3 && sscanf(argv[2], "%" SCNu64, &max) != 1)) {
		fprintf(stderr, "usage: bench_othello_order DATA.obf [MAX_POSITIONS]\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	if (othello_solver_new(&s)) {
		fclose(f);
		return 1;
	}
	memset(&t, 0, sizeof(t));
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
		if (no++ % 10 != 9)
			continue;
		othello_pos_pov(&p, &P, &O);
		t.held++;
		t.abs_err += abs(othello_eval(P, O) - p.expected * OTHELLO_EVAL_SCALE) /
			     (double)OTHELLO_EVAL_SCALE;
		if (t.positions >= max || oth_popcount(oth_moves(P, O)) < 2)
			continue;
		if (order_position(s, P, O, p.expected, &t))
			return 1;
	}
	fclose(f);
	othello_solver_free(s);
	if (!t.positions) {
		fprintf(stderr, "bench_othello_order: no held-out position with 2 or more moves\n");
		return 1;
	}
	printf("%" PRIu64 " held-out positions: the pattern evaluation's mean |error| "
	       "%.2f discs\n", t.held, t.abs_err / t.held);
	printf("%" PRIu64 " of them with 2+ moves (%.2f moves, %.2f best moves each):\n",
	       t.positions, (double)t.moves / t.positions, (double)t.children / t.positions);
	printf("%-36s %10s %14s\n", "order", "best first", "mean rank");
	for (int k = 0; k < ORDER_KINDS; k++)
		printf("%-36s %9.1f%% %14.2f\n", order_name[k],
		       100.0 * t.top1[k] / t.positions, (double)t.rank_sum[k] / t.positions);
	printf("%-36s %9.1f%%\n", "random pick (expected)", 100.0 * t.random_top1 / t.positions);
	order_timing();
	return 0;
}

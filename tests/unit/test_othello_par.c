/* Unit tests of the deep solver's parallel search (forks, othello_deep.c;
 * threads, othello_par.c): fork settings out of range refused; on 2-4
 * threads, with forks from few empties so that small positions fork
 * often (oth_team_config), scores equal to minimax at 6-9 empties and to the
 * shallow reference at 10-14 (and the same lowest best square); at 15-18
 * empties the defaults and several settings equal to one thread's; a
 * search stopped with sleeping threads ends promptly; a window's clamped
 * answers equal one thread's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_deep.h"
#include "unit_main.h"

/* Forks from 8 empties (as low as allowed), after `elders` moves, with
 * `helpers` helpers each, at the root too or not. */
static struct oth_fork_cfg low_fork(int helpers, int elders, int root)
{
	return (struct oth_fork_cfg){8, helpers, elders, root};
}

/* One position on `threads` threads with fork settings cfg (NULL: the
 * defaults) in the window (alpha, beta), on a table and team of its own. */
static void solve_cfg(uint64_t P, uint64_t O, int alpha, int beta,
		      int threads, const struct oth_fork_cfg *cfg, int *sc,
		      int *mv)
{
	struct oth_team *team;
	struct oth_tt *tt;
	uint64_t nodes = 0;

	assert_int_equal(oth_team_new(&team), 0);
	if (cfg)
		assert_int_equal(oth_team_config(team, cfg), 0);
	assert_int_equal(oth_tt_new(&tt, 16, threads > 1), 0);
	assert_int_equal(oth_par_solve(tt, team, P, O, alpha, beta, threads,
				       sc, mv, &nodes, NULL, NULL), 0);
	assert_true(nodes > 0);
	oth_tt_free(tt);
	oth_team_free(team);
}

static void solve_par(uint64_t P, uint64_t O, int threads,
		      const struct oth_fork_cfg *cfg, int *sc, int *mv)
{
	solve_cfg(P, O, -64, 64, threads, cfg, sc, mv);
}

static void test_config(void **state)
{
	struct oth_team *t;
	static const struct oth_fork_cfg bad[] = {
		{7, 3, 2, 1}, {61, 3, 2, 1}, {15, 0, 2, 1}, {15, 256, 2, 1},
		{15, 3, 0, 1}, {15, 3, 35, 1}, {15, 3, 2, 2},
	};

	(void)state;
	assert_int_equal(oth_team_new(&t), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(oth_team_config(t, &bad[i]), GERR_INVAL);
	assert_int_equal(oth_team_config(t, &(struct oth_fork_cfg){8, 1, 1,
								   0}), 0);
	assert_int_equal(oth_team_config(t, &(struct oth_fork_cfg){60, 255,
								   34, 1}), 0);
	oth_team_free(t);
}

/* 6-9 empties against minimax, 10-14 against the shallow search: 150
 * positions each, every third on 2, 3 and 4 threads and settings. */
static void test_vs_reference(void **state)
{
	(void)state;
	for (int e = 6; e <= 14; e++) {
		for (int i = 0; i < 150; i++) {
			uint64_t P, O, n = 0;
			int black, m0, v0, v, m, t = 2 + i % 3;
			oth_generate(101, (uint64_t)(e * 1000 + i), e, &P, &O,
				     &black);
			struct oth_fork_cfg c = low_fork(1 + i % 4,
							 1 + (i / 3) % 3,
							 i / 9 % 2);
			if (e <= 9)
				v0 = othello_minimax(P, O, &m0);
			else
				v0 = othello_solve_shallow(P, O, &m0, &n);
			solve_par(P, O, t, &c, &v, &m);
			assert_int_equal(v, v0);
			assert_int_equal(m, m0);
		}
	}
}

/* 15-18 empties: one thread against 2-4 with the defaults and with
 * forks everywhere (any helpers, after one move). */
static void test_vs_one_thread(void **state)
{
	static const struct oth_fork_cfg cfg[] = {
		{OTH_FORK_MIN, OTH_FORK_HELPERS, OTH_FORK_ELDERS, 1},
		{8, 255, 1, 1}, {12, 2, 3, 0},
	};

	(void)state;
	for (int i = 0; i < 12; i++) {
		uint64_t P, O;
		int black, v0, m0, v, m, e = 15 + i % 4;
		oth_generate(103, (uint64_t)i, e, &P, &O, &black);
		solve_par(P, O, 1, NULL, &v0, &m0);
		for (int c = 0; c < 3; c++) {
			solve_par(P, O, 2 + (i + c) % 3, &cfg[c], &v, &m);
			assert_int_equal(v, v0);
			assert_int_equal(m, m0);
		}
	}
}

/* Clamped answers of windows on 3 threads with forks everywhere equal
 * one thread's. */
static void test_window(void **state)
{
	struct oth_fork_cfg c = low_fork(255, 1, 1);

	(void)state;
	for (int i = 0; i < 40; i++) {
		uint64_t P, O;
		int black, a = -20 + (i % 9) * 4, b = a + 2 + (i % 3) * 6;
		int s1, s3, m1, m3;
		oth_generate(107, (uint64_t)i, 13 + i % 3, &P, &O, &black);
		solve_cfg(P, O, a, b, 1, NULL, &s1, &m1);
		solve_cfg(P, O, a, b, 3, &c, &s3, &m3);
		assert_int_equal(s3, s1);
		assert_int_equal(m3, m1);
	}
}

static int stop_after(void *opaque)
{
	return --*(int *)opaque <= 0;
}

/* 8 threads (more than this machine's cores: most of them asleep) on a
 * 26-empty position, stopped after the first polls: GERR_CANCELLED
 * within a bound that leaves room for a loaded machine and TSan. */
static void test_stop_sleepers(void **state)
{
	uint64_t P, O;
	int black;
	int8_t sc;
	uint8_t mv;
	struct timespec a, b;

	(void)state;
	oth_generate(109, 0, 26, &P, &O, &black);
	for (int polls = 1; polls <= 5; polls += 4) {
		int left = polls;
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(othello_solve_batch(&P, &O, 1, 8, &sc, &mv,
						     NULL, stop_after, &left),
				 GERR_CANCELLED);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double dt = (double)(b.tv_sec - a.tv_sec) +
			    (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
		assert_true(dt < 3.0);
	}
}

UNIT_MAIN(TIMED(test_config),
	TIMED(test_vs_reference),
	TIMED(test_vs_one_thread),
	TIMED(test_window),
	TIMED(test_stop_sleepers))

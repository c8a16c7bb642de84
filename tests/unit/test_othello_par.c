/* Unit tests of the deep solver's parallel search (forks, othello_deep.c;
 * threads, othello_par.c): fork settings out of range refused; on 2-4
 * threads, with forks from few empties so that small positions fork
 * often (OTHELLO_FORK), scores equal to minimax at 6-9 empties and to the
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
static void set_fork(int helpers, int elders, int root)
{
	char v[32];

	snprintf(v, sizeof(v), "8,%d,%d,%d", helpers, elders, root);
	assert_int_equal(setenv("OTHELLO_FORK", v, 1), 0);
}

static void solve_par(uint64_t P, uint64_t O, int threads, int *sc, int *mv)
{
	int8_t s;
	uint8_t m;
	uint64_t nodes = 0;

	/* One position on several threads: the deep path. */
	assert_int_equal(othello_solve_batch(&P, &O, 1, threads, &s, &m,
					     &nodes, NULL, NULL), 0);
	assert_true(nodes > 0);
	*sc = s;
	*mv = m;
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
			set_fork(1 + i % 4, 1 + (i / 3) % 3, i / 9 % 2);
			if (e <= 9)
				v0 = othello_minimax(P, O, &m0);
			else
				v0 = othello_solve_shallow(P, O, &m0, &n);
			solve_par(P, O, t, &v, &m);
			assert_int_equal(v, v0);
			assert_int_equal(m, m0);
		}
	}
	unsetenv("OTHELLO_FORK");
}

/* 15-18 empties: one thread against 2-4 with the defaults and with
 * forks everywhere (any helpers, after one move). */
static void test_vs_one_thread(void **state)
{
	static const char *cfg[] = {NULL, "8,255,1", "12,2,3,0"};

	(void)state;
	for (int i = 0; i < 12; i++) {
		uint64_t P, O;
		int black, v0, m0, v, m, e = 15 + i % 4;
		oth_generate(103, (uint64_t)i, e, &P, &O, &black);
		unsetenv("OTHELLO_FORK");
		solve_par(P, O, 1, &v0, &m0);
		for (int c = 0; c < 3; c++) {
			if (cfg[c])
				assert_int_equal(setenv("OTHELLO_FORK", cfg[c],
							1), 0);
			else
				unsetenv("OTHELLO_FORK");
			solve_par(P, O, 2 + (i + c) % 3, &v, &m);
			assert_int_equal(v, v0);
			assert_int_equal(m, m0);
		}
	}
	unsetenv("OTHELLO_FORK");
}

/* Clamped answers of windows (othello_solve_batch_window) on 3 threads
 * with forks everywhere equal one thread's. */
static void test_window(void **state)
{
	(void)state;
	set_fork(255, 1, 1);
	for (int i = 0; i < 40; i++) {
		uint64_t P, O;
		int black, a = -20 + (i % 9) * 4, b = a + 2 + (i % 3) * 6;
		int8_t s1, s3;
		uint8_t m1, m3;
		oth_generate(107, (uint64_t)i, 13 + i % 3, &P, &O, &black);
		assert_int_equal(othello_solve_batch_window(&P, &O, 1, a, b, 1,
							    &s1, &m1, NULL,
							    NULL, NULL), 0);
		assert_int_equal(othello_solve_batch_window(&P, &O, 1, a, b, 3,
							    &s3, &m3, NULL,
							    NULL, NULL), 0);
		assert_int_equal(s3, s1);
		assert_int_equal(m3, m1);
	}
	unsetenv("OTHELLO_FORK");
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

/* Each test's wall time on stderr (the suite must stay fast). */
static struct timespec t_start;

static int timer_start(void **state)
{
	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	return 0;
}

static int timer_stop(void **state)
{
	struct timespec t;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "  %.2f s\n", (double)(t.tv_sec - t_start.tv_sec) +
			(double)(t.tv_nsec - t_start.tv_nsec) * 1e-9);
	return 0;
}

#define TIMED(fn) cmocka_unit_test_setup_teardown(fn, timer_start, timer_stop)

UNIT_MAIN(TIMED(test_config),
	TIMED(test_vs_reference),
	TIMED(test_vs_one_thread),
	TIMED(test_window),
	TIMED(test_stop_sleepers))

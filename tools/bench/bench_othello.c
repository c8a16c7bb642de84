/* bench_othello.c - time the Othello CUDA batch solver and the CPU solver.
 *
 * usage: bench_othello [-n positions] [-e empties] [-s seed] [-r runs]
 *                      [-t threads] [-c cpu_scale] [-d device] [-g]
 *
 * GPU: --random positions (seed, empties) generated and solved on the
 * device (-g: generated on the host and copied over, so that the kernel
 * time is the search alone); kernel time (CUDA events: the generation
 * and the search) and wall time of a whole call (launch,
 * copy back, host checks), median of the runs after one warm-up; positions
 * and nodes per second. The reference: a public GPU solver, 1.1 M
 * random-playout 10-empty positions in 1.98 s on an H200 (555 K/s).
 * The answer sum identifies the answers (1.1 M, 10 empties, seed 1:
 * 68813446).
 * CPU: the fast solver on `threads` threads at 10, 14, 18 and 22 empties
 * (positions scaled by -c; -c 0 skips it), positions/s and nodes/s per
 * core.
 *
 * FFO mode (--obf FILE [--from N --to M]): no GPU; each position of an OBF
 * file (lines "board side; MV:+SC; ... % FFO #N", numbered from 1 in file
 * order unless the comment says "#N") solved alone on `threads` threads:
 * number, empties, score, best move, nodes, seconds, nodes/s, and whether
 * the score and move agree with the file's, then the totals. Exit status 1
 * when any disagrees. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_cuda.h"
#include "workload.h"

#define REF_POS_PER_S (1.1e6 / 1.98)


/* The expected moves of an OBF line: the squares listed with the largest
 * score after ';' (a bit mask, pass = bit 64 not representable: 0). */
static uint64_t obf_best_moves(const char *line)
{
	const char *s = strchr(line, ';');
	uint64_t best = 0;
	int bs = -100;

	while (s && *s) {
		char c;
		int row, sc, k = 0;
		while (*s == ';' || *s == ' ')
			s++;
		if (!*s || *s == '%' ||
		    sscanf(s, "%c%d:%d%n", &c, &row, &sc, &k) != 3)
			break;
		int col = (c | 0x20) - 'a';
		if (col >= 0 && col < 8 && row >= 1 && row <= 8) {
			uint64_t b = 1ull << (8 * (row - 1) + col);
			if (sc > bs) {
				bs = sc;
				best = b;
			} else if (sc == bs) {
				best |= b;
			}
		}
		s += k;
	}
	return best;
}

static int bench_ffo(const char *path, int from, int to, int threads)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int no = 0, bad = 0, count = 0;
	uint64_t tnodes = 0;
	double tsec = 0;

	if (!f) {
		fprintf(stderr, "%s: cannot open\n", path);
		return 1;
	}
	printf("%4s %3s %5s %4s %14s %9s %11s %s\n", "#", "emp", "score", "move",
	       "nodes", "seconds", "nodes/s", "agrees");
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\r\n");
		struct othello_pos p;
		char err[128], ms[4];
		line[len] = 0;
		if (othello_parse_line(line, len, &p, err, sizeof(err)) != 0)
			continue;
		no++;
		const char *h = strstr(line, "#");
		int num = h ? atoi(h + 1) : no;
		if (num < from || num > to)
			continue;
		uint64_t P, O, nodes = 0, want = obf_best_moves(line);
		int8_t sc;
		uint8_t mv;
		othello_pos_pov(&p, &P, &O);
		double t0 = gclock_mono();
		int rc = othello_solve_batch(&P, &O, 1, threads, &sc, &mv,
					     &nodes, NULL, NULL);
		double dt = gclock_mono() - t0;
		if (rc) {
			fprintf(stderr, "#%d: solver error %d\n", num, rc);
			fclose(f);
			return 1;
		}
		int ok = (p.expected == OTHELLO_NO_SCORE || p.expected == sc) &&
			 (!want || (mv < 64 && (want >> mv & 1)));
		othello_format_move(mv, ms);
		printf("%4d %3d %+5d %4s %14llu %9.3f %11.4g %s\n", num,
		       oth_popcount(~(P | O)), sc, ms, (unsigned long long)nodes,
		       dt, (double)nodes / dt, ok ? "yes" : "NO");
		fflush(stdout);
		bad += !ok;
		count++;
		tnodes += nodes;
		tsec += dt;
	}
	fclose(f);
	printf("total: %d positions, %d threads, %llu nodes, %.3f s, %.4g "
	       "nodes/s, %d disagree\n", count, threads,
	       (unsigned long long)tnodes, tsec, (double)tnodes / tsec, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t n = 1100000;
	int empties = 10, runs = 5, device = 0, opt;
	int given = 0;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	double cpu_scale = 1;
	uint64_t seed = 1;
	char err[WL_ERRLEN] = "";
	const char *obf = NULL;
	int from = 1, to = 1000;
	static const struct option longs[] = {
		{"obf", required_argument, NULL, 'O'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};

	while ((opt = getopt_long(argc, argv, "n:e:s:r:t:c:d:gh", longs,
				  NULL)) != -1) {
		switch (opt) {
		case 'O': obf = optarg; break;
		case 'F': from = atoi(optarg); break;
		case 'T': to = atoi(optarg); break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'e': empties = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'r': runs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'c': cpu_scale = atof(optarg); break;
		case 'd': device = atoi(optarg); break;
		case 'g': given = 1; break;
		default:
			fprintf(stderr, "usage: %s [-n positions] [-e empties] "
				"[-s seed] [-r runs] [-t threads] "
				"[-c cpu_scale] [-d device] [-g]\n"
				"       %s --obf FILE [--from N] [--to M] "
				"[-t threads]\n",
				argv[0],
				argv[0]);
			return 2;
		}
	}
	if (runs < 1)
		runs = 1;
	if (threads < 1)
		threads = 1;
	if (obf)
		return bench_ffo(obf, from, to, threads);
	if (n < 1 || n > OTHELLO_CUDA_MAX_BATCH)
		n = OTHELLO_CUDA_MAX_BATCH;
	int8_t *sc = malloc(n);
	uint8_t *mv = malloc(n);
	double *ks = calloc((size_t)runs, sizeof(double));
	double *ws = calloc((size_t)runs, sizeof(double));
	uint64_t *gP = NULL, *gO = NULL;

	if (!sc || !mv || !ks || !ws) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (given) {
		gP = malloc(n * 8);
		gO = malloc(n * 8);
		if (!gP || !gO) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			int black;
			oth_generate(seed, i, empties, &gP[i], &gO[i], &black);
		}
	}

	struct othello_cuda *ctx = NULL;
	if (othello_cuda_open(device, &ctx, err, sizeof(err)) == 0) {
		char name[256];
		othello_cuda_device_name(ctx, name, sizeof(name));
		printf("device %d: %s\n", device, name);
		uint64_t nodes = 0;
		for (int r = -1; r < runs; r++) {
			float ms = 0;
			double t0 = gclock_mono();
			int rc = given ? othello_cuda_solve(ctx, gP, gO, n, sc, mv,
							    &nodes, &ms, err,
							    sizeof(err))
				       : othello_cuda_solve_random(
						 ctx, seed, empties, 0, n, sc,
						 mv, &nodes, &ms, err,
						 sizeof(err));
			if (rc) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			if (r >= 0) {
				ks[r] = ms * 1e-3;
				ws[r] = gclock_mono() - t0;
			}
		}
		qsort(ks, (size_t)runs, sizeof(double), bench_cmp_double);
		qsort(ws, (size_t)runs, sizeof(double), bench_cmp_double);
		double k = ks[runs / 2], w = ws[runs / 2];
		long sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += sc[i] * 7 + mv[i];
		printf("gpu (flat search, keys sorted by the warp): %zu "
		       "positions, %d empties, seed %llu, %s: kernel %.4f s "
		       "(min %.4f max %.4f), %.4g positions/s, %.4g nodes/s, "
		       "%.1f nodes/position; call wall %.4f s = %.4g "
		       "positions/s; %.2fx the public solver (555 K/s, H200); "
		       "answer sum %ld\n", n, empties,
		       (unsigned long long)seed,
		       given ? "given by the host" : "generated on the device",
		       k, ks[0], ks[runs - 1], (double)n / k,
		       (double)nodes / k, (double)nodes / (double)n, w,
		       (double)n / w, (double)n / w / REF_POS_PER_S, sum);
		fflush(stdout);
		othello_cuda_close(ctx);
	} else {
		printf("no CUDA device (%s): CPU only\n", err);
	}

	if (cpu_scale <= 0)
		goto out; /* -c 0: GPU only */
	static const int es[] = {10, 14, 18, 22};
	static const double counts[] = {100000, 20000, 1000, 64};
	for (int t = 0; t < 4; t++) {
		size_t m = (size_t)(counts[t] * cpu_scale);
		if (m < 1)
			m = 1;
		uint64_t *P = malloc(m * 8), *O = malloc(m * 8), nodes = 0;
		int8_t *s2 = malloc(m);
		uint8_t *m2 = malloc(m);
		for (size_t i = 0; i < m; i++) {
			int black;
			oth_generate(seed, i, es[t], &P[i], &O[i], &black);
		}
		double t0 = gclock_mono();
		othello_solve_batch(P, O, m, threads, s2, m2, &nodes, NULL, NULL);
		double dt = gclock_mono() - t0;
		printf("cpu: %zu positions, %d empties, %d threads: %.3f s, "
		       "%.4g positions/s, %.4g nodes/s, %.4g nodes/s per "
		       "thread, %.4g nodes/position\n", m, es[t], threads, dt,
		       (double)m / dt, (double)nodes / dt,
		       (double)nodes / dt / threads, (double)nodes / (double)m);
		fflush(stdout);
		free(P);
		free(O);
		free(s2);
		free(m2);
	}
	double t0 = gclock_mono();
	uint64_t p9 = othello_perft(0x0000000810000000ull,
				    0x0000001008000000ull, 9);
	printf("perft 9: %llu in %.3f s (one thread)\n",
	       (unsigned long long)p9, gclock_mono() - t0);
out:
	free(gP);
	free(gO);
	free(sc);
	free(mv);
	free(ks);
	free(ws);
	return 0;
}

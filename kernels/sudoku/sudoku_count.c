/* sudoku_count.c - per-gangster counts W on the CPU, the outer pairs of a
 * GangSet, and the exact totals (definitions in sudoku.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "par.h"
#include "sudoku.h"
#include "sudoku_count.h"
#include "sudoku_internal.h"

typedef unsigned __int128 u128;

static void perm_mul2(const struct sudoku_perm *a, const struct sudoku_perm *b,
		      struct sudoku_perm *r, int N)
{
	struct sudoku_perm t;
	for (int i = 0; i < SUDOKU_MAXN; i++)
		t.p[i] = (uint8_t)i;
	for (int i = 0; i < N; i++)
		t.p[i] = a->p[b->p[i]];
	*r = t;
}

/* Reduce a band's first two boxes: node ordinal and the permutation that
 * takes the band's other boxes into T's coordinates. */
static void reduce_pair(const struct sudoku_setup *S, uint32_t u0, uint32_t u1,
			uint16_t *ret_node, struct sudoku_perm *ret_p)
{
	struct sudoku_perm P = S->sigma0[u0];
	uint32_t y = sudoku_apply(S, &P, u1);
	*ret_node = S->node_of[y];
	perm_mul2(&S->root->trans[y], &P, ret_p, S->N);
}

int sudoku_outer_build(const struct sudoku_setup *S, uint32_t set,
		       struct sudoku_outer **ret, uint32_t *ret_n)
{
	uint32_t nc = S->ncompat, n = 0, r1;
	struct sudoku_outer *o;

	if (S->C != 3 || set >= S->nnodes)
		return GERR_INVAL;
	r1 = S->node_code[set];
	o = malloc((size_t)(nc / 2) * nc * sizeof(*o));
	if (!o)
		return GERR_NOMEM;
	for (uint32_t b0 = 0; b0 < nc; b0++) {
		if (S->swap0[b0] < b0)
			continue;
		for (uint32_t b1 = 0; b1 < nc; b1++) {
			struct sudoku_outer *e = &o[n++];
			reduce_pair(S, S->cb[b0], S->cb[(size_t)r1 * nc + b1],
				    &e->n1, &e->p1);
			reduce_pair(S, S->cd[b0], S->cd[(size_t)r1 * nc + b1],
				    &e->n2, &e->p2);
		}
	}
	*ret = o;
	*ret_n = n;
	return 0;
}

/* ---- W on the CPU ---------------------------------------------------------- */

#define OCHUNK 32

/* A task: outer pairs [o0, o1) of one piece (slot among those asked). */
struct wtask {
	uint32_t o0, o1, slot;
};

struct wctx {
	const struct sudoku_setup *S;
	const struct sudoku_outer *outer;
	const struct wtask *task;
	uint32_t from, to, nslots;
	u128 *acc; /* [gangster][slot] */
	pthread_mutex_t lock;
	int nomem;
};

static uint32_t capply(const struct sudoku_setup *S,
		       const struct sudoku_pmap *pm, uint32_t x)
{
	return sudoku_code_apply((const uint16_t(*)[SUDOKU_MAXC])S->masks,
				 S->pw, S->rgs2code, S->C, pm, x);
}

static void w_chunk(void *arg, size_t ci)
{
	struct wctx *c = arg;
	const struct sudoku_setup *S = c->S;
	uint32_t nc = S->ncompat, K = S->K, Kp = S->Kp, R1 = (uint32_t)S->R - 1;
	uint32_t ng = c->to - c->from;
	uint32_t o0 = c->task[ci].o0, o1 = c->task[ci].o1;
	u128 *loc = calloc(ng, sizeof(*loc));
	uint32_t *j1 = NULL, *j2 = NULL;
	const uint32_t **l1 = NULL, **l2 = NULL;

	if (S->R == 4) {
		j1 = malloc((size_t)64 * nc * sizeof(*j1));
		j2 = malloc((size_t)64 * nc * sizeof(*j2));
		l1 = malloc(nc * sizeof(*l1));
		l2 = malloc(nc * sizeof(*l2));
	}
	if (!loc || (S->R == 4 && (!j1 || !j2 || !l1 || !l2))) {
		c->nomem = 1;
		goto out;
	}
	for (uint32_t o = o0; o < o1; o++) {
		const struct sudoku_outer *e = &c->outer[o];
		struct sudoku_pmap pm1, pm2;
		sudoku_pmap_of(&e->p1, S->N, &pm1);
		sudoku_pmap_of(&e->p2, S->N, &pm2);
		if (S->R == 2) {
			u128 v = (u128)((uint64_t)S->T[e->n1] * S->T[e->n2]);
			for (uint32_t i = 0; i < ng; i++)
				loc[i] += v;
			continue;
		}
		if (S->R == 3) {
			for (uint32_t i = 0; i < ng; i++) {
				uint32_t c2 = S->gang_tuple[(size_t)(c->from + i) * R1 + 1];
				const uint16_t *cb = S->cb + (size_t)c2 * nc,
					       *cd = S->cd + (size_t)c2 * nc;
				u128 s = 0;
				for (uint32_t b = 0; b < nc; b++)
					s += (uint64_t)S->T[(size_t)e->n1 * Kp + capply(S, &pm1, cb[b])] *
					     S->T[(size_t)e->n2 * Kp + capply(S, &pm2, cd[b])];
				loc[i] += s;
			}
			continue;
		}
		/* R == 4: chunks of up to 64 gangsters sharing box 2 */
		for (uint32_t g0 = 0; g0 < ng;) {
			uint32_t c2 = S->gang_tuple[(size_t)(c->from + g0) * R1 + 1];
			uint32_t g1 = g0 + 1;
			while (g1 < ng && g1 - g0 < 64 &&
			       S->gang_tuple[(size_t)(c->from + g1) * R1 + 1] == c2)
				g1++;
			const uint16_t *cb = S->cb + (size_t)c2 * nc,
				       *cd = S->cd + (size_t)c2 * nc;
			for (uint32_t b = 0; b < nc; b++) {
				l1[b] = S->T + ((size_t)e->n1 * K + capply(S, &pm1, cb[b])) * Kp;
				l2[b] = S->T + ((size_t)e->n2 * K + capply(S, &pm2, cd[b])) * Kp;
			}
			for (uint32_t g = g0; g < g1; g++) {
				uint32_t c3 = S->gang_tuple[(size_t)(c->from + g) * R1 + 2];
				const uint16_t *cb3 = S->cb + (size_t)c3 * nc,
					       *cd3 = S->cd + (size_t)c3 * nc;
				for (uint32_t b = 0; b < nc; b++) {
					j1[(size_t)(g - g0) * nc + b] = capply(S, &pm1, cb3[b]);
					j2[(size_t)(g - g0) * nc + b] = capply(S, &pm2, cd3[b]);
				}
			}
			for (uint32_t b2 = 0; b2 < nc; b2++) {
				const uint32_t *L1 = l1[b2], *L2 = l2[b2];
				for (uint32_t g = g0; g < g1; g++) {
					const uint32_t *a = j1 + (size_t)(g - g0) * nc,
						       *bb = j2 + (size_t)(g - g0) * nc;
					u128 s = 0;
					for (uint32_t b3 = 0; b3 < nc; b3++)
						s += (uint64_t)L1[a[b3]] * L2[bb[b3]];
					loc[g] += s;
				}
			}
			g0 = g1;
		}
	}
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < ng; i++)
		c->acc[(size_t)i * c->nslots + c->task[ci].slot] += loc[i];
	pthread_mutex_unlock(&c->lock);
out:
	free(loc);
	free(j1);
	free(j2);
	free(l1);
	free(l2);
}

/* First outer pair of piece p of n (p == n: the end). */
static uint32_t piece_start(uint32_t nouter, uint32_t n, uint32_t p)
{
	return (uint32_t)((uint64_t)nouter * p / n);
}

int sudoku_w_pieces_cpu(const struct sudoku_setup *S,
			const struct sudoku_outer *outer, uint32_t nouter,
			uint32_t from, uint32_t to, uint32_t npieces,
			uint32_t p0, uint32_t p1, int threads,
			uint64_t (*pieces)[2])
{
	struct sudoku_outer *own = NULL;
	struct wtask *task = NULL;
	size_t ntask = 0, cap;
	struct wctx c;
	uint32_t set, np = p1 - p0;
	int rc = 0;

	if (S->C != 3 || !S->T || from >= to || to > S->ngang || npieces < 1 ||
	    p0 >= p1 || p1 > npieces)
		return GERR_INVAL;
	set = sudoku_set_of(S, from);
	if (sudoku_set_of(S, to - 1) != set)
		return GERR_INVAL;
	if (!outer) {
		rc = sudoku_outer_build(S, set, &own, &nouter);
		if (rc)
			return rc;
		outer = own;
	}
	cap = (size_t)nouter / OCHUNK + 2 * (size_t)np;
	task = malloc(cap * sizeof(*task));
	memset(&c, 0, sizeof(c));
	c.acc = calloc((size_t)(to - from) * np, sizeof(*c.acc));
	if (!task || !c.acc) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (uint32_t p = p0; p < p1; p++) {
		uint32_t e = piece_start(nouter, npieces, p + 1);
		for (uint32_t o = piece_start(nouter, npieces, p); o < e;
		     o += OCHUNK) {
			task[ntask].o0 = o;
			task[ntask].o1 = e - o > OCHUNK ? o + OCHUNK : e;
			task[ntask++].slot = p - p0;
		}
	}
	c.S = S;
	c.outer = outer;
	c.task = task;
	c.from = from;
	c.to = to;
	c.nslots = np;
	pthread_mutex_init(&c.lock, NULL);
	par_run(w_chunk, &c, ntask, (size_t)threads);
	pthread_mutex_destroy(&c.lock);
	if (c.nomem) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)(to - from) * np; i++) {
		u128 v = c.acc[i];
		/* a piece = 2 * its half sum (band 1 <-> band 2) */
		if (v >> 127) {
			rc = GERR_INVAL;
			break;
		}
		v <<= 1;
		pieces[i][0] = (uint64_t)v;
		pieces[i][1] = (uint64_t)(v >> 64);
	}
out:
	free(c.acc);
	free(task);
	free(own);
	return rc;
}

int sudoku_w_cpu(const struct sudoku_setup *S, const struct sudoku_outer *outer,
		 uint32_t nouter, uint32_t from, uint32_t to, int threads,
		 uint64_t (*w)[2])
{
	return sudoku_w_pieces_cpu(S, outer, nouter, from, to, 1, 0, 1, threads,
				   w);
}

int sudoku_w_bound(const struct sudoku_setup *S, uint64_t ret[2])
{
	u128 b = (u128)S->max_cnt * S->max_cnt, m = 1;
	uint64_t nouter = (uint64_t)(S->ncompat / 2) * S->ncompat;

	for (int i = 2; i < S->R; i++)
		m *= S->ncompat;
	m *= 2 * nouter;
	if (b && m > (~(u128)0) / b)
		return GERR_TOOBIG;
	b *= m;
	ret[0] = (uint64_t)b;
	ret[1] = (uint64_t)(b >> 64);
	return 0;
}

/* ---- totals ----------------------------------------------------------------- */

int sudoku_factor(int R, int C, uint64_t K, struct u256 *ret)
{
	struct u256 f = u256_of(K, 0);
	uint64_t rf = 1, cf = C == 2 ? 2 : 6;

	for (int i = 2; i <= R; i++)
		rf *= (uint64_t)i;
	for (int i = 0; i < R; i++)
		if (u256_mul_u64(&f, cf))
			return GERR_TOOBIG;
	for (int i = 0; i < C; i++)
		if (u256_mul_u64(&f, rf))
			return GERR_TOOBIG;
	*ret = f;
	return 0;
}

int sudoku_term(uint64_t members, uint32_t cnt, const uint64_t w[2], int C,
		struct u256 *ret)
{
	struct u256 t = u256_of(members, 0);

	if (u256_mul_u64(&t, cnt))
		return GERR_TOOBIG;
	if (C == 2)
		return u256_mul_u64(&t, cnt) ? GERR_TOOBIG : (*ret = t, 0);
	{
		struct u256 ww = u256_of(w[0], w[1]), r;
		if (u256_mul(&t, &ww, &r))
			return GERR_TOOBIG;
		*ret = r;
	}
	return 0;
}

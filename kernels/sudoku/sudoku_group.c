/* sudoku_group.c - symbol permutations, the groups they form and the chain
 * of orbit tables that reduces a band to its reduced entry (sudoku.h 4., 5.).
 *
 * Groups are handled as explicit element lists (Stab(code 0) has 82,944
 * elements for 4x3) from which a small generating set is picked greedily
 * (an element joins when the closure of the generators so far misses it);
 * orbits of codes are then found by breadth-first search over those
 * generators, which also yields the transporters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "mix.h"
#include "sudoku.h"
#include "sudoku_internal.h"

/* ---- permutations ------------------------------------------------------ */

void sudoku_perm_id(struct sudoku_perm *p)
{
	for (int i = 0; i < SUDOKU_MAXN; i++)
		p->p[i] = (uint8_t)i;
}

/* r = a o b: r(s) = a(b(s)). */
static void perm_mul(const struct sudoku_perm *a, const struct sudoku_perm *b,
		     struct sudoku_perm *r, int N)
{
	struct sudoku_perm t;
	for (int i = 0; i < N; i++)
		t.p[i] = a->p[b->p[i]];
	for (int i = N; i < SUDOKU_MAXN; i++)
		t.p[i] = (uint8_t)i;
	*r = t;
}

static void perm_inv(const struct sudoku_perm *a, struct sudoku_perm *r, int N)
{
	for (int i = 0; i < N; i++)
		r->p[a->p[i]] = (uint8_t)i;
	for (int i = N; i < SUDOKU_MAXN; i++)
		r->p[i] = (uint8_t)i;
}

static uint64_t perm_key(const struct sudoku_perm *a, int N)
{
	uint64_t k = 0;
	for (int i = 0; i < N; i++)
		k |= (uint64_t)a->p[i] << (4 * i);
	return k;
}

void sudoku_pmap_of(const struct sudoku_perm *p, int N,
		    struct sudoku_pmap *ret)
{
	for (uint32_t v = 0; v < 64; v++) {
		uint16_t lo = 0, hi = 0;
		for (int s = 0; s < 6; s++)
			if (v >> s & 1) {
				lo |= (uint16_t)(1u << p->p[s]);
				if (s + 6 < N)
					hi |= (uint16_t)(1u << p->p[s + 6]);
			}
		ret->lo[v] = lo;
		ret->hi[v] = hi;
	}
}

uint32_t sudoku_apply(const struct sudoku_setup *S,
		      const struct sudoku_perm *p, uint32_t code)
{
	uint32_t m[3] = { 0, 0, 0 };
	for (int k = 0; k < S->C; k++) {
		uint32_t x = S->masks[code][k], r = 0;
		while (x) {
			int s = __builtin_ctz(x);
			x &= x - 1;
			r |= 1u << p->p[s];
		}
		m[k] = r;
	}
	return sudoku_code_of_masks(S->pw, S->rgs2code, S->C, m[0], m[1], m[2]);
}

/* ---- hash set of permutations (u64 keys, never 0: identity's key is not
 * 0 for N >= 2, and we store key + 1) ------------------------------------ */

struct hset {
	uint64_t *k;
	uint64_t mask, n;
};

static int hset_init(struct hset *h, uint64_t cap)
{
	uint64_t sz = 16;
	while (sz < 2 * cap)
		sz <<= 1;
	h->k = calloc(sz, sizeof(uint64_t));
	h->mask = sz - 1;
	h->n = 0;
	return h->k ? 0 : GERR_NOMEM;
}

/* Returns 1 if inserted, 0 if present. */
static int hset_add(struct hset *h, uint64_t key)
{
	uint64_t i = mix64(key) & h->mask;
	key++;
	while (h->k[i]) {
		if (h->k[i] == key)
			return 0;
		i = (i + 1) & h->mask;
	}
	h->k[i] = key;
	h->n++;
	return 1;
}

static int hset_has(const struct hset *h, uint64_t key)
{
	uint64_t i = mix64(key) & h->mask;
	key++;
	while (h->k[i]) {
		if (h->k[i] == key)
			return 1;
		i = (i + 1) & h->mask;
	}
	return 0;
}

/* A small generating set of the group whose elements are E[0..n). */
static int pick_gens(const struct sudoku_perm *E, uint64_t n, int N,
		     struct sudoku_perm **ret, int *ret_ngens)
{
	struct hset h;
	struct sudoku_perm *el = NULL, *gens = NULL, id;
	uint64_t nel = 0, step, idx;
	int ngens = 0, rc;

	*ret = NULL;
	*ret_ngens = 0;
	if (n <= 1)
		return 0;
	rc = hset_init(&h, n);
	if (rc)
		return rc;
	el = malloc(n * sizeof(*el));
	gens = malloc(64 * sizeof(*gens));
	if (!el || !gens) {
		rc = GERR_NOMEM;
		goto out;
	}
	sudoku_perm_id(&id);
	el[nel++] = id;
	hset_add(&h, perm_key(&id, N));
	/* Visit the elements in a scattered order so early picks are
	 * "random" and few are needed. */
	step = (uint64_t)((double)n * 0.6180339887) | 1;
	for (;; step++) {
		uint64_t a = n, bb = step;
		while (bb) {
			uint64_t t = a % bb;
			a = bb;
			bb = t;
		}
		if (a == 1)
			break;
	}
	idx = 0;
	for (uint64_t c = 0; c < n && nel < n; c++, idx = (idx + step) % n) {
		if (hset_has(&h, perm_key(&E[idx], N)))
			continue;
		if (ngens == 64) {
			rc = GERR_INVAL;
			goto out;
		}
		gens[ngens++] = E[idx];
		/* Re-close: multiply every element by every generator. */
		for (uint64_t i = 0; i < nel; i++)
			for (int g = 0; g < ngens; g++) {
				struct sudoku_perm t;
				perm_mul(&gens[g], &el[i], &t, N);
				if (hset_add(&h, perm_key(&t, N))) {
					if (nel >= n) {
						rc = GERR_INVAL; /* not a group */
						goto out;
					}
					el[nel++] = t;
				}
			}
	}
	if (nel != n) {
		rc = GERR_INVAL;
		goto out;
	}
	*ret = gens;
	*ret_ngens = ngens;
	gens = NULL;
	rc = 0;
out:
	free(h.k);
	free(el);
	free(gens);
	return rc;
}

/* ---- orbit tables ------------------------------------------------------ */

struct build {
	struct sudoku_setup *S;
	int last; /* level index of the last table (R - 2) */
	/* reduced entries */
	uint16_t *tuple;
	uint64_t *weight;
	uint32_t n, cap;
	int rc;
};

static int red_push(struct build *b, const uint16_t *prefix, int plen,
		    uint16_t m, uint64_t w)
{
	int R1 = b->S->R - 1;
	if (b->n == b->cap) {
		uint32_t nc = b->cap ? 2 * b->cap : 1024;
		uint16_t *t = realloc(b->tuple, (size_t)nc * R1 * sizeof(*t));
		if (!t)
			return GERR_NOMEM;
		b->tuple = t;
		uint64_t *ww = realloc(b->weight, (size_t)nc * sizeof(*ww));
		if (!ww)
			return GERR_NOMEM;
		b->weight = ww;
		b->cap = nc;
	}
	for (int i = 0; i < plen; i++)
		b->tuple[(size_t)b->n * R1 + i] = prefix[i];
	b->tuple[(size_t)b->n * R1 + plen] = m;
	b->weight[b->n] = w;
	b->n++;
	return 0;
}

void sudoku_otab_free(struct sudoku_otab *t, uint32_t K)
{
	if (!t)
		return;
	if (t->child)
		for (uint32_t x = 0; x < K; x++)
			sudoku_otab_free(t->child[x], K);
	free(t->child);
	free(t->omin);
	free(t->osize);
	free(t->trans);
	free(t->red);
	free(t);
}

/* Build the table of level `level` for the group E[0..nE), whose boxes
 * before it are prefix[0..level). weight: tuples per reduced prefix. */
static struct sudoku_otab *otab_build(struct build *b,
				      const struct sudoku_perm *E, uint64_t nE,
				      int level, uint16_t *prefix,
				      uint64_t weight)
{
	struct sudoku_setup *S = b->S;
	uint32_t K = S->K;
	int N = S->N, ngens = 0;
	int need_trans = level < b->last || level == 0;
	int need_red = level == b->last;
	struct sudoku_perm *gens = NULL, *ginv = NULL;
	struct sudoku_pmap *gpm = NULL;
	uint32_t *queue = NULL;
	uint16_t *omin = NULL;
	struct sudoku_otab *t = calloc(1, sizeof(*t));

	if (!t)
		goto nomem;
	t->order = nE;
	b->rc = pick_gens(E, nE, N, &gens, &ngens);
	if (b->rc)
		goto fail;
	ginv = malloc((ngens + 1) * sizeof(*ginv));
	gpm = malloc((ngens + 1) * sizeof(*gpm));
	queue = malloc(K * sizeof(*queue));
	omin = malloc(K * sizeof(*omin));
	if (!ginv || !gpm || !queue || !omin)
		goto nomem;
	for (int g = 0; g < ngens; g++) {
		perm_inv(&gens[g], &ginv[g], N);
		sudoku_pmap_of(&gens[g], N, &gpm[g]);
	}
	if (need_trans) {
		t->trans = malloc(K * sizeof(*t->trans));
		t->osize = calloc(K, sizeof(*t->osize));
		if (!t->trans || !t->osize)
			goto nomem;
	}
	if (need_red) {
		t->red = malloc(K * sizeof(*t->red));
		if (!t->red)
			goto nomem;
	}
	for (uint32_t x = 0; x < K; x++)
		omin[x] = 0xffff;
	for (uint32_t x = 0; x < K; x++) {
		uint32_t qh = 0, qt = 0;
		if (omin[x] != 0xffff)
			continue;
		omin[x] = (uint16_t)x;
		if (need_trans)
			sudoku_perm_id(&t->trans[x]);
		queue[qt++] = x;
		while (qh < qt) {
			uint32_t u = queue[qh++];
			for (int g = 0; g < ngens; g++) {
				uint32_t v = sudoku_code_apply(
					(const uint16_t(*)[SUDOKU_MAXC])S->masks,
					S->pw, S->rgs2code, S->C, &gpm[g], u);
				if (omin[v] != 0xffff)
					continue;
				omin[v] = (uint16_t)x;
				if (need_trans)
					perm_mul(&t->trans[u], &ginv[g],
						 &t->trans[v], N);
				queue[qt++] = v;
			}
		}
		if (need_trans)
			t->osize[x] = qt;
		if (need_red) {
			for (uint32_t i = 0; i < qt; i++)
				t->red[queue[i]] = b->n;
			b->rc = red_push(b, prefix, level, (uint16_t)x,
					 weight * qt);
			if (b->rc)
				goto fail;
		}
	}
	if (need_trans) {
		t->omin = omin;
		omin = NULL;
	}
	if (level < b->last) {
		struct sudoku_perm *sub = malloc(nE * sizeof(*sub));
		t->child = calloc(K, sizeof(*t->child));
		if (!sub || !t->child) {
			free(sub);
			goto nomem;
		}
		for (uint32_t m = 0; m < K; m++) {
			uint64_t ns = 0;
			if (t->omin[m] != m)
				continue;
			for (uint64_t i = 0; i < nE; i++)
				if (sudoku_apply(S, &E[i], m) == m)
					sub[ns++] = E[i];
			prefix[level] = (uint16_t)m;
			t->child[m] = otab_build(b, sub, ns, level + 1, prefix,
						 weight * t->osize[m]);
			if (!t->child[m]) {
				free(sub);
				goto fail;
			}
		}
		free(sub);
	}
	free(gens);
	free(ginv);
	free(gpm);
	free(queue);
	free(omin);
	return t;
nomem:
	b->rc = GERR_NOMEM;
fail:
	free(gens);
	free(ginv);
	free(gpm);
	free(queue);
	free(omin);
	sudoku_otab_free(t, K);
	return NULL;
}

uint32_t sudoku_reduce(const struct sudoku_setup *S, const uint16_t *codes)
{
	struct sudoku_perm P = S->sigma0[codes[0]];
	const struct sudoku_otab *t = S->root;

	for (int l = 0; l <= S->R - 2; l++) {
		uint32_t x = sudoku_apply(S, &P, codes[l + 1]);
		if (l == S->R - 2)
			return t->red[x];
		perm_mul(&t->trans[x], &P, &P, S->N);
		t = t->child[t->omin[x]];
	}
	return 0; /* not reached: R >= 2 */
}


/* ---- Stab(code 0) ------------------------------------------------------- */

/* Every permutation of 0..n-1 (n <= SUDOKU_MAXR, SUDOKU_MAXC), in
 * lexicographic order, as rows of stride bytes from out, which has room for
 * the n! of them; returns n!. */
static int lex_perms(int n, uint8_t *out, size_t stride)
{
	uint8_t a[SUDOKU_MAXR > SUDOKU_MAXC ? SUDOKU_MAXR : SUDOKU_MAXC];
	int count = 0;

	for (int i = 0; i < n; i++)
		a[i] = (uint8_t)i;
	for (;;) {
		memcpy(out + (size_t)count++ * stride, a, (size_t)n);
		int i = n - 2;
		while (i >= 0 && a[i] > a[i + 1])
			i--;
		if (i < 0)
			return count;
		int j = n - 1;
		while (a[j] < a[i])
			j--;
		uint8_t t = a[i]; a[i] = a[j]; a[j] = t;
		for (int l = i + 1, r = n - 1; l < r; l++, r--) {
			t = a[l]; a[l] = a[r]; a[r] = t;
		}
	}
}

static int build_stab0(const struct sudoku_setup *S, struct sudoku_perm **ret,
		       uint64_t *ret_n)
{
	int R = S->R, C = S->C, N = S->N;
	uint8_t pr[120][SUDOKU_MAXR], pc[6][SUDOKU_MAXC];
	int npr, npc;
	uint64_t n = 1, k = 0;
	struct sudoku_perm *E;

	npr = lex_perms(R, (uint8_t *)pr, sizeof(pr[0]));
	npc = lex_perms(C, (uint8_t *)pc, sizeof(pc[0]));
	for (int i = 0; i < C; i++)
		n *= (uint64_t)npr;
	n *= (uint64_t)npc;
	E = malloc(n * sizeof(*E));
	if (!E)
		return GERR_NOMEM;
	for (int b = 0; b < npc; b++) {
		uint64_t tot = 1;
		for (int i = 0; i < C; i++)
			tot *= (uint64_t)npr;
		for (uint64_t w = 0; w < tot; w++) {
			uint64_t v = w;
			struct sudoku_perm p;
			sudoku_perm_id(&p);
			for (int blk = 0; blk < C; blk++) {
				int a = (int)(v % (uint64_t)npr);
				v /= (uint64_t)npr;
				for (int i = 0; i < R; i++)
					p.p[blk * R + i] =
						(uint8_t)(pc[b][blk] * R + pr[a][i]);
			}
			E[k++] = p;
		}
	}
	(void)N;
	*ret = E;
	*ret_n = n;
	return 0;
}

/* ---- the whole chain ----------------------------------------------------- */

int sudoku_orbits_build(struct sudoku_setup *S)
{
	struct sudoku_perm *E = NULL;
	uint64_t nE = 0;
	struct build b;
	uint16_t prefix[SUDOKU_MAXR];
	int R = S->R, C = S->C, rc;

	S->sigma0 = malloc(S->K * sizeof(*S->sigma0));
	if (!S->sigma0)
		return GERR_NOMEM;
	for (uint32_t x = 0; x < S->K; x++) {
		struct sudoku_perm *p = &S->sigma0[x];
		sudoku_perm_id(p);
		for (int k = 0; k < C; k++) {
			uint32_t m = S->masks[x][k];
			for (int i = 0; m; i++) {
				int s = __builtin_ctz(m);
				m &= m - 1;
				p->p[s] = (uint8_t)(k * R + i);
			}
		}
	}
	rc = build_stab0(S, &E, &nE);
	if (rc)
		return rc;
	S->stab0_order = nE;
	memset(&b, 0, sizeof(b));
	b.S = S;
	b.last = R - 2;
	S->root = otab_build(&b, E, nE, 0, prefix, 1);
	free(E);
	if (!S->root) {
		free(b.tuple);
		free(b.weight);
		return b.rc ? b.rc : GERR_NOMEM;
	}
	S->nred = b.n;
	S->red_tuple = b.tuple;
	S->red_weight = b.weight;
	/* nodes: the orbits of Stab(code 0) */
	S->node_of = malloc(S->K * sizeof(*S->node_of));
	S->node_code = malloc(S->K * sizeof(*S->node_code));
	S->node_size = malloc(S->K * sizeof(*S->node_size));
	if (!S->node_of || !S->node_code || !S->node_size)
		return GERR_NOMEM;
	for (uint32_t x = 0; x < S->K; x++)
		if (S->root->omin[x] == x) {
			S->node_code[S->nnodes] = (uint16_t)x;
			S->node_size[S->nnodes] = S->root->osize[x];
			S->node_of[x] = (uint16_t)S->nnodes++;
		}
	for (uint32_t x = 0; x < S->K; x++)
		S->node_of[x] = S->node_of[S->root->omin[x]];
	return 0;
}

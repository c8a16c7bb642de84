/* sudoku_setup.c - box codes, orbit tables, gangsters, band counts and the
 * band-count table T (definitions in sudoku.h).
 *
 * Groups are handled as explicit element lists (Stab(code 0) has 82,944
 * elements for 4x3) from which a small generating set is picked greedily
 * (an element joins when the closure of the generators so far misses it);
 * orbits of codes are then found by breadth-first search over those
 * generators, which also yields the transporters. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_internal.h"

/* ---- parallel loops ---------------------------------------------------- */

struct par {
	void (*fn)(void *ctx, uint64_t i);
	void *ctx;
	uint64_t n;
	_Atomic uint64_t next;
};

static void *par_main(void *arg)
{
	struct par *p = arg;
	for (;;) {
		uint64_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		p->fn(p->ctx, i);
	}
	return NULL;
}

void sudoku_parallel(int threads, uint64_t n, void (*fn)(void *, uint64_t),
		     void *ctx)
{
	struct par p = { fn, ctx, n, 0 };
	pthread_t th[64];
	int k = 0;

	if (threads > 64)
		threads = 64;
	if ((uint64_t)threads > n)
		threads = (int)n;
	for (; k < threads - 1; k++)
		if (pthread_create(&th[k], NULL, par_main, &p) != 0)
			break;
	par_main(&p);
	for (int i = 0; i < k; i++)
		pthread_join(th[i], NULL);
}

/* ---- shapes ------------------------------------------------------------ */

int sudoku_parse_box(const char *s, int *ret_R, int *ret_C, char *err,
		     size_t errlen)
{
	int a = 0, b = 0, R, C;
	char x = 0, extra = 0;

	if (!s || sscanf(s, " %d %c %d %c", &a, &x, &b, &extra) != 3 ||
	    (x != 'x' && x != 'X')) {
		snprintf(err, errlen, "sudoku: box must look like 4x3, got '%s'",
			 s ? s : "(null)");
		return GERR_INVAL;
	}
	if (a < 2 || b < 2 || a * b > SUDOKU_MAXN) {
		snprintf(err, errlen, "sudoku: box %dx%d: need rows, columns >= 2 "
			 "and rows*columns <= 12", a, b);
		return GERR_INVAL;
	}
	/* Orient: C (columns of a box = number of bands) must be 2 or 3;
	 * keep the box as given when it is, else count the transpose. */
	if (b <= 3) {
		R = a;
		C = b;
	} else {
		R = b;
		C = a;
	}
	if (C > 3 || R > SUDOKU_MAXR) {
		snprintf(err, errlen, "sudoku: box %dx%d is not supported (the "
			 "band-gangster count here takes 2x2, 2x3, 2x4, 3x3, "
			 "2x5, 3x4 and their transposes)", a, b);
		return GERR_UNSUPPORTED;
	}
	*ret_R = R;
	*ret_C = C;
	return 0;
}

/* ---- permutations ------------------------------------------------------ */

static void perm_id(struct sudoku_perm *p)
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

static uint64_t hmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Returns 1 if inserted, 0 if present. */
static int hset_add(struct hset *h, uint64_t key)
{
	uint64_t i = hmix(key) & h->mask;
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
	uint64_t i = hmix(key) & h->mask;
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
	perm_id(&id);
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

static void otab_free(struct sudoku_otab *t, uint32_t K)
{
	if (!t)
		return;
	if (t->child)
		for (uint32_t x = 0; x < K; x++)
			otab_free(t->child[x], K);
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
			perm_id(&t->trans[x]);
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
	otab_free(t, K);
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

/* ---- the whole setup ---------------------------------------------------- */

static int enum_codes(struct sudoku_setup *S)
{
	int N = S->N, C = S->C, R = S->R;
	uint32_t npw = 1;
	uint8_t lab[SUDOKU_MAXN];
	int cntl[SUDOKU_MAXC];
	uint32_t K = 0, cap = 8192;

	for (int i = 0; i < N; i++)
		npw *= (uint32_t)C;
	S->rgs2code = malloc(npw * sizeof(uint16_t));
	S->masks = malloc(cap * sizeof(*S->masks));
	if (!S->rgs2code || !S->masks)
		return GERR_NOMEM;
	memset(S->rgs2code, 0xff, npw * sizeof(uint16_t));
	for (uint32_t m = 0; m < (1u << N); m++) {
		uint32_t p = 0, w = 1;
		for (int s = 0; s < N; s++, w *= (uint32_t)C)
			if (m >> s & 1)
				p += w;
		S->pw[m] = p;
	}
	/* Iterative generation of restricted-growth strings in lexicographic
	 * order, each label used exactly R times. */
	int pos = 0;
	memset(cntl, 0, sizeof(cntl));
	lab[0] = 0xff;
	for (;;) {
		/* try to advance lab[pos] */
		int maxused = -1;
		for (int i = 0; i < pos; i++)
			if (lab[i] > maxused)
				maxused = lab[i];
		int v = lab[pos] == 0xff ? 0 : lab[pos] + 1;
		if (lab[pos] != 0xff)
			cntl[lab[pos]]--;
		while (v < C && (v > maxused + 1 || cntl[v] >= R))
			v++;
		if (v >= C) {
			lab[pos] = 0xff;
			if (pos == 0)
				break;
			pos--;
			continue;
		}
		lab[pos] = (uint8_t)v;
		cntl[v]++;
		if (pos == N - 1) {
			uint32_t key = 0, w = 1;
			uint16_t mk[SUDOKU_MAXC] = { 0 };
			for (int s = 0; s < N; s++, w *= (uint32_t)C) {
				key += lab[s] * w;
				mk[lab[s]] |= (uint16_t)(1u << s);
			}
			if (K == cap)
				return GERR_INVAL;
			S->rgs2code[key] = (uint16_t)K;
			memcpy(S->masks[K], mk, sizeof(mk));
			K++;
		} else {
			pos++;
			lab[pos] = 0xff;
		}
	}
	S->K = K;
	return 0;
}

static int build_stab0(const struct sudoku_setup *S, struct sudoku_perm **ret,
		       uint64_t *ret_n)
{
	int R = S->R, C = S->C, N = S->N;
	uint8_t pr[120][SUDOKU_MAXR], pc[6][SUDOKU_MAXC];
	int npr = 0, npc = 0;
	uint64_t n = 1, k = 0;
	struct sudoku_perm *E;

	/* all permutations of R and of C (Heap-free: lexicographic) */
	{
		uint8_t a[SUDOKU_MAXR];
		for (int i = 0; i < R; i++)
			a[i] = (uint8_t)i;
		for (;;) {
			memcpy(pr[npr++], a, sizeof(a));
			int i = R - 2;
			while (i >= 0 && a[i] > a[i + 1])
				i--;
			if (i < 0)
				break;
			int j = R - 1;
			while (a[j] < a[i])
				j--;
			uint8_t t = a[i]; a[i] = a[j]; a[j] = t;
			for (int l = i + 1, r = R - 1; l < r; l++, r--) {
				t = a[l]; a[l] = a[r]; a[r] = t;
			}
		}
	}
	{
		uint8_t a[SUDOKU_MAXC];
		for (int i = 0; i < C; i++)
			a[i] = (uint8_t)i;
		for (;;) {
			memcpy(pc[npc++], a, sizeof(a));
			int i = C - 2;
			while (i >= 0 && a[i] > a[i + 1])
				i--;
			if (i < 0)
				break;
			int j = C - 1;
			while (a[j] < a[i])
				j--;
			uint8_t t = a[i]; a[i] = a[j]; a[j] = t;
			for (int l = i + 1, r = C - 1; l < r; l++, r--) {
				t = a[l]; a[l] = a[r]; a[r] = t;
			}
		}
	}
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
			perm_id(&p);
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

struct sort_ctx {
	const uint16_t *rep; /* [nclass][R-1] */
	int n;
};

static _Thread_local const struct sort_ctx *g_sort; /* qsort has no ctx */

static int class_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return tuple_cmp(g_sort->rep + (size_t)x * g_sort->n,
			 g_sort->rep + (size_t)y * g_sort->n, g_sort->n);
}

static int find_gangsters(struct sudoku_setup *S)
{
	uint32_t nred = S->nred, *par, *cls = NULL, *order = NULL, nc = 0;
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
	for (uint32_t c = 0; c < nc; c++)
		order[c] = c;
	{
		struct sort_ctx sc = { rep, R1 };
		g_sort = &sc;
		qsort(order, nc, sizeof(*order), class_cmp);
		g_sort = NULL;
	}
	/* rank[class] -> gangster index; reuse par as rank */
	for (uint32_t g = 0; g < nc; g++) {
		par[order[g]] = g;
		memcpy(S->gang_tuple + (size_t)g * R1, rep + (size_t)order[g] * R1,
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

static int build_compat(struct sudoku_setup *S)
{
	uint32_t K = S->K, all = (1u << S->N) - 1, n0 = 0;
	uint16_t (*ord0)[2][3] = NULL;

	S->ncompat = 0;
	for (uint32_t x = 0; x < K; x++) {
		uint32_t A0 = S->masks[x][0], A1 = S->masks[x][1],
			 A2 = S->masks[x][2], n = 0;
		for (int pass = 0; pass < 2; pass++) {
			n = 0;
			uint32_t u0 = A1 | A2;
			for (uint32_t B0 = u0; B0; B0 = (B0 - 1) & u0) {
				if (__builtin_popcount(B0) != S->R)
					continue;
				uint32_t u1 = (A0 | A2) & ~B0;
				for (uint32_t B1 = u1; B1; B1 = (B1 - 1) & u1) {
					if (__builtin_popcount(B1) != S->R)
						continue;
					uint32_t B2 = all & ~(B0 | B1);
					if (B2 & A2)
						continue;
					if (pass == 1) {
						uint32_t D0 = all & ~(A0 | B0),
							 D1 = all & ~(A1 | B1),
							 D2 = all & ~(A2 | B2);
						size_t at = (size_t)x * S->ncompat + n;
						S->cb[at] = (uint16_t)sudoku_code_of_masks(
							S->pw, S->rgs2code, 3, B0, B1, B2);
						S->cd[at] = (uint16_t)sudoku_code_of_masks(
							S->pw, S->rgs2code, 3, D0, D1, D2);
						if (x == 0) {
							ord0[n][0][0] = (uint16_t)B0;
							ord0[n][0][1] = (uint16_t)B1;
							ord0[n][0][2] = (uint16_t)B2;
							ord0[n][1][0] = (uint16_t)D0;
							ord0[n][1][1] = (uint16_t)D1;
							ord0[n][1][2] = (uint16_t)D2;
						}
					}
					n++;
				}
			}
			if (pass == 0) {
				if (x == 0) {
					S->ncompat = n;
					S->cb = malloc((size_t)K * n * sizeof(uint16_t));
					S->cd = malloc((size_t)K * n * sizeof(uint16_t));
					S->swap0 = malloc(n * sizeof(uint16_t));
					ord0 = malloc(n * sizeof(*ord0));
					if (!S->cb || !S->cd || !S->swap0 || !ord0) {
						free(ord0);
						return GERR_NOMEM;
					}
					n0 = n;
				} else if (n != S->ncompat) {
					free(ord0);
					return GERR_INVAL;
				}
			}
		}
	}
	for (uint32_t i = 0; i < n0; i++) {
		S->swap0[i] = 0xffff;
		for (uint32_t j = 0; j < n0; j++)
			if (memcmp(ord0[j][0], ord0[i][1], sizeof(ord0[i][1])) == 0 &&
			    memcmp(ord0[j][1], ord0[i][0], sizeof(ord0[i][0])) == 0)
				S->swap0[i] = (uint16_t)j;
		if (S->swap0[i] == 0xffff || S->swap0[i] == i) {
			free(ord0);
			return GERR_INVAL;
		}
	}
	free(ord0);
	return 0;
}

/* band counts in parallel */
struct cnt_ctx {
	struct sudoku_setup *S;
	_Atomic int overflow;
};

static void cnt_one(void *arg, uint64_t g)
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

static void tfill_one(void *arg, uint64_t i)
{
	struct tfill *f = arg;
	const struct sudoku_setup *S = f->S;
	uint32_t K = S->K;

	if (S->R == 3) {
		uint16_t r = S->node_code[i];
		struct sudoku_perm id;
		perm_id(&id);
		tfill_last(S, S->root->child[r], &id, S->T + i * S->Kp);
	} else { /* R == 4: i = node * K + x */
		uint32_t n = (uint32_t)(i / K), x = (uint32_t)(i % K);
		const struct sudoku_otab *t1 = S->root->child[S->node_code[n]];
		uint32_t m = t1->omin[x];
		tfill_last(S, t1->child[m], &t1->trans[x], S->T + i * S->Kp);
	}
}

int sudoku_setup_build(int R, int C, unsigned what, int threads,
		       struct sudoku_setup **ret, char *err, size_t errlen)
{
	struct sudoku_setup *S = calloc(1, sizeof(*S));
	struct sudoku_perm *E = NULL;
	uint64_t nE = 0;
	struct build b;
	uint16_t prefix[SUDOKU_MAXR];
	int rc;

	if (!S)
		return GERR_NOMEM;
	if (threads < 1)
		threads = 1;
	if (what & SUDOKU_BUILD_T)
		what |= SUDOKU_BUILD_CNT;
	S->R = R;
	S->C = C;
	S->N = R * C;
	rc = enum_codes(S);
	if (rc)
		goto fail;
	S->sigma0 = malloc(S->K * sizeof(*S->sigma0));
	if (!S->sigma0) {
		rc = GERR_NOMEM;
		goto fail;
	}
	for (uint32_t x = 0; x < S->K; x++) {
		struct sudoku_perm *p = &S->sigma0[x];
		perm_id(p);
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
		goto fail;
	S->stab0_order = nE;
	memset(&b, 0, sizeof(b));
	b.S = S;
	b.last = R - 2;
	S->root = otab_build(&b, E, nE, 0, prefix, 1);
	free(E);
	E = NULL;
	if (!S->root) {
		rc = b.rc ? b.rc : GERR_NOMEM;
		free(b.tuple);
		free(b.weight);
		goto fail;
	}
	S->nred = b.n;
	S->red_tuple = b.tuple;
	S->red_weight = b.weight;
	/* nodes */
	S->node_of = malloc(S->K * sizeof(*S->node_of));
	S->node_code = malloc(S->K * sizeof(*S->node_code));
	S->node_size = malloc(S->K * sizeof(*S->node_size));
	if (!S->node_of || !S->node_code || !S->node_size) {
		rc = GERR_NOMEM;
		goto fail;
	}
	for (uint32_t x = 0; x < S->K; x++)
		if (S->root->omin[x] == x) {
			S->node_code[S->nnodes] = (uint16_t)x;
			S->node_size[S->nnodes] = S->root->osize[x];
			S->node_of[x] = (uint16_t)S->nnodes++;
		}
	for (uint32_t x = 0; x < S->K; x++)
		S->node_of[x] = S->node_of[S->root->omin[x]];
	rc = find_gangsters(S);
	if (rc)
		goto fail;
	if (C == 3) {
		rc = build_compat(S);
		if (rc)
			goto fail;
	}
	if (what & SUDOKU_BUILD_CNT) {
		struct cnt_ctx cc = { S, 0 };
		sudoku_parallel(threads, S->ngang, cnt_one, &cc);
		if (atomic_load(&cc.overflow)) {
			snprintf(err, errlen, "sudoku: a band count exceeds 32 bits");
			rc = GERR_UNSUPPORTED;
			goto fail;
		}
		S->have_cnt = 1;
		for (uint32_t g = 0; g < S->ngang; g++)
			if (S->cnt[g] > S->max_cnt)
				S->max_cnt = S->cnt[g];
	}
	S->Kp = (S->K + 1 + 3) & ~3u;
	if ((what & SUDOKU_BUILD_T) && C == 3) {
		struct tfill f = { S };
		if (R == 2)
			S->Tlen = S->nnodes;
		else if (R == 3)
			S->Tlen = (uint64_t)S->nnodes * S->Kp;
		else
			S->Tlen = (uint64_t)S->nnodes * S->K * S->Kp;
		S->T = malloc(S->Tlen * sizeof(uint32_t));
		if (!S->T) {
			rc = GERR_NOMEM;
			goto fail;
		}
		if (R == 2) {
			for (uint32_t n = 0; n < S->nnodes; n++)
				S->T[n] = S->cnt[S->red_gang[S->root->red[S->node_code[n]]]];
		} else {
			sudoku_parallel(threads, R == 3 ? S->nnodes
						     : (uint64_t)S->nnodes * S->K,
					tfill_one, &f);
		}
	}
	*ret = S;
	return 0;
fail:
	if (err && errlen && !err[0])
		snprintf(err, errlen, "sudoku: setup %dx%d failed: %s", R, C,
			 gerr_str(rc));
	free(E);
	sudoku_setup_free(S);
	return rc;
}

void sudoku_setup_free(struct sudoku_setup *S)
{
	if (!S)
		return;
	otab_free(S->root, S->K);
	free(S->masks);
	free(S->rgs2code);
	free(S->sigma0);
	free(S->node_code);
	free(S->node_of);
	free(S->node_size);
	free(S->red_tuple);
	free(S->red_weight);
	free(S->red_gang);
	free(S->gang_tuple);
	free(S->members);
	free(S->cnt);
	free(S->set_start);
	free(S->cb);
	free(S->cd);
	free(S->swap0);
	free(S->T);
	free(S);
}

uint32_t sudoku_set_of(const struct sudoku_setup *S, uint32_t g)
{
	return S->node_of[S->gang_tuple[(size_t)g * (S->R - 1)]];
}

/* ---- the per-process cache ------------------------------------------------ */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sudoku_setup *cache[SUDOKU_MAXR + 1][SUDOKU_MAXC + 1][2];

int sudoku_setup_cached(int R, int C, unsigned what, int threads,
			const struct sudoku_setup **ret, char *err,
			size_t errlen)
{
	int rc = 0, full = (what & (SUDOKU_BUILD_T | SUDOKU_BUILD_CNT)) != 0;

	if (R < 2 || R > SUDOKU_MAXR || C < 2 || C > SUDOKU_MAXC)
		return GERR_INVAL;
	pthread_mutex_lock(&cache_lock);
	if (!full && cache[R][C][1]) {
		*ret = cache[R][C][1];
	} else {
		if (!cache[R][C][full])
			rc = sudoku_setup_build(R, C, full ? SUDOKU_BUILD_T : 0,
						threads, &cache[R][C][full],
						err, errlen);
		if (rc == 0)
			*ret = cache[R][C][full];
	}
	pthread_mutex_unlock(&cache_lock);
	return rc;
}

/* othello_split.c - one hard position over many workers: each root of a
 * file job is expanded `depth` plies (a pass is a ply) into a tree whose
 * leaves are finished games (scored here) or frontier positions (leased to
 * workers, one distinct position once however many lines reach it, and
 * again with another window if alpha-beta needs more of it). gpud keeps
 * bounds of each frontier position's score merged from its results,
 * combines the roots' exact scores and best moves from them by negamax,
 * and leases what YBWC over them searches now: a node's first move alone
 * with the node's window, then its other moves at once with the null
 * window of the best so far, each searched again with the whole window
 * only when it beats it. So the leases together search about what one
 * sequential search does (tests/unit/test_othello_split.c prints how
 * much more). The expansion is a pure function of (roots, depth), so
 * gpud rebuilds the tree from params whenever it plans or combines
 * instead of storing it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_eval.h"
#include "othello_wl.h"

#define OSP_MAX_NODES (1u << 16)
#define OSP_MAX_REFS (4u * OTHELLO_SPLIT_MAX_FRONTIER)
#define OSP_NONE UINT32_MAX

enum { OSP_INNER, OSP_FINAL, OSP_FRONT };

/* A tree node; an inner node's children are edges [first, first + n). */
struct osp_node {
	uint32_t first;
	uint8_t n, kind;
	int8_t score;    /* OSP_FINAL */
	uint32_t front;  /* OSP_FRONT: a ref while building, then the
			    index; else OSP_NONE */
};

struct osp_edge {
	uint32_t child;
	uint8_t move;    /* square, or OTHELLO_MOVE_PASS */
	uint8_t order;   /* edges in search order: first + order[k] */
};

/* A frontier position reached by a line: P/O from the side to move. */
struct osp_ref {
	uint64_t P, O;
	uint8_t black;
	uint32_t node;
	int empties, mobility;
};

struct othello_split {
	int depth;
	size_t nroots;
	struct osp_node *node;
	size_t nnodes;
	struct osp_edge *edge;
	size_t nedges;
	struct osp_ref *ref;
	size_t nrefs;
	struct othello_pos *front;
	size_t nfront;
};

static int osp_new_node(struct othello_split *s, uint32_t *ret)
{
	if (s->nnodes >= OSP_MAX_NODES)
		return GERR_TOOBIG;
	memset(&s->node[s->nnodes], 0, sizeof(s->node[0]));
	s->node[s->nnodes].front = OSP_NONE;
	*ret = (uint32_t)s->nnodes++;
	return 0;
}

static int osp_ref(struct othello_split *s, uint32_t at, uint64_t P,
		   uint64_t O, int black)
{
	if (s->nrefs >= OSP_MAX_REFS)
		return GERR_TOOBIG;
	s->ref[s->nrefs] = (struct osp_ref){P, O, (uint8_t)black, at,
		oth_popcount(~(P | O)), oth_popcount(oth_moves(P, O))};
	s->node[at].front = (uint32_t)s->nrefs++;
	return 0;
}

/* Node `at` (already allocated) is position (P, O), `depth` plies above
 * the frontier. */
static int osp_expand(struct othello_split *s, uint32_t at, uint64_t P,
		      uint64_t O, int black, int depth)
{
	uint64_t m = oth_moves(P, O);
	uint32_t kid[34];
	uint8_t mv[34], ord[34];
	int key[34], n = 0, rc;

	if (!m && !oth_moves(O, P)) {
		s->node[at].kind = OSP_FINAL;
		s->node[at].score = (int8_t)oth_final_score(P, O);
		return 0;
	}
	if (depth == 0) {
		s->node[at].kind = OSP_FRONT;
		return osp_ref(s, at, P, O, black);
	}
	/* Children first, then their edges, contiguous. */
	if (!m) {
		if ((rc = osp_new_node(s, &kid[0])) != 0)
			return rc;
		mv[n++] = OTHELLO_MOVE_PASS;
		rc = osp_expand(s, kid[0], O, P, !black, depth - 1);
		if (rc)
			return rc;
	}
	for (; m; m &= m - 1) {
		int sq = oth_ctz(m);
		uint64_t f = oth_flips(P, O, sq);
		if ((rc = osp_new_node(s, &kid[n])) != 0)
			return rc;
		mv[n] = (uint8_t)sq;
		rc = osp_expand(s, kid[n++], O & ~f, P | f | (1ull << sq),
				!black, depth - 1);
		if (rc)
			return rc;
	}
	/* Search order: the static evaluation's best for us first (the
	 * lowest for the opponent), then squares. A wrong first choice costs
	 * most: its brothers' null windows fail high and are searched again,
	 * from an empty table. (With the trained evaluation, 2 plies: 1.7-2.5x
	 * one search's nodes on FFO #24-#26 with 4 workers; the solver's
	 * fastest-first order 3.6-3.8x.) */
	for (int k = 0; k < n; k++) {
		uint64_t cp = mv[k] == OTHELLO_MOVE_PASS ? O : 0, co = P;
		if (mv[k] != OTHELLO_MOVE_PASS) {
			uint64_t f = oth_flips(P, O, mv[k]);
			cp = O & ~f;
			co = P | f | (1ull << mv[k]);
		}
		key[k] = othello_eval(cp, co) * 64 + k;
		ord[k] = (uint8_t)k;
	}
	for (int k = 1; k < n; k++) /* insertion sort: n <= 33 */
		for (int l = k; l > 0 && key[ord[l]] < key[ord[l - 1]]; l--) {
			uint8_t t = ord[l];
			ord[l] = ord[l - 1];
			ord[l - 1] = t;
		}
	s->node[at].kind = OSP_INNER;
	s->node[at].first = (uint32_t)s->nedges;
	s->node[at].n = (uint8_t)n;
	for (int k = 0; k < n; k++)
		s->edge[s->nedges++] = (struct osp_edge){kid[k], mv[k], ord[k]};
	return 0;
}

static int osp_cmp_pos(const void *a, const void *b)
{
	const struct osp_ref *x = a, *y = b;

	if (x->P != y->P)
		return x->P < y->P ? -1 : 1;
	if (x->O != y->O)
		return x->O < y->O ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* Hardest first (most empties, then most moves), for balance across
 * workers; the position breaks ties so the order is a pure function. */
static int osp_cmp_hard(const void *a, const void *b)
{
	const struct osp_ref *x = a, *y = b;

	if (x->empties != y->empties)
		return y->empties - x->empties;
	if (x->mobility != y->mobility)
		return y->mobility - x->mobility;
	return osp_cmp_pos(a, b);
}

/* Distinct frontier positions in lease order; nodes point at them. */
static int osp_number(struct othello_split *s)
{
	size_t nd = 0, na = s->nrefs ? s->nrefs : 1;
	struct osp_ref *h = malloc(na * sizeof(*h));
	uint32_t *at = malloc(na * sizeof(*at)), *rank = malloc(na * 4);
	int rc = 0;

	if (!h || !at || !rank) {
		rc = GERR_NOMEM;
		goto out;
	}
	/* By position, so that equal ones are neighbours: at[i] is line
	 * i's distinct position, h[k] the distinct ones (node: k). */
	qsort(s->ref, s->nrefs, sizeof(*s->ref), osp_cmp_pos);
	for (size_t i = 0; i < s->nrefs; i++) {
		if (i == 0 || s->ref[i].P != s->ref[i - 1].P ||
		    s->ref[i].O != s->ref[i - 1].O) {
			h[nd] = s->ref[i];
			h[nd].node = (uint32_t)nd;
			nd++;
		}
		at[i] = (uint32_t)(nd - 1);
	}
	if (nd > OTHELLO_SPLIT_MAX_FRONTIER) {
		rc = GERR_TOOBIG;
		goto out;
	}
	qsort(h, nd, sizeof(*h), osp_cmp_hard);
	s->front = malloc((nd ? nd : 1) * sizeof(*s->front));
	if (!s->front) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t k = 0; k < nd; k++) {
		rank[h[k].node] = (uint32_t)k;
		s->front[k].black = h[k].black ? h[k].P : h[k].O;
		s->front[k].white = h[k].black ? h[k].O : h[k].P;
		s->front[k].black_to_move = h[k].black;
		s->front[k].expected = OTHELLO_NO_SCORE;
	}
	for (size_t i = 0; i < s->nrefs; i++)
		s->node[s->ref[i].node].front = rank[at[i]];
	s->nfront = nd;
out:
	free(h);
	free(at);
	free(rank);
	return rc;
}

int othello_split_build(const struct othello_pos *roots, size_t n, int depth,
			struct othello_split **ret)
{
	struct othello_split *s;
	int rc = 0;

	if (n < 1 || n > OTHELLO_SPLIT_MAX_ROOTS || depth < 1 ||
	    depth > OTHELLO_SPLIT_MAX_DEPTH)
		return GERR_INVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return GERR_NOMEM;
	s->depth = depth;
	s->nroots = n;
	s->node = malloc(OSP_MAX_NODES * sizeof(*s->node));
	s->edge = malloc(OSP_MAX_NODES * sizeof(*s->edge));
	s->ref = malloc(OSP_MAX_REFS * sizeof(*s->ref));
	if (!s->node || !s->edge || !s->ref)
		rc = GERR_NOMEM;
	s->nnodes = n; /* the roots are nodes [0, n) */
	for (size_t r = 0; rc == 0 && r < n; r++) {
		uint64_t P, O;
		othello_pos_pov(&roots[r], &P, &O);
		memset(&s->node[r], 0, sizeof(s->node[r]));
		s->node[r].front = OSP_NONE;
		rc = osp_expand(s, (uint32_t)r, P, O, roots[r].black_to_move,
				depth);
	}
	if (rc == 0)
		rc = osp_number(s);
	free(s->ref);
	s->ref = NULL;
	if (rc) {
		othello_split_free(s);
		return rc;
	}
	*ret = s;
	return 0;
}

int othello_split_auto_depth(const struct othello_pos *roots, size_t n,
			     int *ret_depth)
{
	int best = 0;

	for (int d = 1; d <= OTHELLO_SPLIT_MAX_DEPTH; d++) {
		struct othello_split *s;
		int rc = othello_split_build(roots, n, d, &s);
		if (rc == GERR_TOOBIG)
			break;
		if (rc)
			return rc;
		size_t nf = s->nfront;
		othello_split_free(s);
		if (nf > 0)
			best = d;
		if (nf >= OTHELLO_SPLIT_TARGET)
			break;
	}
	*ret_depth = best;
	return 0;
}

void othello_split_free(struct othello_split *s)
{
	if (!s)
		return;
	free(s->node);
	free(s->edge);
	free(s->ref);
	free(s->front);
	free(s);
}

size_t othello_split_frontier(const struct othello_split *s,
			      const struct othello_pos **ret)
{
	if (ret)
		*ret = s->front;
	return s->nfront;
}

/* Bounds of every node's value from the frontier's bounds (flo[k] <=
 * score <= fhi[k]) and its children's: children have higher
 * indices than their parent, so one pass from the last node up. 1 when
 * the bounds contradict (a wrong result got through). */
static int osp_bounds(const struct othello_split *s, const int8_t *flo,
		      const int8_t *fhi, int8_t *lo, int8_t *hi)
{
	int bad = 0;

	for (size_t i = s->nnodes; i-- > 0;) {
		const struct osp_node *nd = &s->node[i];
		int l = -64, h = 64;
		if (nd->kind == OSP_FINAL) {
			l = h = nd->score;
		} else {
			if (nd->front != OSP_NONE) {
				l = flo[nd->front];
				h = fhi[nd->front];
			}
			if (nd->kind == OSP_INNER) {
				int cl = -64, ch = -64;
				for (uint32_t k = 0; k < nd->n; k++) {
					uint32_t c = s->edge[nd->first + k].child;
					cl = -hi[c] > cl ? -hi[c] : cl;
					ch = -lo[c] > ch ? -lo[c] : ch;
				}
				l = cl > l ? cl : l;
				h = ch < h ? ch : h;
			}
		}
		if (l > h) {
			bad = 1;
			h = l;
		}
		lo[i] = (int8_t)l;
		hi[i] = (int8_t)h;
	}
	return bad;
}

/* Windows are even, -66 and 66 meaning open: scores are even, so (m,
 * m + 2) is a null window (score <= m or >= m + 2). */
struct osp_need {
	const struct othello_split *s;
	const int8_t *lo, *hi;
	uint8_t *want;
	int8_t *wa, *wb;
};

static int osp_settled(const struct osp_need *q, uint32_t at, int a, int b)
{
	return q->lo[at] == q->hi[at] || q->hi[at] <= a || q->lo[at] >= b;
}

static void osp_mark(const struct osp_need *q, uint32_t at, int a, int b)
{
	uint32_t k = q->s->node[at].front;

	/* Within what is known: a narrower window searches less. */
	a = q->lo[at] - 2 > a ? q->lo[at] - 2 : a;
	b = q->hi[at] + 2 < b ? q->hi[at] + 2 : b;
	if (q->want[k]) { /* reached by several lines: both windows */
		a = q->wa[k] < a ? q->wa[k] : a;
		b = q->wb[k] > b ? q->wb[k] : b;
	}
	q->want[k] = OTHELLO_NEED_NOW;
	q->wa[k] = (int8_t)a;
	q->wb[k] = (int8_t)b;
}

static void osp_visit(const struct osp_need *q, uint32_t at, int a, int b);

/* Child c of a node in (a, b), the others surely reaching m (>= a): the
 * eldest with the whole window, a younger one first with the null window
 * at m (can it beat the others?) and with the whole window only once it
 * does. 1 while it is open. */
static int osp_child(const struct osp_need *q, uint32_t c, int eldest, int m,
		     int b)
{
	if (osp_settled(q, c, -b, -m))
		return 0;
	if (eldest || q->hi[c] <= -m - 2)
		osp_visit(q, c, -b, -m);
	else
		osp_visit(q, c, -m - 2, -m);
	return 1;
}

/* Marks the frontier positions that alpha-beta at node `at` in the
 * window (a, b) searches now, as YBWC would: the first move (in search
 * order) alone until it is settled, then every other at once. Values at
 * or below a, or at or above b, are all one to the parent. */
static void osp_visit(const struct osp_need *q, uint32_t at, int a, int b)
{
	const struct othello_split *s = q->s;
	const struct osp_node *nd = &s->node[at];

	if (osp_settled(q, at, a, b))
		return;
	if (nd->kind == OSP_FRONT) {
		osp_mark(q, at, a, b);
		return;
	}
	for (uint32_t k = 0; k < nd->n; k++) {
		const struct osp_edge *e = &s->edge[nd->first +
						    s->edge[nd->first + k].order];
		int m = a;
		/* What the others surely reach: below it c cannot matter. */
		for (uint32_t l = 0; l < nd->n; l++) {
			uint32_t o = s->edge[nd->first + l].child;
			if (o != e->child && -q->hi[o] > m)
				m = -q->hi[o];
		}
		if (osp_child(q, e->child, k == 0, m, b) && k == 0)
			return; /* the eldest first */
	}
}

/* A root's children, each with the window (in its value) where it can
 * still be the best move: above what a lower square surely reaches, or
 * at least what a higher one surely does (made even: scores are). */
static void osp_visit_root(const struct osp_need *q, uint32_t r)
{
	const struct othello_split *s = q->s;
	const struct osp_node *nd = &s->node[r];

	if (nd->kind != OSP_INNER) {
		osp_visit(q, r, -66, 66);
		return;
	}
	for (uint32_t k = 0; k < nd->n; k++) {
		uint32_t i = s->edge[nd->first + k].order;
		uint32_t c = s->edge[nd->first + i].child;
		int m = -65;
		for (uint32_t j = 0; j < nd->n; j++) {
			uint32_t o = s->edge[nd->first + j].child;
			int w = -q->hi[o] - (j > i); /* ties go to the lower */
			if (j != i && w > m)
				m = w;
		}
		m -= m & 1;
		if (osp_child(q, c, k == 0, m, 66) && k == 0)
			return;
	}
}

int othello_split_need(const struct othello_split *s, const int8_t *flo,
		       const int8_t *fhi, uint8_t *want, int8_t *wa,
		       int8_t *wb)
{
	int8_t *lo = malloc(s->nnodes), *hi = malloc(s->nnodes);
	int rc = lo && hi ? 0 : GERR_NOMEM;

	memset(want, 0, s->nfront);
	if (rc == 0 && osp_bounds(s, flo, fhi, lo, hi))
		rc = GERR_VERIFY;
	if (rc == 0) {
		struct osp_need q = {s, lo, hi, want, wa, wb};
		for (uint32_t r = 0; r < s->nroots; r++)
			osp_visit_root(&q, r);
	}
	free(lo);
	free(hi);
	return rc;
}

int othello_split_combine(const struct othello_split *s, const int8_t *flo,
			  const int8_t *fhi, int8_t *ret_score,
			  uint8_t *ret_move)
{
	int8_t *lo = malloc(s->nnodes), *hi = malloc(s->nnodes);
	int rc = 0;

	if (!lo || !hi) {
		free(lo);
		free(hi);
		return GERR_NOMEM;
	}
	if (osp_bounds(s, flo, fhi, lo, hi))
		rc = GERR_VERIFY;
	for (size_t r = 0; rc == 0 && r < s->nroots; r++) {
		const struct osp_node *nd = &s->node[r];
		int sc = lo[r], mv = OTHELLO_MOVE_NONE;
		if (lo[r] != hi[r]) {
			rc = GERR_AGAIN;
			break;
		}
		/* The lowest square surely reaching the score, every lower
		 * one surely below it. */
		for (uint32_t k = 0; nd->kind == OSP_INNER && k < nd->n; k++) {
			const struct osp_edge *e = &s->edge[nd->first + k];
			if (-hi[e->child] == sc) {
				mv = e->move;
				break;
			}
			if (-lo[e->child] >= sc) {
				rc = GERR_AGAIN;
				break;
			}
		}
		if (nd->kind == OSP_INNER && mv == OTHELLO_MOVE_NONE)
			rc = GERR_AGAIN;
		ret_score[r] = (int8_t)sc;
		ret_move[r] = (uint8_t)mv;
	}
	free(lo);
	free(hi);
	return rc;
}

int othello_split_of(const struct othello_job *j, struct othello_split **ret,
		     struct othello_pos **ret_roots, size_t *ret_n, char *err,
		     size_t errlen)
{
	const json_t *roots = json_object_get(j->split, "roots"), *e;
	json_int_t depth = json_integer_value(json_object_get(j->split,
							       "depth"));
	struct othello_pos *pos;
	size_t n = json_array_size(roots), i;
	int rc;

	if (!j->split) {
		*ret = NULL;
		return 0;
	}
	if (n < 1 || n > OTHELLO_SPLIT_MAX_ROOTS || depth < 1 ||
	    depth > OTHELLO_SPLIT_MAX_DEPTH) {
		gerr_printf(err, errlen, "othello: params' split needs 1..%d "
			    "roots and depth 1..%d", OTHELLO_SPLIT_MAX_ROOTS,
			    OTHELLO_SPLIT_MAX_DEPTH);
		return GERR_INVAL;
	}
	pos = malloc(n * sizeof(*pos));
	if (!pos)
		return GERR_NOMEM;
	json_array_foreach(roots, i, e) {
		const char *b = json_string_value(json_array_get(e, 0));
		const json_t *x = json_array_get(e, 1);
		char why[WL_ERRLEN];
		rc = b ? othello_parse_line(b, strlen(b), &pos[i], why,
					    sizeof(why)) : GERR_INVAL;
		if (rc == 0 && json_is_integer(x)) {
			json_int_t v = json_integer_value(x);
			if (v < -64 || v > 64 || v & 1)
				rc = GERR_INVAL;
			pos[i].expected = (int8_t)v;
		} else if (rc == 0 && !json_is_null(x)) {
			rc = GERR_INVAL;
		}
		if (rc) {
			free(pos);
			gerr_printf(err, errlen, "othello: params' split root %zu "
				    "is no [position, expected]", i);
			return GERR_INVAL;
		}
	}
	rc = othello_split_build(pos, n, (int)depth, ret);
	if (rc) {
		free(pos);
		gerr_printf(err, errlen, "othello: cannot split the roots %lld "
			    "plies: %s", (long long)depth, gerr_str(rc));
		return rc;
	}
	if (ret_roots)
		*ret_roots = pos;
	else
		free(pos);
	if (ret_n)
		*ret_n = n;
	return 0;
}

int othello_split_scores(const json_t *answer, uint64_t n, int8_t *lo,
			 int8_t *hi)
{
	const char *f = json_string_value(json_object_get(answer, "frontier"));

	for (uint64_t k = 0; k < n; k++) {
		lo[k] = -64;
		hi[k] = 64;
	}
	if (!answer)
		return 0;
	if (!f || strlen(f) != 4 * n)
		return GERR_CORRUPT;
	for (uint64_t k = 0; k < n; k++) {
		unsigned l, h;
		for (int d = 0; d < 4; d++)
			if (!isxdigit((unsigned char)f[4 * k + d]))
				return GERR_CORRUPT;
		if (sscanf(f + 4 * k, "%2x%2x", &l, &h) != 2 || l > h || h > 64)
			return GERR_CORRUPT;
		lo[k] = (int8_t)(2 * (int)l - 64);
		hi[k] = (int8_t)(2 * (int)h - 64);
	}
	return 0;
}

int othello_split_window(int alpha, int beta, int score, int8_t *lo,
			 int8_t *hi)
{
	int l = score, h = score;

	if (score <= alpha)
		l = -64;
	else if (score >= beta)
		h = 64;
	if (l < *lo)
		l = *lo;
	if (h > *hi)
		h = *hi;
	if (l > h)
		return GERR_VERIFY;
	*lo = (int8_t)l;
	*hi = (int8_t)h;
	return 0;
}

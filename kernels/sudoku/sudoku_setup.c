/* sudoku_setup.c - a whole setup (definitions in sudoku.h): box shapes,
 * box codes and compatible boxes here, then the orbit tables
 * (sudoku_group.c), gangsters (sudoku_gangsters.c) and band counts and T
 * (sudoku_band.c); and the parallel loop the builders share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_internal.h"

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

/* ---- codes ------------------------------------------------------------- */

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

int sudoku_setup_build(int R, int C, unsigned what, int threads,
		       struct sudoku_setup **ret, char *err, size_t errlen)
{
	struct sudoku_setup *S = calloc(1, sizeof(*S));
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
	if (rc == 0)
		rc = sudoku_orbits_build(S);
	if (rc == 0)
		rc = sudoku_gangsters_find(S);
	if (rc == 0 && C == 3)
		rc = build_compat(S);
	if (rc)
		goto fail;
	S->Kp = (S->K + 1 + 3) & ~3u;
	if (what & SUDOKU_BUILD_CNT) {
		rc = sudoku_cnt_fill(S, threads, err, errlen);
		if (rc)
			goto fail;
	}
	if ((what & SUDOKU_BUILD_T) && C == 3) {
		rc = sudoku_T_fill(S, threads);
		if (rc)
			goto fail;
	}
	*ret = S;
	return 0;
fail:
	if (err && errlen && !err[0])
		snprintf(err, errlen, "sudoku: setup %dx%d failed: %s", R, C,
			 gerr_str(rc));
	sudoku_setup_free(S);
	return rc;
}

void sudoku_setup_free(struct sudoku_setup *S)
{
	if (!S)
		return;
	sudoku_otab_free(S->root, S->K);
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

/* graveler_forge.c - a lazy or lying Graveler worker's result, for system
 * tests.
 *
 * usage: graveler_forge SEED BEGIN END KEEP OUT
 *        graveler_forge SEED BEGIN END move300 OUT
 *        graveler_forge SEED BEGIN END reshape:B0:MULT:D0,D1,... OUT
 *
 * move300: the lease computed honestly, then 300 battles moved from bin 57
 * into 56 and 58 (count and count sum kept; the records unchanged).
 * reshape: computed honestly, then MULT * (D0, D1, ...) added to bins
 * B0, B0 + 1, ... (a vector of the sketch's kernel: tests/system/
 * sketch_lattice.py), records unchanged.
 *
 * Computes KEEP (a fraction in (0, 1]) of the lease's segments honestly,
 * chosen at random, and fabricates the rest consistently: every fabricated
 * segment claims a typical max for its size (below the honest maximum) and
 * the sum its battles would have on average; the histogram is Binomial(231, 1/4) expectations
 * (the attack of issue 20), adjusted so that every decoder invariant holds
 * (total, top bin == max, sums adding up). Writes the raw result bytes (the
 * GRVR format, before the blob wrapper) to OUT. Exit 0 or 2 (usage) or 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "mix.h"
#include "graveler/graveler.h"

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end != '\0' ? -1 : 0;
}

/* Battles of segment k inside the lease. */
static uint64_t seg_battles(const struct graveler_acc *a, uint32_t k)
{
	uint64_t lo = graveler_segment_chunk(a->begin, a->end, k) *
		      GRAVELER_CHUNK;
	uint64_t hi = graveler_segment_chunk(a->begin, a->end, k + 1) *
		      GRAVELER_CHUNK;

	lo = lo < a->begin ? a->begin : lo;
	hi = hi > a->end ? a->end : hi;
	return hi - lo;
}

/* A typical max of n battles: the count whose upper tail holds about
 * half a battle of n. */
static uint32_t typical_max(uint64_t n)
{
	double tail = 0;
	uint32_t m = GRAVELER_TURNS;

	while (m > 0 && (tail += graveler_binom_pmf(m)) * (double)n < 0.5)
		m--;
	return m;
}

/* Histogram of expectations with the given total, top bin and count sum:
 * rounded expectations below max, one battle at max, the rest at 57, then
 * battles moved between bins 57 and 58 until the sum matches. */
static int fake_hist(struct graveler_acc *a, uint64_t target)
{
	uint64_t n = a->end - a->begin, total = 1, sum = a->max;
	int64_t d;

	memset(a->hist, 0, sizeof(a->hist));
	for (unsigned b = 0; b < a->max; b++) {
		a->hist[b] = (uint64_t)floor(graveler_binom_pmf(b) * (double)n);
		total += a->hist[b];
		sum += (uint64_t)b * a->hist[b];
	}
	a->hist[a->max] = 1;
	if (total > n || a->max <= 58)
		return -1;
	a->hist[57] += n - total;
	sum += 57 * (n - total);
	d = (int64_t)(target - sum);
	if ((d > 0 && a->hist[57] < (uint64_t)d) ||
	    (d < 0 && a->hist[58] < (uint64_t)-d))
		return -1;
	a->hist[57] -= (uint64_t)d;
	a->hist[58] += (uint64_t)d;
	return 0;
}

static int write_out(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "graveler_forge: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

/* move300 and reshape: an honest run, then the histogram alone changed;
 * the result must still decode (only the sketch may refuse it). */
static int lie(char **argv)
{
	uint64_t seed, begin, end, b0, mult;
	struct graveler_acc *a = malloc(sizeof(*a));
	char err[256], *p;
	void *buf = NULL;
	size_t len;
	int rc;

	if (!a || parse_u64(argv[1], &seed) || parse_u64(argv[2], &begin) ||
	    parse_u64(argv[3], &end) || begin >= end ||
	    end - begin > GRAVELER_MAX_LEASE)
		return 2;
	graveler_acc_init(a, seed, begin, end);
	if (graveler_cpu_step(a, end, 2) != 0)
		return 1;
	if (strcmp(argv[4], "move300") == 0) {
		if (a->hist[57] < 300)
			return 1;
		a->hist[57] -= 300;
		a->hist[56] += 150;
		a->hist[58] += 150;
	} else {
		b0 = strtoull(argv[4] + 8, &p, 10);
		if (*p != ':')
			return 2;
		mult = strtoull(p + 1, &p, 10);
		if (*p != ':')
			return 2;
		for (uint64_t b = b0; *p && b < GRAVELER_BINS; b++) {
			long long d = strtoll(p + 1, &p, 10);
			int64_t nv = (int64_t)a->hist[b] + d * (int64_t)mult;
			if (nv < 0 || (*p && *p != ','))
				return 2;
			a->hist[b] = (uint64_t)nv;
		}
	}
	rc = graveler_result_encode(a, &buf, &len);
	if (rc == 0)
		rc = graveler_result_decode(buf, len, a, err, sizeof(err));
	printf("%s\n", rc == 0 ? "decodes" : err);
	if (rc == 0 || rc == GERR_CORRUPT)
		rc = write_out(argv[5], buf, len);
	free(buf);
	free(a);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t seed, begin, end, rng = 0x6c617a79;
	double keep;
	struct graveler_acc *a;
	uint8_t *honest;
	uint64_t target = 0;
	void *buf;
	size_t len;

	if (argc == 6 && (strcmp(argv[4], "move300") == 0 ||
			  strncmp(argv[4], "reshape:", 8) == 0))
		return lie(argv);
	if (argc != 6 || parse_u64(argv[1], &seed) ||
	    parse_u64(argv[2], &begin) || parse_u64(argv[3], &end) ||
	    (keep = atof(argv[4])) <= 0 || keep > 1 || begin >= end ||
	    end - begin > GRAVELER_MAX_LEASE) {
		fprintf(stderr, "usage: graveler_forge SEED BEGIN END KEEP OUT "
			"(0 < KEEP <= 1, END - BEGIN <= 2^40)\n");
		return 2;
	}
	a = malloc(sizeof(*a));
	honest = calloc(GRAVELER_SEGMENTS, 1);
	if (!a || !honest)
		return 1;
	graveler_acc_init(a, seed, begin, end);
	/* The honest part: a random KEEP of the segments, at least one. */
	uint32_t want = (uint32_t)ceil(keep * a->nseg), have = 0;
	while (have < want) {
		rng += MIX_GOLDEN;
		uint32_t k = want == a->nseg ? have
					     : (uint32_t)(mix64(rng) % a->nseg);
		struct graveler_rec r;
		if (honest[k])
			continue;
		honest[k] = 1;
		have++;
		graveler_segment_eval(seed, begin, end, k, &r);
		a->seg_max[k] = (uint8_t)r.max;
		a->seg_sum[k] = r.sum;
		a->seg_sk[k] = r.sketch;
		graveler_acc_take_max(a, r.max, r.first);
	}
	/* The rest: below the honest max, average sums. */
	for (uint32_t k = 0; k < a->nseg; k++) {
		if (!honest[k]) {
			uint64_t nb = seg_battles(a, k);
			uint32_t m = typical_max(nb);
			if (m >= a->max)
				m = a->max - 1;
			uint64_t s = (uint64_t)llround(57.75 * (double)nb);
			if (s < m)
				s = m;
			if (s > (uint64_t)m * nb)
				s = (uint64_t)m * nb;
			a->seg_max[k] = (uint8_t)m;
			a->seg_sum[k] = (uint32_t)s;
			a->seg_sk[k] = (uint32_t)nb * graveler_sketch_word(57);
		}
		target += a->seg_sum[k];
	}
	a->next = end;
	if (fake_hist(a, target) != 0) {
		fprintf(stderr, "graveler_forge: lease too small to fake\n");
		return 1;
	}
	/* The sketches add up: the first fabricated segment absorbs it. */
	{
		uint32_t rsk = 0, k0 = UINT32_MAX;
		for (uint32_t k = 0; k < a->nseg; k++) {
			rsk += a->seg_sk[k];
			if (!honest[k] && k0 == UINT32_MAX)
				k0 = k;
		}
		if (k0 != UINT32_MAX)
			a->seg_sk[k0] += graveler_hist_sketch(a->hist) - rsk;
	}
	if (graveler_result_encode(a, &buf, &len) != 0)
		return 1;
	/* The forgery must pass every decoder check: only recomputation may
	 * refuse it. */
	char err[256];
	if (graveler_result_decode(buf, len, a, err, sizeof(err)) != 0) {
		fprintf(stderr, "graveler_forge: %s\n", err);
		return 1;
	}
	if (write_out(argv[5], buf, len))
		return 1;
	printf("%u of %u segments honest, max %u first %" PRIu64 "\n", have,
	       a->nseg, a->max, a->first);
	free(buf);
	free(honest);
	free(a);
	return 0;
}

/* graveler_forge.c - a lazy Graveler worker's result, for system tests.
 *
 * usage: graveler_forge SEED BEGIN END KEEP OUT
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

int main(int argc, char **argv)
{
	uint64_t seed, begin, end, rng = 0x6c617a79;
	double keep;
	struct graveler_acc *a;
	uint8_t *honest;
	uint64_t target = 0;
	void *buf;
	size_t len;
	FILE *f;

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
		uint32_t m, s;
		uint64_t first;
		if (honest[k])
			continue;
		honest[k] = 1;
		have++;
		graveler_segment_eval(seed, begin, end, k, &m, &s, &first);
		a->seg_max[k] = (uint8_t)m;
		a->seg_sum[k] = s;
		graveler_acc_take_max(a, m, first);
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
		}
		target += a->seg_sum[k];
	}
	a->next = end;
	if (fake_hist(a, target) != 0) {
		fprintf(stderr, "graveler_forge: lease too small to fake\n");
		return 1;
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
	f = fopen(argv[5], "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "graveler_forge: cannot write %s\n", argv[5]);
		return 1;
	}
	printf("%u of %u segments honest, max %u first %" PRIu64 "\n", have,
	       a->nseg, a->max, a->first);
	free(buf);
	free(honest);
	free(a);
	return 0;
}

/* bench_blob.c - time blob_encode and blob_decode on a payload shaped like
 * an Officers result (uint16 values, mostly small, skewed).
 *
 * usage: bench_blob [-m MB] [-r runs]     (defaults: 128 MB, 3 runs)
 *
 * Prints the median of the runs for blob_encode (chunked deflate on up to
 * 16 threads from 16 MiB), for a single compress2 at the same level (the
 * reference: what blob_encode did before), for blob_decode (a version-2
 * blob: its chunks inflated on as many threads), for one sequential
 * inflate of the same zlib stream (what blob_decode did before), and the
 * number of threads blob_threads says both take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "bench_util.h"
#include "blob.h"
#include "le.h"

/* Chunks in a version-2 blob's index (blob.h), 0 in a version-1 blob. */
static size_t chunks_of(const uint8_t *b)
{
	if (b[4] != 2)
		return 0;
	return le_get32(b + BLOB_HEADER_LEN + 4);
}

int main(int argc, char **argv)
{
	size_t mb = 128, runs = 3, n;
	double te[16], tc[16], td[16], ts[16];
	uint16_t *v;
	uint32_t x = 1;
	int opt;

	while ((opt = getopt(argc, argv, "m:r:")) != -1) {
		if (opt == 'm')
			mb = (size_t)atoi(optarg);
		else if (opt == 'r')
			runs = (size_t)atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-m MB] [-r runs]\n", argv[0]);
			return 2;
		}
	}
	if (mb < 1 || mb > 1024 || runs < 1 || runs > 16) {
		fprintf(stderr, "bench_blob: -m 1..1024, -r 1..16\n");
		return 2;
	}
	n = mb << 20;
	v = malloc(n);
	if (!v)
		return 1;
	/* Geometric-like values below 331, as Grundy values are. */
	for (size_t i = 0; i < n / 2; i++) {
		unsigned k = 0;
		x = x * 1103515245u + 12345u;
		double u = (double)(x >> 8) / 16777216.0;
		while (u < 0.98 && k < 330) {
			u /= 0.985;
			k++;
		}
		v[i] = (uint16_t)k;
	}
	uint8_t *b = NULL, *g = NULL, *c = malloc(compressBound((uLong)n));
	size_t blen = 0, glen = 0;
	uLongf clen = 0;
	struct blob_info info;
	char err[160];
	if (!c)
		return 1;
	for (size_t r = 0; r < runs; r++) {
		double t0 = gclock_mono();
		free(b);
		if (blob_encode(BLOB_RESULT, "officers", 1, 1, v, n, &b, &blen))
			return 1;
		te[r] = gclock_mono() - t0;
		t0 = gclock_mono();
		clen = compressBound((uLong)n);
		if (compress2(c, &clen, (const Bytef *)v, (uLong)n, Z_BEST_SPEED) != Z_OK)
			return 1;
		tc[r] = gclock_mono() - t0;
		t0 = gclock_mono();
		free(g);
		if (blob_decode(b, blen, &info, &g, &glen, err, sizeof(err))) {
			fprintf(stderr, "bench_blob: %s\n", err);
			return 1;
		}
		td[r] = gclock_mono() - t0;
		/* The same stream, past the chunk index, inflated in one go. */
		size_t off = BLOB_HEADER_LEN +
			     (chunks_of(b) ? 8 + 4 * chunks_of(b) : 0);
		uLongf slen = (uLongf)n;
		t0 = gclock_mono();
		if (uncompress(g, &slen, b + off, (uLong)(blen - off)) != Z_OK ||
		    slen != n)
			return 1;
		ts[r] = gclock_mono() - t0;
	}
	qsort(te, runs, sizeof(double), bench_cmp_double);
	qsort(tc, runs, sizeof(double), bench_cmp_double);
	qsort(td, runs, sizeof(double), bench_cmp_double);
	qsort(ts, runs, sizeof(double), bench_cmp_double);
	printf("payload %zu MB (Officers-like uint16), %ld CPUs online, median of %zu\n",
	       mb, sysconf(_SC_NPROCESSORS_ONLN), runs);
	printf("blob_encode: %.3f s -> %zu bytes (%.0f MB/s)\n", te[runs / 2],
	       blen, (double)n / 1e6 / te[runs / 2]);
	printf("reference, one compress2 at level 1: %.3f s -> %lu bytes\n",
	       tc[runs / 2], (unsigned long)clen);
	printf("blob_decode: %.3f s\n", td[runs / 2]);
	printf("reference, one sequential inflate of the stream: %.3f s\n",
	       ts[runs / 2]);
	printf("threads: %u for blob_encode and blob_decode (blob version %u, "
	       "%zu chunks)\n", blob_threads(n), (unsigned)b[4], chunks_of(b));
	free(v);
	free(b);
	free(g);
	free(c);
	return 0;
}

/* test_par.c - the parallel for (every chunk once) and big_copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bigmem.h"
#include "par.h"
#include "unit_main.h"

static void count_one(void *arg, size_t i)
{
	atomic_uint *seen = arg;

	atomic_fetch_add(&seen[i], 1);
}

static void test_every_chunk_once(void **state)
{
	static atomic_uint seen[1000];
	const size_t threads[] = {1, 2, PAR_THREADS, PAR_THREADS + 5};

	(void)state;
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		for (size_t i = 0; i < 1000; i++)
			atomic_init(&seen[i], 0);
		par_run(count_one, seen, 1000, threads[t]);
		for (size_t i = 0; i < 1000; i++)
			assert_int_equal(atomic_load(&seen[i]), 1);
	}
	par_run(count_one, seen, 0, 4); /* nothing to do */
}

static void test_threads_worth(void **state)
{
	(void)state;
	assert_int_equal(par_threads(0, 0), 1);
	assert_int_equal(par_threads(10, 1000), 1); /* less than a chunk */
	assert_true(par_threads(1000, (uint64_t)1 << 34) <= PAR_THREADS);
	assert_true(par_threads(3, (uint64_t)1 << 34) <= 3);
}

static void test_big_copy(void **state)
{
	/* below the threshold, a whole number of chunks, and a ragged end */
	const size_t lens[] = {0, 1000, BIG_COPY_MIN - 1, 5 * PAR_CHUNK,
			       5 * PAR_CHUNK + 12345};
	uint8_t *src = malloc(lens[4]), *dst = big_alloc(lens[4] + 1);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	for (size_t i = 0; i < lens[4]; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		src[i] = (uint8_t)(x >> 56);
	}
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		memset(dst, 0xa5, lens[4] + 1);
		big_copy(dst, src, lens[k]);
		if (lens[k])
			assert_memory_equal(dst, src, lens[k]);
		assert_int_equal(dst[lens[k]], 0xa5); /* nothing past len */
	}
	free(src);
	free(dst);
}

UNIT_MAIN(cmocka_unit_test(test_every_chunk_once),
	cmocka_unit_test(test_threads_worth),
	cmocka_unit_test(test_big_copy))

/* test_bigmem.c - common/bigmem.c: big_alloc's buffers (any size, zero
 * included, usable and freed with free(); 2 MiB-aligned from 2 MiB on;
 * NULL when the size cannot be had), and big_copy equal to memcpy on
 * either side of BIG_COPY_MIN, for whole and partial chunks and unaligned
 * ends, writing nothing past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bigmem.h"
#include "par.h"
#include "unit_main.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* Under AddressSanitizer an impossible allocation returns NULL, as it does
 * without it, rather than ending the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_alloc(void **state)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, HUGE_PAGE - 1, HUGE_PAGE,
					HUGE_PAGE + 1, 3 * HUGE_PAGE + 12345 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint8_t *p = big_alloc(n);

		assert_non_null(p);
		if (n >= HUGE_PAGE)
			assert_int_equal((uintptr_t)p % HUGE_PAGE, 0);
		/* Every byte is ours to write and read. */
		memset(p, 0xab, n);
		if (n) {
			assert_int_equal(p[0], 0xab);
			assert_int_equal(p[n - 1], 0xab);
		}
		free(p);
	}
	/* Out of reach: NULL, not a crash. */
	assert_null(big_alloc(SIZE_MAX - HUGE_PAGE));
	assert_null(big_alloc(SIZE_MAX / 2));
	/* The caller frees with free(), which takes NULL. */
	free(big_alloc(0));
	free(NULL);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed;

	for (size_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		p[i] = (uint8_t)(x >> 24);
	}
}

static void check_copy(size_t len, size_t src_off, size_t dst_off)
{
	size_t room = len + 64;
	uint8_t *src = big_alloc(room), *dst = big_alloc(room);

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, room, (uint32_t)len);
	memset(dst, 0x5c, room);
	big_copy(dst + dst_off, src + src_off, len);
	if (memcmp(dst + dst_off, src + src_off, len) != 0)
		fail_msg("copy of %zu bytes (src +%zu, dst +%zu) differs", len,
			 src_off, dst_off);
	/* Nothing before or after. */
	for (size_t i = 0; i < dst_off; i++)
		assert_int_equal(dst[i], 0x5c);
	for (size_t i = dst_off + len; i < room; i++)
		assert_int_equal(dst[i], 0x5c);
	free(src);
	free(dst);
}

static void test_copy(void **state)
{
	static const size_t lens[] = {
		0, 1, 4096, BIG_COPY_MIN - 1,        /* one memcpy */
		BIG_COPY_MIN,                        /* threads, whole chunks */
		BIG_COPY_MIN + 1,                    /* a last chunk of 1 byte */
		BIG_COPY_MIN + 3 * PAR_CHUNK / 2 + 17,
	};

	(void)state;
	assert_true(BIG_COPY_MIN % PAR_CHUNK == 0);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		check_copy(lens[i], 0, 0);
		check_copy(lens[i], 3, 29); /* unaligned both ends */
	}
}

/* Threads see the same bytes the caller wrote just before. */
static void test_copy_repeated(void **state)
{
	size_t len = BIG_COPY_MIN + PAR_CHUNK + 5;
	uint8_t *a = big_alloc(len), *b = big_alloc(len);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (uint32_t round = 0; round < 4; round++) {
		fill(a, len, round + 100);
		big_copy(b, a, len);
		assert_memory_equal(a, b, len);
		/* And back the other way, into the first. */
		fill(b, len, round + 200);
		big_copy(a, b, len);
		assert_memory_equal(a, b, len);
	}
	free(a);
	free(b);
}

UNIT_MAIN(cmocka_unit_test(test_alloc),
	cmocka_unit_test(test_copy),
	cmocka_unit_test(test_copy_repeated))

/* bigmem.c - huge-page-backed allocation and threaded copies of big
 * buffers (bigmem.h). */
#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "par.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *big_alloc(size_t len)
{
	void *p = NULL;

	if (len < HUGE_PAGE)
		return malloc(len ? len : 1);
	if (posix_memalign(&p, HUGE_PAGE, len) != 0)
		return NULL;
	madvise(p, len & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
	return p;
}

struct copy_job {
	uint8_t *dst;
	const uint8_t *src;
	size_t len;
};

static void copy_one(void *arg, size_t i)
{
	const struct copy_job *c = arg;
	size_t off = i * PAR_CHUNK;
	size_t n = c->len - off < PAR_CHUNK ? c->len - off : PAR_CHUNK;

	memcpy(c->dst + off, c->src + off, n);
}

void big_copy(void *dst, const void *src, size_t len)
{
	struct copy_job c = { dst, src, len };
	size_t n = (len + PAR_CHUNK - 1) / PAR_CHUNK;

	if (len < BIG_COPY_MIN) {
		memcpy(dst, src, len);
		return;
	}
	par_run(copy_one, &c, n, par_threads(n, len));
}

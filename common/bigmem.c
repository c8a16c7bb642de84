/* bigmem.c - huge-page-backed allocation of big buffers (bigmem.h). */
#include "bigmem.h"

#include <stdlib.h>
#include <sys/mman.h>

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

/* bigmem.h - allocation and copies of buffers of tens or hundreds of MB
 * written once (lease results, their blobs and copies).
 *
 * In 4 KiB pages the first touch of such a buffer costs more than filling
 * it: 33 K page faults for a 134 MB Officers result, more in a VM. A
 * buffer of 2 MiB or more is therefore 2 MiB-aligned and asks for
 * transparent huge pages (granted where the kernel's setting is "madvise"
 * or "always"; a hint only, ignored elsewhere).
 *
 * Ownership: the caller frees the buffer with free(). Returns NULL when out
 * of memory. Thread-safe.
 */
#ifndef GPUD_BIGMEM_H
#define GPUD_BIGMEM_H

#include <stddef.h>

void *big_alloc(size_t len);

/* memcpy(dst, src, len) (not overlapping), on threads from BIG_COPY_MIN
 * bytes on: one thread copies about 10 GB/s, less into fresh pages, and
 * a lease's result is copied on the way from one run to the next. */
#define BIG_COPY_MIN ((size_t)16 << 20)
void big_copy(void *dst, const void *src, size_t len);

#endif

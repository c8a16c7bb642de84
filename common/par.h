/* par.h - a parallel for over independent chunks of a big buffer, on
 * short-lived threads (blob compression, big copies).
 *
 * par_run calls fn(arg, i) once for every i < n, on up to nt threads (at
 * most PAR_MAX_THREADS), the caller's included. Chunks are handed out in order as threads come free;
 * a thread that cannot be started only leaves more for the others, so the
 * work is done even if none can. fn must touch only its own chunk's output.
 * par_threads says how many threads n chunks of bytes in all are worth:
 * one per online CPU, at most PAR_THREADS, none without a chunk, and none
 * for less than PAR_CHUNK bytes (starting one costs more than that).
 */
#ifndef GPUD_PAR_H
#define GPUD_PAR_H

#include <stddef.h>
#include <stdint.h>

#define PAR_CHUNK (4u << 20)
#define PAR_THREADS 16
#define PAR_MAX_THREADS 64

typedef void par_fn(void *arg, size_t i);

void par_run(par_fn *fn, void *arg, size_t n, size_t nt);
size_t par_threads(size_t n, uint64_t bytes);

#endif

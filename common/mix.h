/* mix.h - the splitmix64 finaliser, shared by host C and CUDA device code.
 *
 * mix64 is the output function of Vigna's splitmix64 generator (Stafford's
 * "Mix13" variant of the MurmurHash3 finaliser): xor-shifts and two odd
 * multiplies, each step invertible, so it is a bijection of 64-bit words
 * that spreads every input bit over the whole output. The workloads use it
 * to derive independent stream seeds from (job seed, index), to pick
 * samples, and to hash keys. Several result formats depend on its exact
 * values: never change it.
 *
 * Header only. Under nvcc it is __host__ __device__ and always inlined; in
 * C it is a plain static inline function.
 */
#ifndef GPUD_MIX_H
#define GPUD_MIX_H

#include <stdint.h>

#ifdef __CUDACC__
#define MIX_HD static __host__ __device__ __forceinline__
#else
#define MIX_HD static inline
#endif

MIX_HD uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#undef MIX_HD

/* splitmix64's increment (2^64 over the golden ratio, odd): a counter
 * stepped by it and passed through mix64 gives splitmix64's stream. */
#define MIX_GOLDEN 0x9e3779b97f4a7c15ull

#endif

/* othello_stable.c - oth_stable (othello_deep.h): the stable discs, by
 * othello_stable.h's fixpoint (the AVX2 version where this file is built
 * for AVX2). */
#include "othello_deep.h"
#include "othello_stable.h"

uint64_t oth_stable(uint64_t P, uint64_t O)
{
	return oth_stable_inline(P, O);
}

/* sudoku_published.c - published grid counts, for one line of information
 * beside a finished answer ("agrees with the published count").
 *
 * Nothing decides with this table: whether a job passes comes from its own
 * checks (verify, finish); tests assert these numbers themselves. Shapes
 * are oriented (sudoku.h). */
#include <stddef.h>

#include "sudoku_internal.h"

static const struct {
	int R, C;
	const char *total;
} published[] = {
	{ 2, 2, "288" },
	{ 3, 2, "28200960" },
	{ 2, 3, "28200960" },
	{ 4, 2, "29136487207403520" },
	{ 3, 3, "6670903752021072936960" },
	{ 5, 2, "1903816047972624930994913280000" },
	{ 4, 3, "81171437193104932746936103027318645818654720000" },
};

const char *sudoku_published_total(int R, int C)
{
	for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++)
		if (published[i].R == R && published[i].C == C)
			return published[i].total;
	return NULL;
}

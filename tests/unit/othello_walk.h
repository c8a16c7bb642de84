/* othello_walk.h - the plainest flips a test compares against: each
 * direction walked square by square (tests only). */
#ifndef GPUD_TEST_OTHELLO_WALK_H
#define GPUD_TEST_OTHELLO_WALK_H

#include <stdint.h>

/* Flips by walking each direction square by square. */
static inline uint64_t flips_walk(uint64_t P, uint64_t O, int sq)
{
	static const int dr[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
	static const int dc[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
	uint64_t all = 0;

	if ((P | O) >> sq & 1)
		return 0;
	for (int d = 0; d < 8; d++) {
		int r = sq / 8 + dr[d], c = sq % 8 + dc[d];
		uint64_t f = 0;
		while (r >= 0 && r < 8 && c >= 0 && c < 8 &&
		       (O >> (8 * r + c) & 1)) {
			f |= 1ull << (8 * r + c);
			r += dr[d];
			c += dc[d];
		}
		if (f && r >= 0 && r < 8 && c >= 0 && c < 8 &&
		    (P >> (8 * r + c) & 1))
			all |= f;
	}
	return all;
}

#endif

/* officers_ref.c - the reference: G(n) by the definition, every pair, a
 * fresh seen-table per position. O(n^2); the fast paths are tested against
 * it. */
#include <string.h>

#include "gerr.h"
#include "officers.h"

int officers_ref_values(uint16_t *out, uint64_t n)
{
	unsigned char seen[OFFICERS_VMAX * 2];

	for (uint64_t x = 0; x < n; x++) {
		unsigned m = 0;

		if (x < 2) {
			out[x] = 0;
			continue;
		}
		memset(seen, 0, sizeof(seen));
		for (uint64_t a = 0; a <= (x - 1) / 2; a++)
			seen[out[a] ^ out[x - 1 - a]] = 1;
		while (seen[m])
			m++;
		if (m >= OFFICERS_VMAX)
			return GERR_UNSUPPORTED;
		out[x] = (uint16_t)m;
	}
	return 0;
}

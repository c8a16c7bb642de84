/* sudoku_wide.c - unsigned 256-bit arithmetic (see sudoku_wide.h). */
#include <string.h>

#include "sudoku_wide.h"

typedef unsigned __int128 u128;

struct u256 u256_of(uint64_t lo, uint64_t hi)
{
	struct u256 r = { { lo, hi, 0, 0 } };
	return r;
}

int u256_is_zero(const struct u256 *a)
{
	return (a->w[0] | a->w[1] | a->w[2] | a->w[3]) == 0;
}

int u256_cmp(const struct u256 *a, const struct u256 *b)
{
	for (int i = 3; i >= 0; i--)
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	return 0;
}

int u256_add(struct u256 *a, const struct u256 *b)
{
	u128 c = 0;
	for (int i = 0; i < 4; i++) {
		c += (u128)a->w[i] + b->w[i];
		a->w[i] = (uint64_t)c;
		c >>= 64;
	}
	return c != 0;
}

int u256_mul_u64(struct u256 *a, uint64_t m)
{
	u128 c = 0;
	for (int i = 0; i < 4; i++) {
		c += (u128)a->w[i] * m;
		a->w[i] = (uint64_t)c;
		c >>= 64;
	}
	return c != 0;
}

int u256_mul(const struct u256 *a, const struct u256 *b, struct u256 *ret)
{
	uint64_t r[8] = { 0 };
	int ovf = 0;

	for (int i = 0; i < 4; i++) {
		u128 c = 0;
		for (int j = 0; j < 4; j++) {
			c += (u128)a->w[i] * b->w[j] + r[i + j];
			r[i + j] = (uint64_t)c;
			c >>= 64;
		}
		r[i + 4] = (uint64_t)c;
	}
	for (int i = 4; i < 8; i++)
		if (r[i])
			ovf = 1;
	memcpy(ret->w, r, sizeof(ret->w));
	return ovf;
}

uint64_t u256_div_u64(struct u256 *a, uint64_t d)
{
	u128 rem = 0;
	for (int i = 3; i >= 0; i--) {
		u128 cur = (rem << 64) | a->w[i];
		a->w[i] = (uint64_t)(cur / d);
		rem = cur % d;
	}
	return (uint64_t)rem;
}

void u256_to_dec(const struct u256 *a, char *buf)
{
	struct u256 t = *a;
	char tmp[U256_DECLEN];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + u256_div_u64(&t, 10));
	} while (!u256_is_zero(&t));
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

int u256_from_dec(const char *s, struct u256 *ret)
{
	struct u256 r = { { 0, 0, 0, 0 } };

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		struct u256 d;
		if (*s < '0' || *s > '9')
			return -1;
		d = u256_of((uint64_t)(*s - '0'), 0);
		if (u256_mul_u64(&r, 10) || u256_add(&r, &d))
			return -1;
	}
	*ret = r;
	return 0;
}

int u256_bits(const struct u256 *a)
{
	for (int i = 3; i >= 0; i--)
		if (a->w[i])
			return 64 * i + 64 - __builtin_clzll(a->w[i]);
	return 0;
}

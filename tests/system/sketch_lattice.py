"""Short vectors of the Graveler sketch's kernel (kernels/graveler/graveler.h).

A change d of a lease's histogram (d[b] battles added to bin b) that keeps
the battle count, the count sum and the sketch (sum of d[b] * word(b) mod
2^32) is invisible to the decoder's checks: the segment records need not
change. Those d form a lattice; LLL reduction finds short ones. Used by
test_blame_graveler.py (a reshape that passes verification) and to compute
the figures of the README's Security section:

    python3 tests/system/sketch_lattice.py [LO HI]

prints, for bins LO..HI-1, the shortest kernel vectors LLL found and the
battles each moves (its positive entries)."""
import sys
from fractions import Fraction

M64 = (1 << 64) - 1
SALT = 0x736B657463680001  # GRAVELER_SKETCH_SALT


def mix64(z):
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def word(n):
    """graveler_sketch_word(n)."""
    return mix64(SALT + n) >> 32


def lll(basis, delta=Fraction(3, 4)):
    """Textbook LLL on integer row vectors (exact rationals; small
    dimensions only)."""
    b = [list(r) for r in basis]
    n = len(b)

    def dot(u, v):
        return sum(x * y for x, y in zip(u, v))

    def gso():
        bs, mu = [], [[Fraction(0)] * n for _ in range(n)]
        for i in range(n):
            v = [Fraction(x) for x in b[i]]
            for j in range(i):
                mu[i][j] = dot(b[i], bs[j]) / dot(bs[j], bs[j])
                v = [x - mu[i][j] * y for x, y in zip(v, bs[j])]
            bs.append(v)
        return bs, mu

    bs, mu = gso()
    k = 1
    while k < n:
        for j in range(k - 1, -1, -1):
            q = round(mu[k][j])
            if q:
                b[k] = [x - q * y for x, y in zip(b[k], b[j])]
                bs, mu = gso()
        if dot(bs[k], bs[k]) >= (delta - mu[k][k - 1] ** 2) * dot(bs[k - 1], bs[k - 1]):
            k += 1
        else:
            b[k], b[k - 1] = b[k - 1], b[k]
            bs, mu = gso()
            k = max(k - 1, 1)
    return b


def kernel_vectors(lo, hi):
    """Reduced kernel vectors over bins lo..hi-1, shortest first: each a
    list of hi - lo integers (d[lo], ..., d[hi-1])."""
    m = hi - lo
    big = 1 << 48
    rows = []
    for i in range(m):
        b = lo + i
        rows.append([1 if j == i else 0 for j in range(m)] + [big, big * b, big * word(b)])
    rows.append([0] * m + [0, 0, big << 32])
    out = []
    for r in lll(rows):
        if r[m:] == [0, 0, 0] and any(r[:m]):
            d = r[:m]
            assert sum(d) == 0 and sum((lo + i) * x for i, x in enumerate(d)) == 0
            assert sum(word(lo + i) * x for i, x in enumerate(d)) % (1 << 32) == 0
            out.append(d)
    out.sort(key=lambda d: sum(x * x for x in d))
    return out


def main():
    lo, hi = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (50, 66)
    for d in kernel_vectors(lo, hi)[:5]:
        moved = sum(x for x in d if x > 0)
        print("bins %d..%d: %s  (%d battles moved)" % (lo, hi - 1, d, moved))


if __name__ == "__main__":
    main()

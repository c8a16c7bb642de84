#!/usr/bin/env python3
"""Check bench/sudoku-4x3/gangster-counts.txt.gz, the per-gangster counts of
the finished 4x3 job in the form `gpuctl export JOB counts` wrote then
(it writes the same rows as CSV now): the header line, 144,578 lines "INDEX W" with the indices 0, 1, ... in order,
every W a positive even integer (sudoku.h 7.), and the SHA-256 of the
uncompressed text that bench/sudoku-4x3/README.md records. Recomputing the
total needs members(g) and cnt(g) of every gangster (minutes of band
counts), so it is left to the README's recipe."""
import gzip
import hashlib
import os
import re
import sys

GANG = 144578
HEAD = "# sudoku 4x3 per-gangster counts: INDEX W; %d of %d gangsters\n" % (GANG, GANG)


def main():
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "bench", "sudoku-4x3")
    raw = gzip.open(os.path.join(bench, "gangster-counts.txt.gz"), "rb").read()
    readme = open(os.path.join(bench, "README.md"), encoding="utf-8").read()
    m = re.search(r"SHA-256 of the uncompressed file:\s*`?([0-9a-f]{64})", readme)
    if not m:
        sys.exit("README.md records no SHA-256 of the counts")
    if hashlib.sha256(raw).hexdigest() != m.group(1):
        sys.exit("SHA-256 differs from README.md's")
    text = raw.decode("ascii")
    if not text.startswith(HEAD):
        sys.exit("unexpected header: %r" % text.split("\n", 1)[0])
    lines = text[len(HEAD):].split("\n")
    if lines[-1] != "":
        sys.exit("the last line is not terminated")
    lines.pop()
    if len(lines) != GANG:
        sys.exit("%d lines, expected %d" % (len(lines), GANG))
    for i, line in enumerate(lines):
        idx, w = line.split(" ")
        if int(idx) != i or str(int(w)) != w or int(w) <= 0 or int(w) % 2:
            sys.exit("line %d: %r" % (i + 2, line))
    print("%d gangsters, SHA-256 as recorded" % GANG)


if __name__ == "__main__":
    main()

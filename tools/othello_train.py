#!/usr/bin/env python3
"""othello_train.py - fit the move-ordering evaluation's weights
(kernels/othello/othello_eval.w) to exact scores.

The committed othello_eval.w was made by (see bench/othello.md; the
positions are a function of the seeds and the scores exact, so the same
commands give the same file):
  tools/othello_traindata.sh /tmp/train.obf cpu:2 1 10:80000 11:60000 12:50000 13:25000 14:12000
  tools/othello_traindata.sh /tmp/train2.obf cpu:2 101 14:9000 15:4000
  tools/othello_traindata.sh /tmp/train3.obf cpu:2 201 15:7000 16:2000
  tools/othello_train.py /tmp/train.obf /tmp/train2.obf /tmp/train3.obf -o kernels/othello/othello_eval.w

Input: OBF lines "BOARD SIDE MOVE:+SCORE;" (tools/othello_traindata.sh, i.e.
`gpuctl result JOB` of --random jobs). Features and file format are those
of kernels/othello/othello_evalw.h: the pattern list below must stay equal
to OTH_EVALW_PATS (the fingerprint in the file checks it at build time).
Fit: per phase (a range of empties counts), least squares with a small L2
by conjugate gradient on the normal equations; every 10th position (in
file order, 0-based indices 9, 19, ...) is held out and only measured
(tools/bench/bench_othello_order takes the same ones). Prints the data size and
the train / held-out mean absolute error per phase, next to that of
predicting 0.
"""
import argparse
import gzip
import multiprocessing
import os
import struct
import sys
import time

import numpy as np

# (squares, turns) as in othello_evalw.h.
PATS = [
    ([0, 1, 2, 3, 4, 5, 6, 7, 9, 14], 4),
    ([0, 1, 2, 8, 9, 10, 16, 17, 18], 4),
    ([8, 9, 10, 11, 12, 13, 14, 15], 4),
    ([16, 17, 18, 19, 20, 21, 22, 23], 4),
    ([24, 25, 26, 27, 28, 29, 30, 31], 4),
    ([0, 9, 18, 27, 36, 45, 54, 63], 2),
    ([1, 10, 19, 28, 37, 46, 55], 4),
    ([2, 11, 20, 29, 38, 47], 4),
    ([3, 12, 21, 30, 39], 4),
    ([4, 13, 22, 31], 4),
]
MOB = 32
# Square classes, as OTH_EVALW_SQ_MASK.
SQ_MASK = [0x8100000000000081, 0x4281000000008142, 0x2400810000810024,
           0x1800008181000018, 0x0042000000004200, 0x0024420000422400,
           0x0018004242001800, 0x0000240000240000, 0x0000182424180000,
           0x0000001818000000]
SCALE = 16  # OTHELLO_EVAL_SCALE
MAX_PHASES = 16
HOLD = 10   # every HOLD-th line is held out


def turn(rot, s):
    r, c = s >> 3, s & 7
    return [s, 8 * (7 - c) + r, 8 * (7 - r) + (7 - c), 8 * c + (7 - r)][rot & 3]


def sym(g, s):
    if g >= 4:
        s = 8 * (s & 7) + (s >> 3)
    return turn(g & 3, s)


def fnv(data, h=2166136261):
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def fingerprint():
    h = fnv(struct.pack("<10Q", *SQ_MASK))
    for sq, rots in PATS:
        h = fnv(bytes([len(sq), rots]) + bytes(sq), h)
    return h


def fold_table(sq):
    """Folded id of every raw configuration (as othello_evalw.c)."""
    n = len(sq)
    raw = np.arange(3 ** n)
    digits = np.stack([(raw // 3 ** k) % 3 for k in range(n)], axis=1)
    canon = raw.copy()
    for g in range(8):
        to = [sym(g, s) for s in sq]
        if sorted(to) != sorted(sq):
            continue
        perm = [sq.index(t) for t in to]
        v = sum(digits[:, perm[k]] * 3 ** k for k in range(n))
        canon = np.minimum(canon, v)
    uniq = np.unique(canon)
    return np.searchsorted(uniq, canon), len(uniq)


def read_obf(paths):
    """States (N, 64) int8 from the side to move (0 empty, 1 own, 2 other),
    scores (N,), empties (N,)."""
    boards, scores = [], []
    for path in paths:
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
            for no, line in enumerate(f, 1):
                line = line.strip()
                if not line or line[:1] in (b"%", b"#"):
                    continue
                parts = line.split()
                try:
                    b, side, rest = parts[0], parts[1].rstrip(b";"), b"".join(parts[2:])
                    sc = int(rest.split(b":")[1].rstrip(b";"))
                except (IndexError, ValueError):
                    sys.exit("%s:%d: not an OBF line with a score" % (path, no))
                if len(b) != 64 or side not in (b"X", b"O") or sc % 2 or abs(sc) > 64:
                    sys.exit("%s:%d: bad OBF line" % (path, no))
                boards.append(b if side == b"X" else b.translate(bytes.maketrans(b"XO", b"OX")))
                scores.append(sc)
    if not boards:
        sys.exit("othello_train: no positions")
    a = np.frombuffer(b"".join(boards), dtype=np.uint8).reshape(-1, 64)
    st = np.zeros(a.shape, dtype=np.int8)
    st[a == ord("X")] = 1
    st[a == ord("O")] = 2
    if np.count_nonzero((a != ord("X")) & (a != ord("O")) & (a != ord("-"))):
        sys.exit("othello_train: boards must hold only X, O and -")
    return st, np.array(scores, dtype=np.float64), np.count_nonzero(st == 0, axis=1)


def moves(P, O):
    """oth_moves on uint64 arrays."""
    inner = O & np.uint64(0x7e7e7e7e7e7e7e7e)
    out = np.zeros_like(P)
    for sh, mask in ((1, inner), (8, O), (7, inner), (9, inner)):
        s = np.uint64(sh)
        for left in (True, False):
            shf = (lambda x: x << s) if left else (lambda x: x >> s)
            t = mask & shf(P)
            for _ in range(5):
                t |= mask & shf(t)
            out |= shf(t)
    return out & ~(P | O)


def popcount(x):
    b = np.ascontiguousarray(x, dtype="<u8").view(np.uint8).reshape(-1, 8)
    return np.unpackbits(b, axis=1).sum(1).astype(np.int64)


def features(st):
    """Column indices (N, K) of each position's features, the dense ones
    (N, 22: the two mobilities, each side's discs per square class), and
    the number of index columns."""
    cols, base = [], 0
    for sq, rots in PATS:
        fold, nf = fold_table(sq)
        for r in range(rots):
            at = [turn(r, s) for s in sq]
            raw = np.zeros(len(st), dtype=np.int64)
            for k in reversed(range(len(sq))):
                raw = raw * 3 + st[:, at[k]]
            cols.append(base + fold[raw])
        base += nf
    w = (np.uint64(1) << np.arange(64, dtype=np.uint64))
    P = np.bitwise_or.reduce(np.where(st == 1, w, np.uint64(0)), axis=1)
    O = np.bitwise_or.reduce(np.where(st == 2, w, np.uint64(0)), axis=1)
    mob = np.stack((np.minimum(popcount(moves(P, O)), MOB - 1),
                    np.minimum(popcount(moves(O, P)), MOB - 1)), axis=1)
    cols.append(base + mob[:, 0])
    cols.append(base + MOB + mob[:, 1])
    cols.append(np.full(len(st), base + 2 * MOB))
    sq = [popcount(B & np.uint64(m)) for B in (P, O) for m in SQ_MASK]
    dense = np.concatenate((mob, np.stack(sq, axis=1)), axis=1).astype(np.float64)
    return np.stack(cols, axis=1).astype(np.int32), dense, base + 2 * MOB + 1


def fit(X, D, y, ncol, l2, iters):
    """min |Xw + Du - y|^2 + l2 (|w|^2 + |u|^2) by conjugate gradient; X
    holds column indices of ones, D a few dense columns."""
    flat = X.ravel()
    k = X.shape[1]

    def xt(r):
        return np.concatenate((np.bincount(flat, weights=np.repeat(r, k), minlength=ncol),
                               D.T @ r))

    def a(v):
        return xt(v[:ncol][X].sum(1) + D @ v[ncol:]) + l2 * v

    w = np.zeros(ncol + D.shape[1])
    r = xt(y)
    p = r.copy()
    rr = r @ r
    rr0 = rr
    for _ in range(iters):
        ap = a(p)
        alpha = rr / (p @ ap)
        w += alpha * p
        r -= alpha * ap
        rn = r @ r
        if rn < 1e-10 * rr0:
            break
        p = r + (rn / rr) * p
        rr = rn
    return w[:ncol], w[ncol:]


_DATA = {}  # what the phase fits read (shared with forked workers)


def fit_phase(job):
    """Fit one phase: its weights (int16, as written) and the errors."""
    lo, hi = job
    d = _DATA
    X, D, y, emp, hold, ncol = d["X"], d["D"], d["y"], d["emp"], d["hold"], d["ncol"]
    t1 = time.time()
    sel = (emp >= lo) & (emp <= hi)
    tr, te = sel & ~hold, sel & hold
    if not tr.any():
        return None
    w, u = fit(X[tr], D[tr], y[tr], ncol, d["l2"], d["iters"])
    # The mobility tables hold a line through them plus what the data adds
    # to it: mobilities never seen (deeper positions have more moves) get
    # the line.
    m = np.arange(MOB)
    w[ncol - 2 * MOB - 1:ncol - MOB - 1] += u[0] * m
    w[ncol - MOB - 1:ncol - 1] += u[1] * m
    q = np.clip(np.rint(w * SCALE), -32768, 32767).astype("<i2")
    qs = np.clip(np.rint(u[2:] * SCALE), -32768, 32767).astype("<i2")

    def error(rows):  # |othello_eval - score| in discs
        v = q.astype(np.int64)[X[rows]].sum(1) + D[rows, 2:] @ qs.astype(np.float64)
        v = np.clip(v, -64 * SCALE, 64 * SCALE)
        return np.abs(v / SCALE - y[rows])
    err = error(te)
    row = ("%2d-%-2d %8d %5d %10.2f %9.2f %16.2f   (fit in %.1f s)"
           % (lo, hi, tr.sum(), te.sum(), error(tr).mean(),
              err.mean() if te.any() else float("nan"),
              np.abs(y[te]).mean() if te.any() else float("nan"), time.time() - t1))
    if hi > lo:
        row += "\n      held-out MAE by empties: " + ", ".join(
            "%d: %.2f" % (e, err[emp[te] == e].mean()) for e in range(lo, hi + 1)
            if (emp[te] == e).any())
    return np.concatenate((q, qs)), err.sum(), int(te.sum()), row


def parse_phases(spec, empties, least):
    """Ranges of empties: as given, else from the most empties down, each
    closed once it holds `least` positions (the last one joins the one
    above it when smaller), so that every phase has data enough."""
    if spec:
        out = []
        for part in spec.split(","):
            lo, _, hi = part.partition("-")
            try:
                out.append((int(lo), int(hi or lo)))
            except ValueError:
                sys.exit("othello_train: bad --phases '%s'" % spec)
    else:
        count = np.bincount(empties, minlength=61)
        out, hi, n = [], None, 0
        for e in range(60, -1, -1):
            if count[e] == 0:
                continue
            hi = e if hi is None else hi
            n += count[e]
            if n >= least:
                out.append((e, hi))
                hi, n = None, 0
        if hi is not None:
            if out:
                out[-1] = (int(empties.min()), out[-1][1])
            else:
                out.append((int(empties.min()), hi))
    out.sort()
    for i, (lo, hi) in enumerate(out):
        if not 0 <= lo <= hi <= 60 or (i and lo <= out[i - 1][1]):
            sys.exit("othello_train: bad --phases (ranges of empties, "
                     "increasing, not overlapping, within 0..60)")
    if len(out) > MAX_PHASES:
        sys.exit("othello_train: at most %d phases" % MAX_PHASES)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="+", help="OBF files with exact scores (.gz too)")
    ap.add_argument("-o", "--out", required=True, help="weights file to write")
    ap.add_argument("--phases", help="ranges of empties, e.g. 10-11,12-13,14-14"
                    " (default: from --phase-size)")
    ap.add_argument("--phase-size", type=int, default=300000,
                    help="positions a phase at least, from the most empties down"
                    " (default 300000), without --phases")
    ap.add_argument("--l2", type=float, default=16.0, help="L2 weight (default 16)")
    ap.add_argument("--iters", type=int, default=150, help="CG iterations at most (default 150)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="phases fitted at once (default: the CPUs)")
    args = ap.parse_args()
    t0 = time.time()
    print("command: tools/othello_train.py " + " ".join(sys.argv[1:]))
    st, y, emp = read_obf(args.data)
    X, D, ncol = features(st)
    hold = (np.arange(len(y)) % HOLD) == HOLD - 1
    phases = parse_phases(args.phases, emp, args.phase_size)
    print("data: %d positions (%d held out), empties %d..%d; features read in %.1f s"
          % (len(y), hold.sum(), emp.min(), emp.max(), time.time() - t0))
    print("phase    train  held  MAE train  MAE held  MAE of 0 (held)")
    _DATA.update(X=X, D=D, y=y, emp=emp, hold=hold, ncol=ncol, l2=args.l2,
                 iters=args.iters)
    jobs = max(1, min(args.jobs, len(phases)))
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            fits = pool.map(fit_phase, phases)
    else:
        fits = [fit_phase(ph) for ph in phases]
    weights, err_held, n_held = [], 0.0, 0
    for (lo, hi), f in zip(phases, fits):
        if f is None:
            sys.exit("othello_train: no training positions for phase %d-%d" % (lo, hi))
        weights.append(f[0])
        err_held += f[1]
        n_held += f[2]
        print(f[3])
    print("held out, all phases: %d positions, mean |error| %.2f discs (as othello_eval)"
          % (n_held, err_held / max(n_held, 1)))
    phase_of = []
    for e in range(61):
        d = [max(lo - e, e - hi, 0) for lo, hi in phases]
        best = min(range(len(phases)), key=lambda i: (d[i], -i))
        phase_of.append(best)
    body = b"".join(q.tobytes() for q in weights)
    per = ncol + 2 * len(SQ_MASK)
    hdr = b"OTHE" + struct.pack("<5I", 1, fingerprint(), per, len(phases), fnv(body))
    hdr += bytes(phase_of) + bytes(3)
    with open(args.out, "wb") as f:
        f.write(hdr + body)
    print("wrote %s: %d phases x %d weights, %d bytes, in %.1f s"
          % (args.out, len(phases), per, len(hdr) + len(body), time.time() - t0))


if __name__ == "__main__":
    main()

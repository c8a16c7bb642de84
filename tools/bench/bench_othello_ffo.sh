#!/bin/sh
# FFO endgame positions through gpud: one file job of FFO #FROM..#TO
# (tests/data/ffo.obf), solved by the workers given, timed from submit to
# done; then every root's score and best move against the published ones.
#   tools/bench/bench_othello_ffo.sh FROM TO DEVICE... [-- SUBMIT_ARGS...]
# e.g. tools/bench/bench_othello_ffo.sh 40 59 cpu:16 cuda:0
# gpud splits a file of few deep positions into subtree leases by default;
# "-- --split 0" leases the positions themselves (priced by empties).
# Each DEVICE starts one gpuworker (--device DEVICE). LOG_LEVEL as in
# bench_othello_gpud.sh. Exit 1 when a score or best move differs.
set -eu
cd "$(dirname "$0")/../.."
from=$1 to=$2
shift 2
devices=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do devices="$devices $1"; shift; done
[ $# -gt 0 ] && shift
build=${BUILD:-build}
. tools/bench/gpud_one.sh
gpud_one_start
grep -v '^%' tests/data/ffo.obf | sed -n "${from},${to}p" > "$data/in.obf"
nw=0
for dev in $devices; do
	gpud_one_worker "$dev"
	nw=$((nw + 1))
done
gpud_one_online "$nw"
t0=$(date +%s.%N)
job=$($ctl submit othello --file "$data/in.obf" "$@")
$ctl wait "$job" >/dev/null 2>&1
t1=$(date +%s.%N)
$ctl status "$job"
$ctl result "$job" > "$data/out.obf"
python3 - "$data/in.obf" "$data/out.obf" "$from" "$t0" "$t1" "$devices" <<'PY'
import sys
def parse(path):
    rows = []
    for line in open(path):
        line = line.split('%')[0].strip()
        if not line:
            continue
        board, _, rest = line.partition(';')
        moves = {}
        for item in rest.split(';'):
            if ':' in item:
                m, s = item.split(':')
                moves[m.strip().upper()] = int(s)
        rows.append((board.strip(), moves))
    return rows
want, got = parse(sys.argv[1]), parse(sys.argv[2])
first, wall = int(sys.argv[3]), float(sys.argv[5]) - float(sys.argv[4])
bad = 0
print("| FFO | empties | score | move | published |")
print("| --- | --- | --- | --- | --- |")
for i, ((board, pub), (gb, mine)) in enumerate(zip(want, got)):
    best = max(pub.values())
    (mv, sc), = mine.items() if len(mine) == 1 else [(None, None)]
    ok = gb.split()[0] == board.split()[0] and sc == best and mv in pub
    bad += not ok
    print("| #%d | %d | %+d | %s | %s%s |" % (first + i, board.split()[0].count('-'),
          sc if sc is not None else 99, mv, ", ".join("%s:%+d" % kv for kv in pub.items()),
          "" if ok else " **differs**"))
if len(got) != len(want):
    bad += 1
    print("result has %d positions, input %d" % (len(got), len(want)))
print("FFO #%d-#%d through gpud on%s: %.2f s wall (submit to done), %d differ"
      % (first, first + len(want) - 1, sys.argv[6], wall, bad))
sys.exit(1 if bad else 0)
PY

#!/bin/sh
# One hard Othello position over 1, 2 and 4 workers: the position as a file
# job split into subtree leases (gpuctl submit othello --split), solved
# through a private gpud by W CPU workers of T threads each, and once
# unsplit by one worker for comparison.
#   tools/bench/bench_othello_split.sh POSITION [THREADS] [WORKERS] [SPLIT]
# POSITION: an FFO number (tests/data/ffo.obf) or an OBF line; THREADS per
# worker (default 1); WORKERS the counts to run (default "1 2 4"); SPLIT
# the plies (default auto). Prints per run the wall time (submit to done,
# gpud's clock), the nodes searched, the leases (one frontier position
# each, in a window; a position may be leased again with another window)
# and the frontier's size, and the speedups over the split job on one
# worker and over the unsplit job.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { sed -n 2,13p "$0" >&2; exit 2; }
pos=$1
threads=${2:-1}
counts=${3:-1 2 4}
split=${4:-auto}
build=${BUILD:-build}
. tools/bench/gpud_one.sh
gpud_one_start --lease-timeout 600 --heartbeat 0.5
case $pos in
*[!0-9]*) printf '%s\n' "$pos" > "$data/pos.obf" ;;
*) grep "% FFO #$pos\$" tests/data/ffo.obf > "$data/pos.obf" ||
	{ echo "no FFO #$pos in tests/data/ffo.obf" >&2; exit 2; } ;;
esac
for k in 1 2 3 4 5 6 7 8; do
	$ctl token add "w$k" --role worker > "$data/w$k.token" 2>/dev/null
	chmod 600 "$data/w$k.token"
done

# run NAME WORKERS SPLIT: one job on WORKERS fresh workers; appends
# "NAME WORKERS seconds nodes solved frontier" to $data/runs.
run() {
	pids=
	k=1
	while [ "$k" -le "$2" ]; do
		gpud_one_worker "cpu:$threads" "$data/w$k.token"
		k=$((k + 1))
	done
	gpud_one_online "$2"
	job=$($ctl submit othello --file "$data/pos.obf" --split "$3")
	$ctl wait "$job" >/dev/null 2>&1
	$ctl status "$job" --json > "$data/status.json"
	$ctl result "$job" --json > "$data/result.json"
	python3 - "$1" "$2" "$data/status.json" "$data/result.json" >> "$data/runs" <<'EOF'
import json, sys
s = json.load(open(sys.argv[3]))[0]
a = json.load(open(sys.argv[4]))["answer"]
print(sys.argv[1], sys.argv[2], s["finished_at"] - s["created_at"], a["nodes"], a["positions"],
      s["total_units"])
EOF
	$ctl result "$job" > "$data/out.$1.$2" 2>"$data/summary"
	grep -m1 "split" "$data/summary" || true
	if ! cmp -s "$data/out.$1.$2" "$data/out.unsplit.1"; then
		echo "the answers differ:" >&2
		cat "$data/out.unsplit.1" "$data/out.$1.$2" >&2
		exit 1
	fi
	for p in $pids; do kill "$p"; done
	wait $pids 2>/dev/null || true
	pids=
	# The workers' names stay known to gpud; wait until they are offline.
	for _ in $(seq 100); do
		[ "$($ctl workers | grep -c online)" -eq 0 ] && break
		sleep 0.1
	done
}

echo "position: $(head -c 70 "$data/pos.obf"); $threads thread(s) a worker; split $split"
run unsplit 1 0
for w in $counts; do
	run split "$w" "$split"
done
python3 - "$data/runs" <<'EOF'
import sys
runs = [l.split() for l in open(sys.argv[1])]
base = float(runs[0][2])
one = next((float(r[2]) for r in runs if r[0] == "split" and r[1] == "1"), None)
print("%-8s %7s %9s %14s %14s %10s %10s" % ("job", "workers", "wall s", "nodes", "leases", "vs 1 split",
                                            "vs unsplit"))
for r in runs:
    t = float(r[2])
    solved = "%s, %s" % (r[4], int(r[5]) - 1) if r[0] == "split" else r[4]
    print("%-8s %7s %9.3f %14s %14s %10s %10.2f" % (r[0], r[1], t, r[3], solved,
          "%.2f" % (one / t) if one and r[0] == "split" else "-", base / t))
EOF
echo "every run's scored position(s), as gpuctl result writes them:"
cat "$data/out.unsplit.1"

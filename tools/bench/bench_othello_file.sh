#!/bin/sh
# A file of Othello positions through a private gpud: W CPU workers of T
# threads each solve it with --split SPLIT (default: gpud's own choice,
# auto), and once with --split 0 (leases of positions priced by cost).
#   tools/bench/bench_othello_file.sh FILE [THREADS] [WORKERS] [SPLIT]
# FILE: OBF lines; THREADS per worker (default 1); WORKERS the counts to run
# (default "1 2"). Prints per run the wall time (submit to done, gpud's
# clock), the nodes searched and the leases, and checks the answers agree.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { sed -n 2,8p "$0" >&2; exit 2; }
file=$1
threads=${2:-1}
counts=${3:-1 2}
split=${4:-auto}
build=${BUILD:-build}
. tools/bench/gpud_one.sh
gpud_one_start --lease-timeout 600 --heartbeat 0.5
for k in 1 2 3 4 5 6 7 8; do
	$ctl token add "w$k" --role worker > "$data/w$k.token" 2>/dev/null
	chmod 600 "$data/w$k.token"
done

# run NAME WORKERS SPLIT: one job on WORKERS fresh workers.
run() {
	pids=
	k=1
	while [ "$k" -le "$2" ]; do
		gpud_one_worker "cpu:$threads" "$data/w$k.token"
		k=$((k + 1))
	done
	gpud_one_online "$2"
	job=$($ctl submit othello --file "$file" --split "$3")
	$ctl wait "$job" >/dev/null 2>&1
	$ctl status "$job" --json > "$data/status.json"
	$ctl result "$job" --json > "$data/result.json"
	python3 - "$1" "$2" "$data/status.json" "$data/result.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[3]))[0]
a = json.load(open(sys.argv[4]))["answer"]
print("%-14s workers %s: %7.2f s, %12d nodes, %4d leases" % (sys.argv[1], sys.argv[2],
      s["finished_at"] - s["created_at"], a["nodes"], a["leases"]))
PY
	$ctl result "$job" > "$data/out.$1.$2" 2>/dev/null
	if [ -f "$data/out.first" ]; then
		cmp -s "$data/out.$1.$2" "$data/out.first" ||
			{ echo "the answers differ" >&2; exit 1; }
	else
		cp "$data/out.$1.$2" "$data/out.first"
	fi
	for p in $pids; do kill "$p"; done
	wait $pids 2>/dev/null || true
	pids=
	for _ in $(seq 100); do
		[ "$($ctl workers | grep -c online)" -eq 0 ] && break
		sleep 0.1
	done
}

for w in $counts; do
	run "split $split" "$w" "$split"
	run "split 0" "$w" 0
done

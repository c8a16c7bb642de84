#!/bin/sh
# Training data for the Othello move-ordering evaluation (othello_eval.c):
# random-play positions (oth_generate) solved exactly by gpud itself, written
# as OBF lines "BOARD SIDE MOVE:+SCORE;" (gpuctl result's export).
#   tools/othello_traindata.sh OUT DEVICE SEED EMPTIES:COUNT...
# e.g. tools/othello_traindata.sh data.obf cpu:2 1 10:20000 12:20000 14:10000
#      tools/othello_traindata.sh data.obf cuda:0 1 10:2000000 ... 18:200000
# One private gpud and one worker on DEVICE; one --random job per
# EMPTIES:COUNT, seed SEED + empties (so sets with other counts share their
# first positions). Prints how long each job took. BUILD= the build dir.
set -eu
cd "$(dirname "$0")/.."
if [ $# -lt 4 ]; then
	echo "usage: $0 OUT DEVICE SEED EMPTIES:COUNT..." >&2
	exit 2
fi
out=$1
device=$2
seed=$3
shift 3
case $seed in *[!0-9]*|'') echo "othello_traindata: SEED must be a number" >&2; exit 2;; esac
for spec in "$@"; do
	e=${spec%%:*}
	n=${spec#*:}
	case $e:$n in
	*[!0-9:]*|:*|*:|*:*:*) echo "othello_traindata: bad EMPTIES:COUNT '$spec'" >&2; exit 2;;
	esac
	[ "$spec" != "$e" ] || { echo "othello_traindata: bad EMPTIES:COUNT '$spec'" >&2; exit 2; }
done
build=${BUILD:-build}
data=$(mktemp -d /tmp/gpud-otrain-XXXXXX)
worker_pid=
"$build/daemon/gpud" --data "$data/d" --listen 127.0.0.1:0 --socket "$data/s" --http off --log-level warn &
gpud_pid=$!
trap 'kill $worker_pid $gpud_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
trap 'exit 143' INT TERM # a timeout's TERM still runs the EXIT trap
for _ in $(seq 100); do [ -f "$data/d/gpud.addr" ] && [ -S "$data/s" ] && break; sleep 0.1; done
[ -S "$data/s" ] || { echo "othello_traindata: gpud did not start" >&2; exit 1; }
ctl="$build/tools/gpuctl --socket $data/s"
"$build/worker/gpuworker" --connect "$(cat "$data/d/gpud.addr")" \
	--token-file "$data/d/local-worker.token" --device "$device" --log-level warn &
worker_pid=$!
for _ in $(seq 300); do $ctl workers 2>/dev/null | grep -q online && break; sleep 0.1; done
$ctl workers | grep -q online || { echo "othello_traindata: the worker did not come online" >&2; exit 1; }
: > "$out.tmp"
t_all=$(date +%s.%N)
for spec in "$@"; do
	e=${spec%%:*}
	n=${spec#*:}
	t0=$(date +%s.%N)
	job=$($ctl submit othello --random "$n" --empties "$e" --seed $((seed + e)))
	$ctl wait "$job" >/dev/null 2>"$data/wait.err" || {
		echo "othello_traindata: job $job did not finish:" >&2; tail -3 "$data/wait.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	before=$(wc -l < "$out.tmp")
	$ctl result "$job" >> "$out.tmp" 2>/dev/null || { echo "othello_traindata: job $job: no result" >&2; exit 1; }
	[ $(($(wc -l < "$out.tmp") - before)) -eq "$n" ] || { echo "othello_traindata: job $job: not $n scored positions" >&2; exit 1; }
	t2=$(date +%s.%N)
	awk -v n="$n" -v e="$e" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
		printf "%d positions at %d empties: solved in %.1f s (%.4g/s), exported in %.1f s\n",
		       n, e, b - a, n / (b - a), c - b }'
done
mv "$out.tmp" "$out"
awk -v a="$t_all" -v b="$(date +%s.%N)" -v f="$out" -v dev="$device" \
	'BEGIN { printf "%s: all in %.1f s on %s\n", f, b - a, dev }'
wc -l "$out"

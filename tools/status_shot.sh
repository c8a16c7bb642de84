#!/bin/sh
# What gpuctl status, workers and history show on a busy gpud: 20 jobs of
# four workloads, names and priorities, two CPU workers, one job paused and
# one cancelled, captured after a few seconds into bench/gpuctl-status.txt
# (the "screenshot" of issue 23).
#   tools/status_shot.sh [BUILD_DIR]      (default build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
dir=$(mktemp -d)
gpud_pid=""
w1=""
w2=""
cleanup() {
	for p in $w1 $w2 $gpud_pid; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
"$build/daemon/gpud" --data "$dir/data" --listen 127.0.0.1:0 --heartbeat 1 \
	--lease-seconds 2 --log-level error &
gpud_pid=$!
for _ in $(seq 100); do [ -S "$dir/data/gpud.sock" ] && [ -f "$dir/data/gpud.addr" ] && break; sleep 0.1; done
ctl="$build/tools/gpuctl --socket $dir/data/gpud.sock"
for i in $(seq 1 14); do
	$ctl submit graveler --battles "$((i * 20))000000" --seed "$i" --name "sweep-$i" \
		--priority "$((i % 3))" >/dev/null
done
$ctl submit officers --to 200000 --name officers-200k --priority 5 >/dev/null
$ctl submit officers --to 1000000 --name officers-1m >/dev/null
$ctl submit sudoku --box 2x3 --name sudoku-2x3 >/dev/null
$ctl submit othello --random 2000 --empties 12 --seed 3 --name endgames >/dev/null
$ctl submit graveler --battles 1e9 --seed 99 --name big >/dev/null
$ctl submit graveler --battles 5e8 --seed 98 --name held >/dev/null
token="$dir/data/local-worker.token"
addr=$(cat "$dir/data/gpud.addr")
"$build/worker/gpuworker" --connect "$addr" --token-file "$token" --device cpu:1 --log-level error &
w1=$!
"$build/worker/gpuworker" --connect "$addr" --token-file "$token" --device cpu:1 --log-level error &
w2=$!
$ctl pause 20 >/dev/null
$ctl cancel 13 >/dev/null
sleep 8
{
	echo "\$ gpuctl status"
	$ctl status
	echo
	echo "\$ gpuctl workers"
	$ctl workers
	echo
	echo "\$ gpuctl history"
	$ctl history 2>&1 || true
} | sed "s|$dir|DATA|g" > bench/gpuctl-status.txt
cat bench/gpuctl-status.txt

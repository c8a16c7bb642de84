#!/bin/sh
# Any job through gpud and one worker: gpud's submit-to-verified time, for
# workloads without a bench script of their own (Sudoku's small shapes).
#   tools/bench/bench_job_gpud.sh DEVICE WORKLOAD [SUBMIT_ARGS...]
# e.g. tools/bench/bench_job_gpud.sh cpu:16 sudoku --box 3x3
# Exit 1 when the job does not end done.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: bench_job_gpud.sh DEVICE WORKLOAD [SUBMIT_ARGS...]" >&2; exit 2; }
device=$1 workload=$2
shift 2
build=${BUILD:-build}
data=$(mktemp -d /tmp/gpud-jbench-XXXXXX)
"$build/daemon/gpud" --data "$data/d" --listen 127.0.0.1:0 --socket "$data/s" --log-level warn &
gpud_pid=$!
trap 'kill $worker_pid $gpud_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
trap 'exit 143' INT TERM # a timeout's TERM still runs the EXIT trap
for _ in $(seq 100); do [ -f "$data/d/gpud.addr" ] && [ -S "$data/s" ] && break; sleep 0.1; done
ctl="$build/tools/gpuctl --socket $data/s"
"$build/worker/gpuworker" --connect "$(cat "$data/d/gpud.addr")" \
	--token-file "$data/d/local-worker.token" --device "$device" --log-level warn &
worker_pid=$!
for _ in $(seq 300); do $ctl workers | grep -q online && break; sleep 0.1; done
job=$($ctl submit "$workload" "$@")
$ctl wait "$job" >/dev/null || { $ctl status "$job" --long; exit 1; }
$ctl result "$job" | head -3
$ctl status "$job" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)[0]
s = j["finished_at"] - j["created_at"]
print("gpud end to end: %s %s on %s in %.3f s (submit to verified)"
      % (sys.argv[1], " ".join(sys.argv[3:]), sys.argv[2], s))
' "$workload" "$device" "$@"

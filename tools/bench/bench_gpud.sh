#!/bin/sh
# End-to-end rate: a Graveler job through gpud and one worker, against the
# bare kernel rate that bench_graveler measures on the same device.
#   tools/bench/bench_gpud.sh [BATTLES] [DEVICE]     default 1e13 cuda:0
# Prints the job's wall time from submission to verified answer (workers
# connected beforehand), the rate, and the ratio to the bare kernel.
set -eu
cd "$(dirname "$0")/../.."
battles=${1:-1e13}
device=${2:-cuda:0}
build=${BUILD:-build}
data=$(mktemp -d /tmp/gpud-bench-XXXXXX)
"$build/daemon/gpud" --data "$data/d" --listen 127.0.0.1:0 --socket "$data/s" --log-level warn &
gpud_pid=$!
trap 'kill $worker_pid $gpud_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do [ -f "$data/d/gpud.addr" ] && [ -S "$data/s" ] && break; sleep 0.1; done
ctl="$build/tools/gpuctl --socket $data/s"
"$build/worker/gpuworker" --connect "$(cat "$data/d/gpud.addr")" \
	--token-file "$data/d/local-worker.token" --device "$device" --log-level warn &
worker_pid=$!
for _ in $(seq 300); do $ctl workers | grep -q online && break; sleep 0.1; done
t0=$(date +%s.%N)
job=$($ctl submit graveler --battles "$battles" --seed 1)
$ctl wait "$job" >/dev/null
t1=$(date +%s.%N)
$ctl status "$job"
$ctl result "$job" | head -4
# gpud's own timestamps: submission to verified answer, verification included.
$ctl status "$job" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)[0]
n, s = j["total_units"], j["finished_at"] - j["created_at"]
print("gpud end to end: %d battles on %s in %.3f s (submit to verified) = %.4g battles/s = %.4f ms per 1e9"
      % (n, sys.argv[1], s, n / s, s / n * 1e12))
print("gpuctl wall time, submit to wait returning: %.3f s" % (float(sys.argv[3]) - float(sys.argv[2])))
' "$device" "$t0" "$t1"

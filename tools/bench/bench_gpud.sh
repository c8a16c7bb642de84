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
. tools/bench/gpud_one.sh
gpud_one_start
gpud_one_worker "$device"
gpud_one_online 1
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

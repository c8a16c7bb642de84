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
. tools/bench/gpud_one.sh
gpud_one_start
gpud_one_worker "$device"
gpud_one_online 1
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

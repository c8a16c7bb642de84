#!/bin/sh
# End-to-end rate of an Othello --random job through gpud and one worker,
# to compare with bench_othello's bare call on the same device.
#   tools/bench/bench_othello_gpud.sh [POSITIONS] [EMPTIES] [DEVICE]
# default 1100000 10 cuda:0. Prints gpud's submit-to-verified time.
# LOG_LEVEL=debug: gpud and worker log every stage (to stderr).
set -eu
cd "$(dirname "$0")/../.."
n=${1:-1100000}
e=${2:-10}
device=${3:-cuda:0}
build=${BUILD:-build}
. tools/bench/gpud_one.sh
gpud_one_start
gpud_one_worker "$device"
gpud_one_online 1
t0=$(date +%s.%N)
job=$($ctl submit othello --random "$n" --empties "$e" --seed 1)
$ctl wait "$job" >/dev/null
t1=$(date +%s.%N)
$ctl status "$job"
$ctl status "$job" --json > "$data/status.json"
$ctl result "$job" --json > "$data/result.json"
python3 -c '
import json, sys
j = json.load(open(sys.argv[4]))[0]
n, s = j["total_units"], j["finished_at"] - j["created_at"]
dev = json.load(open(sys.argv[5]))["answer"]["usec"] / 1e6
print("gpud end to end: %d positions on %s in %.3f s (submit to verified) = %.4g positions/s"
      % (n, sys.argv[1], s, n / s))
print("fixed overhead (end to end - the worker'"'"'s solve time %.3f s): %.1f ms" % (dev, (s - dev) * 1e3))
print("gpuctl wall time, submit to wait returning: %.3f s" % (float(sys.argv[3]) - float(sys.argv[2])))
' "$device" "$t0" "$t1" "$data/status.json" "$data/result.json"
$ctl result "$job" 2>&1 >/dev/null | head -8

#!/bin/sh
# End-to-end: an Officers job through gpud and one CUDA worker.
#   tools/bench/bench_officers_gpud.sh [VALUES] [LEASE_VALUES]   (BUILD dir: build-gpu)
# WAIT_S bounds the wait (default 200 s); LOG_LEVEL sets both logs (default info); WORKER_ARGS adds gpuworker options (e.g. --no-run-ahead); TAG names the
# logs copied to $OUT.
set -u
b=build-gpu; d=$(mktemp -d /tmp/offe2e-XXXXXX); N=${1:-200000000}; L=${2:-33554432}
$b/daemon/gpud --data $d/d --listen 127.0.0.1:0 --socket $d/s --log-level ${LOG_LEVEL:-info} --lease-units $L > $d/gpud.log 2>&1 &
gp=$!
for i in $(seq 100); do [ -f $d/d/gpud.addr ] && [ -S $d/s ] && break; sleep 0.1; done
$b/worker/gpuworker --connect "$(cat $d/d/gpud.addr)" --token-file $d/d/local-worker.token --device cuda:0 --log-level ${LOG_LEVEL:-info} ${WORKER_ARGS:-} > $d/worker.log 2>&1 &
wp=$!
c="$b/tools/gpuctl --socket $d/s"
for i in $(seq 300); do $c workers | grep -q online && break; sleep 0.1; done
t0=$(date +%s.%N)
job=$($c submit officers --to $N)
timeout ${WAIT_S:-200} $c wait $job > /dev/null
t1=$(date +%s.%N)
$c status $job
$c result $job | head -6
python3 -c "import sys; t=float(sys.argv[2])-float(sys.argv[1]); print(\"e2e: %s values in %.1f s = %.2f M values/s\" % (sys.argv[3], t, float(sys.argv[3])/t/1e6))" $t0 $t1 $N
kill $wp $gp; wait
grep -i "error\|fail\|warn" $d/gpud.log $d/worker.log | head -20
tag=${TAG:-officers}
[ -n "${OUT:-}" ] && cp $d/gpud.log "$OUT/$tag-gpud.log" && cp $d/worker.log "$OUT/$tag-worker.log"
rm -rf "$d"

#!/bin/sh
# The complete 4x3 Sudoku count through gpud, in resumable pieces: each call
# restores gpud's data directory from a tarball (if given), runs gpud and
# one CUDA worker for a while, stops both cleanly (the worker checkpoints and
# releases its lease; gpud drains), and packs the data directory again. The
# job is submitted once; later pieces only continue it. DEVICES lists the
# workers' devices (default cuda:0); the first uses the local token, each
# other one a token of its own kept in the data directory.
#   tools/sudoku_4x3_run.sh SECONDS [IN.tar.gz] OUT.tar.gz    (BUILD: build-gpu)
set -u
secs=$1
in=${2:-}
out=${3:-}
[ -n "$out" ] || { out=$in; in=; }
build=${BUILD:-build-gpu}
work=$(mktemp -d /tmp/sudoku-run-XXXXXX)
data=$work/data
mkdir -p "$data"
if [ -n "$in" ] && [ -f "$in" ]; then
	tar -C "$work" -xzf "$in"
	echo "resuming from $in"
fi
"$build/daemon/gpud" --data "$data" --listen 127.0.0.1:0 --socket "$work/s" \
	--lease-units 1024 --drain-seconds 60 --log-level info 2>> "$work/gpud.log" &
gpud=$!
for _ in $(seq 100); do [ -f "$data/gpud.addr" ] && [ -S "$work/s" ] && break; sleep 0.1; done
ctl="$build/tools/gpuctl --socket $work/s"
job=$($ctl status --json | python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin) if x["workload"]=="sudoku"]; print(j[0]["id"] if j else "")')
if [ -z "$job" ]; then
	job=$($ctl submit sudoku --box 4x3)
	echo "submitted job $job"
fi
workers=
n=0
for dev in ${DEVICES:-cuda:0}; do
	tok=$data/local-worker.token
	if [ $n -gt 0 ]; then
		tok=$data/local-$n.token
		[ -f "$tok" ] || (umask 077; $ctl token add "local-$n" > "$tok") || exit 1
	fi
	"$build/worker/gpuworker" --connect "$(cat "$data/gpud.addr")" --token-file "$tok" \
		--device "$dev" --checkpoint-interval 30 --log-level info 2>> "$work/worker-$n.log" &
	workers="$workers $!"
	n=$((n + 1))
done
end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt "$end" ]; do
	st=$($ctl status "$job" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')
	[ "$st" = done ] || [ "$st" = failed ] && break
	sleep 5
done
$ctl status "$job"
if [ "$($ctl status "$job" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')" = done ]; then
	$ctl result "$job"
fi
kill -TERM $workers; wait $workers
kill -TERM "$gpud"; wait "$gpud"
echo "stopped cleanly; packing the data directory"
tar -C "$work" -czf "$out" data
ls -la "$out"
tail -q -n 3 "$work"/worker-*.log
grep -E "verified|job done|failed" "$work/gpud.log" | tail -3

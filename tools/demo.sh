#!/bin/sh
# The quick start: install what is missing to build and run gpud (not what
# the tests need: tools/deps.sh without --test), build, start gpud on a
# fresh data directory with its status page on a free port, attach one
# local worker (CUDA if a GPU is present, else CPU), submit a Graveler job,
# show live progress, print the answer, stop.
#   tools/demo.sh [BATTLES]      (default 1e9 on CPU, 1e11 on a GPU)
# GPUD_BUILD=DIR runs a build already made (installs and builds nothing);
# GPUD_DEMO_DATA=DIR is the data directory (default demo-data, emptied).
set -eu
cd "$(dirname "$0")/.."
build=${GPUD_BUILD:-}
if [ -z "$build" ]; then
	build=build
	sh tools/deps.sh
	# Without the tests (cmocka is the tests' dependency); tools/test.sh
	# turns them on in the same build.
	[ -d "$build" ] || meson setup "$build" -Dcuda=auto -Dtests=false >/dev/null
	ninja -C "$build" >/dev/null
fi

data=${GPUD_DEMO_DATA:-demo-data}
rm -rf "$data"
# Every port picked by the kernel: another gpud (or anything on 7700 and
# 7780) does not stop the demo.
"$build/daemon/gpud" --data "$data" --listen 127.0.0.1:0 --http 127.0.0.1:0 \
	--heartbeat 1 --log-level warn --config /dev/null &
gpud_pid=$!
worker_pid=""
cleanup() {
	# The worker first (it checkpoints and releases its lease), then gpud.
	if [ -n "$worker_pid" ]; then
		kill "$worker_pid" 2>/dev/null || true
		wait "$worker_pid" 2>/dev/null || true
	fi
	kill "$gpud_pid" 2>/dev/null || true
	wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in $(seq 100); do
	[ -S "$data/gpud.sock" ] && [ -f "$data/gpud.addr" ] && [ -f "$data/gpud.http" ] && break
	# gpud gone: its own message said why; stop here, not 10 s later.
	kill -0 "$gpud_pid" 2>/dev/null || { echo "demo: gpud did not start" >&2; exit 1; }
	sleep 0.1
done
[ -f "$data/gpud.addr" ] || { echo "demo: gpud did not start in 10 s" >&2; exit 1; }
addr=$(cat "$data/gpud.addr")
ctl="$build/tools/gpuctl --socket $data/gpud.sock"

device=cpu
battles=${1:-1e9}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && \
   grep -q "GPUD_HAVE_CUDA 1" "$build/gpud_config.h"; then
	device=cuda:0
	battles=${1:-1e11}
fi
echo "gpud listening on $addr; starting one worker on $device"
# The page's address with a key of a day (a browser keeps it as a cookie).
echo "status page: $($ctl page-link --valid 1d 2>/dev/null || echo "http://$(cat "$data/gpud.http")/")"
"$build/worker/gpuworker" --connect "$addr" --token-file "$data/local-worker.token" \
	--device "$device" --log-level warn --config /dev/null &
worker_pid=$!

job=$($ctl submit graveler --battles "$battles" --seed 2024)
echo "submitted job $job: $battles Graveler battles"
$ctl wait "$job"
$ctl status "$job"
$ctl result "$job"

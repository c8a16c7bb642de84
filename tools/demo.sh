#!/bin/sh
# The quick start: install what is missing, build, start gpud on a fresh data
# directory, attach one local worker (CUDA if a GPU is present, else CPU),
# submit a Graveler job, show live progress, print the answer, stop.
#   tools/demo.sh [BATTLES]      (default 1e9 on CPU, 1e11 on a GPU)
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
[ -d build ] || meson setup build -Dcuda=auto >/dev/null
ninja -C build >/dev/null

data=demo-data
rm -rf "$data"
./build/daemon/gpud --data "$data" --listen 127.0.0.1:0 --heartbeat 1 --log-level warn &
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
trap cleanup EXIT INT TERM
for _ in $(seq 100); do [ -S "$data/gpud.sock" ] && [ -f "$data/gpud.addr" ] && break; sleep 0.1; done
addr=$(cat "$data/gpud.addr")
ctl="./build/tools/gpuctl --socket $data/gpud.sock"

device=cpu
battles=${1:-1e9}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && \
   grep -q "GPUD_HAVE_CUDA 1" build/gpud_config.h; then
	device=cuda:0
	battles=${1:-1e11}
fi
echo "gpud listening on $addr; starting one worker on $device"
echo "status page: $($ctl page-link --valid 1d 2>/dev/null || echo 'none (--http off)')"
./build/worker/gpuworker --connect "$addr" --token-file "$data/local-worker.token" \
	--device "$device" --log-level warn &
worker_pid=$!

job=$($ctl submit graveler --battles "$battles" --seed 2024)
echo "submitted job $job: $battles Graveler battles"
$ctl wait "$job"
$ctl status "$job"
$ctl result "$job"

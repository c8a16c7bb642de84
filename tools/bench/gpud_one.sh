# gpud_one.sh - what the bench_*_gpud.sh scripts share, sourced from the
# repository root (. tools/bench/gpud_one.sh): gpud_one_start DEVICE starts
# gpud ($build/daemon/gpud, log level $LOG_LEVEL, default warn) in a fresh
# temporary directory and one gpuworker on DEVICE, and returns once the
# worker is online. It sets data (the directory), ctl (gpuctl on gpud's
# socket), gpud_pid and worker_pid; at exit, also after INT or TERM, both
# are killed and data is removed.
gpud_one_start() {
	data=$(mktemp -d /tmp/gpud-bench-XXXXXX)
	worker_pid=
	"$build/daemon/gpud" --data "$data/d" --listen 127.0.0.1:0 --socket "$data/s" --log-level "${LOG_LEVEL:-warn}" &
	gpud_pid=$!
	trap 'kill $worker_pid $gpud_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
	trap 'exit 143' INT TERM # a timeout's TERM still runs the EXIT trap
	for _ in $(seq 100); do [ -f "$data/d/gpud.addr" ] && [ -S "$data/s" ] && break; sleep 0.1; done
	ctl="$build/tools/gpuctl --socket $data/s"
	"$build/worker/gpuworker" --connect "$(cat "$data/d/gpud.addr")" \
		--token-file "$data/d/local-worker.token" --device "$1" --log-level "${LOG_LEVEL:-warn}" &
	worker_pid=$!
	for _ in $(seq 300); do $ctl workers | grep -q online && break; sleep 0.1; done
}

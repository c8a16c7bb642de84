# gpud_one.sh - what the bench scripts that go through a private gpud
# share. Sourced from the repository root (. tools/bench/gpud_one.sh) with
# $build set; LOG_LEVEL sets gpud's and the workers' logs (default warn).
#   gpud_one_start [GPUD_ARGS...]  gpud in a fresh temporary directory
#       $data, $ctl its gpuctl; at exit, also after INT or TERM, gpud
#       ($gpud_pid) and the processes in $pids are killed and $data is
#       removed.
#   gpud_one_worker DEVICE [TOKEN_FILE]  a gpuworker on DEVICE (by default
#       with the local worker token), its pid added to $pids.
#   gpud_one_online N  returns once N workers are online (or after 30 s).
gpud_one_start() {
	data=$(mktemp -d /tmp/gpud-bench-XXXXXX)
	pids=
	"$build/daemon/gpud" --data "$data/d" --listen 127.0.0.1:0 --socket "$data/s" \
		--log-level "${LOG_LEVEL:-warn}" "$@" &
	gpud_pid=$!
	trap 'kill $pids $gpud_pid 2>/dev/null || :; wait 2>/dev/null; rm -rf "$data"' EXIT
	trap 'exit 143' INT TERM # a timeout's TERM still runs the EXIT trap
	for _ in $(seq 100); do [ -f "$data/d/gpud.addr" ] && [ -S "$data/s" ] && break; sleep 0.1; done
	ctl="$build/tools/gpuctl --socket $data/s"
}

gpud_one_worker() {
	"$build/worker/gpuworker" --connect "$(cat "$data/d/gpud.addr")" \
		--token-file "${2:-$data/d/local-worker.token}" --device "$1" \
		--log-level "${LOG_LEVEL:-warn}" &
	pids="$pids $!"
}

gpud_one_online() {
	for _ in $(seq 300); do
		[ "$($ctl workers | grep -c online)" -ge "$1" ] && break
		sleep 0.1
	done
}

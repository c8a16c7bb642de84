#!/bin/sh
# One call on the GPU machine for every workload: build with CUDA, then per
# workload its GPU test (CUDA vs CPU, bit for bit) and its benchmarks, bare
# and end to end through gpud. Logs go to $OUT, one file per workload.
# Usage (device tool, carry .debs): sh tools/bench/device_all.sh [WORKLOAD...]
# (graveler officers othello sudoku; default all of them)
set -u
sections="$*"
out=${OUT:-/tmp/out}
mkdir -p "$out"
for f in .debs/*.deb; do dpkg -x "$f" /; done
ldconfig
{ nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv; nproc; git log --oneline -1; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
meson setup build-gpu -Dcuda=enabled > "$out/build.log" 2>&1 && ninja -C build-gpu >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build ok"
t() { name=$1; shift; echo "== $*" >> "$out/$name.txt"; timeout "$@" >> "$out/$name.txt" 2>&1; echo "rc=$?" >> "$out/$name.txt"; }
want() { [ -z "$sections" ] || case " $sections " in *" $1 "*) true;; *) false;; esac; }
if want graveler; then
	t graveler 300 build-gpu/tests/gpu/test_graveler_gpu
	t graveler 120 build-gpu/tools/bench/bench_graveler -r 15 -c 0
	BUILD=build-gpu t graveler 200 sh tools/bench/bench_gpud.sh 1e13 cuda:0
fi
if want officers; then
	t officers 300 build-gpu/tests/gpu/test_officers_gpu
	t officers 60 build-gpu/tools/bench/bench_blob -m 128 -r 3
	t officers 120 build-gpu/tools/bench/bench_officers -n 268435456 -s 2097152 -c 200000
	TAG=officers-ahead t officers 200 sh tools/bench/bench_officers_gpud.sh 400000000 67108864
	TAG=officers-noahead WORKER_ARGS=--no-run-ahead t officers 200 sh tools/bench/bench_officers_gpud.sh 400000000 67108864
fi
if want othello; then
	t othello 300 build-gpu/tests/gpu/test_othello_gpu
	t othello 120 build-gpu/tools/bench/bench_othello -r 5 -c 0.05
	t othello 60 build-gpu/tools/bench/bench_othello -r 5 -c 0 -g
	for i in 1 2 3; do BUILD=build-gpu t othello 60 sh tools/bench/bench_othello_gpud.sh; done
fi
if want sudoku; then
	t sudoku 400 build-gpu/tests/gpu/test_sudoku_gpu
	t sudoku 300 build-gpu/tools/bench/bench_sudoku -r 2 -c 1
fi
grep -hE "rc=|kernel|end to end|e2e|values/s|positions/s|per gangster|PASS|FAIL|ok$|passed|failed" "$out"/*.txt | head -80

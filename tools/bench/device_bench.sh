#!/bin/sh
# One call on the GPU machine: unpack the Debian libraries carried in .debs,
# build with CUDA, run the GPU tests, the kernel benchmark, the end-to-end
# benchmark through gpud, and (if ncu works) the kernel's pipe utilisation.
# Logs go to $OUT. Usage (device tool, carry .debs): sh tools/bench/device_bench.sh [BATTLES]
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
for f in .debs/*.deb; do dpkg -x "$f" /; done
ldconfig
nvidia-smi -L | tee "$out/device.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee -a "$out/device.txt"
meson setup build-gpu -Dcuda=enabled >"$out/setup.log" 2>&1 || { tail -30 "$out/setup.log"; exit 1; }
ninja -C build-gpu >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
meson test -C build-gpu --suite gpu --print-errorlogs 2>&1 | tail -5 | tee "$out/gputest.txt"
cat build-gpu/meson-logs/testlog.txt > "$out/gputest.log" 2>/dev/null
build-gpu/tools/bench/bench_graveler -r 15 2>&1 | tee "$out/bench_kernel.txt"
BUILD=build-gpu sh tools/bench/bench_gpud.sh "${1:-1e13}" cuda:0 2>&1 | tee "$out/bench_gpud.txt"
if command -v ncu >/dev/null 2>&1; then
	timeout 180 ncu --kernel-name regex:grav --launch-skip 3 --launch-count 1 \
		--section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy \
		build-gpu/tools/bench/bench_graveler -r 4 -c 0 >"$out/ncu.txt" 2>&1
	grep -E "Pipe|pipe|Issue|Executed Ipc|Warp Cycles|Occupancy" "$out/ncu.txt" | head -40
fi
